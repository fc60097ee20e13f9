"""Figures of the learning-rate lab: loss per step (log scale) and the (w, b) path over the loss contours.

``LabFigure`` is the lab's figure. It is built once; axes, ticks and contours are rendered once into a
background image, and each try only restores that background, draws its lines on top (matplotlib
"blitting") and encodes the pixels as PNG. ``side_by_side`` is the static figure for a notebook: one
loss panel and one path panel per run. Diverging runs are drawn as diverging: the loss line runs off
the top of its panel at a marked step, the path leaves the view at a marked point; NaN and inf are
never handed to matplotlib.
"""

import io

import numpy as np

from course_utils._validate import require_series

LOSS_LIMITS = (1e-5, 1e5)
PATH_WINDOW = ((-1.0, 4.0), (-2.0, 3.0))  # (w range, b range) around the optimum (2, 0)
FAR = 1e4  # path coordinates are clipped to +-FAR before drawing, so overflowing runs stay drawable
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def loss_segment(losses, top=LOSS_LIMITS[1]):
    """Return (steps, losses) to draw and the step where the loss leaves the panel (None if it stays).

    A loss above ``top``, inf or NaN ends the line at the top edge of the panel at that step.
    """
    losses = require_series("losses", losses, allow_empty=True)
    with np.errstate(invalid="ignore"):
        off = ~np.isfinite(losses) | (losses > top)
    if off.any():
        k = int(np.argmax(off))
        return np.arange(k + 1), np.clip(np.append(losses[:k], top), LOSS_LIMITS[0], top), k
    return np.arange(losses.size), np.clip(losses, LOSS_LIMITS[0], None), None


def path_segment(path, window=PATH_WINDOW):
    """Return the (w, b) points to draw and the index of the point where the path leaves ``window`` for
    good (None if it ends inside). A path that leaves for good is drawn up to its first point outside,
    pulled in along the last segment if it is absurdly far, so the line visibly crosses the edge."""
    path = require_series("path", path, ndim=None, allow_empty=True)
    if path.ndim != 2 or path.shape[1] != 2:
        raise ValueError(f"path must have one row (w, b) per point, shape (n, 2), got {path.shape}")
    finite = np.all(np.isfinite(path), axis=1)
    if not finite.all():
        path = path[: int(np.argmax(~finite))]
    if not path.size:  # not one finite point: nothing to draw, and the path is out of view from the start
        return path, 0 if not finite.all() else None
    (w0, w1), (b0, b1) = window
    inside = (path[:, 0] >= w0) & (path[:, 0] <= w1) & (path[:, 1] >= b0) & (path[:, 1] <= b1)
    if inside[-1] and finite.all():
        return path, None
    back_inside = np.flatnonzero(inside)
    left_at = int(back_inside[-1] + 1) if back_inside.size else 0
    points = path[: left_at + 1].copy()
    if left_at and np.abs(points[-1]).max() > FAR:
        last_in, out = points[-2], points[-1]
        points[-1] = last_in + (out - last_in) * (FAR / np.abs(out - last_in).max())
    return points, left_at


def _check_runs(runs):
    from course_utils.lab_trainers import Run

    runs = list(runs)
    for run in runs:
        if not isinstance(run, Run):
            raise TypeError(f"runs must be Run objects (what a trainer returns), got {type(run).__name__}")
    return runs


def _loss_axes(ax, surface, steps):
    ax.set_yscale("log")
    ax.set_xlim(0, steps)
    ax.set_ylim(*LOSS_LIMITS)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (log scale)")
    ax.axhline(surface.min_loss, color="0.5", linestyle="--", linewidth=0.8)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)


