"""Exercises of notebook 06 (learning-rate schedules and the range test): a warm-up + cosine schedule written
as a ``LearningRateSchedule``, an open-ended range test that sets the learning rate with ``ops.assign``, and
two predictions (a list of learning rates used past its end; ``set_data`` on the learning rate in PyNative).

The oracles are float64 numpy written from the formulas (the schedule's closed form, and
``course_utils.oracles.gradient_descent`` one step at a time with each step's learning rate), never the code
the notebook teaches; the data and settings are the checks' own, not the lesson's.
"""

import math
from functools import partial

import numpy as np

from course_utils import oracles
from course_utils._validate import shown
from course_utils.checks._nets import one_neuron
from course_utils.exercises import FunctionExercise, Incorrect, Prediction, array, bind, close, name_the_mistake, number
from course_utils.messages import lazy, t


# ---- 06.2 warm-up then cosine, as a LearningRateSchedule --------------------------------------------------
def warmup_cosine_lr(step, peak_lr, min_lr, warmup_steps, total_steps, *, shift=True, whole_total=False, ahead=0,
                     hold=True):
    """The learning rate of step ``step`` (0-based) of the warm-up + cosine schedule of exercise 06.2:
    ``peak_lr * step / warmup_steps`` during the warm-up (as ``nn.WarmUpLR``), then a cosine from
    ``peak_lr`` down to ``min_lr`` over the remaining ``total_steps - warmup_steps`` steps (as
    ``nn.CosineDecayLR``), then ``min_lr`` for good. The keywords make typical mistakes (SCHEDULE_MISTAKES)."""
    if step < warmup_steps:
        return peak_lr * (step + ahead) / warmup_steps
    decay = total_steps if whole_total else total_steps - warmup_steps
    done = step - warmup_steps if shift else step
    frac = (min(done, decay) if hold else done) / decay
    return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + math.cos(math.pi * frac))


SCHEDULE_MISTAKES = (  # (settings of warmup_cosine_lr, why): {at} says where the first step differs
    ({"shift": False}, lazy("the cosine starts at step 0 instead of at the end of the warm-up ({at})")),
    ({"whole_total": True}, lazy("the cosine decays over total_steps, as if the warm-up had used none of them "
                                 "({at})")),
    ({"min_lr": 0.0}, lazy("the cosine ends at 0 instead of min_lr: which argument of CosineDecayLR did min_lr go "
                           "to? ({at})")),
    ({"ahead": 1}, lazy("your warm-up is one step ahead: at step 0 it should give 0, as nn.WarmUpLR does ({at})")),
    ({"hold": False}, lazy("after total_steps the learning rate must stay at min_lr; yours rises again (a cosine "
                           "is periodic) ({at})")),
)
# (peak_lr, min_lr, warmup_steps, total_steps): none of them is the lesson's
SCHEDULE_CASES = ((0.2, 0.02, 4, 20), (0.06, 0.0, 1, 7), (1.5, 0.3, 10, 25))
_same_lrs = partial(close, rtol=1e-5, atol=1e-7)


def _schedule_case(answer, peak, low, warm, total, in_optimizer):
    import mindspore as ms
    from mindspore import nn

    schedule, steps = answer(peak, low, warm, total), range(total + 4)  # called as the optimizer does: shape (1,)
    got = np.array([number(schedule(ms.Tensor([k], ms.int32)), t("your schedule at step {step}", step=k))
                    for k in steps])
    settings = {"peak_lr": peak, "min_lr": low, "warmup_steps": warm, "total_steps": total}
    oracle = lambda **mistake: np.array([warmup_cosine_lr(k, **{**settings, **mistake}) for k in steps])  # noqa: E731
    want = oracle()
    if not _same_lrs(got, want):
        k = int(np.flatnonzero(~np.isclose(got, want, rtol=1e-5, atol=1e-7))[0])
        at = t("step {step}: expected {expected:.6f}, got {got:.6f}", step=k, expected=want[k], got=got[k])
        name_the_mistake(got, oracle, SCHEDULE_MISTAKES, same=_same_lrs, at=at)
        raise Incorrect(t("at step {step} the learning rate should be {expected:.6f}, yours is {got:.6f}", step=k,
                          expected=want[k], got=got[k]))
    if not in_optimizer:  # the same schedule inside an optimizer, once: compiling the optimizer is the slow part
        return
    xs = np.random.default_rng(61).uniform(-1.0, 1.0, (24, 1)).astype(np.float32)
    ys, net = (0.8 - 1.3 * xs).astype(np.float32), one_neuron(0.0, 0.0)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                nn.SGD(net.trainable_params(), learning_rate=answer(peak, low, warm, total)))
    w = b = 0.0
    for k in steps:
        train(ms.Tensor(xs), ms.Tensor(ys))
        w, b = (float(v[0]) for v in oracles.gradient_descent(xs, ys, want[k], 1, w=w, b=b)[:2])
    got_w, got_b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
    if not close([got_w, got_b], [w, b], rtol=1e-4, atol=1e-5):
        raise Incorrect(t("called directly it gives the right values, but nn.SGD trained with it for {n} steps ends "
                          "at w = {got_w:.5f}, b = {got_b:.5f} instead of w = {w:.5f}, b = {b:.5f}: does construct "
                          "keep a state of its own that changes between calls?",
                          n=len(steps), got_w=got_w, got_b=got_b, w=w, b=b))


