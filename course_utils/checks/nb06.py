"""Exercises of notebook 06 (learning-rate schedules and the range test): a warm-up + cosine schedule written
as a ``LearningRateSchedule``, an open-ended range test that sets the learning rate with ``ops.assign``,
and two predictions (a list of learning rates used past its end; ``set_data`` on the learning rate in
PyNative).

The oracles are float64 numpy written from the formulas (the schedule's closed form, and
``course_utils.oracles.gradient_descent`` taken one step at a time with each step's learning rate); none
of them uses the code the notebook teaches. The data and settings are the checks' own, not the lesson's.
"""

import math

import numpy as np

from course_utils import oracles
from course_utils._validate import shown
from course_utils.checks._nets import one_neuron
from course_utils.exercises import NONE_HINT, Prediction, ScaffoldExercise, as_array, bind
from course_utils.messages import lazy, t


# ---- closed forms ------------------------------------------------------------------------------------------
def warmup_cosine_lr(step, peak_lr, min_lr, warmup_steps, total_steps):
    """The learning rate of step ``step`` (0-based) of the warm-up + cosine schedule of exercise 06.2:
    ``peak_lr * step / warmup_steps`` during the warm-up (as ``nn.WarmUpLR``), then a cosine from
    ``peak_lr`` down to ``min_lr`` over the remaining ``total_steps - warmup_steps`` steps (as
    ``nn.CosineDecayLR``), then ``min_lr`` for good."""
    if step < warmup_steps:
        return peak_lr * step / warmup_steps
    decay = total_steps - warmup_steps
    frac = min(step - warmup_steps, decay) / decay
    return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + math.cos(math.pi * frac))


def _variants(step, peak, low, warm, total):
    """What typical mistakes give at ``step``: name -> learning rate."""
    decay = total - warm
    cos = lambda frac: low + 0.5 * (peak - low) * (1.0 + math.cos(math.pi * frac))  # noqa: E731
    warm_part = peak * step / warm if step < warm else None
    return {
        "unshifted": warm_part if warm_part is not None else cos(min(step, decay) / decay),
        "whole_total": warm_part if warm_part is not None else cos(min(step - warm, total) / total),
        "no_min": warm_part if warm_part is not None
        else 0.5 * peak * (1.0 + math.cos(math.pi * min(step - warm, decay) / decay)),
        "warmup_plus_one": peak * (step + 1) / warm if step < warm else cos(min(step - warm, decay) / decay),
        "no_hold": warm_part if warm_part is not None else cos((step - warm) / decay),
    }


_MISTAKES = {  # translated with t() where shown
    "unshifted": lazy("the cosine starts at step 0 instead of at the end of the warm-up: give CosineDecayLR "
                      "global_step - warmup_steps"),
    "whole_total": lazy("the cosine decays over total_steps, but it has only total_steps - warmup_steps steps "
                        "left after the warm-up"),
    "no_min": lazy("the cosine ends at 0 instead of min_lr: CosineDecayLR(min_lr, peak_lr, ...) takes min_lr "
                   "first"),
    "warmup_plus_one": lazy("your warm-up is one step ahead: step s of the warm-up has peak_lr * s / "
                            "warmup_steps (step 0 has 0, as nn.WarmUpLR gives)"),
    "no_hold": lazy("after total_steps the learning rate must stay at min_lr; yours rises again (a cosine is "
                    "periodic: clip the step, as CosineDecayLR does)"),
}

# ---- 06.2 warm-up then cosine, as a LearningRateSchedule --------------------------------------------------
# (peak_lr, min_lr, warmup_steps, total_steps): none of them is the lesson's
SCHEDULE_CASES = ((0.2, 0.02, 4, 20), (0.06, 0.0, 1, 7), (1.5, 0.3, 10, 25))
_SCHED_DATA_SEED = 61


def _sched_data():
    rng = np.random.default_rng(_SCHED_DATA_SEED)
    xs = rng.uniform(-1.0, 1.0, (24, 1)).astype(np.float32)
    return xs, (0.8 - 1.3 * xs).astype(np.float32)


def _lr_of(schedule, step):
    import mindspore as ms

    out = schedule(ms.Tensor([step], ms.int32))  # what the optimizer hands it: global_step, shape (1,)
    arr, problem = as_array(out, t("your schedule at step {step}", step=step))
    if problem:
        return None, problem
    if arr.size != 1:
        return None, t("your schedule must return one learning rate per step, got shape {shape} at step {step}",
                       shape=arr.shape, step=step)
    value = float(arr.reshape(()))
    if not math.isfinite(value):
        return None, t("your schedule returned {value} at step {step}", value=value, step=step)
    return value, None


