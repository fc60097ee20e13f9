"""A training-health report: is the loss finite and falling, do gradients explode, do parameters move?

Record at every step the loss, the global gradient norm and the parameters (as numpy numbers), then
``print(health_report(losses, grad_norms, params))``. The report names the most serious problem it
finds (its verdict) and lists every finding with its likely causes. It looks only at the numbers, so
it works with any framework and any way of writing the training loop.
"""

import math

import numpy as np

from course_utils._validate import require_int, require_number, require_series
from course_utils.messages import lazy, t

DIVERGED = "diverged"  # the loss, a gradient or a parameter became NaN or inf
DIVERGING = "diverging"  # still finite, but the loss ended higher than it started
EXPLODING = "exploding gradients"  # the gradient norm grew by orders of magnitude
FROZEN = "frozen"  # the parameters stopped changing although the gradient is not small
NO_PROGRESS = "no progress"  # the loss hardly fell, or is no better than predicting the mean
HEALTHY = "healthy"
VERDICTS = (DIVERGED, DIVERGING, EXPLODING, FROZEN, NO_PROGRESS, HEALTHY)  # most serious first
# The verdict as the report's headline shows it (the Chinese edition: its Chinese, then the English name).
_HEADLINES = {DIVERGED: lazy("DIVERGED"), DIVERGING: lazy("DIVERGING"), EXPLODING: lazy("EXPLODING GRADIENTS"),
              FROZEN: lazy("FROZEN"), NO_PROGRESS: lazy("NO PROGRESS"), HEALTHY: lazy("HEALTHY")}


class HealthReport:
    """What ``health_report`` found. ``verdict`` is one of VERDICTS; ``findings`` is a list of
    ``(verdict, explanation)`` pairs, most serious first; ``healthy`` is True when nothing was found;
    ``learning_rate`` is the NO PROGRESS advice ("too large", "too small") or None."""

    def __init__(self, steps, findings, facts, learning_rate=None):
        self.steps = steps
        # the advice on the learning rate, in words code can compare in any language: "too large", "too small"
        # or None (the findings' explanations say it to the learner, in the course's language)
        self.learning_rate = learning_rate
        self.findings = sorted(findings, key=lambda f: VERDICTS.index(f[0]))
        self.verdict = self.findings[0][0] if self.findings else HEALTHY
        self.facts = facts  # the measured numbers, as lines of text

    @property
    def healthy(self):
        return self.verdict == HEALTHY

    def __str__(self):
        lines = [t("Training health: {verdict} ({steps} steps)", verdict=t(_HEADLINES[self.verdict]),
                   steps=self.steps)]
        lines += [f"  {line}" for line in self.facts]
        # a finding names its verdict as the headline does, in lower case ("diverged"; in Chinese "已发散（diverged）")
        lines += [t("  ! {verdict}: {text}", verdict=t(_HEADLINES[verdict]).lower(), text=text)
                  for verdict, text in self.findings]
        return "\n".join(lines)

    def __repr__(self):
        return f"HealthReport(verdict={self.verdict!r}, findings={len(self.findings)})"

    def _repr_pretty_(self, printer, cycle):  # IPython shows the full text as a cell's last expression
        printer.text(str(self))


def _series(name, values):
    try:
        return require_series(name, values, ndim=None, allow_empty=True)
    except (TypeError, ValueError) as exc:  # None inside the list would otherwise become a silent NaN
        raise TypeError(f"{exc} (use float(loss) for a Tensor)") from None


def _number(name, value, low, high):
    return require_number(name, value, low, None if math.isinf(high) else high, low_open=True, high_open=True)


def _first(mask):
    return int(np.argmax(mask)) if mask.any() else None


