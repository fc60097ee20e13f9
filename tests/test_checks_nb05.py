"""The checkers of notebook 05 accept the reference solutions and reject typical wrong answers.

The reference values are computed here independently of the checkers: the Hessian by finite differences
of the loss, the fastest learning rate by a brute-force search over plain gradient descent."""

import re

import numpy as np
import pytest

from course_utils.checks import nb05
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def _loss(w, b):
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    return np.mean((w * x + b - y) ** 2)


def _finite_difference_eigenvalues(h=1e-3):
    f = _loss
    hww = (f(h, 0) - 2 * f(0, 0) + f(-h, 0)) / h ** 2
    hbb = (f(0, h) - 2 * f(0, 0) + f(0, -h)) / h ** 2
    hwb = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
    return np.linalg.eigvalsh(np.array([[hww, hwb], [hwb, hbb]]))


LAM_MIN, LAM_MAX = _finite_difference_eigenvalues()


def _status(exercise, answer):
    return exercise.evaluate(answer).status


@pytest.mark.parametrize("exercise", [nb05.divergence_threshold, nb05.fastest_sgd_lr, nb05.momentum_threshold])
def test_not_attempted_and_not_a_number(exercise):
    assert _status(exercise, ...) == NOT_ATTEMPTED
    for bad in ("0.8", [0.8], float("nan"), True):
        result = exercise.evaluate(bad)
        assert result.status == INCORRECT and ("number" in result.message or "finite" in result.message)


def test_divergence_threshold():
    ex = nb05.divergence_threshold
    assert _status(ex, 2 / LAM_MAX) == CORRECT
    assert _status(ex, np.float32(2 / LAM_MAX)) == CORRECT
    assert _status(ex, np.array([2 / LAM_MAX])) == CORRECT
    assert "zig-zags" in ex.evaluate(1 / LAM_MAX).message
    assert "factor 2" in ex.evaluate(4 / LAM_MAX).message
    assert "lambda_min" in ex.evaluate(2 / LAM_MIN).message
    assert "article" in ex.evaluate(0.01).message
    assert "still converges" in ex.evaluate(0.7).message and "diverges" in ex.evaluate(0.9).message


def _steps(lr, steps=300):
    """Brute force: plain GD from (0, 0) in float64; first step after which it stays within 0.01."""
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    best = np.polyfit(x, y, 1)
    w = b = 0.0
    inside = []
    for _ in range(steps):
        err = w * x + b - y
        w, b = w - lr * 2 * np.mean(err * x), b - lr * 2 * np.mean(err)
        inside.append(abs(w - best[0]) < 0.01 and abs(b - best[1]) < 0.01)
    if not inside[-1]:
        return None
    return len(inside) - inside[::-1].index(False) + 1 if False in inside else 1


def test_fastest_sgd_lr():
    ex = nb05.fastest_sgd_lr
    grid = np.linspace(0.3, 0.8, 101)
    counts = [(s, lr) for lr in grid if (s := _steps(lr)) is not None]
    best_steps, best_lr = min(counts)
    assert abs(best_lr - 2 / (LAM_MIN + LAM_MAX)) < 0.05  # theory and brute force agree (steps are integers)
    assert _status(ex, best_lr) == CORRECT and _status(ex, 2 / (LAM_MIN + LAM_MAX)) == CORRECT
    assert nb05.sgd_steps_to_converge(best_lr) == best_steps
    for wrong in (0.01, 0.3, 0.5):
        message = ex.evaluate(wrong).message
        assert re.search(r"[Tt]ry a larger (one|learning rate)$", message), message
    for wrong in (2 / LAM_MAX, 1.0):
        assert "stability bound" in ex.evaluate(wrong).message
    assert "> 0" in ex.evaluate(-0.5).message


def test_momentum_threshold():
    ex = nb05.momentum_threshold
    assert _status(ex, 2 * 1.9 / LAM_MAX) == CORRECT
    assert "plain SGD" in ex.evaluate(2 / LAM_MAX).message
    assert "(1 + momentum)" in ex.evaluate(2 * 0.1 / LAM_MAX).message
    assert "diverges" in ex.evaluate(2.0).message and "still converges" in ex.evaluate(1.0).message


