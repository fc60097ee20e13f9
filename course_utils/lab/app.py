"""The lab's logic in the kernel: settings, tries, verdicts, presets, the challenge, and what it says.

A setting (optimizer, beta, steps, start) is trained once for every learning rate of the slider (one
batched run, cached) and sent to the browser as one payload (``payload.py``); the browser draws every
slider move from it (``web/lab.js``) and tells the kernel only what a learner settled on (a release, a
button, a typed value). A typed learning rate between slider positions is trained on its own. Nothing
here raises at a learner: bad input is clamped or refused with a message, a failing trainer becomes one.
"""

import base64
import itertools
import os
import time

import numpy as np

from course_utils._validate import require_choice, require_int, require_series
from course_utils.lab import payload as payloads
from course_utils.lab.figure import LabFigure, color_for
from course_utils.lab.inputs import (
    LR_RANGE,
    STEPS_RANGE,
    validate_lr,
    validate_momentum,
    validate_optimizer,
    validate_steps,
)
from course_utils.lab.trainers import LR_GRID, MOMENTUM, OPTIMIZERS, check_settings
from course_utils.lab.verdicts import DIVERGED, DIVERGING, HEALTHY, NO_PROGRESS, describe_run
from course_utils.landscape import LossSurface
from course_utils.messages import lazy, t

CSS_PREFIX = "lr-lab"  # DOM class names for browser tests: lr-lab-slider, lr-lab-status, ...
PRESETS = payloads.PRESETS  # what preset() takes (and the CSS class names)
PRESET_LABELS = {"too small": lazy("too small"), "good": lazy("good"), "oscillating": lazy("oscillating"),
                 "diverging": lazy("diverging")}  # what the buttons say, translated when the lab is built
PRESET_TIPS = {"too small": lazy("a too small learning rate for this optimizer"),
               "good": lazy("a good learning rate for this optimizer"),
               "oscillating": lazy("an oscillating learning rate for this optimizer"),
               "diverging": lazy("a diverging learning rate for this optimizer")}
TRIES_ROWS = {DIVERGED: lazy("{run}: diverged"), DIVERGING: lazy("{run}: diverging"),  # a line of the tries list
              NO_PROGRESS: lazy("{run}: no progress"), HEALTHY: lazy("{run}: healthy")}  # per verdict kind
COALESCE_SECONDS = 0.8  # slider releases this close together (arrow keys held down) make one try, not many
CHALLENGE_EXCESS, CHALLENGE_STEPS = payloads.CHALLENGE_EXCESS, payloads.CHALLENGE_STEPS


LABEL_TEXTS = (
    lazy("learning rate"), lazy("type lr, Enter"), lazy("type a learning rate and press Enter"), lazy("snap to best"),
    lazy("the learning rate that converges in the fewest steps"), lazy("plain gradient descent (nn.SGD)"),
    lazy("heavy-ball momentum (nn.Momentum) with β"), lazy("nn.Adam, defaults"), lazy("momentum β"), lazy("steps"),
    lazy("presets:"), lazy("clear earlier tries"), lazy("Challenge:"), lazy("tries (newest last)"),
    lazy("... and {hidden} earlier"), lazy("lr={lr:.4g} {optimizer}{beta}, {steps} steps: {text}"),
    lazy("loss per step"), lazy("step"), lazy("loss (log scale)"), lazy("(w, b) path over the loss contours"),
    lazy("weight w"), lazy("bias b"), lazy("sweep: {label}, {steps} steps"), lazy(" (no closed-form bound)"),
    lazy("learning rate (log scale)"), lazy("final loss"), lazy("steps to converge"), lazy("zig-zag above 1/λmax"),
    lazy("diverges above 2/λmax"), lazy("diverges above 2(1+β)/λmax"), lazy("the fitted line w·x + b"),
    lazy("data"), lazy("best fit"), lazy("flat"), lazy("steep"), lazy("connecting to the kernel..."),
    lazy("This lab is not live: its kernel is not running (a saved notebook). Run its cell to bring it back."),
    # what host.js says where no kernel runs (the website, the classroom's page)
    lazy("earlier tries cleared"), lazy("met by {label} at step {step}"),
    lazy("Not yet: this try gets within {excess:.1e}."),
    lazy("the loss within {excess:g} of its minimum in at most {steps} steps (any optimizer, β, lr)."),
    lazy("could not load this setting: {error}"),
    lazy("this page has no sweep for {setting}: it has {settings} (a live lab computes any setting: make lab)"),
    lazy("not a learning rate: {text!r} (type a positive number such as 0.05)"),
    lazy("{lr:.4g} is between the slider's positions: this page shows the nearest, {nearest:.4g} (a live lab "
         "trains any value: make lab)"),
    lazy("this page has sweeps for β = {betas} only: showing β = {beta:.2f} (a live lab computes any β: make lab)"),
    lazy("the slider has {n} positions, 0 to {last}; got {index!r}"),
    lazy("preset must be one of {presets} (got {name!r})"),
    lazy("the page sent an action the lab does not know: {kind!r}"))


