"""Exercises of notebook 05 (custom train steps): global norm, a clipping step, an MAE loss.

Every oracle is float64 numpy written from the formulas (sum of squares, the closed-form MSE gradient,
mean absolute error); none of them uses the code the notebook teaches.
"""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import NONE_HINT, Exercise, as_array, as_number


def _scalar(value, what):
    """A learner's scalar (Tensor, numpy value or float) as a Python float, or a message saying why not."""
    if isinstance(value, (tuple, list)):
        return None, (f"{what} should be one number (a scalar Tensor or a float), "
                      f"got a {type(value).__name__} of {len(value)}")
    return as_number(value, what)


# ---- 05.1 global norm ------------------------------------------------------------------------------
_NORM_CASES = (((1, 1), (1,)), ((3, 4), (4,), (2, 3, 2)), ((5,),))


def _check_global_norm(answer):
    from mindspore import Tensor

    if not callable(answer):
        return f"expected a function taking a tuple of gradients, got {type(answer).__name__}"
    rng = np.random.default_rng(5)
    for shapes in _NORM_CASES:
        grads = tuple(rng.normal(0.0, 1.5, shape).astype(np.float32) for shape in shapes)
        expected = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in grads))
        got, problem = _scalar(answer(tuple(Tensor(g) for g in grads)), "the global norm")
        if problem:
            return problem
        if not np.isclose(got, expected, rtol=1e-5):
            shown = ", ".join(str(s) for s in shapes)
            hint = ""
            if np.isclose(got, expected**2, rtol=1e-5):
                hint = " (that is the sum of squares: take its square root)"
            elif np.isclose(got, sum(np.linalg.norm(g) for g in grads), rtol=1e-5):
                hint = " (that is the sum of the per-tensor norms: square every entry of every tensor first)"
            return (f"for gradients of shapes {shown} the global norm is {expected:.6f}, your function "
                    f"returned {got:.6f}{hint}")
    return None


# ---- 05.2 a step that clips and returns (loss, norm) --------------------------------------------
_CLIP_DATA_SEED, _CLIP_START, _CLIP_LR, _CLIP_MAX_NORM, _CLIP_STEPS = 11, (0.0, 0.0), 0.5, 0.5, 4


def _clip_data():
    rng = np.random.default_rng(_CLIP_DATA_SEED)
    xs = rng.random((20, 1)).astype(np.float32)
    return xs, (3.0 * xs - 1.0).astype(np.float32)


def _np_clip_step(w, b, xs, ys, lr, max_norm):
    """One SGD step on mean((w*x + b - y)**2) with global-norm clipping: (loss, norm, new w, new b)."""
    r = w * xs + b - ys
    gw, gb = 2 * np.mean(r * xs), 2 * np.mean(r)
    norm = np.hypot(gw, gb)
    scale = min(1.0, max_norm / norm)
    return np.mean(r * r), norm, w - lr * scale * gw, b - lr * scale * gb


def clip_schedule():
    """Which of the check's steps clip (True) and which do not: the check needs both kinds."""
    xs, ys = (a[:, 0].astype(np.float64) for a in _clip_data())
    (w, b), clipped = _CLIP_START, []
    for _ in range(_CLIP_STEPS):
        _, norm, w, b = _np_clip_step(w, b, xs, ys, _CLIP_LR, _CLIP_MAX_NORM)
        clipped.append(bool(norm > _CLIP_MAX_NORM))
    return clipped