def test_momentum_threshold_matches_runs():
    """Independent of the formula: heavy-ball GD just below / above the checker's accepted answer."""
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    bound = 2 * 1.9 / LAM_MAX

    def final_loss(lr, steps=400):
        w = b = vw = vb = 0.0
        with np.errstate(all="ignore"):
            for _ in range(steps):
                err = w * x + b - y
                vw, vb = 0.9 * vw + 2 * np.mean(err * x), 0.9 * vb + 2 * np.mean(err)
                w, b = w - lr * vw, b - lr * vb
        return np.mean((w * x + b - y) ** 2)

    assert final_loss(0.97 * bound) < 1e-3 and not final_loss(1.03 * bound) < 1e3


# ---- predictions 05.2 and 05.7: the right answers, measured with numpy ---------------------------------
def _sgd_distance(lr, steps=100):
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    best = np.polyfit(x, y, 1)
    w = b = 0.0
    with np.errstate(all="ignore"):
        for _ in range(steps):
            err = w * x + b - y
            w, b = w - lr * 2 * np.mean(err * x), b - lr * 2 * np.mean(err)
    return np.hypot(w - best[0], b - best[1])


@pytest.mark.parametrize("prediction", [nb05.fastest_of_four, nb05.article_recipe, nb05.larger_is_faster,
                                        nb05.adam_never_diverges], ids=lambda p: p.name)
def test_predictions_explain_every_option(prediction):
    for letter, (_text, why) in prediction.options.items():
        result = prediction.evaluate(letter)
        assert (result.status == CORRECT) == (letter == prediction.answer) and why in result.message


def test_fastest_of_four_is_the_zig_zag_run():
    distances = {lr: _sgd_distance(lr) for lr in (0.05, 0.3, 0.6, 0.85)}
    assert min(distances, key=distances.get) == 0.6 and nb05.fastest_of_four.answer == "b"
    assert 1 / LAM_MAX < 0.6 < 2 / LAM_MAX < 0.85  # 0.6 zig-zags, 0.85 diverges


def test_article_recipe_momentum_ends_closest():
    """lr = 0.01, 100 steps from (0, 0): heavy-ball momentum and Adam written out in numpy."""
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    best = np.polyfit(x, y, 1)

    def grad(theta):
        err = theta[0] * x + theta[1] - y
        return np.array([2 * np.mean(err * x), 2 * np.mean(err)])

    theta, v = np.zeros(2), np.zeros(2)
    for _ in range(100):
        v = 0.9 * v + grad(theta)
        theta = theta - 0.01 * v
    momentum = np.hypot(*(theta - best))
    theta, m, s = np.zeros(2), np.zeros(2), np.zeros(2)
    for k in range(1, 101):
        g = grad(theta)
        m, s = 0.9 * m + 0.1 * g, 0.999 * s + 0.001 * g * g
        theta = theta - 0.01 * (m / (1 - 0.9 ** k)) / (np.sqrt(s / (1 - 0.999 ** k)) + 1e-8)
    adam = np.hypot(*(theta - best))
    sgd = _sgd_distance(0.01)
    assert momentum < min(adam, sgd) and sgd > adam and nb05.article_recipe.answer == "b"


# ---- 05.8: the compiled Momentum step, state and learning rate passed in as Tensors ---------------------
def _momentum_step(mode="right"):
    """A reference written with ms.grad and an explicit design matrix product, and typical mistakes."""
    import mindspore as ms
    from mindspore import ops

    def loss_of(theta, a, y):
        residual = ops.matmul(a, theta) - y
        return ops.mean(residual * residual)

    def step(theta, velocity, a, y, lr):
        loss = loss_of(theta, a, y)
        grad = ms.grad(loss_of)(theta, a, y)
        if mode == "sgd":
            return theta - lr * grad, velocity, loss
        if mode == "state dropped":  # the new velocity is used but the old one goes back to the caller
            new = 0.9 * velocity + grad
            return theta - lr * new, velocity, loss
        new = 0.9 * velocity + grad
        rate = {"fixed": 0.1, "uphill": -lr}.get(mode, lr)
        theta = theta - rate * new
        return theta, new, loss_of(theta, a, y) if mode == "loss after" else loss

    return step if mode == "not compiled" else ms.jit(step)


