"""Exercises of notebook 07 (custom train steps): clipping each gradient by its own norm, gradient accumulation
inside the compiled step, a pinball (quantile) loss, and two predictions (what global-norm clipping does to the
direction; what a plain attribute records in graph mode).

Every oracle is float64 numpy written from the formulas (norms, the closed-form MSE gradient, the pinball loss
and its subgradient); none of them uses the code the notebook teaches.
"""

from functools import partial

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import (
    FunctionExercise,
    Incorrect,
    Prediction,
    array,
    bind,
    close,
    name_the_mistake,
    number,
)
from course_utils.messages import lazy, t

# ---- 07.3 clipping each gradient by its own norm ------------------------------------------------------------
# (shapes, the norm of each generated gradient, max_norm; None: call with the default max_norm=1.0). Every case
# with several tensors has one longer and one shorter than max_norm, so that neither global clipping nor "all or
# nothing" passes.
CLIP_CASES = ((((1, 1), (1,)), (2.7, 0.4), None), (((3, 4), (4,), (2, 3, 2)), (0.6, 3.1, 2.4), 2.0),
              (((5,),), (7.3,), 0.5), (((2, 2), (2,)), (1.3, 4.0), 3.0), (((4, 1), (1,)), (0.2, 4.1), 1.5))


def _global_norm(grads):
    return np.sqrt(sum(np.sum(np.square(g, dtype=np.float64)) for g in grads))


def clip_cases():
    """The check's gradients (float32 numpy) and max_norm, case by case."""
    rng = np.random.default_rng(51)
    for shapes, norms, max_norm in CLIP_CASES:
        grads = [rng.normal(0.0, 1.0, shape) for shape in shapes]
        yield tuple((g * n / np.linalg.norm(g)).astype(np.float32) for g, n in zip(grads, norms)), max_norm


def clip_oracle(grads, max_norm, together=False, always=False, never=False):
    """Each gradient clipped by its own norm (float64), or as a typical mistake does: all of them by their
    global norm (``together``), each scaled to max_norm even when shorter (``always``), left as they are."""
    grads = [g.astype(np.float64) for g in grads]
    if together:
        return [g * min(1.0, max_norm / _global_norm(grads)) for g in grads]
    norms = [max(np.linalg.norm(g), 1e-30) for g in grads]
    return [g * (1.0 if never else max_norm / n if always else min(1.0, max_norm / n)) for g, n in zip(grads, norms)]


CLIP_MISTAKES = (
    ({"together": True}, lazy("{where}: you scaled all of them by one factor from their global norm, as "
                              "ops.clip_by_global_norm does; here each tensor gets its own factor, from its own norm")),
    ({"always": True}, lazy("{where}: the tensors already shorter than max_norm = {limit} must come back unchanged; "
                            "you scaled them up to length {limit}")),
    ({"never": True}, lazy("{where}: they came back unchanged, but some are longer than max_norm = {limit}")),
)


def _check_clip_each(answer):
    from mindspore import Tensor

    for grads, max_norm in clip_cases():
        limit = 1.0 if max_norm is None else max_norm
        out = clip_each.call(answer, tuple(Tensor(g) for g in grads), *(() if max_norm is None else (max_norm,)))
        if not isinstance(out, (tuple, list)):
            raise Incorrect(t("expected a tuple of clipped gradients, one per input tensor, got {value}",
                              value=shown(out)))
        if len(out) != len(grads):
            raise Incorrect(t("{n_in} gradients went in, {n_out} came out: return one clipped tensor per gradient",
                              n_in=len(grads), n_out=len(out)))
        for i, value in enumerate(out):
            if not isinstance(value, Tensor):
                raise Incorrect(t("clipped gradient {i} is {value}, not a MindSpore Tensor: compute it with MindSpore "
                                  "operators on the tensors you were given", i=i, value=shown(value)))
        got = [array(value, t("clipped gradient {i}", i=i)) for i, value in enumerate(out)]
        for i, (arr, g) in enumerate(zip(got, grads)):
            if arr.shape != g.shape:
                raise Incorrect(t("clipped gradient {i} has shape {shape}, the gradient had {expected}: keep each "
                                  "shape", i=i, shape=arr.shape, expected=g.shape))
        expected = clip_oracle(grads, limit)
        same = partial(close, rtol=1e-5, atol=1e-7)
        if same(got, expected):
            continue
        call = "clip_each(grads)" if max_norm is None else f"clip_each(grads, {max_norm})"
        where = t("{call} for {n} gradients of norms {norms}", call=call, n=len(grads),
                  norms=[round(float(np.linalg.norm(g)), 4) for g in grads])
        name_the_mistake(got, partial(clip_oracle, grads, limit), CLIP_MISTAKES, same=same, where=where, limit=limit)
        wrong = next(i for i, (a, b) in enumerate(zip(got, expected)) if not same(a, b))
        raise Incorrect(t("{where}: clipped gradient {i} should have norm {norm:.4f}, yours has {length:.4f}",
                          where=where, i=wrong, norm=float(np.linalg.norm(expected[wrong])),
                          length=float(np.linalg.norm(got[wrong]))))


