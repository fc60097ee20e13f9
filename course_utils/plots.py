"""Plots of training: the loss curve on a log scale, and the path of (w, b) towards the target."""

import numpy as np

from course_utils._validate import require_series, shown


def _as_series(name, values, allow_nonfinite=False):
    if isinstance(values, str):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got str")
    arr = require_series(name, values, ndim=None, allow_empty=True)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    if not allow_nonfinite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5, 3.2))
    elif not hasattr(ax, "plot"):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def plot_loss(losses, ax=None, label=None, title="Training loss"):
    """Draw losses per step on a log scale. NaN/inf steps are cut off and marked 'diverged'."""
    arr = _as_series("losses", losses, allow_nonfinite=True)
    ax = _axes(ax)
    finite = np.isfinite(arr)
    last = np.argmin(finite) if not finite.all() else arr.size
    steps = np.arange(arr.size)
    line, = ax.plot(steps[:last], np.clip(arr[:last], 1e-12, None), label=label)
    if last < arr.size:
        ax.axvline(last, color=line.get_color(), linestyle=":", linewidth=1)
        ax.annotate("diverged", (last, 0.5), xycoords=("data", "axes fraction"), color=line.get_color())
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (log scale)")
    ax.set_title(title)
    if label is not None:
        ax.legend()
    return ax


def plot_trajectory(ws, bs, target=(2.0, 0.0), ax=None, label=None, title="Parameters during training"):
    """Draw the path of (w, b), its start and end, and the target point."""
    w = _as_series("ws", ws)
    b = _as_series("bs", bs)
    if w.size != b.size:
        raise ValueError(f"ws and bs must have the same length, got {w.size} and {b.size}")
    pair = require_series("target", target, ndim=None)
    if pair.shape != (2,) or not np.all(np.isfinite(pair)):
        raise ValueError(f"target must be a finite pair (w, b), got {shown(target)}")
    ax = _axes(ax)
    line, = ax.plot(w, b, marker=".", markersize=3, label=label)
    ax.plot(w[0], b[0], "o", color=line.get_color(), fillstyle="none")
    ax.plot(target[0], target[1], "*", color="crimson", markersize=12, label="target")
    ax.set_xlabel("weight w")
    ax.set_ylabel("bias b")
    ax.set_title(title)
    ax.legend()
    return ax
