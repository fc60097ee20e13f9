"""The lab's figure: loss per step, (w, b) path over the contours, the learning-rate sweep, the fitted line.

``LabFigure`` is built once. What changes only with the setting (axes, contours, the Hessian's
eigenvectors, the data, the sweep's curves and the stability bounds) is rendered into a cached
background; the earlier tries (faded) are cached on top of it; a move draws only the current try and
the marker of its learning rate, then encodes the pixels as PNG (matplotlib "blitting": a move costs a
few milliseconds, not a full redraw). NaN and inf are never handed to matplotlib: a diverging loss line
ends at the top of its panel (▲), a path at the edge of the view (✖).

Since issue 28 the live lab is drawn by the page (``web/lab.js``, in the learner's language); this figure is
the picture a saved notebook keeps of it (``LearningRateLab.picture``), 900 pixels wide, and the static
panels notebooks draw (``side_by_side``). Its text is in the learner's language (``figure_text.text``: Chinese
under ``COURSE_LANG=zh`` when a Chinese font is installed).
"""

import colorsys
import io

import numpy as np

from course_utils._validate import require_series
from course_utils.figure_text import text
from course_utils.messages import lazy

LOSS_LIMITS = (1e-5, 1e5)
PATH_WINDOW = ((-1.0, 4.0), (-2.0, 3.0))  # (w range, b range) around the optimum (2, 0)
FAR = 1e4  # path coordinates are clipped to +-FAR before drawing, so overflowing runs stay drawable
LR_LIMITS = (1e-3, 10.0)
BASE_COLORS = ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
DIVERGED_COLOR = "crimson"
LOSS_PER_STEP = lazy("loss per step")  # side_by_side's title


def color_for(i):
    """The colour of the i-th try: eight distinct ones, then hues spread by the golden angle (no repeats)."""
    if i < len(BASE_COLORS):
        return BASE_COLORS[i]
    r, g, b = colorsys.hsv_to_rgb((0.11 + i * 0.618034) % 1.0, 0.8, 0.55 + 0.3 * ((i * 0.382) % 1.0))
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


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
    from course_utils.lab.runs import Run

    runs = list(runs)
    for run in runs:
        if not isinstance(run, Run):
            raise TypeError(f"runs must be Run objects (what a trainer returns), got {type(run).__name__}")
    return runs


def loss_axes(ax, surface, steps):
    ax.set_yscale("log")
    ax.set_xlim(0, steps)
    ax.set_ylim(*LOSS_LIMITS)
    ax.set_xlabel(text(lazy("step")))
    ax.set_ylabel(text(lazy("loss (log scale)")))
    ax.axhline(surface.min_loss, color="0.5", linestyle="--", linewidth=0.8)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)


def path_axes(ax, surface, window=PATH_WINDOW, eigenvectors=True):
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
    if eigenvectors:  # the Hessian's eigenvectors from the optimum: the steep and the flat direction
        w_opt, b_opt = surface.optimum
        for i, (name, style) in enumerate(((lazy("flat"), "0.2"), (lazy("steep"), "darkred"))):
            vec = surface.eigenvectors[:, i] * 0.9
            ax.annotate("", xy=(w_opt + vec[0], b_opt + vec[1]), xytext=(w_opt, b_opt),
                        arrowprops=dict(arrowstyle="->", color=style, linewidth=1.4))
            ax.text(w_opt + 1.05 * vec[0], b_opt + 1.05 * vec[1], f"{text(name)}: λ={surface.eigenvalues[i]:.2f}",
                    color=style, fontsize=9.5, ha="left" if vec[0] >= 0 else "right", va="center",
                    bbox=dict(boxstyle="round,pad=0.1", facecolor="white", alpha=0.75, edgecolor="none"))
    ax.plot(*surface.optimum, "*", color="gold", markeredgecolor="k", markersize=13, zorder=5)
    ax.set_xlim(w0, w1)
    ax.set_ylim(b0, b1)
    ax.set_xlabel(text(lazy("weight w")))
    ax.set_ylabel(text(lazy("bias b")))


def bounds_of(surface, optimizer, momentum):
    """The closed-form learning-rate bounds of an optimizer on this bowl: [(lr, label, colour), ...]."""
    if optimizer == "SGD":
        return [(1 / surface.lambda_max, lazy("zig-zag above 1/λmax"), "0.35"),
                (surface.stability_bound(), lazy("diverges above 2/λmax"), DIVERGED_COLOR)]
    if optimizer == "Momentum":
        return [(surface.stability_bound(momentum), lazy("diverges above 2(1+β)/λmax"), DIVERGED_COLOR)]
    return []  # Adam: no closed-form bound (its step size adapts)