# ---- 07.4 gradient accumulation inside the compiled step ---------------------------------------------------
_ACC_LR, _ACC_K, _ACC_CALLS, _ACC_BATCH = 0.3, 3, 8, 4
_ACC_W, _ACC_B = np.array([[0.5, -0.5]]), 0.2


def _acc_data():
    rng = np.random.default_rng(17)
    xs = rng.uniform(-1.0, 1.0, (_ACC_CALLS * _ACC_BATCH, 2)).astype(np.float32)
    return xs, (xs @ np.array([[1.5], [-2.0]]) + 0.5 + rng.normal(0, 0.1, (len(xs), 1))).astype(np.float32)


def acc_oracle(every_call=False, no_mean=False, no_reset=False, last_only=False):
    """The weights (W, b) after each call of an accumulating step with k = _ACC_K, and each call's loss, in float64
    numpy; or as a typical mistake does: update at every call, with the sum instead of the mean, without emptying
    the sums after an update, with the last micro-batch's gradient only."""
    xs, ys = _acc_data()
    w, b, sums, after, losses = _ACC_W.copy(), _ACC_B, [np.zeros((1, 2)), 0.0], [], []
    for call in range(1, _ACC_CALLS + 1):
        xb, yb = (a[(call - 1) * _ACC_BATCH:call * _ACC_BATCH].astype(np.float64) for a in (xs, ys))
        r = xb @ w.T + b - yb
        losses.append(float(np.mean(r * r)))
        g = (2 * np.mean(r * xb, axis=0, keepdims=True), 2 * float(np.mean(r)))
        sums = [g[0], g[1]] if last_only else [sums[0] + g[0], sums[1] + g[1]]
        if every_call or call % _ACC_K == 0:
            scale = 1.0 if (no_mean or every_call) else 1.0 / _ACC_K
            w, b = w - _ACC_LR * scale * sums[0], b - _ACC_LR * scale * sums[1]
            if not no_reset:
                sums = [np.zeros((1, 2)), 0.0]
        after.append((w.copy(), b))
    return after, losses


ACC_MISTAKES = (
    ({"every_call": True}, lazy("{where}: the weights moved at a call that should only add its gradients")),
    ({"no_mean": True}, lazy("{where}: the update moved the weights {k} times as far as one step with the gradient "
                             "of the whole batch does: how are the k gradients combined?")),
    ({"no_reset": True}, lazy("{where}: the second update still contains the gradients of the first k calls")),
    ({"last_only": True}, lazy("{where}: the update used only the last micro-batch's gradient")),
)


