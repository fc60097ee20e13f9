"""The checkers of notebook 04 accept the reference solutions and reject typical wrong answers.

The reference values are computed here independently of the checkers: the Hessian by finite differences
of the loss, the fastest learning rate by a brute-force search over plain gradient descent."""

import re

import numpy as np
import pytest

from course_utils.checks import nb04
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


@pytest.mark.parametrize("exercise", [nb04.divergence_threshold, nb04.fastest_sgd_lr, nb04.momentum_threshold])
def test_not_attempted_and_not_a_number(exercise):
    assert _status(exercise, ...) == NOT_ATTEMPTED
    for bad in ("0.8", [0.8], float("nan"), True):
        result = exercise.evaluate(bad)
        assert result.status == INCORRECT and ("number" in result.message or "finite" in result.message)


def test_divergence_threshold():
    ex = nb04.divergence_threshold
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
    ex = nb04.fastest_sgd_lr
    grid = np.linspace(0.3, 0.8, 101)
    counts = [(s, lr) for lr in grid if (s := _steps(lr)) is not None]
    best_steps, best_lr = min(counts)
    assert abs(best_lr - 2 / (LAM_MIN + LAM_MAX)) < 0.05  # theory and brute force agree (steps are integers)
    assert _status(ex, best_lr) == CORRECT and _status(ex, 2 / (LAM_MIN + LAM_MAX)) == CORRECT
    assert nb04.sgd_steps_to_converge(best_lr) == best_steps
    for wrong in (0.01, 0.3, 0.5):
        message = ex.evaluate(wrong).message
        assert re.search(r"[Tt]ry a larger (one|learning rate)$", message), message
    for wrong in (2 / LAM_MAX, 1.0):
        assert "stability bound" in ex.evaluate(wrong).message
    assert "> 0" in ex.evaluate(-0.5).message


def test_momentum_threshold():
    ex = nb04.momentum_threshold
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
