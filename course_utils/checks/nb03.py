"""Exercises of notebook 03 (TrainOneStepCell, the training loop, least squares)."""

import numpy as np

from course_utils._validate import shown
from course_utils.data import make_linear_data
from course_utils.exercises import Exercise, as_number


def gradient_descent(lr, steps=100, x=None, y=None, w=0.0, b=0.0):
    """Plain numpy full-batch gradient descent on the MSE of y = w*x + b (float64); returns (ws, bs, losses)."""
    if x is None:
        x, y = make_linear_data()
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    ws, bs, losses = [], [], []
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            err = w * x + b - y
            losses.append(np.mean(err ** 2))
            w, b = w - lr * 2 * np.mean(err * x), b - lr * 2 * np.mean(err)
            ws.append(w)
            bs.append(b)
    return np.array(ws), np.array(bs), np.array(losses)


def _check_learning_rate(answer):
    lr, problem = as_number(answer, "the learning rate")
    if problem:
        return problem
    if lr <= 0:
        return f"a learning rate must be positive, got {lr:g}"
    ws, bs, _ = gradient_descent(lr)
    w, b = ws[-1], bs[-1]
    if not (np.isfinite(w) and np.isfinite(b)) or abs(w) > 10:
        return f"lr={lr:g} diverges: after 100 steps w = {w:.3g}. Try a smaller one"
    if not (abs(w - 2) < 0.05 and abs(b) < 0.05):
        direction = "larger" if lr < 0.3 else "smaller"
        return f"lr={lr:g} ends at w = {w:.4f}, b = {b:.4f}: not within 0.05 of (2, 0). Try a {direction} one"
    return None


def _check_least_squares(answer):
    if not isinstance(answer, (tuple, list, np.ndarray)) and not hasattr(answer, "asnumpy"):
        return f"expected a pair (w, b) of numbers, got {shown(answer)}"
    if hasattr(answer, "asnumpy"):
        answer = answer.asnumpy()
    pair = list(answer.ravel()) if isinstance(answer, np.ndarray) else list(answer)
    if len(pair) != 2:
        return f"expected a pair (w, b): two numbers, got {len(pair)} values"
    (w, problem_w), (b, problem_b) = as_number(pair[0], "w"), as_number(pair[1], "b")
    if problem_w or problem_b:
        return f"expected a pair (w, b) of finite numbers: {problem_w or problem_b}"
    x, y = make_linear_data()
    design = np.hstack([x, np.ones_like(x)]).astype(np.float64)
    (w_ls, b_ls), *_ = np.linalg.lstsq(design, y.astype(np.float64).ravel(), rcond=None)
    if (w, b) == (2.0, 0.0):
        return "(2, 0) is the line the data was made from; least squares fits the noisy samples, so it differs a little"
    w_no_bias = float(np.sum(x * y) / np.sum(x * x))
    if abs(w - w_no_bias) < 1e-6:
        return "that slope fits a line through the origin; add a column of ones to the design matrix for the bias"
    if not (abs(w - w_ls) <= 1e-4 and abs(b - b_ls) <= 1e-4):
        return f"({w:.5f}, {b:.5f}) is not the least-squares solution of y ≈ w*x + b on the course data"
    return None


learning_rate = Exercise("03.1", _check_learning_rate, hints=[
    "look at where 100 steps of plain gradient descent end for a few learning rates between 0.01 and 1",
    "the stable range ends near 0.8; 0.01 is far too slow for 100 steps",
])
least_squares = Exercise("03.2", _check_least_squares, hints=[
    "write the model as a matrix product: a column for x and a column for the bias",
    "np.linalg.lstsq(np.hstack([x, np.ones_like(x)]), y, rcond=None)",
])