def _path_axes(ax, surface, window):
    (w0, w1), (b0, b1) = window
    W, B, L = surface.grid((w0, w1), (b0, b1), n=90)
    shown = L[np.isfinite(L) & (L > 0)]
    with np.errstate(divide="ignore", invalid="ignore"):
        ax.imshow(np.log10(np.clip(L, shown.min() if shown.size else 1.0, None)), extent=(w0, w1, b0, b1),
                  origin="lower", aspect="auto", cmap="Blues_r", alpha=0.5, interpolation="bilinear")
    levels = surface.min_loss * np.logspace(0.5, 5, 10)
    if not (np.all(np.isfinite(levels)) and np.all(np.diff(levels) > 0)):  # a perfect fit (min loss 0), or huge data
        levels = np.unique(np.geomspace(shown.min(), shown.max(), 10)) if shown.size else []
    if len(levels) > 1:
        ax.contour(W, B, L, levels=levels, colors="0.45", linewidths=0.5)
    ax.plot(*surface.optimum, "*", color="gold", markeredgecolor="k", markersize=13, zorder=5)
    ax.plot(0, 0, "s", color="k", markersize=5, fillstyle="none")
    ax.set_xlim(w0, w1)
    ax.set_ylim(b0, b1)
    ax.set_xlabel("weight w")
    ax.set_ylabel("bias b")


class LabFigure:
    """Two panels, drawn once. ``render(runs)`` returns PNG bytes of the runs drawn over three layers:

    the background (axes, ticks, contours; redrawn only when the number of steps changes), the earlier
    tries (faded, no markers; cached and extended by one line per try) and the current try (full colour,
    with a marker per step and its label).
    """

    def __init__(self, surface, steps=100, window=PATH_WINDOW, size=(9.6, 3.7), dpi=72):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.surface = surface
        self.window = window
        self.steps = steps
        self.fig = Figure(figsize=size, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax_loss, self.ax_path = self.fig.subplots(1, 2)
        self.fig.subplots_adjust(left=0.07, right=0.98, bottom=0.14, top=0.96, wspace=0.22)
        _loss_axes(self.ax_loss, surface, steps)
        _path_axes(self.ax_path, surface, window)
        self._loss_line = self.ax_loss.plot([], [])[0]
        self._exit_mark = self.ax_loss.plot([], [], "^", markersize=9, clip_on=False)[0]  # leaves the top
        self._path_line = self.ax_path.plot([], [])[0]
        self._end_mark = self.ax_path.plot([], [], "o", markersize=6)[0]  # where the path ends
        self._leave_mark = self.ax_path.plot([], [], "X", markersize=10, markeredgecolor="k")[0]  # leaves view
        self._label = self.ax_loss.text(0.98, 0.96, "", transform=self.ax_loss.transAxes, fontsize=9,
                                        ha="right", va="top", fontweight="bold")
        self._note = self.ax_loss.text(0.02, 0.03, "", transform=self.ax_loss.transAxes, fontsize=10,
                                       color="crimson", va="bottom")
        self._artists = (self._loss_line, self._exit_mark, self._path_line, self._end_mark, self._leave_mark,
                         self._label, self._note)
        for artist in self._artists:
            artist.set_animated(True)  # drawn per try, never part of the cached background
        self._background = None
        self._history = None  # (ids of the runs drawn faded, pixel copy of background + those runs)

    def set_steps(self, steps):
        if steps != self.steps:
            self.steps = steps
            self.ax_loss.set_xlim(0, steps)
            self.invalidate()

    def invalidate(self):
        """Forget the cached pictures: the next render draws everything again."""
        self._background = self._history = None

    def render(self, runs, colors=None, note=""):
        """Draw ``runs`` (the last one highlighted, earlier ones faded) and return the figure as PNG bytes."""
        runs = _check_runs(runs)
        colors = list(colors) if colors is not None else [COLORS[i % len(COLORS)] for i in range(len(runs))]
        if len(colors) != len(runs):
            raise ValueError(f"need one color per run, got {len(colors)} colors for {len(runs)} runs")
        if not runs:
            self.prepare([], [])
            return self._png()
        self.prepare(runs[:-1], colors[:-1])
        return self.finish(runs[-1], colors[-1], note)

    def prepare(self, earlier, colors):
        """Put the background and the faded ``earlier`` runs on the canvas. Needs no new run, so the lab
        calls it while MindSpore is still training."""
        if self._background is None:
            self.canvas.draw()
            self._background = self.canvas.copy_from_bbox(self.fig.bbox)
            self._history = ([], self._background)
        ids = [id(run) for run in earlier]
        drawn, pixels = self._history
        if ids[:len(drawn)] != drawn:  # an earlier try was dropped or cleared: start again from the axes
            drawn, pixels = [], self._background
        self.canvas.restore_region(pixels)
        if len(ids) > len(drawn):
            for run, color in zip(earlier[len(drawn):], colors[len(drawn):]):
                self._draw_run(run, color, current=False)
            self._history = (ids, self.canvas.copy_from_bbox(self.fig.bbox))

    def finish(self, run, color, note=""):
        """Draw the current ``run`` over what ``prepare`` left, with its label and ``note``; return PNG bytes."""
        self._draw_run(run, color, current=True)
        self._label.set_text(f"{run.optimizer} lr={run.lr:.3g}")
        self._label.set_color(color)
        self.ax_loss.draw_artist(self._label)
        if note:
            self._note.set_text(note)
            self.ax_loss.draw_artist(self._note)
        return self._png()

    def _draw_run(self, run, color, current):
        steps, shown, off_at = loss_segment(run.losses)
        points, left_at = path_segment(run.path, self.window)
        self._loss_line.set_data(steps, shown)
        self._path_line.set_data(points[:, 0], points[:, 1])
        self._exit_mark.set_data([off_at] if off_at is not None else [], [LOSS_LIMITS[1]] if off_at is not None else [])
        end = points[-1:] if left_at is None else points[:0]
        self._end_mark.set_data(end[:, 0], end[:, 1])
        leave = points[left_at - 1:left_at] if left_at else points[:0]
        self._leave_mark.set_data(leave[:, 0], leave[:, 1])
        self._loss_line.set_linewidth(2.2 if current else 1.0)
        self._path_line.set_linewidth(1.5 if current else 0.8)
        self._path_line.set_marker("." if current else "")
        self._path_line.set_markersize(4)
        for artist in self._artists[:5]:
            artist.set_color(color)
            artist.set_alpha(1.0 if current else 0.4)
            artist.axes.draw_artist(artist)

    def _png(self):
        from PIL import Image  # matplotlib depends on Pillow

        width, height = self.canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="png", compress_level=1)  # fast beats small here
        return buffer.getvalue()