def _check_clip_step(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    if not (isinstance(answer, type) and issubclass(answer, nn.TrainOneStepCell)):
        if isinstance(answer, nn.TrainOneStepCell):
            return "pass the class itself (answer = ClipAndReturn), not an instance of it"
        return f"expected a subclass of nn.TrainOneStepCell, got {shown(answer)}"
    xs, ys = _clip_data()
    x64, y64 = xs[:, 0].astype(np.float64), ys[:, 0].astype(np.float64)
    w, b = _CLIP_START
    net = nn.Dense(1, 1, weight_init=Tensor([[w]], ms.float32), bias_init=Tensor([b], ms.float32))
    step = answer(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=_CLIP_LR),
                  _CLIP_MAX_NORM)
    for i in range(_CLIP_STEPS):
        out = step(Tensor(xs), Tensor(ys))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            return f"construct must return (loss, norm), got {shown(out)}" + (f". {NONE_HINT}" if out is None else "")
        loss, problem = _scalar(out[0], "the loss")
        norm, problem = (None, problem) if problem else _scalar(out[1], "the norm")
        if problem:
            return problem
        exp_loss, exp_norm, w, b = _np_clip_step(w, b, x64, y64, _CLIP_LR, _CLIP_MAX_NORM)
        where = f"with max_norm={_CLIP_MAX_NORM}, step {i + 1} (its gradient norm is {exp_norm:.4f})"
        if not np.isclose(loss, exp_loss, rtol=1e-4):
            return f"{where}: the returned loss is {loss:.6f}, expected {exp_loss:.6f}"
        if not np.isclose(norm, exp_norm, rtol=1e-4):
            hint = " (return the norm before clipping)" if np.isclose(norm, _CLIP_MAX_NORM, rtol=1e-4) else ""
            return f"{where}: the returned norm is {norm:.6f}, expected {exp_norm:.6f}{hint}"
        got_w = float(net.weight.asnumpy().reshape(-1)[0])
        got_b = float(net.bias.asnumpy().reshape(-1)[0])
        if not (np.isclose(got_w, w, rtol=1e-4, atol=1e-6) and np.isclose(got_b, b, rtol=1e-4, atol=1e-6)):
            return (f"{where}: after the update w, b = {got_w:.6f}, {got_b:.6f}, expected {w:.6f}, {b:.6f} "
                    f"(clip all gradients together with ops.clip_by_global_norm, then call self.optimizer)")
    return None


# ---- 05.3 mean absolute error via nn.LossBase ----------------------------------------------------
def _check_mae(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    if not (isinstance(answer, type) and issubclass(answer, nn.LossBase)):
        if isinstance(answer, nn.LossBase):
            return "pass the class itself (answer = MAE), not an instance of it"
        return f"expected a subclass of nn.LossBase, got {shown(answer)}"
    rng = np.random.default_rng(3)
    reducers = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)  # six small evaluations: no need to compile a graph for each
    try:
        for shape in ((8, 1), (4, 3)):
            pred = rng.normal(0.0, 2.0, shape).astype(np.float32)
            target = rng.normal(0.0, 2.0, shape).astype(np.float32)
            errors = np.abs(pred.astype(np.float64) - target)
            for reduction, reduce in reducers.items():
                loss_fn = answer() if reduction == "mean" else answer(reduction=reduction)
                got, problem = as_array(loss_fn(Tensor(pred), Tensor(target)), "the loss")
                if problem:
                    return problem
                expected = reduce(errors)
                where = f"with reduction={reduction!r} and inputs of shape {shape}"
                if got.shape != np.shape(expected):
                    return (f"{where} expected a result of shape {np.shape(expected)}, got {got.shape} "
                            f"(end construct with self.get_loss(...), which applies the reduction)")
                if not np.allclose(got, expected, rtol=1e-5):
                    hint = ""
                    if reduction != "mean" and np.allclose(got, np.mean(errors), rtol=1e-5):
                        hint = " (that is the mean: let self.get_loss(...) apply the reduction)"
                    return (f"{where} expected {np.round(expected, 5).tolist()}, "
                            f"got {np.round(got, 5).tolist()}{hint}")
    finally:
        ms.set_context(mode=mode)
    return None


global_norm = Exercise("05.1", _check_global_norm, hints=[
    "the global norm treats all gradients as one long vector: square, sum, and one square root at the end",
    "square every gradient, sum each with ops.reduce_sum, add the sums, take ops.sqrt",
])
clip_step = Exercise("05.2", _check_clip_step, hints=[
    "section 4's ClipStep already clips; what it must also hand back is the norm before clipping",
    "start from ClipStep in section 4: keep max_norm in __init__, and return (loss, norm) instead of assigning a "
    "Parameter",
])
mae_loss = Exercise("05.3", _check_mae, hints=[
    "a loss cell computes per-sample errors and lets its base class reduce them (mean or sum)",
    "like Huber in section 7: __init__(self, reduction='mean') calls super().__init__(reduction); construct returns "
    "self.get_loss(ops.abs(logits - labels))",
])
