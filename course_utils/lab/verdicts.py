"""What a run did, in the words of the training-health report (``course_utils.diagnostics``, notebook 08).

``describe_run(run, surface)`` gives a ``Verdict``: its ``kind`` is the report's verdict for the run's
losses and parameters (``diverged``, ``diverging``, ``no progress`` or ``healthy``), and its ``text``
says it in one sentence with the numbers: from which step and how fast a run diverges, or, for a
healthy run, whether it has converged by the course's criterion (``oracles.CONVERGED``) and when.
``sweep_kinds`` applies the same loss rules to every learning rate of a sweep at once.

The sentence is in the learner's language (``course_utils.messages``); ``kind`` stays the report's name
(code compares it), and ``headline`` stays English: the figure draws it, and matplotlib's default font has
no Chinese glyphs.
"""

import numpy as np

from course_utils.diagnostics import DIVERGED, DIVERGING, HEALTHY, NO_PROGRESS, health_report
from course_utils.lab.runs import Run
from course_utils.messages import t
from course_utils.oracles import CONVERGED, steps_to_converge

KINDS = (DIVERGED, DIVERGING, NO_PROGRESS, HEALTHY)  # what a lab run can be, most serious first


class Verdict:
    """What a run did, in numbers and in one sentence (``text``, in the learner's language); ``headline``:
    its first words in English (the figure's note: the plot font has no Chinese glyphs)."""

    def __init__(self, kind, text, diverged_at=None, growth=None, converged_at=None, zigzag=False, headline=None):
        self.kind = kind  # one of KINDS
        self.text = text
        self.headline = headline if headline is not None else text.split(":")[0]
        self.diverged_at = diverged_at
        self.growth = growth
        self.converged_at = converged_at
        self.zigzag = zigzag

    @property
    def converged(self):
        return self.converged_at is not None

    def __repr__(self):
        return f"Verdict({self.kind!r}, {self.text!r})"


def describe_run(run, surface, tol=CONVERGED):
    """Classify a run as the training-health report does, and say what happened in one sentence."""
    if not isinstance(run, Run):
        raise TypeError(f"run must be a Run (what a trainer returns), got {type(run).__name__}")
    losses = run.losses
    if losses.size == 0:
        raise ValueError("the run has no steps: there is nothing to describe")
    start = losses[0]
    if not np.isfinite(start):
        value = "inf" if np.isinf(start) else "NaN"
        return Verdict(DIVERGED, t("DIVERGED at step 0: the loss is already {value} at the start (is the start "
                                   "point or the data finite?)", value=value), diverged_at=0,
                       headline="DIVERGED at step 0")
    kind = health_report(losses, params=run.path).verdict if losses.size >= 2 else HEALTHY
    finite = np.isfinite(losses)
    if kind in (DIVERGED, DIVERGING):
        with np.errstate(invalid="ignore", over="ignore"):
            above = ~finite | (losses > start)
        below = np.flatnonzero(~above)
        diverged_at = int(below[-1] + 1) if below.size and above[-1] else int(np.argmax(above))
        last = int(np.flatnonzero(finite)[-1])
        first = max(min(diverged_at, last), last - 20)
        with np.errstate(all="ignore"):
            growth = float(np.exp((np.log(losses[last]) - np.log(losses[first])) / max(last - first, 1)))
        if kind == DIVERGED:
            first_bad = int(np.argmax(~finite)) if not finite.all() else None
            where = t("the loss overflows to {value} at step {step}",
                      value="inf" if np.isinf(losses[first_bad]) else "NaN", step=first_bad) \
                if first_bad is not None else t("a parameter became NaN or inf")
            headline = f"DIVERGED at step {diverged_at}"
            text = t("DIVERGED at step {step}: the loss grows ×{growth:.2f} per step and {where}",
                     step=diverged_at, growth=growth, where=where)
        elif growth > 1.0:
            headline = f"DIVERGING from step {diverged_at}"
            text = t("DIVERGING from step {step}: the loss grows ×{growth:.2f} per step, up to {loss:.3g}",
                     step=diverged_at, growth=growth, loss=losses[-1])
        else:
            headline = "DIVERGING"
            text = t("DIVERGING: the loss ({loss:.3g}) ended above its start ({start:.3g}) although it now "
                     "falls ×{growth:.2f} per step: the first steps overshot", loss=losses[-1], start=start,
                     growth=growth)
        return Verdict(kind, text, diverged_at=diverged_at, growth=growth, headline=headline)
    w, b = run.final
    converged_at = steps_to_converge(run.path, surface.optimum, tol)
    zigzag = _zigzags(run.path, surface)
    tail = t(" (w, b) zig-zags across the valley.") if zigzag else ""
    if kind == NO_PROGRESS:
        fallen = 1 - losses[-1] / start if start > 0 else 0.0
        return Verdict(kind, t("NO PROGRESS: the loss fell by only {fallen:.0%} in {steps} steps, final loss "
                               "{loss:.3e}, w={w:.4f}, b={b:.4f}.{tail}", fallen=fallen, steps=run.steps,
                               loss=losses[-1], w=w, b=b, tail=tail),
                       converged_at=converged_at, zigzag=zigzag, headline="NO PROGRESS")
    if converged_at is not None:
        return Verdict(kind, t("healthy, converged: within {tol} of the best fit from step {step}, final loss "
                               "{loss:.3e}, w={w:.4f}, b={b:.4f}.{tail}", tol=tol, step=converged_at,
                               loss=losses[-1], w=w, b=b, tail=tail),
                       converged_at=converged_at, zigzag=zigzag, headline="healthy, converged")
    best_w, best_b = surface.optimum
    return Verdict(kind, t("healthy, still learning: final loss {loss:.3e}, w={w:.4f}, b={b:.4f} (best fit "
                           "w={best_w:.4f}, b={best_b:.4f}).{tail}", loss=losses[-1], w=w, b=b, best_w=best_w,
                           best_b=best_b, tail=tail),
                   zigzag=zigzag, headline="healthy, still learning")


def _zigzags(path, surface):
    """True when the distance to the optimum along the steep direction flips sign on most steps."""
    steep = surface.eigenvectors[:, -1]
    with np.errstate(all="ignore"):  # an overflowing path: NaN and inf compare as no flip
        along = (path - np.asarray(surface.optimum)) @ steep
    along = along[np.abs(along) > 1e-3]  # ignore the flips of a converged run's rounding noise
    return along.size > 5 and np.mean(np.sign(along[1:]) != np.sign(along[:-1])) > 0.5


def sweep_kinds(sweep, min_improvement=0.5):
    """The verdict of every learning rate of a sweep at once, by the report's loss rules (NaN or inf:
    diverged; above the start: diverging; fell by less than ``min_improvement``: no progress)."""
    losses = sweep.losses.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        nonfinite = ~np.all(np.isfinite(losses), axis=0) | ~np.all(np.isfinite(sweep.paths), axis=(0, 1))
        grew = losses[-1] > losses[0]
        improvement = np.where(losses[0] > 0, 1.0 - losses[-1] / losses[0], 0.0)
    kinds = np.full(len(sweep.lrs), HEALTHY, dtype=object)
    kinds[improvement < min_improvement] = NO_PROGRESS
    kinds[grew] = DIVERGING
    kinds[nonfinite] = DIVERGED
    return kinds
