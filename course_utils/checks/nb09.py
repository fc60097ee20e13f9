"""Exercises of notebook 09 (automatic mixed precision): float16 rounding, loss scales, a CPU trap.

The oracles are numpy: float16 arithmetic with ``np.float16`` and gradient descent in float64.
"""

import math

import numpy as np

from course_utils.data import make_linear_data
from course_utils.exercises import Exercise, as_number

TINY = 2.0 ** -24  # the loss factor of the notebook's loss-scaling section
FIXED_SCALE = 128.0  # the loss scale of exercise 09.3
CHECK_STEPS = 20  # steps the checker of 09.3 trains the learner's cell for


def _power_of_two(answer, what):
    """Return (value, None) for a positive power of two, else (None, problem)."""
    value, problem = as_number(answer, what)
    if problem:
        return None, f"{problem} (such as 2.0 ** -3)"
    if value <= 0:
        return None, f"expected a positive number, got {value!r}"
    mantissa, _ = math.frexp(value)
    if mantissa != 0.5:
        return None, f"{value!r} is not a power of two; write it as 2.0 ** k"
    return value, None


def _changes_one(u):
    one = np.float16(1.0)
    return bool(one + np.float16(u) != one)


def _check_smallest_update(answer):
    u, problem = _power_of_two(answer, "the update")
    if problem:
        return problem
    k = -math.log2(u)
    if u == 2.0 ** -23:
        return "2**-23 is float32's spacing at 1; in float16 an update that small vanishes. Add it to a float16 1"
    if not _changes_one(u):
        if u == 2.0 ** -11:
            return ("1 + 2**-11 lies exactly halfway between 1 and the next float16 number, 1 + 2**-10; "
                    "a tie rounds to the neighbour with an even last bit, which is 1 itself")
        return f"float16(1) + 2**-{k:g} is still exactly 1: that update is lost. Try a larger one"
    if _changes_one(u / 2):
        return f"1 + 2**-{k:g} does change, but so does 1 + 2**-{k + 1:g}: there is a smaller one"
    return None


def tiny_loss_gradients(x=None, y=None):
    """Float64 gradients (dL/dw, dL/db) of L = TINY * mean((w*x + b - y)**2) at w = b = 0."""
    if x is None:
        x, y = make_linear_data()
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    return np.array([-2.0 * np.mean(x * y), -2.0 * np.mean(y)]) * TINY


def _finite_in_float16(values):
    with np.errstate(over="ignore"):
        return bool(np.all(np.isfinite(values.astype(np.float16))))


def _check_largest_scale(answer):
    scale, problem = _power_of_two(answer, "the loss scale")
    if problem:
        return problem
    grads = tiny_loss_gradients()
    if scale == 2.0 ** 15:
        return ("2**15 is the largest scale for the plain MSE; this loss is 2**-24 times smaller, "
                "so its gradients can be scaled 2**24 times more")
    if not _finite_in_float16(scale * grads):
        biggest = float(np.max(np.abs(scale * grads)))
        return (f"too large: the scaled gradient reaches {biggest:,.0f}, above float16's largest number "
                f"65504, so it becomes inf")
    if _finite_in_float16(2 * scale * grads):
        return f"S = 2**{math.log2(scale):g} keeps the gradients finite, but twice that still does: go larger"
    return None


def _gradient_descent(w, b, lr, steps):
    x, y = make_linear_data()
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    for _ in range(steps):
        err = w * x + b - y
        w, b = w - lr * 2 * np.mean(err * x), b - lr * 2 * np.mean(err)
    return w, b


def _check_fixed_scale_fix(answer):
    """Train the learner's cell for CHECK_STEPS steps (this changes its weights) and compare with numpy."""
    from mindspore import Tensor, nn

    if not isinstance(answer, nn.TrainOneStepCell):
        return (f"expected the train cell that build_train_network returns, got {type(answer).__name__}; "
                f"set answer = build_train_network(...)")
    sens = float(answer.sens)
    if sens != FIXED_SCALE:
        return (f"this train cell scales the loss by {sens:g}, not {FIXED_SCALE:g}: pass "
                f"loss_scale_manager=FixedLossScaleManager({FIXED_SCALE}, drop_overflow_update=False)")
    params = {p.name.rsplit(".", 1)[-1]: p for p in answer.weights}
    if set(params) != {"weight", "bias"} or params["weight"].shape != (1, 1):
        return "expected the train cell of MinimalNet (one weight of shape (1, 1) and one bias)"
    w0, b0 = float(params["weight"].asnumpy().item()), float(params["bias"].asnumpy().item())
    lr = float(answer.optimizer.get_lr().asnumpy())
    w_ref, b_ref = _gradient_descent(w0, b0, lr, CHECK_STEPS)
    if not (np.isfinite(w_ref) and np.isfinite(b_ref)) or abs(w_ref) > 100:
        return f"with lr = {lr:g} plain gradient descent itself diverges; use the article's lr = 0.01"
    x, y = make_linear_data()
    data, label = Tensor(x), Tensor(y)
    for _ in range(CHECK_STEPS):
        answer(data, label)
    w, b = float(params["weight"].asnumpy().item()), float(params["bias"].asnumpy().item())
    if not (np.isfinite(w) and np.isfinite(b)) or abs(w - w_ref) > 1.0:
        opt_scale = float(answer.optimizer.loss_scale)
        return (f"after {CHECK_STEPS} steps w = {w:.4g}, b = {b:.4g} (plain gradient descent: w = {w_ref:.4f}). "
                f"The gradients reach the optimizer multiplied by {sens:g}, and the optimizer divides them by its "
                f"own loss_scale, which is {opt_scale:g}: make the two equal")
    if abs(w - w_ref) > 2e-3 or abs(b - b_ref) > 2e-3:
        return (f"after {CHECK_STEPS} steps w = {w:.5f}, b = {b:.5f}, but plain gradient descent from the same "
                f"start gives w = {w_ref:.5f}, b = {b_ref:.5f}: the gradients are not unscaled correctly")
    return None


smallest_update = Exercise("09.1", _check_smallest_update, hints=[
    "float16 cannot represent every number: how far apart are its numbers near 1?",
    "float16 has 10 mantissa bits: next to 1 its numbers are 2**-10 apart; think about what happens halfway",
])
largest_scale = Exercise("09.2", _check_largest_scale, hints=[
    "the scale multiplies the gradients in float16; the largest safe one keeps every scaled gradient finite",
    "compute the two float32 gradients, then try S = 2.0 ** k for growing k until float16(S * g) is inf",
])
fixed_scale_fix = Exercise("09.3", _check_fixed_scale_fix, hints=[
    "with a fixed loss scale, something must divide the gradients by it again before the update",
    "nn.SGD(..., loss_scale=...) divides the gradients by loss_scale before the update",
])
