"""Time per training step of the course's MinimalNet, five ways, as ratios to plain numpy.

    python benchmarks/train_step_speed.py                 # 200 steps per variant, 3 rounds
    python benchmarks/train_step_speed.py --steps 500 --rounds 5

One step is a full-batch SGD step (lr 0.5) on the course data (100 samples of y = 2x + noise):

    numpy           plain numpy gradient descent in float32 (the baseline, ratio 1)
    pynative        nn.TrainOneStepCell in PyNative mode (the 2.10 default)
    pynative_block  the same after ms.runtime.launch_blocking()
    graph           nn.TrainOneStepCell in GRAPH_MODE
    jit             ms.value_and_grad + optimizer in an @ms.jit function (PyNative mode)

Each variant runs in its own fresh Python process, because the mode and launch_blocking() are global to a
process and launch_blocking() cannot be switched off. The rounds go through the variants in turn, so that
load from elsewhere on the machine hits them alike. Every step's loss is fetched (``.asnumpy()``) inside
its timing: PyNative runs asynchronously, and a timing that does not wait measures only the launch.
"Per step" is the median over the steps after the first, then the median over the rounds; "first call"
is the first step alone (it includes the compile in graph mode and jit).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {
    "numpy": "numpy gradient descent",
    "pynative": "PyNative TrainOneStepCell",
    "pynative_block": "PyNative + launch_blocking()",
    "graph": "graph-mode TrainOneStepCell",
    "jit": "@ms.jit functional step",
}
LR = 0.5


# ---- one variant, in a child process -----------------------------------------------------------
def _numpy_steps(x, y, steps):
    import numpy as np

    w, b, lr, two = np.float32(0.5), np.float32(0.0), np.float32(LR), np.float32(2)
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        err = w * x + b - y
        loss = np.mean(err * err)
        w, b = w - lr * two * np.mean(err * x), b - lr * two * np.mean(err)
        seconds.append(time.perf_counter() - start)
    return seconds, float(w), float(b), float(loss)


def _mindspore_steps(variant, x, y, steps):
    import mindspore as ms
    from mindspore import Tensor, nn

    from course_utils.timing import time_calls

    if variant == "pynative_block":
        ms.runtime.launch_blocking()  # before the first operation
    ms.set_context(mode=ms.GRAPH_MODE if variant == "graph" else ms.PYNATIVE_MODE)

    class MinimalNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1, weight_init="normal", bias_init="zero")

        def construct(self, x):
            return self.dense(x)

    ms.set_seed(0)
    net = MinimalNet()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=LR)
    if variant == "jit":
        loss_fn = nn.MSELoss()

        def forward(data, label):
            return loss_fn(net(data), label)

        grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

        @ms.jit
        def step(data, label):
            loss, grads = grad_fn(data, label)
            optimizer(grads)
            return loss
    else:
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    data, label = Tensor(x), Tensor(y)
    seconds = time_calls(step, data, label, repeat=steps)
    loss = float(nn.MSELoss()(net(data), label).asnumpy())
    return list(seconds), net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item(), float(loss)


def run_variant(variant, steps):
    """Run one variant in this process; return a dict of its timings and final weights."""
    import numpy as np

    from course_utils.data import make_linear_data

    x, y = make_linear_data()
    if variant == "numpy":
        seconds, w, b, loss = _numpy_steps(x, y, steps)
    else:
        seconds, w, b, loss = _mindspore_steps(variant, x, y, steps)
    return {"variant": variant, "first_s": seconds[0], "step_s": float(np.median(seconds[1:])),
            "w": w, "b": b, "loss": loss}


# ---- the driver ----------------------------------------------------------------------------------
def measure(variant, steps, timeout=900):
    """Run a variant in a fresh Python process (in a scratch directory) and return its result."""
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:  # MindSpore may write into the cwd
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--variant", variant,
                              "--steps", str(steps)], capture_output=True, text=True, cwd=scratch, env=env,
                             timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"variant {variant} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results):
    """Format {variant: [result per round]} as a text table with ratios to numpy."""
    import numpy as np

    step = {v: float(np.median([r["step_s"] for r in rs])) for v, rs in results.items()}
    first = {v: float(np.median([r["first_s"] for r in rs])) for v, rs in results.items()}
    base = step["numpy"]
    lines = [f"{'variant':30s} {'per step (ms)':>14s} {'x numpy':>9s} {'first call (s)':>15s} "
             f"{'final w':>10s} {'final b':>10s}",
             "-" * 93]
    for v, label in VARIANTS.items():
        if v not in results:
            continue
        last = results[v][-1]
        lines.append(f"{label:30s} {step[v] * 1e3:14.4f} {step[v] / base:9.1f} {first[v]:15.4f} "
                     f"{last['w']:10.6f} {last['b']:10.6f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200, help="training steps per variant and round (>= 2)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per variant, taken in turn (>= 1)")
    parser.add_argument("--variant", choices=sorted(VARIANTS), help=argparse.SUPPRESS)  # child mode
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error(f"--steps must be at least 2 (the first step is timed apart), got {args.steps}")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if args.variant:  # child: one variant, one JSON line
        os.environ.setdefault("GLOG_v", "3")
        print(json.dumps(run_variant(args.variant, args.steps)))
        return 0

    results = {v: [] for v in VARIANTS}
    for r in range(args.rounds):
        for v in VARIANTS:
            print(f"round {r + 1}/{args.rounds}: {VARIANTS[v]} ...", file=sys.stderr, flush=True)
            results[v].append(measure(v, args.steps))
    print(f"MinimalNet, 100 samples, full-batch SGD lr {LR}: {args.steps} steps per run, median of "
          f"{args.rounds} run(s) per variant, each in a fresh process; {os.cpu_count()} CPU(s)")
    print(table(results))
    ms_weights = {(rs[-1]["w"], rs[-1]["b"]) for v, rs in results.items() if v != "numpy"}
    print("final weights identical across the four MindSpore variants:", "yes" if len(ms_weights) == 1 else "NO")
    return 0


if __name__ == "__main__":
    sys.exit(main())
