"""Exercises of notebook 03 (TrainOneStepCell, the training loop, least squares)."""

import numpy as np

from course_utils.data import make_linear_data
from course_utils.exercises import Exercise


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
    if isinstance(answer, bool) or not isinstance(answer, (int, float, np.floating)):
        return f"expected a learning rate (a float), got {type(answer).__name__} {answer!r}"
    if not answer > 0:
        return f"a learning rate must be positive, got {answer}"
    ws, bs, _ = gradient_descent(float(answer))
    w, b = ws[-1], bs[-1]
    if not (np.isfinite(w) and np.isfinite(b)) or abs(w) > 10:
        return f"lr={answer} diverges: after 100 steps w = {w:.3g}. Try a smaller one"
    if abs(w - 2) >= 0.05 or abs(b) >= 0.05:
        direction = "larger" if answer < 0.3 else "smaller"
        return f"lr={answer} ends at w = {w:.4f}, b = {b:.4f}: not within 0.05 of (2, 0). Try a {direction} one"
    return None


def _check_least_squares(answer):
    try:
        w, b = (float(np.asarray(v).reshape(())) for v in answer)
    except (TypeError, ValueError):
        return f"expected a pair (w, b) of numbers, got {answer!r}"
    x, y = make_linear_data()
    design = np.hstack([x, np.ones_like(x)]).astype(np.float64)
    (w_ls, b_ls), *_ = np.linalg.lstsq(design, y.astype(np.float64).ravel(), rcond=None)
    if (w, b) == (2.0, 0.0):
        return "(2, 0) is the line the data was made from; least squares fits the noisy samples, so it differs a little"
    w_no_bias = float(np.sum(x * y) / np.sum(x * x))
    if abs(w - w_no_bias) < 1e-6:
        return "that slope fits a line through the origin; add a column of ones to the design matrix for the bias"
    if abs(w - w_ls) > 1e-4 or abs(b - b_ls) > 1e-4:
        return f"({w:.5f}, {b:.5f}) is not the least-squares solution of y ≈ w*x + b on the course data"
    return None


learning_rate = Exercise("03.1", _check_learning_rate,
                         hint="the stable range ends near 0.8; 0.01 is far too slow for 100 steps")
least_squares = Exercise("03.2", _check_least_squares,
                         hint="np.linalg.lstsq(np.hstack([x, np.ones_like(x)]), y, rcond=None)")