def _check_warmup_cosine(answer):
    import mindspore as ms
    from mindspore import nn
    from mindspore.nn.learning_rate_schedule import LearningRateSchedule

    if isinstance(answer, LearningRateSchedule):
        return t("pass the class itself (answer = WarmupCosine), not an instance of it")
    if not (isinstance(answer, type) and issubclass(answer, LearningRateSchedule)):
        return t("expected a subclass of LearningRateSchedule, got {answer}", answer=shown(answer))
    for case, (peak, low, warm, total) in enumerate(SCHEDULE_CASES):
        call = f"WarmupCosine(peak_lr={peak}, min_lr={low}, warmup_steps={warm}, total_steps={total})"
        schedule = answer(peak, low, warm, total)
        steps = range(total + 4)
        got = []
        for k in steps:
            value, problem = _lr_of(schedule, k)
            if problem:
                return t("{call}: {problem}", call=call, problem=problem)
            got.append(value)
        expected = [warmup_cosine_lr(k, peak, low, warm, total) for k in steps]
        wrong = [k for k in steps if not math.isclose(got[k], expected[k], rel_tol=1e-5, abs_tol=1e-7)]
        if wrong:
            k = wrong[0]
            for name, why in _MISTAKES.items():
                variant = [_variants(s, peak, low, warm, total)[name] for s in steps]
                if all(math.isclose(g, v, rel_tol=1e-5, abs_tol=1e-7) for g, v in zip(got, variant)):
                    return t("{call}: {why} (step {step}: expected {expected:.6f}, got {got:.6f})", call=call,
                             why=t(why), step=k, expected=expected[k], got=got[k])
            return t("{call}: at step {step} the learning rate should be {expected:.6f}, yours is {got:.6f}",
                     call=call, step=k, expected=expected[k], got=got[k])
        if case > 0:
            continue
        # the same schedule inside an optimizer (once: compiling the optimizer is the slow part)
        xs, ys = _sched_data()
        net = one_neuron(0.0, 0.0)
        train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                    nn.SGD(net.trainable_params(), learning_rate=answer(peak, low, warm, total)))
        w = b = 0.0
        for k in steps:
            train(ms.Tensor(xs), ms.Tensor(ys))
            ws, bs, _ = oracles.gradient_descent(xs, ys, expected[k], 1, w=w, b=b)
            w, b = float(ws[0]), float(bs[0])
        got_w, got_b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
        close = [math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-5) for got, want in ((got_w, w), (got_b, b))]
        if not all(close):
            return t("{call} gives the right values when called, but nn.SGD trained with it for {n} steps "
                     "ends at w = {got_w:.5f}, b = {got_b:.5f} instead of w = {w:.5f}, b = {b:.5f}: construct must "
                     "use only its global_step argument (no state of its own that changes between calls)",
                     call=call, n=len(steps), got_w=got_w, got_b=got_b, w=w, b=b)
    return None


# ---- 06.4 an open-ended range test with ops.assign --------------------------------------------------------
# (lr_start, factor, blowup, max_steps, start w, start b); the second never blows up within max_steps
RANGE_CASES = ((0.004, 1.25, 4.0, 40, 0.0, 0.0), (0.02, 1.5, 2.0, 25, 0.5, -0.5), (0.001, 1.2, 4.0, 9, 0.0, 0.0))
_RANGE_DATA_SEED = 62


def range_data():
    """The check's own data: 40 points with x in [0.5, 2) (2/lambda_max about 0.4, not the lesson's 0.807)."""
    rng = np.random.default_rng(_RANGE_DATA_SEED)
    xs = rng.uniform(0.5, 2.0, (40, 1)).astype(np.float32)
    return xs, (0.7 - 1.5 * xs + rng.normal(0.0, 0.05, (40, 1))).astype(np.float32)


def range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w=0.0, b=0.0, constant_lr=False):
    """(lrs, losses) of the open-ended range test in numpy: step k uses lr_start * factor**k and returns the
    loss before its update; the test stops after the first loss that is not finite or exceeds blowup x the
    smallest loss so far, or after max_steps steps."""
    lrs, losses, lr = [], [], lr_start
    for _ in range(max_steps):
        ws, bs, ls = oracles.gradient_descent(xs, ys, lr_start if constant_lr else lr, 1, w=w, b=b)
        w, b = float(ws[0]), float(bs[0])
        lrs.append(lr)
        losses.append(float(ls[0]))
        if not math.isfinite(losses[-1]) or losses[-1] > blowup * min(losses):
            break
        lr *= factor
    return np.array(lrs), np.array(losses)