def _check_warmup_cosine(answer):
    from mindspore.nn.learning_rate_schedule import LearningRateSchedule

    if not issubclass(answer, LearningRateSchedule):
        raise Incorrect(t("expected a subclass of LearningRateSchedule, got {answer}", answer=shown(answer)))
    for case, (peak, low, warm, total) in enumerate(SCHEDULE_CASES):
        try:
            _schedule_case(answer, peak, low, warm, total, in_optimizer=case == 0)
        except Incorrect as problem:
            call = f"WarmupCosine(peak_lr={peak}, min_lr={low}, warmup_steps={warm}, total_steps={total})"
            raise Incorrect(t("{call}: {problem}", call=call, problem=problem)) from None


# ---- 06.4 an open-ended range test with ops.assign --------------------------------------------------------
# (lr_start, factor, blowup, max_steps, start w, start b); the second never blows up within max_steps
RANGE_CASES = ((0.004, 1.25, 4.0, 40, 0.0, 0.0), (0.02, 1.5, 2.0, 25, 0.5, -0.5), (0.001, 1.2, 4.0, 9, 0.0, 0.0))


def range_data():
    """The check's own data: 40 points with x in [0.5, 2) (2/lambda_max about 0.4, not the lesson's 0.807)."""
    rng = np.random.default_rng(62)
    xs = rng.uniform(0.5, 2.0, (40, 1)).astype(np.float32)
    return xs, (0.7 - 1.5 * xs + rng.normal(0.0, 0.05, (40, 1))).astype(np.float32)


def range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w=0.0, b=0.0, constant_lr=False):
    """(lrs, losses, (w, b)) of the open-ended range test in numpy: step k uses lr_start * factor**k and returns
    the loss before its update; the test stops after the first loss that is not finite or exceeds blowup x the
    smallest loss so far, or after max_steps steps; (w, b) is where the net ends."""
    lrs, losses, lr = [], [], lr_start
    for _ in range(max_steps):
        ws, bs, ls = oracles.gradient_descent(xs, ys, lr_start if constant_lr else lr, 1, w=w, b=b)
        w, b = float(ws[0]), float(bs[0])
        lrs.append(lr)
        losses.append(float(ls[0]))
        if not math.isfinite(losses[-1]) or losses[-1] > blowup * min(losses):
            break
        lr *= factor
    return np.array(lrs), np.array(losses), (w, b)


_LOSS_RTOL = 5e-3  # float32 against float64: past 2/lambda_max the growing direction amplifies rounding


def _per_step(value, what):
    if isinstance(value, (list, tuple)):
        try:
            value = np.array(value, dtype=object).astype(np.float64)
        except (TypeError, ValueError):
            raise Incorrect(t("{what} must hold numbers (Python floats), got {value}", what=what,
                              value=shown(value))) from None
    arr = array(value, what)
    if arr.ndim != 1:
        raise Incorrect(t("{what} must be 1-D (one value per step), got shape {shape}", what=what, shape=arr.shape))
    return arr


def _range_case(out, net, xs, ys, lr_start, factor, blowup, max_steps, w0, b0):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise Incorrect(t("must return (lrs, losses), got {value}", value=shown(out)))
    lrs, losses = _per_step(out[0], t("lrs")), _per_step(out[1], t("losses"))
    if len(lrs) != len(losses):
        raise Incorrect(t("{n_lrs} learning rates but {n_losses} losses: record one of each per step",
                          n_lrs=len(lrs), n_losses=len(losses)))
    exp_lrs, exp_losses, (w, b) = range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w0, b0)
    n, m = len(exp_lrs), min(len(lrs), len(exp_lrs))
    if len(lrs) and not math.isclose(lrs[0], lr_start, rel_tol=1e-9):
        raise Incorrect(t("the first step must use lr_start = {lr_start}, yours used {used:.6g}", lr_start=lr_start,
                          used=lrs[0]))
    if not close(lrs[:m], exp_lrs[:m], rtol=1e-9, atol=1e-8):
        k = int(np.flatnonzero(~np.isclose(lrs[:m], exp_lrs[:m], rtol=1e-9))[0])
        raise Incorrect(t("step {step} should use lr = {expected:.6g} (lr_start * factor**{step}), yours {got:.6g}",
                          step=k, expected=exp_lrs[k], got=lrs[k]))
    if not close(losses[:m], exp_losses[:m], rtol=_LOSS_RTOL, atol=1e-6):
        constant = range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w0, b0, constant_lr=True)[1]
        if close(losses[:m], constant[:m], rtol=_LOSS_RTOL, atol=1e-8):
            raise Incorrect(t("your losses are those of a constant lr = {lr_start}: the optimizer never used the new "
                              "learning rates (section 4)", lr_start=lr_start))
        k = int(np.flatnonzero(~np.isclose(losses[:m], exp_losses[:m], rtol=_LOSS_RTOL, atol=1e-6))[0])
        raise Incorrect(t("step {step} (lr {lr:.4g}) should return the loss {expected:.6g}, yours {got:.6g} (record "
                          "the loss the train step returns: the loss before its update)", step=k, lr=exp_lrs[k],
                          expected=exp_losses[k], got=losses[k]))
    if len(lrs) > n:
        why = (t("the loss is not finite") if not math.isfinite(exp_losses[-1]) else
               t("its loss {loss:.4g} is above {blowup} x the smallest so far, {smallest:.4g}", loss=exp_losses[-1],
                 blowup=blowup, smallest=min(exp_losses[:-1])))
        raise Incorrect(t("the test should stop after step {last}, where {why}; yours went on to {n} steps",
                          last=n - 1, why=why, n=len(lrs)))
    if len(lrs) < n:
        raise Incorrect(t("your test stopped after {n} steps, but it should go on until a loss exceeds {blowup} x "
                          "the smallest so far (that was step {last}, which is recorded too) or max_steps = "
                          "{max_steps} steps are done", n=len(lrs), blowup=blowup, last=n - 1, max_steps=max_steps))
    got_w, got_b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
    if not close([got_w, got_b], [w, b], rtol=_LOSS_RTOL, atol=1e-4):
        raise Incorrect(t("your lrs and losses are right, but the net you were given ends at w = {got_w:.5f}, "
                          "b = {got_b:.5f} instead of w = {w:.5f}, b = {b:.5f}: did your loop train that net?",
                          got_w=got_w, got_b=got_b, w=w, b=b))


