"""The lab as a widget app: controls, the tries shown, and what a move does (look up, judge, draw).

A setting (optimizer, beta, steps, start) is trained once for every learning rate of the slider (one
batched run, cached); a slider move then only picks a column, judges it and draws it. A typed learning
rate between slider positions is trained on its own. Nothing here raises at a learner: bad input is
clamped or refused with a message, a failing trainer becomes a message.
"""

import html
import math
import os
import time

import numpy as np

from course_utils._validate import require_choice, require_int, require_series
from course_utils.lab.figure import DIVERGED_COLOR, LabFigure, color_for
from course_utils.lab.inputs import (
    LR_RANGE,
    STEPS_RANGE,
    validate_lr,
    validate_momentum,
    validate_optimizer,
    validate_steps,
)
from course_utils.lab.trainers import LR_GRID, MOMENTUM, OPTIMIZERS, check_settings
from course_utils.lab.verdicts import DIVERGED, DIVERGING, HEALTHY, NO_PROGRESS, describe_run, sweep_kinds
from course_utils.landscape import LossSurface
from course_utils.messages import lazy, t

CSS_PREFIX = "lr-lab"  # DOM class names for browser tests: lr-lab-slider, lr-lab-status, ...
PRESETS = ("too small", "good", "oscillating", "diverging")  # what preset() takes (and the CSS class names)
PRESET_LABELS = {"too small": lazy("too small"), "good": lazy("good"), "oscillating": lazy("oscillating"),
                 "diverging": lazy("diverging")}  # what the buttons say, translated when the lab is built
PRESET_TIPS = {"too small": lazy("a too small learning rate for this optimizer"),
               "good": lazy("a good learning rate for this optimizer"),
               "oscillating": lazy("an oscillating learning rate for this optimizer"),
               "diverging": lazy("a diverging learning rate for this optimizer")}
TRIES_ROWS = {DIVERGED: lazy("{run}: diverged"), DIVERGING: lazy("{run}: diverging"),  # a line of the tries list
              NO_PROGRESS: lazy("{run}: no progress"), HEALTHY: lazy("{run}: healthy")}  # per verdict kind
COALESCE_SECONDS = 0.8  # slider moves this close together (arrow keys held down) make one try, not many
CHALLENGE_EXCESS = 1e-6  # the challenge: the loss within 1e-6 of its minimum ...
CHALLENGE_STEPS = 30  # ... within 30 steps
CSS = f"""<style>
.{CSS_PREFIX} .{CSS_PREFIX}-figure {{ width: 720px; max-width: 100%; height: auto; object-fit: contain; }}
.{CSS_PREFIX} .{CSS_PREFIX}-tries {{ font-size: 12px; line-height: 1.25; }}
</style>"""


class Try:
    """One try the figure shows: its run, its colour and its verdict, kept together."""

    def __init__(self, run, color, verdict, source=""):
        self.run, self.color, self.verdict, self.source = run, color, verdict, source
        self.time = time.monotonic()