_LOSS_RTOL = 5e-3  # float32 against float64: past 2/lambda_max the growing direction amplifies rounding


def _check_range_test(answer):
    import mindspore as ms

    if not callable(answer) or isinstance(answer, type):
        return t("expected your function range_test(net, X, Y, lr_start, factor, blowup, max_steps), got {answer}",
                 answer=shown(answer))
    xs, ys = range_data()
    for lr_start, factor, blowup, max_steps, w0, b0 in RANGE_CASES:
        call = f"range_test(net, X, Y, lr_start={lr_start}, factor={factor}, blowup={blowup}, max_steps={max_steps})"
        out = answer(one_neuron(w0, b0), ms.Tensor(xs), ms.Tensor(ys), lr_start, factor, blowup, max_steps)
        if out is None:
            return t("{call} returned None. {hint}", call=call, hint=t(NONE_HINT))
        if not (isinstance(out, tuple) and len(out) == 2):
            return t("{call} must return (lrs, losses), got {value}", call=call, value=shown(out))
        arrays = []
        for what, value in zip((t("lrs"), t("losses")), out):
            if isinstance(value, (list, tuple)):
                try:
                    value = np.array(value, dtype=object).astype(np.float64)
                except (TypeError, ValueError):
                    return t("{call}: {what} must hold numbers (Python floats), got {value}", call=call, what=what,
                             value=shown(value))
            arr, problem = as_array(value, what)
            if problem:
                return t("{call}: {problem}", call=call, problem=problem)
            if arr.ndim != 1:
                return t("{call}: {what} must be 1-D (one value per step), got shape {shape}", call=call, what=what,
                         shape=arr.shape)
            arrays.append(arr)
        lrs, losses = arrays
        if len(lrs) != len(losses):
            return t("{call}: {n_lrs} learning rates but {n_losses} losses: record one of each per step", call=call,
                     n_lrs=len(lrs), n_losses=len(losses))
        exp_lrs, exp_losses = range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w0, b0)
        n = len(exp_lrs)
        if len(lrs) and not math.isclose(lrs[0], lr_start, rel_tol=1e-9):
            return t("{call}: the first step must use lr_start = {lr_start}, yours used {used:.6g}", call=call,
                     lr_start=lr_start, used=lrs[0])
        m = min(len(lrs), n)
        if not np.allclose(lrs[:m], exp_lrs[:m], rtol=1e-9):
            k = int(np.flatnonzero(~np.isclose(lrs[:m], exp_lrs[:m], rtol=1e-9))[0])
            return t("{call}: step {step} should use lr = {expected:.6g} (lr_start * factor**{step}), yours {got:.6g}",
                     call=call, step=k, expected=exp_lrs[k], got=lrs[k])
        const = range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w0, b0, constant_lr=True)[1]
        frozen = np.allclose(losses[:m], const[:m], rtol=_LOSS_RTOL)
        if m > 2 and frozen and not np.allclose(losses[:m], exp_losses[:m], rtol=_LOSS_RTOL):
            return t("{call}: your losses are those of a constant lr = {lr_start}: the optimizer never used the new "
                     "learning rates. In PyNative, optimizer.learning_rate.set_data(...) is ignored once the "
                     "optimizer has stepped; ops.assign(optimizer.learning_rate, ...) works", call=call,
                     lr_start=lr_start)
        if not np.allclose(losses[:m], exp_losses[:m], rtol=_LOSS_RTOL, atol=1e-6):
            k = int(np.flatnonzero(~np.isclose(losses[:m], exp_losses[:m], rtol=_LOSS_RTOL, atol=1e-6))[0])
            return t("{call}: step {step} (lr {lr:.4g}) should return the loss {expected:.6g}, yours {got:.6g} "
                     "(record the loss the train step returns: the loss before its update)", call=call, step=k,
                     lr=exp_lrs[k], expected=exp_losses[k], got=losses[k])
        if len(lrs) > n:
            why = (t("the loss is not finite") if not math.isfinite(exp_losses[-1]) else
                   t("its loss {loss:.4g} is above {blowup} x the smallest so far, {smallest:.4g}",
                     loss=exp_losses[-1], blowup=blowup, smallest=min(exp_losses[:-1])))
            return t("{call}: the test should stop after step {last}, where {why}; yours went on to {n} steps",
                     call=call, last=n - 1, why=why, n=len(lrs))
        if len(lrs) < n:
            return t("{call}: your test stopped after {n} steps, but it should go on until a loss exceeds "
                     "{blowup} x the smallest so far (that was step {last}, which is recorded too) or "
                     "max_steps = {max_steps} steps are done", call=call, n=len(lrs), blowup=blowup, last=n - 1,
                     max_steps=max_steps)
    return None