def _check_range_test(answer):
    import mindspore as ms

    xs, ys = range_data()
    for lr_start, factor, blowup, max_steps, w0, b0 in RANGE_CASES:
        net = one_neuron(w0, b0)
        out = range_test.call(answer, net, ms.Tensor(xs), ms.Tensor(ys), lr_start, factor, blowup, max_steps)
        try:
            _range_case(out, net, xs, ys, lr_start, factor, blowup, max_steps, w0, b0)
        except Incorrect as problem:
            call = (f"range_test(net, X, Y, lr_start={lr_start}, factor={factor}, blowup={blowup}, "
                    f"max_steps={max_steps})")
            raise Incorrect(t("{call}: {problem}", call=call, problem=problem)) from None


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
past_the_end = Prediction(
    lazy("nn.SGD(params, learning_rate=[0.3, 0.2, 0.1]) gets a list of three learning rates. What happens at the "
         "fourth training step?"),
    {"a": (lazy("it keeps using the last value, 0.1"),
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
                "RuntimeError (in PyNative and in graph mode): make the list as long as the training"))},
    answer="d")
warmup_cosine = FunctionExercise(_check_warmup_cosine, cls=True, signature="WarmupCosine(peak_lr, min_lr, "
                                 "warmup_steps, total_steps)", hints=[
    lazy("MindSpore already has both pieces as schedules (the exercise names them): build them in __init__, and "
         "let construct choose between them by the step."),
    lazy("The cosine piece must behave as if its step 0 were the end of the warm-up, and last only the steps that "
         "are left: what does that say about its decay_steps, and about the step construct hands it?"),
    lazy("Past its decay_steps nn.CosineDecayLR holds its min_lr by itself (section 2), so no third branch is "
         "needed; check the order of its arguments in its documentation."),
])
set_data_ignored = Prediction(
    lazy("In PyNative mode, an nn.SGD optimizer with learning_rate=0.1 has taken two steps. Then "
         "optimizer.learning_rate.set_data(ms.Tensor(0.01, ms.float32)). Which learning rate does the third step "
         "use, and what does optimizer.learning_rate hold afterwards?"),
    {"a": (lazy("0.01; it holds 0.01"),
           lazy("that is what happens in graph mode, and what the name promises; in PyNative the step keeps the "
                "value it was built with, and nothing warns you")),
     "b": (lazy("still 0.1; it holds 0.01"),
           lazy("the Parameter's value changes (printing it shows 0.01), but the optimizer's update keeps using "
                "the old one, and nothing warns you. ops.assign(optimizer.learning_rate, ...) works")),
     "c": (lazy("still 0.1; it holds 0.1 (set_data refused the change)"),
           lazy("set_data does change the Parameter: reading it back shows 0.01, which is what makes the trap "
                "silent")),
     "d": (lazy("set_data raises an error, because the optimizer has already stepped"),
           lazy("nothing raises; the new value is stored and then ignored"))},
    answer="b")
range_test = FunctionExercise(_check_range_test, signature="range_test(net, X, Y, lr_start, factor, blowup=4.0, "
                              "max_steps=200)", hints=[
    lazy("Each pass of the loop: put lr into the optimizer, take one step, record (lr, loss), decide whether to "
         "stop, then grow lr. Section 4 shows the one way to put a new learning rate into an optimizer that has "
         "stepped."),
    lazy("The learning rate is a Parameter of the optimizer: write into its memory, as section 4 does, a value of "
         "its dtype; the train cell's return value is the step's loss, and the stopping rule sees that loss "
         "already recorded."),
])

bind(globals())