def _check_accumulate(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    _a_subclass(answer, nn.TrainOneStepCell)
    xs, ys = _acc_data()
    expected, losses = acc_oracle()
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)  # the point of the exercise: the accumulation runs in the compiled graph
    try:
        net = nn.Dense(2, 1, weight_init=Tensor(_ACC_W, ms.float32), bias_init=Tensor([_ACC_B], ms.float32))
        step = answer(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=_ACC_LR),
                      _ACC_K)
        got = []
        for call in range(1, _ACC_CALLS + 1):
            out = step(Tensor(xs[(call - 1) * _ACC_BATCH:call * _ACC_BATCH]),
                       Tensor(ys[(call - 1) * _ACC_BATCH:call * _ACC_BATCH]))
            loss = number(out, t("the loss construct returns"))
            got.append((net.weight.asnumpy().astype(np.float64), float(net.bias.asnumpy()[0])))
            where = t("with k = {k}, call {call}", k=_ACC_K, call=call)
            if not close(loss, losses[call - 1], rtol=1e-4, atol=1e-7):
                raise Incorrect(t("{where}: construct returned {loss:.6f}, the loss of this micro-batch is "
                                  "{expected:.6f}", where=where, loss=loss, expected=losses[call - 1]))
            same = partial(close, rtol=1e-4, atol=1e-6)
            if same(list(got[-1]), list(expected[call - 1])):
                continue
            for settings, message in ACC_MISTAKES:
                mistaken, _ = acc_oracle(**settings)
                if all(same(list(a), list(b)) for a, b in zip(got, mistaken)):
                    raise Incorrect(t(message, where=where, k=_ACC_K))
            if same(list(got[-1]), list(expected[call - 2] if call > 1 else (_ACC_W, _ACC_B))):
                raise Incorrect(t("{where}: the weights did not move at a call that should update them: look at the "
                                  "branch that calls self.optimizer", where=where))
            raise Incorrect(t("{where}: the weights are W = {w}, b = {b:.6f}; expected W = {ew}, b = {eb:.6f}",
                              where=where, w=np.round(got[-1][0], 6).tolist(), b=got[-1][1],
                              ew=np.round(expected[call - 1][0], 6).tolist(), eb=expected[call - 1][1]))
    finally:
        ms.set_context(mode=mode)


def _a_subclass(answer, base):
    """Incorrect unless the class ``answer`` (07.4 and 07.5 leave the whole class to write) is derived from ``base``."""
    if not issubclass(answer, base):
        raise Incorrect(t("expected a subclass of nn.{base}, got {answer}", base=base.__name__, answer=shown(answer)))


# ---- 07.5 the pinball (quantile) loss via nn.LossBase ------------------------------------------------------
def pinball_np(pred, target, tau):
    e = np.asarray(target, dtype=np.float64) - pred
    return np.maximum(tau * e, (tau - 1) * e)


def _check_pinball(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    _a_subclass(answer, nn.LossBase)
    rng, mode = np.random.default_rng(3), ms.get_context("mode")
    reducers = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}
    ms.set_context(mode=ms.PYNATIVE_MODE)  # small evaluations: no need to compile a graph for each
    try:
        for shape, tau in (((8, 1), 0.9), ((4, 3), 0.25)):
            pred, target = (rng.normal(0.0, 2.0, shape).astype(np.float32) for _ in range(2))
            for reduction, reduce in reducers.items():
                loss_fn = answer(tau=tau) if reduction == "mean" else answer(tau=tau, reduction=reduction)
                got = array(loss_fn(Tensor(pred), Tensor(target)), t("the loss"))
                expected = reduce(pinball_np(pred, target, tau))
                where = t("with tau={tau}, reduction={reduction!r} and inputs of shape {shape}", tau=tau,
                          reduction=reduction, shape=shape)
                if got.shape != np.shape(expected):
                    raise Incorrect(t("{where} expected a result of shape {expected}, got {shape}: is the reduction "
                                      "you were asked for the one applied?", where=where,
                                      expected=np.shape(expected), shape=got.shape))
                if close(got, expected, rtol=1e-5, atol=1e-6):
                    continue
                if close(got, reduce(pinball_np(target, pred, tau)), rtol=1e-5, atol=1e-6):
                    raise Incorrect(t("{where}: your loss is the one for 1 - tau: which costs tau per unit, a "
                                      "prediction too low or one too high?", where=where))
                mean = reduction != "mean" and close(got, np.mean(pinball_np(pred, target, tau)), rtol=1e-5, atol=1e-6)
                hint = t(" (that is the mean: is the reduction you were asked for the one applied?)") if mean else ""
                raise Incorrect(t("{where} expected {expected}, got {got}{hint}", where=where,
                                  expected=np.round(expected, 5).tolist(), got=np.round(got, 5).tolist(), hint=hint))
        # MindSpore differentiates it: one SGD step of a bias-only model moves the bias by lr * (share above - tau)
        targets = np.linspace(-1.0, 2.0, 10, dtype=np.float32).reshape(-1, 1) + 0.05
        net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
        nn.TrainOneStepCell(nn.WithLossCell(net, answer(tau=0.8)), nn.SGD([net.bias], learning_rate=1.0))(
            Tensor(np.zeros_like(targets)), Tensor(targets))
        moved, want = float(net.bias.asnumpy()[0]), float(np.mean(np.where(targets > 0, 0.8, -0.2)))
        if not close(moved, want, rtol=1e-4, atol=1e-6):
            raise Incorrect(t("one SGD step (lr 1) with tau = 0.8 moved the bias by {moved:.5f}; the gradient of the "
                              "mean pinball loss moves it by {want:.5f}", moved=moved, want=want))
    finally:
        ms.set_context(mode=mode)


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
attribute_in_graph = Prediction(
    lazy("In graph mode, AttributeStep assigns the gradient norm to a plain attribute, self.grad_norm, inside "
         "construct. After each of five training steps you read step.grad_norm. What do you see?"),
    {"a": (lazy("the norm of each step, falling as training goes on"),
           lazy("that is what PyNative mode gives, where construct runs as Python at every call; the cell below shows "
                "it. In graph mode construct runs as Python only once, while it is compiled")),
     "b": (lazy("the first step's norm, five times"),
           lazy("construct is compiled into a graph on the first call; the Python assignment to self.grad_norm runs "
                "during that compilation and is not part of the graph, so later steps never update it. No error, no "
                "warning: return the value or keep it in a Parameter written with ops.assign")),
     "c": (lazy("0, the value set in __init__"),
           lazy("the assignment does run once, while the graph is compiled on the first call, so the attribute does "
                "change from 0; it is the later steps that never update it")),
     "d": (lazy("an error: graph mode cannot assign attributes in construct"),
           lazy("graph mode refuses some Python (try, del, yield: notebook 08), but an attribute assignment compiles "
                "without a word, which is what makes this trap silent"))},
    answer="b")
