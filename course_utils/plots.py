"""Plots of training: the loss curve on a log scale, the path of (w, b) towards the target, and the decision
boundary of a classifier of 2-D points. Their text is Chinese in the Chinese edition (course_utils.figure_text)."""

import numpy as np

from course_utils._validate import require_int, require_series, shown
from course_utils.figure_text import text
from course_utils.messages import lazy

# The default titles (a title passed in is shown as given, or in Chinese when the catalogue has it).
LOSS_TITLE = lazy("Training loss")
TRAJECTORY_TITLE = lazy("Parameters during training")
HOOKS_TITLE = lazy("Callback hooks in the order Model.fit called them")


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


def plot_loss(losses, ax=None, label=None, title=LOSS_TITLE):
    """Draw losses per step on a log scale. NaN/inf steps are cut off and marked 'diverged'."""
    arr = _as_series("losses", losses, allow_nonfinite=True)
    ax = _axes(ax)
    finite = np.isfinite(arr)
    last = np.argmin(finite) if not finite.all() else arr.size
    steps = np.arange(arr.size)
    line, = ax.plot(steps[:last], np.clip(arr[:last], 1e-12, None), label=None if label is None else text(label))
    if last < arr.size:
        ax.axvline(last, color=line.get_color(), linestyle=":", linewidth=1)
        ax.annotate(text(lazy("diverged")), (last, 0.5), xycoords=("data", "axes fraction"), color=line.get_color())
    ax.set_yscale("log")
    ax.set_xlabel(text(lazy("step")))
    ax.set_ylabel(text(lazy("loss (log scale)")))
    ax.set_title(text(title))
    if label is not None:
        ax.legend()
    return ax


def plot_trajectory(ws, bs, target=(2.0, 0.0), ax=None, label=None, title=TRAJECTORY_TITLE):
    """Draw the path of (w, b), its start and end, and the target point."""
    w = _as_series("ws", ws)
    b = _as_series("bs", bs)
    if w.size != b.size:
        raise ValueError(f"ws and bs must have the same length, got {w.size} and {b.size}")
    pair = require_series("target", target, ndim=None)
    if pair.shape != (2,) or not np.all(np.isfinite(pair)):
        raise ValueError(f"target must be a finite pair (w, b), got {shown(target)}")
    ax = _axes(ax)
    line, = ax.plot(w, b, marker=".", markersize=3, label=None if label is None else text(label))
    ax.plot(w[0], b[0], "o", color=line.get_color(), fillstyle="none")
    ax.plot(target[0], target[1], "*", color="crimson", markersize=12, label=text(lazy("target")))
    ax.set_xlabel(text(lazy("weight w")))
    ax.set_ylabel(text(lazy("bias b")))
    ax.set_title(text(title))
    ax.legend()
    return ax


def _points_and_labels(x, labels):
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.ndim != 2 or x.shape[1] != 2 or x.shape[0] == 0:
        raise ValueError(f"x must be a float array of 2-D points, shape (n, 2), got {shown(x)}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or inf")
    if not isinstance(labels, np.ndarray) or labels.dtype.kind not in "iu" or labels.shape != (x.shape[0],):
        raise ValueError(f"labels must be an int array of shape ({x.shape[0]},) (one class per point), "
                         f"got {shown(labels)}")
    if labels.min() < 0 or labels.max() > 9:
        raise ValueError(f"labels must be classes 0 to 9, got values from {labels.min()} to {labels.max()}")
    return x, labels


def _predicted_classes(predict, grid):
    """Classes ``predict`` gives for the grid points: it may return classes (m,) or logits/scores (m, K)."""
    out = predict(grid)
    if hasattr(out, "asnumpy"):
        out = out.asnumpy()
    out = np.asarray(out)
    if out.dtype.kind not in "iuf" or out.shape[:1] != (len(grid),) or out.ndim not in (1, 2):
        raise ValueError(f"predict(points) must return classes of shape ({len(grid)},) or logits of shape "
                         f"({len(grid)}, classes) for points of shape {grid.shape}, got {shown(out)}")
    if not np.all(np.isfinite(out)):
        raise ValueError("predict(points) returned NaN or inf")
    classes = out.argmax(axis=1) if out.ndim == 2 else out.astype(np.int64)
    if classes.min() < 0 or classes.max() > 9 or (out.ndim == 1 and not np.array_equal(classes, out)):
        raise ValueError(f"predict(points) must return whole classes 0 to 9 (or logits of up to 10 classes), "
                         f"got {shown(out)}")
    return classes