class LabFigure:
    """Four panels. ``render(runs, sweep)`` returns PNG bytes; ``prepare``/``finish`` split it (see module)."""

    def __init__(self, surface, steps=100, window=PATH_WINDOW, size=(9.0, 5.8), dpi=100):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.surface = surface
        self.window = window
        self.steps = steps
        self.fig = Figure(figsize=size, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        (self.ax_loss, self.ax_path), (self.ax_sweep, self.ax_fit) = self.fig.subplots(2, 2)
        self.fig.subplots_adjust(left=0.08, right=0.97, bottom=0.09, top=0.95, wspace=0.42, hspace=0.38)
        self.ax_steps = self.ax_sweep.twinx()
        loss_axes(self.ax_loss, surface, steps)
        path_axes(self.ax_path, surface, window)
        self._fit_axes()
        self._sweep_artists = []
        self._sweep_key = None
        a = self.ax_loss
        self._loss_line = a.plot([], [])[0]
        self._exit_mark = a.plot([], [], "^", markersize=9, clip_on=False)[0]  # leaves the top
        self._path_line = self.ax_path.plot([], [])[0]
        self._end_mark = self.ax_path.plot([], [], "o", markersize=6)[0]  # where the path ends
        self._leave_mark = self.ax_path.plot([], [], "X", markersize=10, markeredgecolor="k")[0]  # leaves view
        self._fit_line = self.ax_fit.plot([], [], linewidth=2)[0]
        self._lr_mark = self.ax_sweep.axvline(1.0, linewidth=2)
        self._label = a.text(0.98, 0.96, "", transform=a.transAxes, fontsize=10, ha="right", va="top",
                             fontweight="bold")
        self._note = a.text(0.02, 0.03, "", transform=a.transAxes, fontsize=10, color=DIVERGED_COLOR, va="bottom")
        self._artists = (self._loss_line, self._exit_mark, self._path_line, self._end_mark, self._leave_mark,
                         self._fit_line, self._lr_mark, self._label, self._note)
        for artist in self._artists:
            artist.set_animated(True)  # drawn per try, never part of the cached background
        self._background = None
        self._history = None  # (ids of the runs drawn faded, pixel copy of background + those runs)

    def _fit_axes(self):
        ax, s = self.ax_fit, self.surface
        ax.plot(s.x, s.y, ".", color="0.55", markersize=4, label=text(lazy("data")))
        xs = np.array([s.x.min(), s.x.max()])
        ax.plot(xs, s.optimum[0] * xs + s.optimum[1], "--", color="goldenrod", linewidth=1.2,
                label=text(lazy("best fit")))
        span = np.ptp(s.y) or 1.0
        ax.set_ylim(s.y.min() - 0.6 * span, s.y.max() + 0.6 * span)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title(text(lazy("the fitted line w·x + b")), fontsize=10)
        ax.legend(fontsize=9.5, loc="upper left")

    def set_steps(self, steps):
        if steps != self.steps:
            self.steps = steps
            self.ax_loss.set_xlim(0, steps)
            self.invalidate()

    def set_sweep(self, sweep, kinds=None, optimum=None):
        """Draw ``sweep`` (final loss and steps to converge against the learning rate) into the background."""
        key = (id(sweep), sweep.steps if sweep is not None else None)
        if key == self._sweep_key:
            return
        self._sweep_key = key
        for artist in self._sweep_artists:
            artist.remove()
        self._sweep_artists = []
        ax, ax2 = self.ax_sweep, self.ax_steps
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*LR_LIMITS)
        ax.set_ylim(*LOSS_LIMITS)
        ax.set_xlabel(text(lazy("learning rate (log scale)")))
        ax.set_ylabel(text(lazy("final loss")), color="tab:blue")
        ax2.set_ylabel(text(lazy("steps to converge")), color="tab:green")
        ax2.set_ylim(0, max(self.steps, 1) * 1.05)
        if sweep is None:
            self.invalidate()
            return
        final = sweep.final_losses()
        with np.errstate(invalid="ignore"):
            off = ~np.isfinite(final) | (final > LOSS_LIMITS[1])
        shown = np.clip(np.where(off, LOSS_LIMITS[1], final), LOSS_LIMITS[0], LOSS_LIMITS[1])
        add = self._sweep_artists.extend
        add(ax.plot(sweep.lrs, np.where(off, np.nan, shown), color="tab:blue", linewidth=1.5))
        if kinds is not None:
            bad = np.isin(kinds, ("diverged", "diverging"))
            add(ax.plot(sweep.lrs[bad], shown[bad], "|", color=DIVERGED_COLOR, markersize=7))
        steps_needed = sweep.steps_to_converge(optimum if optimum is not None else self.surface.optimum)
        add(ax2.plot(sweep.lrs, steps_needed, color="tab:green", linewidth=1.5))
        for lr, label, color in bounds_of(self.surface, sweep.optimizer, sweep.momentum or 0.0):
            add([ax.axvline(lr, color=color, linestyle=":" if color != DIVERGED_COLOR else "--", linewidth=1.2)])
            add([ax.text(lr, 2e4 if color == DIVERGED_COLOR else 2e2, f" {text(label)}", color=color, fontsize=9.5,
                         ha="right" if lr > 0.3 else "left", va="top", rotation=0)])
        bounds = "" if sweep.optimizer != "Adam" else text(lazy(" (no closed-form bound)"))
        ax.set_title(text(lazy("sweep: {label}, {steps} steps"), label=sweep.label, steps=sweep.steps) + bounds,
                     fontsize=10)
        self.invalidate()

    def invalidate(self):
        """Forget the cached pictures: the next render draws everything again."""
        self._background = self._history = None

    def render(self, runs, colors=None, note=""):
        """Draw ``runs`` (the last one highlighted, earlier ones faded) and return the figure as PNG bytes."""
        runs = _check_runs(runs)
        colors = list(colors) if colors is not None else [color_for(i) for i in range(len(runs))]
        if len(colors) != len(runs):
            raise ValueError(f"need one color per run, got {len(colors)} colors for {len(runs)} runs")
        if not runs:
            self.prepare([], [])
            return self._png()
        self.prepare(runs[:-1], colors[:-1])
        return self.finish(runs[-1], colors[-1], note)

    def prepare(self, earlier, colors):
        """Put the background and the faded ``earlier`` runs on the canvas."""
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
        self._label.set_text(run.label)
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
        artists = list(self._artists[:5])
        if current:
            end = run.path[-1]
            xs = np.array([self.surface.x.min(), self.surface.x.max()])
            drawable = bool(np.all(np.isfinite(end)) and np.abs(end).max() < FAR)
            self._fit_line.set_data(xs, end[0] * xs + end[1] if drawable else [np.nan, np.nan])
            self._lr_mark.set_xdata([run.lr, run.lr])
            artists += [self._fit_line, self._lr_mark]
        for artist in artists:
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