def test_momentum_step_reference_against_numpy():
    """The checker's oracle against an independent loop over (w, b) written out by hand."""
    x, y = nb05.STEP_X[:, 0].astype(np.float64), nb05.STEP_Y[:, 0].astype(np.float64)
    w, b = nb05.STEP_START
    vw = vb = 0.0
    for (theta, _, before, _), lr in zip(nb05.heavy_ball(), nb05.STEP_LRS):
        err = w * x + b - y
        assert np.isclose(before, np.mean(err ** 2))
        vw, vb = 0.9 * vw + 2 * np.mean(err * x), 0.9 * vb + 2 * np.mean(err)
        w, b = w - lr * vw, b - lr * vb
        assert np.allclose(theta.ravel(), [w, b])


def test_momentum_step():
    ex = nb05.momentum_step
    assert _status(ex, _momentum_step()) == CORRECT
    assert "plain SGD" in ex.evaluate(_momentum_step("sgd")).message
    assert "plain SGD" in ex.evaluate(_momentum_step("state dropped")).message  # v never carries over
    assert "first learning rate" in ex.evaluate(_momentum_step("fixed")).message
    assert "uphill" in ex.evaluate(_momentum_step("uphill")).message
    assert "after the update" in ex.evaluate(_momentum_step("loss after")).message
    assert "@ms.jit" in ex.evaluate(_momentum_step("not compiled")).message
    assert "without calling it" in ex.evaluate((1.0, 2.0, 3.0)).message


def test_momentum_step_cannot_return_its_inputs_or_constants():
    import mindspore as ms

    ex = nb05.momentum_step
    final = nb05.heavy_ball()[-1]

    def inputs(theta, velocity, a, y, lr):  # (a lambda would not compile: graph mode cannot parse it)
        return theta, velocity, lr

    def constant(theta, velocity, a, y, lr):  # the last state of the oracle, whatever comes in
        return ms.Tensor(final[0], ms.float32), ms.Tensor(final[1], ms.float32), ms.Tensor(final[2], ms.float32)

    assert "never changed" in ex.evaluate(ms.jit(inputs)).message
    assert _status(ex, ms.jit(constant)) == INCORRECT


def test_jit_is_detected_by_mindspore_wrapper_only():
    import functools

    import mindspore as ms

    def plain(x):
        return x

    assert nb05._is_jit(ms.jit(plain)) and not nb05._is_jit(plain)
    assert not nb05._is_jit(functools.wraps(plain)(lambda x: x)) and not nb05._is_jit(print)


def _sgd_steps_to_converge(lr, steps=200):
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    best = np.polyfit(x, y, 1)
    w = b = 0.0
    last_outside = 0
    with np.errstate(all="ignore"):
        for k in range(1, steps + 1):
            err = w * x + b - y
            w, b = w - lr * 2 * np.mean(err * x), b - lr * 2 * np.mean(err)
            if not (abs(w - best[0]) < 0.01 and abs(b - best[1]) < 0.01):
                last_outside = k
    return None if last_outside == steps else last_outside + 1


def test_larger_is_not_always_faster():
    steps = {lr: _sgd_steps_to_converge(lr) for lr in (0.3, 0.5, 0.74, 0.79)}
    assert steps[0.3] > steps[0.5] > steps[0.74] and steps[0.79] > 2 * steps[0.74], steps
    assert nb05.larger_is_faster.answer == "b" and 0.74 < 2 / (LAM_MIN + LAM_MAX) < 0.79


def test_adam_at_lr_10_ends_healthy_near_the_fit():
    """nn.Adam's rule in numpy, lr = 10, 100 steps from (0, 0): far out first, then back, no divergence."""
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    w = b = mw = mb = vw = vb = 0.0
    farthest, losses = 0.0, []
    for t in range(1, 101):
        err = w * x + b - y
        losses.append(np.mean(err ** 2))
        gw, gb = 2 * np.mean(err * x), 2 * np.mean(err)
        mw, mb = 0.9 * mw + 0.1 * gw, 0.9 * mb + 0.1 * gb
        vw, vb = 0.999 * vw + 0.001 * gw ** 2, 0.999 * vb + 0.001 * gb ** 2
        step = 10 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        w, b = w - step * mw / (np.sqrt(vw) + 1e-8), b - step * mb / (np.sqrt(vb) + 1e-8)
        farthest = max(farthest, abs(w), abs(b))
    final = np.mean((w * x + b - y) ** 2)
    assert farthest > 5 and np.all(np.isfinite(losses)) and final < 0.5 * losses[0] and final < 0.01
    assert nb05.adam_never_diverges.answer == "b"