def plot_decision_boundary(predict, x, labels, ax=None, title=None, resolution=150):
    """Colour the plane by the class ``predict`` gives each point, and draw the points ``x`` coloured by label.

    ``predict`` takes float32 points of shape (m, 2) (a numpy array) and returns classes (m,) or logits
    (m, K), as a numpy array or a Tensor: e.g. ``lambda p: net(Tensor(p))``.
    """
    if not callable(predict):
        raise TypeError(f"predict must be a function of an (m, 2) float32 array, got {type(predict).__name__}")
    x, labels = _points_and_labels(x, labels)
    resolution = require_int("resolution", resolution, 10, 1000)
    ax = _axes(ax)
    low, high = x.min(axis=0), x.max(axis=0)
    margin = 0.1 * np.maximum(high - low, 1e-3)
    gx, gy = np.meshgrid(np.linspace(low[0] - margin[0], high[0] + margin[0], resolution),
                         np.linspace(low[1] - margin[1], high[1] + margin[1], resolution))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
    classes = _predicted_classes(predict, grid).reshape(gx.shape)
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
               "tab:brown", "tab:pink", "tab:gray", "tab:olive", "tab:cyan"]
    k = int(max(classes.max(), labels.max())) + 1
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(colours[:k])
    ax.contourf(gx, gy, classes, levels=np.arange(k + 1) - 0.5, cmap=cmap, alpha=0.25)
    ax.scatter(x[:, 0], x[:, 1], c=labels, cmap=cmap, vmin=-0.5, vmax=k - 0.5, s=12, edgecolors="white",
               linewidths=0.3)
    ax.set_xlim(gx.min(), gx.max())
    ax.set_ylim(gy.min(), gy.max())
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    if title is not None:
        ax.set_title(text(title))
    return ax


HOOK_LANES = ("train", "train_epoch", "train_step", "eval", "eval_epoch", "eval_step")
# A bar's label: the whole run, validation, or the lane's last word (epoch, step), and its number.
_LANE_LABELS = {"train": lazy("the whole run"), "eval": lazy("validation"), "epoch": lazy("epoch"),
                "step": lazy("step")}


def plot_hook_timeline(calls, ax=None, title=HOOKS_TITLE):
    """Draw recorded callback hooks ("on_train_begin", "on_eval_step_end", ...) as nested bars over time.

    Each ``on_X_begin`` ... ``on_X_end`` pair becomes one bar on lane X, from the position of its begin
    call to that of its end call (positions 0, 1, 2, ... in ``calls``), so nesting and order can be read.
    """
    if isinstance(calls, str) or not all(isinstance(c, str) for c in calls) or not calls:
        raise TypeError(f"calls must be a non-empty list of hook names such as 'on_train_begin', got {shown(calls)}")
    open_at, bars = {}, []
    for i, name in enumerate(calls):
        lane, _, edge = name.removeprefix("on_").rpartition("_")
        if lane not in HOOK_LANES or edge not in ("begin", "end"):
            raise ValueError(f"{name!r} is not a hook of the form on_<{'|'.join(HOOK_LANES)}>_<begin|end>")
        if edge == "begin":
            open_at[lane] = i
        elif lane not in open_at:
            raise ValueError(f"{name!r} at position {i} has no {lane} begin before it")
        else:
            bars.append((lane, open_at.pop(lane), i))
    ax = _axes(ax)
    counts = dict.fromkeys(HOOK_LANES, 0)
    for lane, start, end in bars:
        row = len(HOOK_LANES) - 1 - HOOK_LANES.index(lane)
        counts[lane] += 1
        colour = "tab:blue" if lane.startswith("train") else "tab:orange"
        ax.barh(row, end - start, left=start, height=0.6, color=colour, alpha=0.35, edgecolor=colour)
        label = _LANE_LABELS.get(lane, _LANE_LABELS[lane.split("_")[-1]])
        ax.text((start + end) / 2, row, text(lazy("{label} {n}"), label=text(label), n=counts[lane]), ha="center",
                va="center", fontsize=8)
    ax.set_yticks(range(len(HOOK_LANES)), [f"on_{lane}_*" for lane in reversed(HOOK_LANES)])
    ax.set_xlim(-0.5, len(calls) - 0.5)
    ax.set_xlabel(text(lazy("position in the recorded sequence of hook calls")))
    ax.set_title(text(title))
    return ax
