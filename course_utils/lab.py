"""The learning-rate lab: move a slider, MindSpore retrains y ~ w*x + b, the loss curve and path redraw.

    from course_utils.lab import learning_rate_lab
    lab = learning_rate_lab()        # shows the app; compiles MindSpore once ("compiling..." meanwhile)

Controls: a log-scale learning-rate slider ("learning rate"), a box to type an exact value ("type lr"),
the optimizer (SGD, Momentum 0.9, Adam), the number of steps, and a button that clears earlier tries.
Every change is one new try: the trainer retrains from the same start, and earlier tries stay drawn
(faded) until cleared (after ``max_tries`` tries the older half is forgotten, with a message). The
status line says in words what happened ("converged ...", "still learning ...", "DIVERGED at step k").
Bad input (lr <= 0, NaN, text, huge steps) is clamped or refused with a message, never raised.
Everything is testable headless: ``lab.set(lr=...)``, ``lab.status.value``,
``lab.image.value`` (PNG bytes).
"""

import html
import math
import time

import numpy as np

from course_utils._validate import require_int, require_series
from course_utils.lab_figure import COLORS, LabFigure
from course_utils.lab_trainers import OPTIMIZERS, Run, check_settings
from course_utils.landscape import LossSurface, steps_to_converge

LR_RANGE = (1e-3, 10.0)
STEPS_RANGE = (10, 500)
TOLERANCE = 0.01  # "converged": w and b both within 0.01 of the least-squares fit, for good
CSS_PREFIX = "lr-lab"  # DOM class names for browser tests: lr-lab-slider, lr-lab-status, ...


class Verdict:
    """What a run did, in numbers and in one sentence (``text``)."""

    def __init__(self, kind, text, diverged_at=None, growth=None, converged_at=None, zigzag=False):
        self.kind = kind  # "converged", "learning", "diverged" or "stuck"
        self.text = text
        self.diverged_at = diverged_at
        self.growth = growth
        self.converged_at = converged_at
        self.zigzag = zigzag

    def __repr__(self):
        return f"Verdict({self.kind!r}, {self.text!r})"


def describe_run(run, surface, tol=TOLERANCE):
    """Classify a run: converged (when), still learning, or diverged (from which step, how fast)."""
    if not isinstance(run, Run):
        raise TypeError(f"run must be a Run (what a trainer returns), got {type(run).__name__}")
    losses = run.losses
    if losses.size == 0:
        raise ValueError("the run has no steps: there is nothing to describe")
    finite = np.isfinite(losses)
    start = losses[0]
    if not np.isfinite(start):
        kind = "inf" if np.isinf(start) else "NaN"
        return Verdict("diverged", f"DIVERGED at step 0: the loss is already {kind} at the start (is the start "
                                   f"point or the data finite?)", diverged_at=0)
    with np.errstate(invalid="ignore", over="ignore"):
        above = ~finite | (losses > start)
    if above[-1] and (not finite.all() or losses[-1] > 1.5 * start):
        below = np.flatnonzero(~above)
        diverged_at = int(below[-1] + 1) if below.size else 0
        last = int(np.flatnonzero(finite)[-1]) if finite.any() else 0
        first = max(diverged_at, last - 20)
        with np.errstate(all="ignore"):
            growth = float(np.exp((np.log(losses[last]) - np.log(losses[first])) / max(last - first, 1)))
        if finite.all() and growth <= 1.0:
            return Verdict("stuck", f"overshot: the loss ({losses[-1]:.3g}) is above its start ({start:.3g}) "
                                    f"and falls ×{growth:.2f} per step", growth=growth)
        text = f"DIVERGED at step {diverged_at}: the loss grows ×{growth:.2f} per step"
        if not finite.all():
            first_bad = int(np.argmax(~finite))
            kind = "inf" if np.isinf(losses[first_bad]) else "NaN"
            text += f" and overflows to {kind} at step {first_bad}"
        else:
            text += f", up to {losses[-1]:.3g} at the last step"
        return Verdict("diverged", text, diverged_at=diverged_at, growth=growth)
    w, b = run.final
    converged_at = steps_to_converge(run.path, surface.optimum, tol)
    zigzag = _zigzags(run.path, surface)
    tail = " (w, b) zig-zags across the valley." if zigzag else ""
    if converged_at is not None:
        return Verdict("converged", f"converged: within {tol} of the best fit from step {converged_at}, "
                                    f"final loss {losses[-1]:.3e}, w={w:.4f}, b={b:.4f}.{tail}",
                       converged_at=converged_at, zigzag=zigzag)
    if losses[-1] < start:
        best_w, best_b = surface.optimum
        return Verdict("learning", f"still learning: final loss {losses[-1]:.3e}, w={w:.4f}, b={b:.4f} "
                                   f"(best fit w={best_w:.4f}, b={best_b:.4f}).{tail}", zigzag=zigzag)
    return Verdict("stuck", f"no progress: final loss {losses[-1]:.3e} is not below the start {start:.3e}.{tail}",
                   zigzag=zigzag)