def _bouncing(loss, par):
    """True when the second half of the run zig-zags: consecutive parameter updates point in opposite
    directions (median cosine below -0.5), or, without parameters, the loss rises at 30% of its steps or more."""
    half = max(len(loss) // 2, 2)
    if par is not None and len(par) >= 4:
        with np.errstate(invalid="ignore", over="ignore"):
            moves = np.diff(par, axis=0)[-half:]
            sizes = np.linalg.norm(moves, axis=1)
            moving = (sizes[1:] > 0) & (sizes[:-1] > 0)
            if moving.any():
                cosine = np.sum(moves[1:] * moves[:-1], axis=1)[moving] / (sizes[1:] * sizes[:-1])[moving]
                return bool(np.median(cosine) < -0.5)
    return bool(np.mean(np.diff(loss[-half:]) > 0) >= 0.3)


def health_report(losses, grad_norms=None, params=None, *, baseline_loss=None, min_improvement=0.5,
                  explode_factor=1e3, frozen_steps=5):
    """Diagnose a training run from what was recorded at each of its n steps.

    losses: the n losses (1-D). grad_norms: optionally the n global gradient norms, measured before
    clipping. params: optionally the parameters flattened into rows, n + 1 rows (before the first step
    and after every step) or n rows (after every step). baseline_loss: optionally the loss of a model
    that ignores its input (for the mean squared error: the variance of y); a final loss above half of
    it means the model learned little. The thresholds are keyword arguments.
    """
    loss = _series("losses", losses)
    if loss.ndim != 1 or loss.size < 2:
        raise ValueError(f"losses must be 1-D with at least 2 steps, got shape {loss.shape}")
    n = loss.size
    min_improvement = _number("min_improvement", min_improvement, 0.0, 1.0)
    explode_factor = _number("explode_factor", explode_factor, 1.0, math.inf)
    frozen_steps = require_int("frozen_steps", frozen_steps, 1)
    if baseline_loss is not None:
        baseline_loss = _number("baseline_loss", baseline_loss, 0.0, math.inf)

    grad = None
    if grad_norms is not None:
        grad = _series("grad_norms", grad_norms)
        if grad.shape != (n,):
            raise ValueError(f"grad_norms must have one value per step ({n}), got shape {grad.shape}")
        if np.any(grad < 0):
            raise ValueError("grad_norms must not be negative: a norm is >= 0")
    par, offset = None, 0
    if params is not None:
        par = _series("params", params)
        par = par.reshape(-1, 1) if par.ndim == 1 else par
        if par.ndim != 2 or par.shape[0] not in (n, n + 1):
            raise ValueError(f"params must have {n + 1} rows (before the first step and after each) or {n} "
                             f"rows (after each step), got shape {np.shape(params)}")
        offset = 0 if par.shape[0] == n + 1 else 1  # the step whose update the first row difference shows

    findings = []
    facts = [t("loss:          first {first:.4g}, last {last:.4g}", first=loss[0], last=loss[-1])]
    if grad is not None:
        finite_grad = grad[np.isfinite(grad)]
        largest = f"{finite_grad.max():.4g}" if finite_grad.size else t("none finite")
        facts.append(t("gradient norm: first {first:.4g}, largest finite {largest}, last {last:.4g}", first=grad[0],
                       largest=largest, last=grad[-1]))
    if par is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            changes = np.linalg.norm(np.diff(par, axis=0), axis=1)
        facts.append(t("parameter change per step: median {median:.4g}, last {last:.4g}", median=np.median(changes),
                       last=changes[-1]))
    if baseline_loss is not None:
        facts.append(t("baseline loss (predict the mean): {baseline:.4g}", baseline=baseline_loss))

    # 1. NaN or inf anywhere: nothing else is meaningful after that
    first_bad = []  # (step, order, description) of the first non-finite value in each series
    step = _first(~np.isfinite(loss))
    if step is not None:
        first_bad.append((step, 0, t("the loss became {value} at step {step}", value=loss[step], step=step)))
    step = _first(~np.isfinite(grad)) if grad is not None else None
    if step is not None:
        first_bad.append((step, 1, t("the gradient norm became {value} at step {step}", value=grad[step], step=step)))
    row = _first(~np.all(np.isfinite(par), axis=1)) if par is not None else None
    if row is not None:
        step = max(row - 1 + offset, 0)  # the step whose update produced that row
        first_bad.append((step, 2, t("a parameter became NaN or inf at step {step}", step=step)))
    if first_bad:
        findings.append((DIVERGED, t("{problem}. Usual causes: a learning rate above the stability limit, inputs on a "
                                     "large scale, or gradients exploding in a deep net. Lower the learning rate, "
                                     "rescale the inputs, or clip the gradients.", problem=min(first_bad)[2])))
        return HealthReport(n, findings, facts)

    # 2. finite, but moving the wrong way
    if loss[-1] > loss[0]:
        findings.append((DIVERGING, t("the loss grew from {first:.4g} to {last:.4g}: the learning rate is probably "
                                      "too large (each step overshoots further). It will become inf or NaN.",
                                      first=loss[0], last=loss[-1])))
    if grad is not None and grad[0] > 0 and grad.max() > explode_factor * grad[0]:
        step = int(np.argmax(grad))
        findings.append((EXPLODING, t("the gradient norm grew {factor:.3g}-fold, to {largest:.4g} at step {step}. "
                                      "Clip it (ops.clip_by_global_norm) and check the learning rate.",
                                      factor=grad.max() / grad[0], largest=grad.max(), step=step)))

    # 3. parameter values that stopped moving although the gradient says they should move
    if par is not None and grad is not None:
        still = np.diff(par, axis=0) == 0  # (updates, values): True where an update left a value unchanged
        trailing = np.where(still.all(axis=0), len(still), np.argmin(still[::-1], axis=0))  # per value
        stuck = trailing >= min(frozen_steps, len(still))
        if stuck.any():
            start = len(still) - int(trailing[stuck].min()) + offset  # every stuck value is unchanged since
            pushed = float(np.median(grad[start:])) if start < n else 0.0
            if pushed > 1e-3 * grad.max():  # not a float32 fixed point at the minimum
                values = (t("all {total} parameter values", total=stuck.size) if stuck.all()
                          else t("{stuck} of {total} parameter values", stuck=int(stuck.sum()), total=stuck.size))
                findings.append((FROZEN, t("{values} have not changed since step {start} although the gradient norm "
                                           "is {norm:.4g}: the optimizer no longer updates them. In PyNative, "
                                           "Parameter.set_data or load_param_into_net after the optimizer has "
                                           "stepped does this: reset with ops.assign, or build a new optimizer.",
                                           values=values, start=start, norm=pushed)))

    # 4. finite and not growing, but not learning either. Which way to move the learning rate depends on
    # how the loss failed to fall: steadily but slowly (too small), or up and down (each step overshoots).
    serious = bool(findings)
    improvement = 1.0 - loss[-1] / loss[0] if loss[0] > 0 else 0.0
    bouncing = _bouncing(loss, par)
    if bouncing:
        advice = t("The loss goes up and down from step to step and the parameters jump back and forth: each step "
                   "overshoots the minimum. The learning rate is too large (clipping can keep such a run finite, "
                   "not make it converge): lower it, 2 to 3 times at a time.")
    else:
        advice = t("The loss falls steadily, just slowly: the learning rate may be too small (10 times smaller "
                   "needs about 10 times the steps), or the inputs badly scaled (some directions then learn far more "
                   "slowly than others: standardise them).")
    if not serious and improvement < min_improvement:
        findings.append((NO_PROGRESS, t("the loss fell by only {improvement:.1%} in {n} steps. {advice}",
                                        improvement=improvement, n=n, advice=advice)))
    if not serious and baseline_loss is not None and loss[-1] > 0.5 * baseline_loss:
        shape = ("" if bouncing else t(" Or predictions and targets differ in shape ((n, 1) against (n,) broadcasts "
                                       "silently, and the best the model can then do is predict the mean)."))
        findings.append((NO_PROGRESS, t("the final loss is {ratio:.0%} of the baseline: the model has learned little "
                                        "beyond the mean of y. {advice}{shape}", ratio=loss[-1] / baseline_loss,
                                        advice=advice, shape=shape)))
    advised = any(verdict == NO_PROGRESS for verdict, _ in findings)
    return HealthReport(n, findings, facts, ("too large" if bouncing else "too small") if advised else None)