# ---- predictions -------------------------------------------------------------------------------------------


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
past_the_end = Prediction(
    lazy("nn.SGD(params, learning_rate=[0.3, 0.2, 0.1]) gets a list of three learning rates. What happens at the "
         "fourth training step?"),
    {
        "a": (lazy("it keeps using the last value, 0.1"),
              lazy("that is what the LearningRateSchedule cells do (CosineDecayLR holds min_lr); a list does not: the "
                   "optimizer looks up list[global_step], and index 3 does not exist")),
        "b": (lazy("it starts again from the first value, 0.3"),
              lazy("nothing wraps around: the optimizer looks up list[global_step] with Gather, and index 3 is out of "
                   "range")),
        "c": (lazy("it uses 0, so the weights stop moving"),
              lazy("a silent 0 would freeze training without a word; MindSpore 2.10 on CPU checks the index "
                   "instead, and index 3 of a 3-value list is out of range")),
        "d": (lazy("the step raises an error"),
              lazy("the optimizer looks up list[global_step] with Gather, and on CPU index 3 of a 3-value list raises "
                   "RuntimeError (in PyNative and in graph mode): make the list as long as the training")),
    },
    answer="d",
)
warmup_cosine = ScaffoldExercise(_check_warmup_cosine, hints=[
    lazy("Build the two schedules MindSpore already has in __init__ (nn.WarmUpLR for the warm-up, "
         "nn.CosineDecayLR for the decay) and let construct choose between them by comparing global_step with "
         "warmup_steps."),
    lazy("The cosine must start where the warm-up ends and run for the steps that are left: "
         "nn.CosineDecayLR(min_lr, peak_lr, total_steps - warmup_steps), called with global_step - warmup_steps."),
    lazy("construct: `if global_step < self.warmup_steps: return self.warmup(global_step)` and otherwise "
         "`return self.cosine(global_step - self.warmup_steps)`; CosineDecayLR holds min_lr past its end by "
         "itself."),
])
set_data_ignored = Prediction(
    lazy("In PyNative mode, an nn.SGD optimizer with learning_rate=0.1 has taken two steps. Then "
         "optimizer.learning_rate.set_data(ms.Tensor(0.01, ms.float32)). Which learning rate does the third step "
         "use, and what does optimizer.learning_rate hold afterwards?"),
    {
        "a": (lazy("0.01; it holds 0.01"),
              lazy("that is what happens in graph mode, and what the name promises; in PyNative the step keeps the "
                   "value it was built with, and nothing warns you")),
        "b": (lazy("still 0.1; it holds 0.01"),
              lazy("the Parameter's value changes (printing it shows 0.01), but the optimizer's update keeps using "
                   "the old one, and nothing warns you. ops.assign(optimizer.learning_rate, ...) works")),
        "c": (lazy("still 0.1; it holds 0.1 (set_data refused the change)"),
              lazy("set_data does change the Parameter: reading it back shows 0.01, which is what makes the trap "
                   "silent")),
        "d": (lazy("set_data raises an error, because the optimizer has already stepped"),
              lazy("nothing raises; the new value is stored and then ignored")),
    },
    answer="b",
)
range_test = ScaffoldExercise(_check_range_test, hints=[
    lazy("Each pass of the loop: put lr into the optimizer, take one step, record (lr, loss), decide whether to "
         "stop, then grow lr. Section 4 shows the one way to put a new learning rate into an optimizer that has "
         "stepped."),
    lazy("ops.assign(optimizer.learning_rate, ms.Tensor(lr, ms.float32)) sets it; "
         "loss = train_net(X, Y).asnumpy().item() takes the step; stop with "
         "`if not np.isfinite(loss) or loss > blowup * min(losses): break` after appending; then lr = lr * factor."),
])

bind(globals())