def side_by_side(runs, surface, window=PATH_WINDOW, title="loss per step"):
    """A static notebook figure: every run's loss in one panel, then one (w, b) path panel per run."""
    import matplotlib.pyplot as plt

    runs = _check_runs(runs)
    if not runs:
        raise ValueError("runs must hold at least one Run")
    fig, axes = plt.subplots(1, len(runs) + 1, figsize=(2.9 * (len(runs) + 1), 3.0), layout="constrained")
    ax_loss = axes[0]
    _loss_axes(ax_loss, surface, max(run.steps for run in runs))
    ax_loss.set_title(title, fontsize=9)
    for i, (run, ax) in enumerate(zip(runs, axes[1:])):
        color = COLORS[i % len(COLORS)]
        _path_axes(ax, surface, window)
        steps, shown, off_at = loss_segment(run.losses)
        ax_loss.plot(steps, shown, color=color, label=f"{run.optimizer} lr={run.lr:g}")
        if off_at is not None:
            ax_loss.plot(off_at, LOSS_LIMITS[1], "^", color=color, markersize=9, clip_on=False)
        points, left_at = path_segment(run.path, window)
        ax.plot(points[:, 0], points[:, 1], ".-", color=color, markersize=3, linewidth=1)
        if left_at is not None:
            if left_at:
                ax.plot(*points[left_at - 1], "X", color=color, markersize=10, markeredgecolor="k")
            ax.set_title(f"{run.optimizer} lr={run.lr:g}: leaves the view at step {left_at}", fontsize=8)
        elif len(points):
            ax.plot(*points[-1], "o", color=color, markersize=6)
            ax.set_title(f"{run.optimizer} lr={run.lr:g}: ends at ({run.final[0]:.2f}, {run.final[1]:.2f})",
                         fontsize=8)
        if i:
            ax.set_ylabel("")
    ax_loss.legend(fontsize=7, loc="upper right")
    return fig