def labels():
    """Every text lab.js shows, in the learner's language (looked up when the lab is built)."""
    texts = {str(text): t(text) for text in LABEL_TEXTS}
    texts.update({name: t(PRESET_LABELS[name]) for name in PRESETS})
    texts.update({f"tip:{name}": t(PRESET_TIPS[name]) for name in PRESETS})
    texts.update({str(row): t(row) for row in TRIES_ROWS.values()})
    return texts


class Try:
    """One try the figure shows: its run, its colour and its verdict, kept together; ``key`` and ``index``:
    the setting and slider position it came from (None for a typed learning rate between positions)."""

    _ids = itertools.count(1)

    def __init__(self, run, color, verdict, source="", key=None, index=None):
        self.run, self.color, self.verdict, self.source = run, color, verdict, source
        self.key, self.index, self.id = key, index, next(Try._ids)
        self.time = time.monotonic()


class LearningRateLab:
    """The lab's state and logic; ``widget`` (a ``LabWidget``) shows it. ``trainer``: a MindSporeTrainer (or
    NumpyTrainer). Python (a notebook, a test) drives it with ``set``, ``snap``, ``preset``, ``clear``,
    ``submit_text``; the browser sends the same as actions (``handle``)."""

    def __init__(self, trainer, x, y, start=(0.0, 0.0), lr=0.1, optimizer="SGD", steps=100, momentum=MOMENTUM,
                 max_tries=40):
        from course_utils.lab.widget import LabWidget

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
        self._payloads = {}  # setting key -> its payload (bytes), made once
        self.sweep = None
        self.timings = {}
        self.challenge_met = None  # the try that met the challenge first
        self._lr, self._optimizer, self._steps, self._momentum = float(lr), optimizer, int(steps), float(momentum)
        self._clock = time.monotonic
        self.figure = None  # the stored picture's LabFigure, made when the lab is first shown
        self.widget = LabWidget(surface=payloads.surface_info(self.surface), labels=labels(),
                                steps_options=list(range(STEPS_RANGE[0], STEPS_RANGE[1] + 1, 10)))
        self.widget.on_msg(self._on_msg)
        self._sync_state()
        self._set_status(self._status_line(t("waiting for the first run")))

    # ---- the settings ------------------------------------------------------------------------------------
    @property
    def lr(self):
        return self._lr

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def steps(self):
        return self._steps

    @property
    def momentum(self):
        return self._momentum

    @property
    def status_text(self):
        """The status line (what the browser shows under the controls)."""
        return self.widget.status

    @property
    def message_text(self):
        return self.widget.message

    @property
    def challenge_text(self):
        """The challenge line as one plain sentence."""
        ch = self.widget.challenge
        return " ".join(filter(None, [t("Challenge:"), ch.get("text", ""), ("✓ " if ch.get("met") else "")
                                      + ch.get("result", "")]))

    # ---- what a learner (or a test, or a browser) does ---------------------------------------------
    def set(self, lr=None, optimizer=None, steps=None, momentum=None):
        """Change any of the settings and retrain once. Bad values are clamped or refused with a message
        in ``message_text`` (also returned); this method never raises at a learner."""
        notes = []
        old = {"lr": self._lr, "optimizer": self._optimizer, "steps": self._steps, "momentum": self._momentum}
        new = dict(old)
        for name, value, check in (("lr", lr, lambda v: validate_lr(v, self._lr)),
                                   ("optimizer", optimizer,
                                    lambda v: validate_optimizer(v, self._optimizer, OPTIMIZERS)),
                                   ("steps", steps, lambda v: validate_steps(v, self._steps)),
                                   ("momentum", momentum, lambda v: validate_momentum(v, self._momentum))):
            if value is not None:
                new[name], note = check(value)
                notes += [note] if note else []
        if new == old:
            self._set_message(t("; ").join(notes)
                              or t("nothing changed: lr={lr:.4g} is already the current try", lr=self._lr))
            self._sync_state()
            return self.message_text
        self._lr, self._optimizer, self._steps, self._momentum = (new["lr"], new["optimizer"], new["steps"],
                                                                   new["momentum"])
        self.retrain(note=t("; ").join(notes))
        return self.message_text

    def submit_text(self, text):
        """What pressing Enter in the typed-lr box does (``text``: what the box holds)."""
        if str(text).strip() == f"{self._lr:.4g}":  # Enter on the value the box shows (rounded)
            return self.set()
        return self.set(lr=text)

    def slide(self, index):
        """What releasing the slider at position ``index`` does (the browser drew the moves on its way)."""
        try:
            index = int(index)
        except (TypeError, ValueError):
            index = -1
        if not 0 <= index < len(LR_GRID):
            self._set_message(t("the slider has {n} positions, 0 to {last}; got {index!r}", n=len(LR_GRID),
                                last=len(LR_GRID) - 1, index=index), error=True)
            return None
        lr = float(LR_GRID[index])
        if lr == self._lr:
            self._sync_state()
            return None
        self._lr = lr
        return self.retrain(source="slider")

    def snap(self):
        """Move to the learning rate that converges in the fewest steps for the current optimizer, beta and
        steps (of the slider's learning rates); if none converges, the one with the lowest final loss."""
        try:
            sweep = self._current_sweep()
        except Exception as exc:  # a front end must never see a traceback
            self._set_message(t("training failed: {error}: {exc}", error=type(exc).__name__, exc=exc), error=True)
            return None
        best, note = payloads.snap_target(sweep, self.surface)
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
            try:
                sweep = self._current_sweep()
            except Exception as exc:  # a front end must never see a traceback
                self._set_message(t("training failed: {error}: {exc}", error=type(exc).__name__, exc=exc),
                                  error=True)
                return None
            self.set(lr=float(sweep.lrs[payloads.good_index(sweep, self.surface)]))
            return self._lr
        lr = payloads.preset_lr(name, self._optimizer, self._momentum, self.surface, LR_RANGE)
        self.set(lr=float(LR_GRID[np.argmin(np.abs(np.log(LR_GRID) - np.log(lr)))]))  # a slider position
        if self._optimizer == "Adam" and name == "diverging":
            self._set_message(t("Adam does not diverge on this bowl: its steps are about lr long whatever the "
                                "gradient; the largest learning rate overshoots instead"))
        return self._lr

    def clear(self):
        """Forget earlier tries; the current one stays."""
        self.tries = self.tries[-1:]
        self._sync_tries()
        self._set_message(t("earlier tries cleared"))

    def retrain(self, note="", source=""):
        """Show the current setting: look its learning rate up in the setting's sweep (training the sweep
        once if needed), judge it and send it to the page. Errors become a message, never a traceback."""
        t0 = time.perf_counter()
        optimizer, lr, steps = self._optimizer, self._lr, self._steps
        try:
            sweep = self._current_sweep()
            t1 = time.perf_counter()
            i = sweep.index(lr)
            if i is not None:
                run = sweep.run(i)
            else:  # a typed value between slider positions: train it on its own
                run = self.trainer.train(optimizer, lr, steps, start=self.start, momentum=self._momentum)
            t2 = time.perf_counter()
            verdict = describe_run(run, self.surface)
        except Exception as exc:  # a front end must never see a traceback: say what went wrong instead
            self._set_message(t("training failed: {error}: {exc}", error=type(exc).__name__, exc=exc), error=True)
            self._sync_state()
            return None
        now = self._clock()
        last = self.tries[-1] if self.tries else None
        if source == "slider" and last is not None and last.source == "slider" and now - last.time < COALESCE_SECONDS:
            color = last.color  # arrow keys held down: the moves replace one try instead of adding one each
            self.tries.pop()
        else:
            color = color_for(self._count)
            self._count += 1
        if len(self.tries) >= self.max_tries:  # forget the older half at once
            keep = self.max_tries // 2
            note = t("; ").join(filter(None, [note, t("forgot the {n} oldest tries", n=len(self.tries) - keep)]))
            self.tries = self.tries[-keep:]
        current = Try(run, color, verdict, source, key=self._key(), index=i)
        current.time = now
        self.tries.append(current)
        self._set_status(self._status_line(verdict.text), alarm=verdict.kind in (DIVERGED, DIVERGING))
        self._set_message(note)
        self._check_challenge(current)
        t3 = time.perf_counter()
        with self.widget.hold_sync():  # one message to the page, not one per trait
            self._sync_state()
            self._sync_tries()
        t4 = time.perf_counter()
        self.timings = {"sweep": t1 - t0, "lookup": t2 - t1, "judge": t3 - t2, "send": t4 - t3, "total": t4 - t0}
        return run

    @property
    def verdict(self):
        return self.tries[-1].verdict if self.tries else None

    # ---- the sweep of the current setting (trained once, cached) --------------------------------------
    def _key(self):
        return payloads.setting_key(self._optimizer, self._momentum, self._steps)

    def _cached_sweep(self, optimizer, steps):
        """The cached sweep of ``optimizer`` at the current β and start, trained first if missing or too short
        (it may be longer than ``steps``)."""
        beta = self._momentum if optimizer == "Momentum" else MOMENTUM
        key = (optimizer, round(beta, 4), self.start)
        cached = self._sweeps.get(key)
        if cached is None or cached.steps < steps:
            if not self.trainer.is_compiled(optimizer):
                self._set_status(t("compiling MindSpore training for {optimizer} (once, a second or two)...",
                                   optimizer=optimizer))
            self.widget.busy = True
            try:
                self._sweeps[key] = cached = self.trainer.sweep(optimizer, None, steps, self.start, beta)
            finally:
                self.widget.busy = False
        return cached

    def _current_sweep(self):
        cached = self._cached_sweep(self._optimizer, self._steps)
        sweep = cached if cached.steps == self._steps else cached.truncated(self._steps)
        key = self._key()
        if key not in self._payloads:
            self._payloads[key] = payloads.sweep_payload(sweep, self.surface)
        if self.sweep is None or self._sweep_key != (key, id(cached)):
            self._sweep_key = (key, id(cached))
            self.sweep = sweep
            self.widget.payload = self._payloads[key]
        return self.sweep

    def warm_up(self, optimizers=OPTIMIZERS):
        """Compile and train, now, the first sweep of each optimizer a learner can switch to (its default β and
        the current steps), so that the first switch is a look-up."""
        status = self.widget.status
        for optimizer in optimizers:
            self._cached_sweep(require_choice("optimizer", optimizer, OPTIMIZERS), self._steps)
        self.widget.status = status  # the "compiling..." lines were for this warm-up, not for the learner

    # ---- what the page sends ------------------------------------------------------------------------------
    def handle(self, action):
        """One action from the page (lab.js): ``{"action": "slider", "index": i}``, ``"text"``, ``"snap"``,
        ``"preset"``, ``"clear"``, ``"set"`` (optimizer / momentum / steps) or ``"hello"``. Anything else is
        answered with a message, never an error."""
        if not isinstance(action, dict):
            action = {}
        kind = action.get("action")
        if kind == "hello":
            self.widget.send({"type": "alive"})
        elif kind == "slider":
            self.slide(action.get("index"))
        elif kind == "text":
            self.submit_text(action.get("text", ""))
        elif kind == "snap":
            self.snap()
        elif kind == "preset":
            self.preset(action.get("name"))
        elif kind == "clear":
            self.clear()
        elif kind == "set":
            self.set(**{name: action[name] for name in ("optimizer", "momentum", "steps") if name in action})
        else:
            self._set_message(t("the page sent an action the lab does not know: {kind!r}", kind=kind), error=True)

    def _on_msg(self, _widget, content, _buffers):
        self.handle(content)

    # ---- what the page shows ----------------------------------------------------------------------------
    def _status_line(self, text):
        """The settings, then ``text`` (browser tests read the settings from its start)."""
        beta = f" β={self._momentum:.2f}" if self._optimizer == "Momentum" else ""
        return t("lr={lr:.4g} {optimizer}{beta}, {steps} steps: {text}", lr=self._lr, optimizer=self._optimizer,
                 beta=beta, steps=self._steps, text=text)

    def _sync_state(self):
        i = int(np.argmin(np.abs(np.log(LR_GRID) - np.log(self._lr))))
        self.widget.state = {"optimizer": self._optimizer, "momentum": round(self._momentum, 4), "steps": self._steps,
                             "lr": self._lr, "index": i}

    def _sync_tries(self, shown=40):
        rows = []
        for one in self.tries[-shown:]:
            row = {"id": one.id, "key": one.key, "index": one.index, "color": one.color,
                   "row": t(TRIES_ROWS[one.verdict.kind], run=one.run.label)}
            if one.index is None:  # a typed learning rate: its run travels with it
                row["run"] = base64.b64encode(payloads.run_payload(one.run, self.surface)).decode("ascii")
            rows.append(row)
        self.widget.tries = rows

    def _set_status(self, text, alarm=False):
        self.widget.status, self.widget.alarm = text, alarm

    def _set_message(self, text, error=False):
        self.widget.message, self.widget.message_error = text or "", bool(error and text)

    def _check_challenge(self, current):
        """The challenge is met once by a try whose loss comes within CHALLENGE_EXCESS of the minimum."""
        first, closest = payloads.challenge_steps(current.run.path[:, :, None], self.surface)
        if first[0] >= 0 and self.challenge_met is None:
            self.challenge_met = (current, int(first[0]))
        text = t("the loss within {excess:g} of its minimum in at most {steps} steps (any optimizer, β, lr).",
                 excess=CHALLENGE_EXCESS, steps=CHALLENGE_STEPS)
        if self.challenge_met is not None:
            met, step = self.challenge_met
            self.widget.challenge = {"text": text, "met": True,
                                     "result": t("met by {label} at step {step}", label=met.run.label, step=step)}
        else:
            self.widget.challenge = {"text": text, "met": False,
                                     "result": t("Not yet: this try gets within {excess:.1e}.", excess=closest[0])}

    def picture(self):
        """The lab's current try as a PNG (what a saved notebook shows when its kernel is gone)."""
        if self.figure is None:
            self.figure = LabFigure(self.surface, steps=self._steps)
        self.figure.set_steps(self._steps)
        if self.sweep is not None:
            from course_utils.lab.verdicts import sweep_kinds

            self.figure.set_sweep(self.sweep, sweep_kinds(self.sweep), self.surface.optimum)
        verdict = self.verdict
        note = verdict.headline if verdict is not None and verdict.kind in (DIVERGED, DIVERGING) else ""
        return self.figure.render([one.run for one in self.tries], colors=[one.color for one in self.tries], note=note)

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data or {})
        # what a stored notebook (widget views stripped) or a plain console shows instead of the live app
        data["text/plain"] = t("Learning-rate lab: a widget drawn in the browser, live only while its Jupyter "
                               "kernel runs")
        data["image/png"] = self.picture()
        return data, metadata


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
