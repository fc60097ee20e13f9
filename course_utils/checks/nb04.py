"""Exercises of notebook 04 (the learning-rate lab).

The oracles here work from the data alone, in float64 numpy: the Hessian of the MSE loss in closed form
and a plain gradient-descent loop. They share no code with the notebook or with the lab.
"""

import math

import numpy as np

from course_utils.exercises import Exercise, as_number

MOMENTUM = 0.9
TOL = 0.01  # "converged": |w - w*| and |b - b*| below this for good


def _data():
    from course_utils.data import make_linear_data

    x, y = make_linear_data()
    return x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)


def _eigenvalues():
    x, _ = _data()
    hessian = 2.0 * np.array([[np.mean(x * x), np.mean(x)], [np.mean(x), 1.0]])
    return np.linalg.eigvalsh(hessian)  # ascending


def _number(answer):
    """A positive, finite learning rate, or a message saying what is wrong with the answer."""
    value, problem = as_number(answer, "the learning rate")
    if problem:
        return None, problem
    if value <= 0:
        return None, f"a learning rate must be > 0 (each step moves lr times the gradient downhill), got {value:g}"
    return value, None


def _near(value, target, rel):
    return abs(value - target) <= rel * abs(target)


def sgd_steps_to_converge(lr, steps=300):
    """Plain gradient descent from (0, 0): first step after which (w, b) stays within TOL of the
    least-squares fit, or None (diverged or too slow)."""
    x, y = _data()
    features = np.stack([x, np.ones_like(x)], axis=1)
    best = np.linalg.lstsq(features, y, rcond=None)[0]
    theta = np.zeros(2)
    last_outside = 0  # theta_0 = (0, 0) is always outside
    with np.errstate(all="ignore"):
        for k in range(1, steps + 1):
            theta = theta - lr * 2.0 * features.T @ (features @ theta - y) / len(y)
            if not np.all(np.abs(theta - best) < TOL):
                last_outside = k
    return None if last_outside == steps else last_outside + 1


def _check_threshold(answer):
    value, problem = _number(answer)
    if problem:
        return problem
    lam_min, lam_max = _eigenvalues()
    bound = 2.0 / lam_max
    if _near(value, bound, 0.01):
        return None
    if _near(value, 1.0 / lam_max, 0.02):
        return (f"{value:.3f} is 1 / lambda_max: above it the path zig-zags across the valley, but it still "
                f"converges. Divergence starts at twice that")
    if _near(value, 4.0 / lam_max, 0.02):
        return (f"{value:.3f} is too large by a factor 2: nn.MSELoss is mean((pred - y)^2), so its Hessian is "
                f"2 * mean of [[x^2, x], [x, 1]], with the factor 2")
    if _near(value, 2.0 / lam_min, 0.02):
        return ("that is 2 / lambda_min: the smallest eigenvalue sets how SLOWLY the flat direction converges; "
                "stability is decided by the steepest direction, the largest eigenvalue")
    if _near(value, 0.01, 0.01):
        return "0.01 is the source article's learning rate: it is stable, but far below the threshold"
    side = "diverges" if value > bound else "still converges"
    return (f"at lr={value:.4g} plain gradient descent {side}; compute the Hessian's eigenvalues from x "
            f"(np.linalg.eigvalsh) and use 2 / lambda_max")


def _check_fastest(answer):
    value, problem = _number(answer)
    if problem:
        return problem
    lam_min, lam_max = _eigenvalues()
    best_lr = 2.0 / (lam_min + lam_max)
    best = sgd_steps_to_converge(best_lr)
    mine = sgd_steps_to_converge(value)
    if mine is None:
        if value >= 0.97 * 2.0 / lam_max:
            return (f"lr={value:.4g} is at, or too close to, the stability bound 2 / lambda_max: there SGD "
                    f"converges very slowly or diverges. Try a smaller one")
        return f"lr={value:.4g} does not reach the best fit within 300 steps: try a larger learning rate"
    if mine <= math.ceil(1.15 * best):
        return None
    hint = "larger" if value < best_lr else "a little smaller"
    return (f"lr={value:.4g} needs {mine} steps to get within {TOL} of the best fit; the fastest learning rate "
            f"needs about {best}. Try a {hint} one")


def _check_momentum_threshold(answer):
    value, problem = _number(answer)
    if problem:
        return problem
    lam_max = _eigenvalues()[1]
    bound = 2.0 * (1.0 + MOMENTUM) / lam_max
    if _near(value, bound, 0.02):
        return None
    if _near(value, 2.0 / lam_max, 0.02):
        return ("that is plain SGD's bound. Momentum accumulates past gradients, and for this quadratic that "
                "widens the stable range: try lr=1.2 with Momentum in the lab")
    if _near(value, 2.0 * (1.0 - MOMENTUM) / lam_max, 0.05):
        return "momentum widens the stable range, it does not shrink it: the factor is (1 + momentum)"
    side = "diverges" if value > bound else "still converges"
    return (f"at lr={value:.4g} nn.Momentum(momentum=0.9) {side} on this data; the heavy-ball bound is "
            f"2 (1 + momentum) / lambda_max")


divergence_threshold = Exercise("04.1", _check_threshold, hints=[
    "the loss is quadratic in (w, b), so its curvature (the Hessian) is the same everywhere",
    "the loss is quadratic, so its Hessian is constant: H = 2 * [[mean(x^2), mean(x)], [mean(x), 1]]. Gradient "
    "descent is stable while lr < 2 / (largest eigenvalue of H)",
])
fastest_sgd_lr = Exercise("04.2", _check_fastest, hints=[
    "a learning rate has to suit both directions of the valley at once: the steep one and the flat one",
    "the steep direction wants a small lr, the flat one a large lr; the best compromise for plain gradient descent is"
    " lr = 2 / (lambda_min + lambda_max). Or search with the lab",
])
momentum_threshold = Exercise("04.3", _check_momentum_threshold, hints=[
    "momentum lets a step carry part of the previous one; on a quadratic that moves the stability bound",
    "for heavy-ball momentum (v = m v + g; p -= lr v) on a quadratic, the bound is 2 (1 + m) / lambda_max",
])
