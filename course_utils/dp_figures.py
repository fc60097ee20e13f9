"""Notebook 15's two pictures: one data-parallel step (shards, gradients, all-reduce) and a launch's timeline.

Both return a matplotlib Figure sized for a 900-pixel notebook column; their text is Chinese in the Chinese
edition (course_utils.figure_text).
"""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from course_utils._validate import require_int
from course_utils.figure_text import text
from course_utils.messages import lazy

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple")


def _box(ax, x, y, w, h, text, colour="white", size=10):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="black", linewidth=1))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)


def _arrow(ax, start, end):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color="dimgray", linewidth=1.2))


def data_parallel_figure(rows=8, workers=2):
    """A batch of ``rows`` rows dealt to ``workers`` shards, a gradient per worker, the all-reduce (mean)
    and the same step on every copy of the network."""
    rows = require_int("rows", rows, 2, 16)
    workers = require_int("workers", workers, 2, len(COLOURS))
    fig, ax = plt.subplots(figsize=(9, 3.8))
    ax.set(xlim=(0, 10), ylim=(0, 6))
    ax.axis("off")
    height = 5.0 / rows
    for r in range(rows):  # the batch, rows dealt out like cards: row r goes to worker r % workers
        _box(ax, 0.2, 5.5 - (r + 1) * height, 1.2, height * 0.9, text(lazy("row {r}"), r=r), COLOURS[r % workers], 10)
    ax.text(0.8, 5.7, text(lazy("one batch")), ha="center", fontsize=10)
    lane = 5.0 / workers
    for k in range(workers):
        y = 5.5 - (k + 1) * lane + lane * 0.2
        mine = ", ".join(str(r) for r in range(k, rows, workers))
        _box(ax, 2.3, y, 2.2, lane * 0.6, text(lazy("worker {k}\nrows {rows}\nloss on its shard"), k=k, rows=mine),
             COLOURS[k], 10)
        _box(ax, 5.0, y, 1.5, lane * 0.6, text(lazy("gradient g{k}"), k=k), "white", 10)
        _arrow(ax, (1.45, 5.5 - (k + 0.5) * lane), (2.3, y + lane * 0.3))
        _arrow(ax, (4.5, y + lane * 0.3), (5.0, y + lane * 0.3))
        _arrow(ax, (6.5, y + lane * 0.3), (7.1, 2.75))
        _box(ax, 8.6, y, 1.3, lane * 0.6, text(lazy("copy {k}:\nw - lr g"), k=k), COLOURS[k], 10)
        _arrow(ax, (8.3, 2.75), (8.6, y + lane * 0.3))
    mean = " + ".join(f"g{k}" for k in range(workers))
    _box(ax, 7.1, 2.1, 1.2, 1.3, text(lazy("all-reduce\n({mean})\n/ {workers}"), mean=mean, workers=workers),
         "lightyellow", 10)
    ax.text(5.0, 0.15, text(lazy("every copy takes the same step from the same weights, so the copies stay equal")),
            ha="center", fontsize=10)
    ax.set_title(text(lazy("One data-parallel step: shards, gradients, all-reduce (gradients_mean=True)")), fontsize=11)
    fig.tight_layout()
    return fig


PHASES = (("started", "imported", lazy("start Python, import MindSpore"), "lightgray"),
          ("imported", "joined", lazy("init(): wait until every process joined"), "tab:orange"),
          ("joined", "trained", lazy("train (50 steps)"), "tab:green"))


def launch_timeline_figure(times, launched, returned):
    """``times[rank]`` holds the wall-clock times a worker wrote (started, imported, joined, trained);
    ``launched``/``returned`` are when launch() was called and returned. One bar per worker, in seconds."""
    if not isinstance(times, dict) or not times:
        raise ValueError("times must map each rank to its dict of times")
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.8 * len(times)))
    for rank, t in sorted(times.items()):
        for start, end, label, colour in PHASES:
            ax.barh(rank, t[end] - t[start], left=t[start] - launched, color=colour, edgecolor="black",
                    label=text(label) if rank == min(times) else None)
    ax.axvline(0, color="black", linewidth=1)
    ax.axvline(returned - launched, color="black", linestyle="--", linewidth=1, label=text(lazy("launch() returns")))
    ax.set(yticks=sorted(times), yticklabels=[f"rank {r}" for r in sorted(times)],
           xlabel=text(lazy("seconds after launch()")),
           title=text(lazy("Timeline of one msrun launch (msrun and the scheduler start first, at 0)")))
    ax.invert_yaxis()
    ax.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.35 - 0.05 * len(times)), ncol=4)
    fig.tight_layout()
    return fig