class LearningRateLab:
    """The lab's state, widgets and update logic. ``trainer``: a MindSporeTrainer (or NumpyTrainer)."""

    def __init__(self, trainer, x, y, start=(0.0, 0.0), lr=0.1, optimizer="SGD", steps=100, momentum=MOMENTUM,
                 max_tries=40):
        import ipywidgets as widgets

        for method in ("sweep", "train", "compile", "is_compiled"):
            if not callable(getattr(trainer, method, None)):
                raise TypeError(f"trainer must have a {method}() method (a MindSporeTrainer or NumpyTrainer), "
                                f"got {type(trainer).__name__}")
        check_settings(optimizer, lr, steps, momentum)
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
        self.tries = []  # Try objects, oldest first; the last one is the current try
        self._count = 0
        self._sweeps = {}  # (optimizer, beta, start) -> the longest sweep trained for that setting
        self.sweep = None
        self.timings = {}
        self.challenge_met = None  # the try that met the challenge first
        self._lr = lr
        self._muted = False
        self._clock = time.monotonic
        self.figure = LabFigure(self.surface, steps=steps)
        self._build_widgets(widgets, lr, optimizer, steps, momentum)
        self._set_status(self._status_line(t("waiting for the first run")))

    # ---- the widgets ---------------------------------------------------------------------------------
    def _build_widgets(self, widgets, lr, optimizer, steps, momentum):
        """Every text a learner reads is looked up here, when the lab is built (after the notebook set
        COURSE_LANG). The optimizer buttons keep MindSpore's class names; the figure's text stays English."""
        Layout = widgets.Layout
        self.lr_slider = widgets.FloatLogSlider(
            value=lr, base=10, min=math.log10(LR_RANGE[0]), max=math.log10(LR_RANGE[1]), step=0.01,
            readout_format=".3g", description=t("learning rate"), continuous_update=False,
            layout=Layout(width="590px"))
        self.lr_text = widgets.Text(value=f"{lr:.4g}", placeholder=t("type lr, Enter"), continuous_update=True,
                                    tooltip=t("type a learning rate and press Enter"), layout=Layout(width="110px"))
        self.snap_button = widgets.Button(description=t("snap to best"), icon="bullseye", layout=Layout(width="120px"),
                                          tooltip=t("the learning rate that converges in the fewest steps"))
        self.optimizer = widgets.ToggleButtons(options=OPTIMIZERS, value=optimizer, tooltips=[
            t("plain gradient descent (nn.SGD)"), t("heavy-ball momentum (nn.Momentum) with β"),
            t("nn.Adam, defaults")], style={"button_width": "96px"})
        self.momentum = widgets.FloatSlider(value=momentum, min=0.0, max=0.99, step=0.01, description=t("momentum β"),
                                            readout_format=".2f", continuous_update=False,
                                            disabled=optimizer != "Momentum", layout=Layout(width="240px"))
        self.steps = widgets.IntSlider(value=steps, min=STEPS_RANGE[0], max=STEPS_RANGE[1], step=10,
                                       description=t("steps"), continuous_update=False, layout=Layout(width="230px"))
        self.preset_buttons = [widgets.Button(description=t(PRESET_LABELS[name]), layout=Layout(width="96px"),
                                              tooltip=t(PRESET_TIPS[name]))
                               for name in PRESETS]
        self.clear_button = widgets.Button(description=t("clear earlier tries"), icon="eraser",
                                           layout=Layout(width="160px"))
        self.status = widgets.HTML(value="")
        self.message = widgets.HTML(value="")
        self.challenge = widgets.HTML(value="")
        self.tries_list = widgets.HTML(value="", layout=Layout(width="250px", max_height="470px",
                                                                 overflow="auto"))
        self.image = widgets.Image(format="png", layout=Layout(width="720px", max_width="100%", height="auto",
                                                               object_fit="contain"))
        named = (("slider", self.lr_slider), ("lr-text", self.lr_text), ("snap", self.snap_button),
                 ("optimizer", self.optimizer), ("momentum", self.momentum), ("steps", self.steps),
                 ("clear", self.clear_button), ("status", self.status), ("message", self.message),
                 ("challenge", self.challenge), ("figure", self.image), ("tries", self.tries_list))
        for name, widget in named:
            widget.add_class(f"{CSS_PREFIX}-{name}")
        for name, button in zip(PRESETS, self.preset_buttons):
            button.add_class(f"{CSS_PREFIX}-preset")
            button.add_class(f"{CSS_PREFIX}-preset-{name.replace(' ', '-')}")
            button.on_click(lambda _button, name=name: self.preset(name))
        for widget in (self.lr_slider, self.momentum, self.steps):
            widget.style.description_width = "initial"  # show the whole description, e.g. "learning rate"
        row = dict(flex_flow="row wrap", align_items="center")
        self.widget = widgets.VBox([
            widgets.HTML(CSS),
            widgets.HBox([self.lr_slider, self.lr_text, self.snap_button], layout=Layout(**row)),
            widgets.HBox([self.optimizer, self.momentum, self.steps], layout=Layout(**row)),
            widgets.HBox([widgets.Label(t("presets:")), *self.preset_buttons, self.clear_button], layout=Layout(**row)),
            self.status, self.message, self.challenge,
            widgets.HBox([self.image, self.tries_list], layout=Layout(flex_flow="row wrap", align_items="flex-start")),
        ])
        self.widget.add_class(CSS_PREFIX)
        self.lr_slider.observe(self._on_slider, names="value")
        self.lr_text.on_msg(self._on_text_msg)
        self.snap_button.on_click(lambda _button: self.snap())
        self.optimizer.observe(self._on_control, names="value")
        self.momentum.observe(self._on_control, names="value")
        self.steps.observe(self._on_control, names="value")
        self.clear_button.on_click(lambda _button: self.clear())

    # ---- what a learner (or a test, or a browser) does ---------------------------------------------
    def set(self, lr=None, optimizer=None, steps=None, momentum=None):
        """Change any of the settings and retrain once. Bad values are clamped or refused with a message
        in ``self.message`` (also returned); this method never raises at a learner."""
        notes = []
        new = {"lr": self._lr, "optimizer": self.optimizer.value, "steps": self.steps.value,
               "momentum": self.momentum.value}
        for name, value, check in (("lr", lr, lambda v: validate_lr(v, self._lr)),
                                   ("optimizer", optimizer,
                                    lambda v: validate_optimizer(v, self.optimizer.value, OPTIMIZERS)),
                                   ("steps", steps, lambda v: validate_steps(v, self.steps.value)),
                                   ("momentum", momentum, lambda v: validate_momentum(v, self.momentum.value))):
            if value is not None:
                new[name], note = check(value)
                notes += [note] if note else []
        old = {"lr": self._lr, "optimizer": self.optimizer.value, "steps": self.steps.value,
               "momentum": self.momentum.value}
        if new == old:
            self._set_message(t("; ").join(notes)
                              or t("nothing changed: lr={lr:.4g} is already the current try", lr=self._lr))
            self._sync_text()
            return self.message.value
        self._apply(new)
        self.retrain(note=t("; ").join(notes))
        return self.message.value

    def submit_text(self, text=None):
        """What pressing Enter in the typed-lr box does (``text``: what the box holds, default its value)."""
        if text is not None:
            self._muted = True
            try:
                self.lr_text.value = text
            finally:
                self._muted = False
        if self.lr_text.value.strip() == f"{self._lr:.4g}":  # Enter on the value the box shows (rounded)
            return self.set()
        return self.set(lr=self.lr_text.value)

    def snap(self):
        """Move to the learning rate that converges in the fewest steps for the current optimizer, beta and
        steps (of the slider's learning rates); if none converges, the one with the lowest final loss."""
        try:
            sweep = self._current_sweep()
        except Exception as exc:  # a front end must never see a traceback
            self._set_message(t("training failed: {error}: {exc}", error=type(exc).__name__, exc=exc), error=True)
            return None
        needed = sweep.steps_to_converge(self.surface.optimum)
        if np.isfinite(needed).any():
            best = int(np.nanargmin(needed))
            note = t("snapped to the fastest learning rate: converged from step {step}", step=int(needed[best]))
        else:
            final = np.where(np.isfinite(sweep.final_losses()), sweep.final_losses(), np.inf)
            best = int(np.argmin(final))
            note = t("snapped to the lowest final loss (no learning rate converges in {steps} steps)",
                     steps=sweep.steps)
        self.set(lr=float(sweep.lrs[best]))
        self._set_message(note)
        return float(sweep.lrs[best])

    def preset(self, name):
        """Jump to a learning rate of the kind ``name`` (one of PRESETS) for the current optimizer."""
        if name not in PRESETS:
            self._set_message(t("preset must be one of {presets} (got {name!r})", presets=", ".join(PRESETS),
                                name=name), error=True)
            return None
        if name == "good":
            return self.snap()
        opt, beta, s = self.optimizer.value, self.momentum.value, self.surface
        if opt == "SGD":
            lrs = {"too small": 0.1 / s.lambda_max, "oscillating": 0.93 * s.stability_bound(),
                   "diverging": 1.1 * s.stability_bound()}
        elif opt == "Momentum":
            lrs = {"too small": 0.02 / s.lambda_max, "oscillating": 0.93 * s.stability_bound(beta),
                   "diverging": 1.1 * s.stability_bound(beta)}
        else:
            lrs = {"too small": 0.002, "oscillating": 1.0, "diverging": LR_RANGE[1]}
        lr = float(min(max(lrs[name], LR_RANGE[0]), LR_RANGE[1]))
        self.set(lr=float(LR_GRID[np.argmin(np.abs(np.log(LR_GRID) - np.log(lr)))]))  # a slider position
        if opt == "Adam" and name == "diverging":
            self._set_message(t("Adam does not diverge on this bowl: its steps are about lr long whatever the "
                                "gradient; the largest learning rate overshoots instead"))
        return self._lr

    def clear(self):
        """Forget earlier tries; the current one stays."""
        self.tries = self.tries[-1:]
        self._redraw()
        self._set_message(t("earlier tries cleared"))

    def retrain(self, note="", source=""):
        """Show the current setting: look its learning rate up in the setting's sweep (training the sweep
        once if needed), judge it and draw it. Errors become a message, never a traceback."""
        t0 = time.perf_counter()
        optimizer, lr, steps = self.optimizer.value, self._lr, self.steps.value
        try:
            sweep = self._current_sweep()
            t1 = time.perf_counter()
            i = sweep.index(lr)
            if i is not None:
                run = sweep.run(i)
            else:  # a typed value between slider positions: train it on its own
                run = self.trainer.train(optimizer, lr, steps, start=self.start, momentum=self.momentum.value)
            t2 = time.perf_counter()
            verdict = describe_run(run, self.surface)
        except Exception as exc:  # a front end must never see a traceback: say what went wrong instead
            self._set_message(t("training failed: {error}: {exc}", error=type(exc).__name__, exc=exc), error=True)
            return None
        now = self._clock()
        last = self.tries[-1] if self.tries else None
        if source == "slider" and last is not None and last.source == "slider" and now - last.time < COALESCE_SECONDS:
            color = last.color  # arrow keys held down: the moves replace one try instead of adding one each
            self.tries.pop()
        else:
            color = color_for(self._count)
            self._count += 1
        if len(self.tries) >= self.max_tries:  # forget the older half at once: one redraw, not one per try
            keep = self.max_tries // 2
            note = t("; ").join(filter(None, [note, t("forgot the {n} oldest tries", n=len(self.tries) - keep)]))
            self.tries = self.tries[-keep:]
        current = Try(run, color, verdict, source)
        current.time = now
        self.tries.append(current)
        self._set_status(self._status_line(verdict.text), alarm=verdict.kind in (DIVERGED, DIVERGING))
        self._set_message(note)
        self._check_challenge(current)
        self._sync_text()
        t3 = time.perf_counter()
        self._redraw()
        t4 = time.perf_counter()
        self.timings = {"sweep": t1 - t0, "lookup": t2 - t1, "judge": t3 - t2, "draw": t4 - t3, "total": t4 - t0}
        return run

    @property
    def verdict(self):
        return self.tries[-1].verdict if self.tries else None

    # ---- the sweep of the current setting (trained once, cached) --------------------------------------
    def _cached_sweep(self, optimizer, steps):
        """The cached sweep of ``optimizer`` at the current β and start, trained first if missing or too short
        (it may be longer than ``steps``)."""
        beta = self.momentum.value if optimizer == "Momentum" else MOMENTUM
        key = (optimizer, round(beta, 4), self.start)
        cached = self._sweeps.get(key)
        if cached is None or cached.steps < steps:
            if not self.trainer.is_compiled(optimizer):
                self._set_status(t("compiling MindSpore training for {optimizer} (once, two or three seconds)...",
                                   optimizer=optimizer))
            self._sweeps[key] = cached = self.trainer.sweep(optimizer, None, steps, self.start, beta)
        return cached

    def _current_sweep(self):
        optimizer, steps = self.optimizer.value, self.steps.value
        cached = self._cached_sweep(optimizer, steps)
        sweep = cached if cached.steps == steps else cached.truncated(steps)
        if self.sweep is None or (sweep.optimizer, sweep.momentum, sweep.steps, id(cached)) != self._sweep_key:
            self._sweep_key = (sweep.optimizer, sweep.momentum, sweep.steps, id(cached))
            self.sweep = sweep
            self.figure.set_steps(steps)
            self.figure.set_sweep(sweep, sweep_kinds(sweep), self.surface.optimum)
        return self.sweep

    def warm_up(self, optimizers=OPTIMIZERS):
        """Compile and train, now, the first sweep of each optimizer a learner can switch to (its default β and
        the current steps), so that the first switch is a look-up. The classroom server's pre-heated labs do
        this before learners arrive (COURSE_LAB_WARM_UP=1): seconds of CPU then, instead of during the session."""
        status = self.status.value
        for optimizer in optimizers:
            self._cached_sweep(require_choice("optimizer", optimizer, OPTIMIZERS), self.steps.value)
        self.status.value = status  # the "compiling..." lines were for this warm-up, not for the learner

    # ---- widget callbacks ------------------------------------------------------------------------------
    def _apply(self, new):
        self._muted = True
        try:
            self.lr_slider.value = new["lr"]
            self.optimizer.value = new["optimizer"]
            self.steps.value = new["steps"]
            self.momentum.value = new["momentum"]
            self.momentum.disabled = new["optimizer"] != "Momentum"
        finally:
            self._muted = False
        self._lr = new["lr"]

    def _on_slider(self, change):
        if self._muted:
            return
        value, note = validate_lr(change["new"], self._lr)
        if value != change["new"]:  # NaN reached the slider: put back the last good value
            self._muted = True
            try:
                self.lr_slider.value = value
            finally:
                self._muted = False
        if value == self._lr:
            self._set_message(note or "")
            return
        self._lr = value
        self.retrain(note=note or "", source="slider")

    def _on_text_msg(self, _widget, content, _buffers):
        if isinstance(content, dict) and content.get("event") == "submit":  # Enter pressed in the box
            self.submit_text()

    def _on_control(self, change):
        if not self._muted:
            self.momentum.disabled = self.optimizer.value != "Momentum"
            if change["owner"] is self.momentum and self.optimizer.value != "Momentum":
                return
            self.retrain()

    # ---- display ----------------------------------------------------------------------------------------
    def _status_line(self, text):
        """The settings, then ``text`` (browser tests read the settings from its start)."""
        beta = f" β={self.momentum.value:.2f}" if self.optimizer.value == "Momentum" else ""
        return t("lr={lr:.4g} {optimizer}{beta}, {steps} steps: {text}", lr=self._lr, optimizer=self.optimizer.value,
                 beta=beta, steps=self.steps.value, text=text)

    def _sync_text(self):
        self._muted = True
        try:
            self.lr_text.value = f"{self._lr:.4g}"
        finally:
            self._muted = False

    def _set_status(self, text, alarm=False):
        color = DIVERGED_COLOR if alarm else "inherit"
        self.status.value = f'<span style="color:{color}">{html.escape(text)}</span>'

    def _set_message(self, text, error=False):
        self.message.value = (f'<span style="color:{DIVERGED_COLOR if error else "#8a6d00"}">{html.escape(text)}'
                              f'</span>' if text else "")

    def _check_challenge(self, current):
        """The challenge is met once by a try whose loss comes within CHALLENGE_EXCESS of the minimum."""
        path = current.run.path[:CHALLENGE_STEPS + 1]
        with np.errstate(all="ignore"):
            excess = self.surface.loss(path[:, 0], path[:, 1]) - self.surface.min_loss
        reached = np.flatnonzero(excess < CHALLENGE_EXCESS)
        if reached.size and self.challenge_met is None:
            self.challenge_met = (current, int(reached[0]))
        if self.challenge_met is not None:
            met, step = self.challenge_met
            result = html.escape(t("met by {label} at step {step}", label=met.run.label, step=step))
            result = f'<span style="color:green">&#10003; {result}</span>'
        else:
            finite = excess[np.isfinite(excess)]
            result = html.escape(t("Not yet: this try gets within {excess:.1e}.",
                                   excess=finite.min() if finite.size else np.inf))
        self.challenge.value = t("{title} the loss within {excess:g} of its minimum in at most {steps} steps "
                                 "(any optimizer, β, lr). {result}", title=f"<b>{html.escape(t('Challenge:'))}</b>",
                                 excess=CHALLENGE_EXCESS, steps=CHALLENGE_STEPS, result=result)

    def _figure_note(self):  # English in any language: matplotlib's default font has no Chinese glyphs
        verdict = self.verdict
        return verdict.headline if verdict is not None and verdict.kind in (DIVERGED, DIVERGING) else ""

    def _redraw(self):
        self.figure.set_steps(self.steps.value)
        if self.sweep is not None:
            self.figure.set_sweep(self.sweep, sweep_kinds(self.sweep), self.surface.optimum)
        self.image.value = self.figure.render([one.run for one in self.tries],
                                              colors=[one.color for one in self.tries], note=self._figure_note())
        self._list_tries()

    def redraw(self):
        """Draw the current tries again without training (the benchmark's floor for a move)."""
        self._redraw()

    def _list_tries(self, shown=14):
        rows = [f'<span style="color:{one.color}">&#9679;</span> '
                + html.escape(t(TRIES_ROWS[one.verdict.kind], run=one.run.label)) for one in self.tries]
        hidden = len(rows) - shown
        rows = ([html.escape(t("... and {hidden} earlier", hidden=hidden))] if hidden > 0 else []) + rows[-shown:]
        title = f"<b>{html.escape(t('tries (newest last)'))}</b>"
        self.tries_list.value = "<br>".join([title] + rows) if rows else ""

    @property
    def status_text(self):
        """The status line as plain text (what a browser test reads)."""
        return html.unescape(self.status.value.split(">", 1)[1].rsplit("<", 1)[0])

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        # what a stored notebook (widget views stripped) or a plain console shows instead of the live app
        bundle["text/plain"] = t("Learning-rate lab: an ipywidgets app, live only while its Jupyter kernel runs")
        if self.image.value:
            bundle["image/png"] = bytes(self.image.value)
        return bundle


def learning_rate_lab(trainer=None, x=None, y=None, start=(0.0, 0.0), lr=0.1, optimizer="SGD", steps=100,
                      momentum=MOMENTUM, show=True):
    """Build the lab, run its first try, and show it (when ``show``).

    Without a trainer, a MindSporeTrainer is made for the data (default: ``make_linear_data()``); it
    compiles the chosen optimizer only, the others on their first use. The app is shown once its first
    try is drawn, with a picture of it that a saved notebook keeps when the kernel is gone.
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
        from course_utils.lab.trainers import MindSporeTrainer

        trainer = MindSporeTrainer(x, y)
    lab = LearningRateLab(trainer, x, y, start=start, lr=lr, optimizer=optimizer, steps=steps, momentum=momentum)
    lab.retrain()
    if os.environ.get("COURSE_LAB_WARM_UP") == "1":  # app/classroom.py sets it for its pre-heated labs
        lab.warm_up()
    if show:
        from IPython.display import display

        display(lab)
    return lab