clip_direction = Prediction(
    lazy("Two gradients, dL/dw = 3.0 and dL/db = 0.4 (global norm 3.03), go through "
         "ops.clip_by_global_norm(grads, 1.0). What comes out?"),
    {"a": (lazy("(1.0, 0.4): each gradient is cut to at most 1"),
           lazy("that is clipping each tensor on its own (or clipping values). It is "
                "tempting because 'clip' sounds like cutting each number, but it would change the direction of the "
                "update: the ratio dL/dw : dL/db would go from 7.5 to 2.5. clip_by_global_norm scales all gradients "
                "by one factor")),
     "b": (lazy("(0.991, 0.132): both divided by the global norm, so the direction stays and the length becomes 1"),
           lazy("one factor, max_norm / norm = 1 / 3.03, multiplies every gradient: the update points the same way as "
                "the gradient, it is only shorter. Below max_norm the factor is 1 and nothing changes")),
     "c": (lazy("(1.0, 0.133): everything divided by the largest entry, so the largest becomes 1"),
           lazy("that would bound the largest entry (an L-infinity clip), a plausible reading of 'clip to 1.0'. "
                "clip_by_global_norm bounds the Euclidean length of all gradients together: sqrt(0.991^2 + 0.132^2) = "
                "1"))},
    answer="b")
clip_each = FunctionExercise(_check_clip_each, signature="clip_each(grads, max_norm=1.0)", hints=[
    lazy("one norm per tensor this time, and one factor per tensor; a tensor already shorter than max_norm keeps "
         "its factor 1"),
    lazy("a tensor's norm is the square root of the sum of its squared entries; its factor never exceeds 1 "
         "(ops.clamp or ops.minimum can bound it), and MindSpore operators keep the result a Tensor"),
])
accumulate = FunctionExercise(_check_accumulate, signature="AccumulateStep(network, optimizer, k)", cls=True, hints=[
    lazy("the step needs memory that lives in the graph between calls: the gradient sums, and a count of the calls, "
         "kept as section 3 keeps grad_norm"),
    lazy("Parameters with requires_grad=False hold them, written with ops.assign and ops.assign_add; the clone method "
         "of self.weights (see its init argument) makes one Parameter shaped like each weight; an `if` on a tensor, "
         "such as the counter, compiles into the graph as a branch"),
    lazy("at the k-th call the optimizer gets the mean of the sums, and the sums start again from zero"),
])
pinball_loss = FunctionExercise(_check_pinball, signature='Pinball(tau=0.5, reduction="mean")', cls=True, hints=[
    lazy("a loss cell computes the loss of each element and lets its base class reduce it, like Huber above"),
    lazy("the two cases are two straight lines through 0; on each side of 0 the right case is the larger of the "
         "two, so one element-wise operator (ops.maximum) covers both without a condition"),
])

bind(globals())

