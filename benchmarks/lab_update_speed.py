"""How long one slider move of the learning-rate lab takes, from the new value to the redrawn figure.

    .venv/bin/python benchmarks/lab_update_speed.py [--moves 40] [--optimizer SGD] [--steps 100]

The same lab (same widgets, same figure code) is driven twice in one process: once with MindSpore
training the 100 steps (the lab as learners use it) and once with the same updates in plain numpy (the
reference). Moves alternate between the two so that both see the same machine load. Each move sets the
slider to a learning rate not used before (slider positions, including diverging ones) and times the
observer: training, verdict, drawing and PNG encoding. Compilation happens once, before timing.
Targets (issue 3): MindSpore median <= 100 ms and <= 1.3x the numpy median.

``--full-redraw`` makes every move redraw the whole figure (axes, contours, all tries) instead of
reusing the cached picture: slower for both backends, shown for comparison with the issue's estimate
of about 60 ms per figure.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ["GLOG_v"] = "3"  # before mindspore is imported

import numpy as np  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=40, help="timed slider moves per backend (default 40)")
    parser.add_argument("--optimizer", default="SGD", choices=("SGD", "Momentum", "Adam"))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--full-redraw", action="store_true", help="redraw the whole figure on every move")
    args = parser.parse_args(argv)
    os.chdir(tempfile.mkdtemp(prefix="lab-bench-"))  # MindSpore may write graph files into the cwd

    from course_utils.data import make_linear_data
    from course_utils.lab import LearningRateLab
    from course_utils.lab_trainers import MindSporeTrainer, NumpyTrainer

    x, y = make_linear_data()
    t0 = time.perf_counter()
    labs = {"MindSpore": LearningRateLab(MindSporeTrainer(x, y), x, y, optimizer=args.optimizer, steps=args.steps),
            "numpy": LearningRateLab(NumpyTrainer(x, y), x, y, optimizer=args.optimizer, steps=args.steps)}
    labs["MindSpore"].retrain()  # compiles once
    compile_seconds = time.perf_counter() - t0
    labs["numpy"].retrain()

    # slider positions: the FloatLogSlider moves in steps of 0.01 in log10(lr); every move is a new value
    rng = np.random.RandomState(0)
    positions = rng.choice(np.arange(-200, 31), size=args.moves + 5, replace=False)  # lr 0.01 .. 2
    values = [float(10 ** (p / 100)) for p in positions]
    times = {name: [] for name in labs}
    parts = {name: {"train": [], "draw": []} for name in labs}
    for i, lr in enumerate(values):
        for name in (("MindSpore", "numpy") if i % 2 else ("numpy", "MindSpore")):
            lab = labs[name]
            before = lab.image.value
            if args.full_redraw:
                lab.figure.invalidate()
            start = time.perf_counter()
            lab.lr_slider.value = lr
            elapsed = time.perf_counter() - start
            if lab.image.value == before or abs(lab.tries[-1].lr - lr) > 1e-12:
                sys.exit(f"{name}: the move to lr={lr} did not redraw the figure: {lab.message.value}")
            if i >= 5:  # the first moves warm caches up
                times[name].append(elapsed)
                parts[name]["train"].append(lab.timings["train"])
                parts[name]["draw"].append(lab.timings["draw"])

    def ms(values):
        return 1e3 * statistics.median(values)

    print(f"learning-rate lab, {args.optimizer}, {args.steps} steps, {args.moves} moves per backend, "
          f"{'full redraw' if args.full_redraw else 'cached background'}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"MindSpore compile (once, before timing): {compile_seconds:.1f} s")
    for name in labs:
        print(f"{name:>9}: median {ms(times[name]):6.1f} ms per slider move "
              f"(train {ms(parts[name]['train']):5.1f} ms, draw {ms(parts[name]['draw']):5.1f} ms; "
              f"90th percentile {1e3 * float(np.percentile(times[name], 90)):6.1f} ms)")
    ratio = statistics.median(times["MindSpore"]) / statistics.median(times["numpy"])
    print(f"ratio MindSpore / numpy: {ratio:.2f}")
    print(f"targets: median <= 100 ms: {'met' if ms(times['MindSpore']) <= 100 else 'NOT met'}; "
          f"ratio <= 1.3: {'met' if ratio <= 1.3 else 'NOT met'}")


if __name__ == "__main__":
    main()
