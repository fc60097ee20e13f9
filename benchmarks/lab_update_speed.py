"""The learning-rate lab's three speed targets (issue 17), measured side by side in one run.

    .venv/bin/python benchmarks/lab_update_speed.py [--moves 60] [--sweeps 9] [--starts 3]

1. A slider move (look the learning rate up in the setting's batched sweep, judge the run, draw) against
   the floor: redrawing the same figure without training. Moves and floor redraws alternate, so both
   see the same machine load. Target: median <= 1.2x the floor's median, 90th percentile <= 2x.
2. The batched sweep (all 401 slider learning rates, 100 steps) in MindSpore against the same batched
   arithmetic in numpy, per optimizer, interleaved, medians. Target: MindSpore <= 1.0x numpy.
3. First display: a fresh Python process imports the lab (and MindSpore), compiles the first optimizer,
   trains its sweep and draws the first try. Median of ``--starts`` processes. Target: <= 5 s.

The last lines print the three figures and say met / not met. On a loaded machine (the load average is
printed) the ratios stay meaningful, the absolute first-display time does not.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["GLOG_v"] = "3"  # before mindspore is imported

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIRST_DISPLAY = """
import os, time
os.environ["GLOG_v"] = "3"
started = time.perf_counter()
from course_utils.lab import learning_rate_lab
lab = learning_rate_lab(show=False)
assert lab.image.value and lab.tries
print(time.perf_counter() - started)
"""


def slider_moves(moves):
    from course_utils.data import make_linear_data
    from course_utils.lab import LR_GRID, LearningRateLab, MindSporeTrainer

    x, y = make_linear_data()
    lab = LearningRateLab(MindSporeTrainer(x, y), x, y)
    lab.retrain()  # compiles SGD and trains its sweep, once
    clock = [0.0]
    lab._clock = lambda: clock[0]  # moves a learner makes one by one: each adds a try
    rng = np.random.RandomState(0)
    positions = rng.choice(np.arange(100, 331), size=moves + 5, replace=False)  # lr 0.01 .. 2, slider positions
    move_times, floor_times = [], []
    for i, position in enumerate(positions):
        clock[0] += 10.0
        before = lab.image.value
        start = time.perf_counter()
        lab.lr_slider.value = float(LR_GRID[position])
        move = time.perf_counter() - start
        if lab.image.value == before or lab.tries[-1].run.lr != LR_GRID[position]:
            sys.exit(f"the move to lr={LR_GRID[position]} did not redraw the figure: {lab.message.value}")
        start = time.perf_counter()
        lab.redraw()  # the same figure, no training and no judging: the floor
        floor = time.perf_counter() - start
        if i >= 5:  # the first moves warm caches up
            move_times.append(move)
            floor_times.append(floor)
    return move_times, floor_times


def batched_sweeps(repeats):
    from course_utils.data import make_linear_data
    from course_utils.lab import MindSporeTrainer, NumpyTrainer

    x, y = make_linear_data()
    trainers = {"MindSpore": MindSporeTrainer(x, y), "numpy": NumpyTrainer(x, y)}
    result = {}
    for optimizer in ("SGD", "Momentum", "Adam"):
        trainers["MindSpore"].compile(optimizer)
        times = {name: [] for name in trainers}
        for i in range(repeats):
            for name in (("MindSpore", "numpy") if i % 2 else ("numpy", "MindSpore")):
                start = time.perf_counter()
                trainers[name].sweep(optimizer, None, 100)
                times[name].append(time.perf_counter() - start)
        result[optimizer] = {name: statistics.median(t) for name, t in times.items()}
    return result


def first_display(starts):
    times = []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for _ in range(starts):
        with tempfile.TemporaryDirectory(prefix="lab-bench-") as cwd:  # MindSpore may write into the cwd
            out = subprocess.run([sys.executable, "-c", FIRST_DISPLAY], cwd=cwd, env=env, capture_output=True,
                                 text=True, timeout=300)
        if out.returncode:
            sys.exit(f"the first-display process failed:\n{out.stderr[-2000:]}")
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=60, help="timed slider moves (default 60)")
    parser.add_argument("--sweeps", type=int, default=9, help="timed sweeps per backend and optimizer (default 9)")
    parser.add_argument("--starts", type=int, default=3, help="fresh processes for the first display (default 3)")
    args = parser.parse_args(argv)
    os.chdir(tempfile.mkdtemp(prefix="lab-bench-"))

    print(f"learning-rate lab, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    starts = first_display(args.starts)
    moves, floors = slider_moves(args.moves)
    sweeps = batched_sweeps(args.sweeps)

    def ms(seconds):
        return f"{1e3 * seconds:6.1f} ms"

    print(f"slider move: median {ms(statistics.median(moves))}, 90th percentile {ms(np.percentile(moves, 90))}; "
          f"redraw alone (floor): median {ms(statistics.median(floors))}, 90th percentile "
          f"{ms(np.percentile(floors, 90))}")
    for optimizer, times in sweeps.items():
        print(f"batched sweep, {optimizer:8s} (401 lrs x 100 steps): MindSpore {ms(times['MindSpore'])}, "
              f"numpy {ms(times['numpy'])}")
    print(f"first display (fresh process, import + compile + sweep + draw): "
          f"{', '.join(f'{t:.2f} s' for t in starts)}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")

    floor = statistics.median(floors)
    median_ratio = statistics.median(moves) / floor
    p90_ratio = float(np.percentile(moves, 90)) / floor
    sweep_ratio = max(t["MindSpore"] / t["numpy"] for t in sweeps.values())
    first = statistics.median(starts)

    def verdict(ok):
        return "met" if ok else "NOT met"

    print("targets:")
    print(f"  (1) slider move / redraw floor: median {median_ratio:.2f}x (<= 1.2: {verdict(median_ratio <= 1.2)}), "
          f"90th percentile {p90_ratio:.2f}x (<= 2: {verdict(p90_ratio <= 2.0)})")
    print(f"  (2) batched sweep MindSpore / numpy, worst optimizer: {sweep_ratio:.2f}x "
          f"(<= 1.0: {verdict(sweep_ratio <= 1.0)})")
    print(f"  (3) first display, compile included: {first:.2f} s (<= 5 s: {verdict(first <= 5.0)})")


if __name__ == "__main__":
    main()