def _zigzags(path, surface):
    """True when the distance to the optimum along the steep direction flips sign on most steps."""
    steep = surface.eigenvectors[:, -1]
    with np.errstate(all="ignore"):  # an overflowing path: NaN and inf compare as no flip
        along = (path - np.asarray(surface.optimum)) @ steep
    along = along[np.abs(along) > 1e-3]  # ignore the flips of a converged run's rounding noise
    return along.size > 5 and np.mean(np.sign(along[1:]) != np.sign(along[:-1])) > 0.5


def _parse_number(value, name):
    """Return (float, None) or (None, message) for anything a learner may type or pass."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None, f"{name}: {value!r} is not a number"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None, f"{name}: expected a number, got {type(value).__name__}"
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range: as far off the range as inf
        value = math.inf if value > 0 else -math.inf
    if math.isnan(value):
        return None, f"{name}: NaN is not a value you can train with"
    return value, None


class LearningRateLab:
    """The lab's state, its widgets and the update logic. ``trainer``: a MindSporeTrainer (or NumpyTrainer)."""

    def __init__(self, trainer, x, y, start=(0.0, 0.0), lr=0.1, optimizer="SGD", steps=100, max_tries=40):
        import ipywidgets as widgets

        for method in ("launch", "collect", "compile", "is_compiled"):
            if not callable(getattr(trainer, method, None)):
                raise TypeError(f"trainer must have a {method}() method (a MindSporeTrainer or NumpyTrainer), "
                                f"got {type(trainer).__name__}")
        check_settings(optimizer, lr, steps)
        data = getattr(trainer, "data", None)
        if data is not None and not (np.array_equal(data[0], x) and np.array_equal(data[1], y)):
            raise ValueError("the trainer trains on other data than the x and y given to the lab: build the "
                             "trainer from the same x and y (or pass neither)")
        if not LR_RANGE[0] <= lr <= LR_RANGE[1] or not STEPS_RANGE[0] <= steps <= STEPS_RANGE[1] or steps % 10:
            raise ValueError(f"lr must be in {LR_RANGE} and steps a multiple of 10 in {STEPS_RANGE}, "
                             f"got lr={lr!r}, steps={steps!r}")
        require_int("max_tries", max_tries, 2, 200)
        self.trainer = trainer
        self.surface = LossSurface(x, y)
        start = require_series("start", start)
        if start.shape != (2,) or not np.all(np.isfinite(start)):
            raise ValueError(f"start must be a finite pair (w, b), got {start.tolist()}")
        self.start = (float(start[0]), float(start[1]))
        self.max_tries = max_tries
        self.tries = []
        self.colors = []  # one color per try, kept while the try is shown
        self.verdicts = []
        self._count = 0
        self.verdict = None
        self.timings = {}
        self._lr = lr
        self._muted = False
        self.figure = LabFigure(self.surface, steps=steps)

        self.lr_slider = widgets.FloatLogSlider(value=lr, base=10, min=math.log10(LR_RANGE[0]),
                                                max=math.log10(LR_RANGE[1]), step=0.01, readout_format=".3g",
                                                description="learning rate", continuous_update=False)
        self.lr_text = widgets.Text(value="", placeholder="e.g. 0.8", description="type lr",
                                    continuous_update=False)
        self.optimizer = widgets.ToggleButtons(options=OPTIMIZERS, value=optimizer, description="optimizer")
        self.steps = widgets.IntSlider(value=steps, min=STEPS_RANGE[0], max=STEPS_RANGE[1], step=10,
                                       description="steps", continuous_update=False)
        self.clear_button = widgets.Button(description="clear earlier tries", icon="eraser")
        self.status = widgets.HTML(value="")
        self.message = widgets.HTML(value="")
        self.tries_list = widgets.HTML(value="")
        self.image = widgets.Image(format="png")
        for name, widget in (("slider", self.lr_slider), ("lr-text", self.lr_text), ("optimizer", self.optimizer),
                             ("steps", self.steps), ("clear", self.clear_button), ("status", self.status),
                             ("message", self.message), ("figure", self.image), ("tries", self.tries_list)):
            widget.add_class(f"{CSS_PREFIX}-{name}")
        for widget in (self.lr_slider, self.lr_text, self.optimizer, self.steps):
            widget.style.description_width = "initial"  # show the whole description, e.g. "learning rate"
        self.widget = widgets.VBox([
            widgets.HBox([self.lr_slider, self.lr_text]),
            widgets.HBox([self.optimizer, self.steps, self.clear_button]),
            self.status, self.message, widgets.HBox([self.image, self.tries_list]),
        ])
        self.widget.add_class(CSS_PREFIX)
        self.lr_slider.observe(self._on_slider, names="value")
        self.lr_text.observe(self._on_text, names="value")
        self.optimizer.observe(self._on_control, names="value")
        self.steps.observe(self._on_control, names="value")
        self.clear_button.on_click(lambda _button: self.clear())
        self._set_status(f"{self._headline()}: waiting for the first run")

    # ---- what a learner (or a test, or a browser) does ---------------------------------------------
    def set(self, lr=None, optimizer=None, steps=None):
        """Change any of the three settings and retrain once. Bad values are clamped or refused with a
        message in ``self.message`` (also returned); this method never raises at a learner."""
        notes = []
        new_lr, new_opt, new_steps = self._lr, self.optimizer.value, self.steps.value
        if lr is not None:
            new_lr, note = self._validate_lr(lr)
            notes += [note] if note else []
        if optimizer is not None:
            new_opt, note = self._validate_optimizer(optimizer)
            notes += [note] if note else []
        if steps is not None:
            new_steps, note = self._validate_steps(steps)
            notes += [note] if note else []
        if (new_lr, new_opt, new_steps) == (self._lr, self.optimizer.value, self.steps.value):
            self._set_message("; ".join(notes) or "nothing changed")  # no new try for a refused value
            return self.message.value
        self._muted = True
        try:
            self.lr_slider.value, self.optimizer.value, self.steps.value = new_lr, new_opt, new_steps
        finally:
            self._muted = False
        self._lr = new_lr
        self.retrain(note="; ".join(notes))
        return self.message.value

    def clear(self):
        """Forget earlier tries; the current one stays."""
        self.tries, self.colors, self.verdicts = self.tries[-1:], self.colors[-1:], self.verdicts[-1:]
        self._redraw()
        self._set_message("earlier tries cleared")

    def retrain(self, note=""):
        """Train with the current settings, add the try, redraw. Errors become a message, never raised.

        While MindSpore trains (asynchronously), the figure puts the earlier tries on its canvas; then it
        waits for the run and draws it on top."""
        t0 = time.perf_counter()
        optimizer, lr, steps = self.optimizer.value, self._lr, self.steps.value
        try:
            if not self.trainer.is_compiled(optimizer):
                self._set_status(f"compiling MindSpore training for {optimizer} (once, a few seconds)...")
                self.trainer.compile(optimizer)
            t1 = time.perf_counter()
            pending = self.trainer.launch(optimizer, lr, steps, start=self.start)
            t2 = time.perf_counter()
            if len(self.tries) >= self.max_tries:  # forget the older half at once: one redraw, not one per try
                keep = self.max_tries // 2
                note = "; ".join(filter(None, [note, f"forgot the {len(self.tries) - keep} oldest tries"]))
                self.tries, self.colors, self.verdicts = self.tries[-keep:], self.colors[-keep:], self.verdicts[-keep:]
            self.figure.set_steps(steps)
            self.figure.prepare(self.tries, self.colors)
            t3 = time.perf_counter()
            run = self.trainer.collect(pending)
        except Exception as exc:  # a front end must never see a traceback: say what went wrong instead
            self._set_message(f"training failed: {type(exc).__name__}: {exc}", error=True)
            return None
        t4 = time.perf_counter()
        color = COLORS[self._count % len(COLORS)]
        self._count += 1
        self.verdict = describe_run(run, self.surface)
        self.tries.append(run)
        self.colors.append(color)
        self.verdicts.append(self.verdict)
        self._set_status(f"{self._headline()}: {self.verdict.text}", alarm=self.verdict.kind == "diverged")
        self._set_message(note)
        self.image.value = self.figure.finish(run, color, self._figure_note())
        self._list_tries()
        t5 = time.perf_counter()
        self.timings = {"train": (t2 - t1) + (t4 - t3), "draw": (t3 - t2) + (t5 - t4), "total": t5 - t0}
        return run

    # ---- widget callbacks ------------------------------------------------------------------------------
    def _on_slider(self, change):
        if self._muted:
            return
        value, note = self._validate_lr(change["new"])
        if value != change["new"]:  # NaN reached the slider: put back the last good value
            self._muted = True
            try:
                self.lr_slider.value = value
            finally:
                self._muted = False
        if value == self._lr and note:
            self._set_message(note)
            return
        self._lr = value
        self.retrain(note=note or "")

    def _on_text(self, change):
        if self._muted or not change["new"].strip():
            return
        self.set(lr=change["new"])

    def _on_control(self, change):
        if not self._muted:
            self.retrain()

    # ---- validation: (value to use, message or None) --------------------------------------------------
    def _validate_lr(self, lr):
        value, problem = _parse_number(lr, "learning rate")
        keep = self._lr
        if problem:
            return keep, f"{problem}; kept lr={keep:.4g}"
        if value <= 0:
            return keep, f"learning rate must be > 0 (got {value:g}); kept lr={keep:.4g}"
        low, high = LR_RANGE
        if value < low:
            return low, f"learning rate {value:g} is below the lab's range; clamped to {low:g}"
        if value > high:
            return high, f"learning rate {value:g} is above the lab's range; clamped to {high:g}"
        return value, None

    def _validate_optimizer(self, name):
        if isinstance(name, str):
            for option in OPTIMIZERS:
                if option.lower() == name.strip().lower():
                    return option, None
        return self.optimizer.value, (f"optimizer must be one of {', '.join(OPTIMIZERS)} (got {name!r}); "
                                      f"kept {self.optimizer.value}")

    def _validate_steps(self, steps):
        value, problem = _parse_number(steps, "steps")
        keep = self.steps.value
        if problem:
            return keep, f"{problem}; kept {keep} steps"
        low, high = STEPS_RANGE
        rounded = int(min(max(round(min(max(value, -1e18), 1e18) / 10) * 10, low), high))
        if rounded != value:
            return rounded, f"steps must be a multiple of 10 in [{low}, {high}] (got {value:g}); using {rounded}"
        return rounded, None

    # ---- display ----------------------------------------------------------------------------------------
    def _headline(self):
        return f"lr={self._lr:.4g} {self.optimizer.value}, {self.steps.value} steps"

    def _set_status(self, text, alarm=False):
        color = "crimson" if alarm else "inherit"
        self.status.value = f'<span style="color:{color}">{html.escape(text)}</span>'

    def _set_message(self, text, error=False):
        self.message.value = (f'<span style="color:{"crimson" if error else "#8a6d00"}">{html.escape(text)}</span>'
                              if text else "")

    def _figure_note(self):
        diverged = self.tries and self.verdict is not None and self.verdict.kind == "diverged"
        return self.verdict.text.split(":")[0] if diverged else ""

    def _redraw(self):
        self.figure.set_steps(self.steps.value)
        self.image.value = self.figure.render(self.tries, colors=self.colors, note=self._figure_note())
        self._list_tries()

    def _list_tries(self, shown=12):
        rows = [f'<span style="color:{color}">&#9679;</span> {run.optimizer} lr={run.lr:.3g}, {run.steps} steps: '
                f'{verdict.kind}' for run, color, verdict in zip(self.tries, self.colors, self.verdicts)]
        hidden = len(rows) - shown
        rows = ([f"... and {hidden} earlier"] if hidden > 0 else []) + rows[-shown:]
        self.tries_list.value = "<br>".join(["<b>tries (newest last)</b>"] + rows) if rows else ""

    @property
    def status_text(self):
        """The status line as plain text (what a browser test reads)."""
        return html.unescape(self.status.value.split(">", 1)[1].rsplit("<", 1)[0])

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        # what a stored notebook (widget views stripped) or a plain console shows instead of the app
        bundle["text/plain"] = "Learning-rate lab: an ipywidgets app, live only while its Jupyter kernel runs"
        return bundle


def learning_rate_lab(trainer=None, x=None, y=None, start=(0.0, 0.0), lr=0.1, optimizer="SGD", steps=100,
                      show=True):
    """Build the lab (and show it when ``show``), then run the first try.

    Without a trainer, a MindSporeTrainer is made for the data (default: ``make_linear_data()``). When
    shown, the app appears first with "compiling..." in its status line, then MindSpore compiles the
    chosen optimizer's training function once; the other optimizers compile on first use.
    """
    if (x is None) != (y is None):
        raise ValueError(f"give both x and y, or neither (then the course data is used); got only "
                         f"{'x' if y is None else 'y'}")
    if x is None and trainer is not None and hasattr(trainer, "data"):
        x, y = trainer.data  # the data the trainer trains on, so the figure and verdicts describe that
    if x is None:
        from course_utils.data import make_linear_data

        x, y = make_linear_data()
    if trainer is None:
        from course_utils.lab_trainers import MindSporeTrainer

        trainer = MindSporeTrainer(x, y)
    lab = LearningRateLab(trainer, x, y, start=start, lr=lr, optimizer=optimizer, steps=steps)
    if show:
        from IPython.display import display

        display(lab)
    lab.retrain()
    return lab