def side_by_side(runs, surface, window=PATH_WINDOW, title=LOSS_PER_STEP):
    """A static notebook figure: every run's loss in one panel, then one (w, b) path panel per run,
    three panels a row (readable in a 900-pixel column)."""
    import matplotlib.pyplot as plt

    runs = _check_runs(runs)
    if not runs:
        raise ValueError("runs must hold at least one Run")
    rows = -(-(len(runs) + 1) // 3)
    fig, axes = plt.subplots(rows, 3, figsize=(9.0, 3.0 * rows), layout="constrained", squeeze=False)
    axes = axes.ravel()
    for ax in axes[len(runs) + 1:]:
        ax.set_visible(False)
    ax_loss = axes[0]
    loss_axes(ax_loss, surface, max(run.steps for run in runs))
    ax_loss.set_title(text(title), fontsize=10)
    for i, (run, ax) in enumerate(zip(runs, axes[1:])):
        color = color_for(i)
        path_axes(ax, surface, window, eigenvectors=False)
        steps, shown, off_at = loss_segment(run.losses)
        ax_loss.plot(steps, shown, color=color, label=run.label)
        if off_at is not None:
            ax_loss.plot(off_at, LOSS_LIMITS[1], "^", color=color, markersize=9, clip_on=False)
        points, left_at = path_segment(run.path, window)
        ax.plot(points[:, 0], points[:, 1], ".-", color=color, markersize=3, linewidth=1)
        if left_at is not None:
            if left_at:
                ax.plot(*points[left_at - 1], "X", color=color, markersize=10, markeredgecolor="k")
            ax.set_title(text(lazy("{run}: leaves the view at step {step}"), run=run.label, step=left_at), fontsize=9)
        elif len(points):
            ax.plot(*points[-1], "o", color=color, markersize=6)
            ax.set_title(text(lazy("{run}: ends at ({w:.2f}, {b:.2f})"), run=run.label, w=run.final[0], b=run.final[1]),
                         fontsize=9)
    ax_loss.legend(fontsize=8, loc="upper right")
    return fig
