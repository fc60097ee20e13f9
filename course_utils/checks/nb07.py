"""Exercises of notebook 07 (custom train steps): clipping by hand, a clipping step, an MAE loss, and two
predictions (what global-norm clipping does to the direction; what a plain attribute records in graph mode).

Every oracle is float64 numpy written from the formulas (sum of squares, the closed-form MSE gradient,
mean absolute error); none of them uses the code the notebook teaches.
"""

from functools import partial

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import (
    NONE_HINT,
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

# ---- 07.3 clipping by global norm, by hand ----------------------------------------------------------------
# (shapes, global norm of the generated gradients, max_norm; None: call with the default max_norm=1.0)
CLIP_CASES = ((((1, 1), (1,)), 2.7, None), (((3, 4), (4,), (2, 3, 2)), 0.6, 2.0), (((5,),), 7.3, 0.5),
              (((2, 2), (2,)), 1.3, 3.0), (((4, 1), (1,)), 4.1, 1.5))


def _global_norm(grads):
    return np.sqrt(sum(np.sum(np.square(g, dtype=np.float64)) for g in grads))


def clip_cases():
    """The check's gradients (float32 numpy) and max_norm, case by case."""
    rng = np.random.default_rng(51)
    for shapes, norm, max_norm in CLIP_CASES:
        grads = [rng.normal(0.0, 1.0, shape) for shape in shapes]
        yield tuple((g * norm / _global_norm(grads)).astype(np.float32) for g in grads), max_norm


def clip_oracle(grads, max_norm, always=False, never=False, per_tensor=False):
    """The gradients clipped by their global norm (float64), or as a typical mistake does: scaled to max_norm
    even when shorter (``always``), left as they are (``never``), each tensor clipped by its own norm."""
    grads, norm = [g.astype(np.float64) for g in grads], _global_norm(grads)
    if per_tensor:
        return [g * min(1.0, max_norm / max(np.linalg.norm(g), 1e-30)) for g in grads]
    return [g * (1.0 if never else max_norm / norm if always else min(1.0, max_norm / norm)) for g in grads]


CLIP_MISTAKES = (
    ({"always": True}, lazy("{where}: they are already shorter than max_norm = {limit} and must come back unchanged; "
                            "you scaled them up to length {limit} (the factor is min(1, max_norm / norm))")),
    ({"never": True}, lazy("{where}: they came back unchanged, but their global norm is above max_norm = {limit}")),
    ({"per_tensor": True}, lazy("{where}: you clipped each tensor on its own, which changes the direction of the "
                                "update; scale all of them by one factor computed from the global norm")),
)


def _check_clip_by_hand(answer):
    from mindspore import Tensor

    for grads, max_norm in clip_cases():
        limit = 1.0 if max_norm is None else max_norm
        out = global_norm.call(answer, tuple(Tensor(g) for g in grads), *(() if max_norm is None else (max_norm,)))
        if not isinstance(out, (tuple, list)):
            raise Incorrect(t("expected a tuple of clipped gradients, one per input tensor, got {value} (return the "
                              "tuple, not the norm)", value=shown(out)))
        if len(out) != len(grads):
            raise Incorrect(t("{n_in} gradients went in, {n_out} came out: return one clipped tensor per gradient",
                              n_in=len(grads), n_out=len(out)))
        got = [array(value, t("clipped gradient {i}", i=i)) for i, value in enumerate(out)]
        for i, (arr, g) in enumerate(zip(got, grads)):
            if arr.shape != g.shape:
                raise Incorrect(t("clipped gradient {i} has shape {shape}, the gradient had {expected}: keep each "
                                  "shape", i=i, shape=arr.shape, expected=g.shape))
        expected, norm = clip_oracle(grads, limit), _global_norm(grads)
        same = partial(close, rtol=1e-5, atol=1e-7)
        if same(got, expected):
            continue
        call = "clip_by_hand(grads)" if max_norm is None else f"clip_by_hand(grads, {max_norm})"
        where = t("{call} for {n} gradients of global norm {norm:.4f}", call=call, n=len(grads), norm=norm)
        name_the_mistake(got, partial(clip_oracle, grads, limit), CLIP_MISTAKES, same=same, where=where, limit=limit)
        raise Incorrect(t("{where}: the clipped gradients should have global norm {norm:.4f}, yours have "
                          "{length:.4f} (first entries: expected {expected:.5f}, got {got:.5f})", where=where,
                          norm=min(norm, limit), length=_global_norm(got), expected=expected[0].ravel()[0],
                          got=got[0].ravel()[0]))


# ---- 07.4 a step that clips and returns (loss, norm) --------------------------------------------
_CLIP_START, _CLIP_LR, _CLIP_MAX_NORM, _CLIP_STEPS = (0.0, 0.0), 0.5, 0.5, 4


def _clip_data():
    xs = np.random.default_rng(11).random((20, 1)).astype(np.float32)
    return xs, (3.0 * xs - 1.0).astype(np.float32)


def _np_clip_step(w, b, xs, ys, lr, max_norm):
    """One SGD step on mean((w*x + b - y)**2) with global-norm clipping: (loss, norm, new w, new b)."""
    r = w * xs.astype(np.float64) + b - ys
    gw, gb = 2 * np.mean(r * xs), 2 * np.mean(r)
    norm = np.hypot(gw, gb)
    scale = min(1.0, max_norm / norm)
    return np.mean(r * r), norm, w - lr * scale * gw, b - lr * scale * gb


def clip_schedule():
    """Which of the check's steps clip (True) and which do not: the check needs both kinds."""
    xs, ys = _clip_data()
    (w, b), clipped = _CLIP_START, []
    for _ in range(_CLIP_STEPS):
        _, norm, w, b = _np_clip_step(w, b, xs, ys, _CLIP_LR, _CLIP_MAX_NORM)
        clipped.append(bool(norm > _CLIP_MAX_NORM))
    return clipped


def _a_subclass(answer, base):
    """Incorrect unless the class ``answer`` (07.4 and 07.5 leave the whole class to write) is derived from ``base``."""
    if not issubclass(answer, base):
        raise Incorrect(t("expected a subclass of nn.{base}, got {answer}", base=base.__name__, answer=shown(answer)))


def _check_clip_step(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    _a_subclass(answer, nn.TrainOneStepCell)
    (xs, ys), (w, b) = _clip_data(), _CLIP_START
    net = nn.Dense(1, 1, weight_init=Tensor([[w]], ms.float32), bias_init=Tensor([b], ms.float32))
    step = answer(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=_CLIP_LR),
                  _CLIP_MAX_NORM)
    for i in range(_CLIP_STEPS):
        out = step(Tensor(xs), Tensor(ys))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise Incorrect(t("construct must return (loss, norm), got {value}", value=shown(out)) if out is not None
                            else t("construct must return (loss, norm), got None. {hint}", hint=t(NONE_HINT)))
        loss, norm = number(out[0], t("the loss")), number(out[1], t("the norm"))
        exp_loss, exp_norm, w, b = _np_clip_step(w, b, xs, ys, _CLIP_LR, _CLIP_MAX_NORM)
        where = t("with max_norm={max_norm}, step {step} (its gradient norm is {norm:.4f})", max_norm=_CLIP_MAX_NORM,
                  step=i + 1, norm=exp_norm)
        if not close(loss, exp_loss, rtol=1e-4, atol=1e-8):
            raise Incorrect(t("{where}: the returned loss is {loss:.6f}, expected {expected:.6f}", where=where,
                              loss=loss, expected=exp_loss))
        if not close(norm, exp_norm, rtol=1e-4, atol=1e-8):
            hint = t(" (return the norm before clipping)") if close(norm, _CLIP_MAX_NORM, rtol=1e-4, atol=1e-8) else ""
            raise Incorrect(t("{where}: the returned norm is {norm:.6f}, expected {expected:.6f}{hint}", where=where,
                              norm=norm, expected=exp_norm, hint=hint))
        got_w, got_b = net.weight.asnumpy().item(), net.bias.asnumpy().item()
        if not close([got_w, got_b], [w, b], rtol=1e-4, atol=1e-6):
            raise Incorrect(t("{where}: after the update w, b = {got_w:.6f}, {got_b:.6f}, expected {w:.6f}, {b:.6f} "
                              "(clip all gradients together with ops.clip_by_global_norm, then call self.optimizer)",
                              where=where, got_w=got_w, got_b=got_b, w=w, b=b))


# ---- 07.5 mean absolute error via nn.LossBase ----------------------------------------------------
def _check_mae(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    _a_subclass(answer, nn.LossBase)
    rng, mode = np.random.default_rng(3), ms.get_context("mode")
    reducers = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}
    ms.set_context(mode=ms.PYNATIVE_MODE)  # six small evaluations: no need to compile a graph for each
    try:
        for shape in ((8, 1), (4, 3)):
            pred, target = (rng.normal(0.0, 2.0, shape).astype(np.float32) for _ in range(2))
            errors = np.abs(pred.astype(np.float64) - target)
            for reduction, reduce in reducers.items():
                loss_fn = answer() if reduction == "mean" else answer(reduction=reduction)
                got, expected = array(loss_fn(Tensor(pred), Tensor(target)), t("the loss")), reduce(errors)
                where = t("with reduction={reduction!r} and inputs of shape {shape}", reduction=reduction, shape=shape)
                if got.shape != np.shape(expected):
                    raise Incorrect(t("{where} expected a result of shape {expected}, got {shape} (end construct with "
                                      "self.get_loss(...), which applies the reduction)", where=where,
                                      expected=np.shape(expected), shape=got.shape))
                if not close(got, expected, rtol=1e-5, atol=1e-8):
                    mean = reduction != "mean" and close(got, np.mean(errors), rtol=1e-5, atol=1e-8)
                    hint = t(" (that is the mean: let self.get_loss(...) apply the reduction)") if mean else ""
                    raise Incorrect(t("{where} expected {expected}, got {got}{hint}", where=where,
                                      expected=np.round(expected, 5).tolist(), got=np.round(got, 5).tolist(),
                                      hint=hint))
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
           lazy("that is clipping each tensor on its own (ops.clip_by_norm per tensor, or clipping values). It is "
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
global_norm = FunctionExercise(_check_clip_by_hand, signature="clip_by_hand(grads, max_norm=1.0)", hints=[
    lazy("two steps: one global norm for all the gradients together, then one factor that multiplies every "
         "gradient"),
    lazy("the global norm is the square root of the sum, over all tensors, of ops.reduce_sum(g * g); the factor is "
         "min(1, max_norm / norm), so gradients shorter than max_norm stay as they are"),
    lazy("norm = ops.sqrt(sum(ops.reduce_sum(g * g) for g in grads)); scale = ops.minimum(1.0, max_norm / norm); "
         "return tuple(g * scale for g in grads)"),
])
clip_step = FunctionExercise(_check_clip_step, signature="ClipAndReturn(network, optimizer, max_norm)", cls=True,
                             hints=[
    lazy("section 4's ClipStep already clips; what it must also hand back is the norm before clipping"),
    lazy("start from ClipStep in section 4: keep max_norm in __init__, and return (loss, norm) instead of assigning "
         "a Parameter"),
])
mae_loss = FunctionExercise(_check_mae, signature='MAE(reduction="mean")', cls=True, hints=[
    lazy("a loss cell computes per-sample errors and lets its base class reduce them (mean or sum)"),
    lazy("like Huber in section 7: __init__(self, reduction='mean') calls super().__init__(reduction); construct "
         "returns self.get_loss(ops.abs(logits - labels))"),
])

bind(globals())
