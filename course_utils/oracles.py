"""Independent oracles in plain numpy (float64): what a MindSpore result is checked against.

Written once here and imported by the checks, the tests and the benchmarks. They share no code with the
MindSpore paths they check. The model throughout is the one-neuron line y ~ w*x + b under the mean
squared error L(w, b) = mean((w*x + b - y)^2), as in ``nn.Dense(1, 1)`` + ``nn.MSELoss()``.
"""

import numpy as np

from course_utils._validate import require_int, require_number, shown


def _xy(x, y):
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"x and y must hold the same positive number of values, got {x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite (no NaN or inf)")
    return x, y


def gradient_descent(x, y, lr, steps, w=0.0, b=0.0, momentum=0.0):
    """Full-batch gradient descent on the MSE of y ~ w*x + b, as ``nn.SGD`` (momentum 0) or ``nn.Momentum``.

    Returns (ws, bs, losses), each of length ``steps``: losses[k] is the loss *before* step k (what
    ``TrainOneStepCell`` returns), ws[k] and bs[k] the parameters *after* it. Diverging runs give inf/NaN
    instead of warnings. Momentum follows MindSpore: v = momentum * v + g; p -= lr * v.
    """
    x, y = _xy(x, y)
    lr = require_number("lr", lr, 0.0)
    steps = require_int("steps", steps, 0, 10_000_000)
    momentum = require_number("momentum", momentum, 0.0, 1.0, high_open=True)
    w, b = require_number("w", w), require_number("b", b)
    ws, bs, losses = np.empty(steps), np.empty(steps), np.empty(steps)
    vw = vb = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(steps):
            err = w * x + b - y
            losses[k] = np.mean(err * err)
            gw, gb = 2.0 * np.mean(err * x), 2.0 * np.mean(err)
            vw, vb = momentum * vw + gw, momentum * vb + gb
            w, b = w - lr * vw, b - lr * vb
            ws[k], bs[k] = w, b
    return ws, bs, losses


def least_squares(x, y):
    """The (w, b) that minimises mean((w*x + b - y)^2), in closed form (``np.linalg.lstsq``)."""
    x, y = _xy(x, y)
    if np.ptp(x) == 0:
        raise ValueError("x must take at least two different values for a unique least-squares line")
    design = np.stack([x, np.ones_like(x)], axis=1)
    (w, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(w), float(b)


def hessian(x):
    """The Hessian of the MSE in (w, b): 2 * [[mean(x^2), mean(x)], [mean(x), 1]] (it does not depend on y)."""
    x, _ = _xy(x, np.zeros_like(np.asarray(x, dtype=np.float64)))
    return 2.0 * np.array([[np.mean(x * x), np.mean(x)], [np.mean(x), 1.0]])


def lambda_max(x):
    """The largest eigenvalue of ``hessian(x)``: plain gradient descent is stable exactly for lr < 2 / lambda_max."""
    return float(np.linalg.eigvalsh(hessian(x))[-1])


CONVERGED = 0.01  # the course's one convergence criterion: w and b both within 0.01 of the least-squares fit


def steps_to_converge(path, optimum, tol=CONVERGED):
    """The first step k from which |w - w*| < tol and |b - b*| < tol for good (``CONVERGED``), or None.

    ``path`` has one row (w, b) per point, starting with the initial point (row 0): row k is the
    parameters after k steps. A path that leaves the tolerance again, or ends with NaN/inf, has not
    converged. ``optimum`` is ``least_squares(x, y)``.
    """
    path = np.asarray(path, dtype=np.float64)
    if path.ndim != 2 or path.shape[1] != 2 or len(path) == 0:
        raise ValueError(f"path must have shape (steps + 1, 2), got {path.shape}")
    optimum = np.asarray(optimum, dtype=np.float64)
    if optimum.shape != (2,) or not np.all(np.isfinite(optimum)):
        raise ValueError(f"optimum must be a finite pair (w*, b*), got {optimum.tolist()}")
    tol = require_number("tol", tol, 0.0, low_open=True)
    with np.errstate(invalid="ignore", over="ignore"):
        inside = np.all(np.abs(path - optimum) < tol, axis=1)
    if not inside[-1]:
        return None
    outside = np.flatnonzero(~inside)
    return 0 if outside.size == 0 else int(outside[-1] + 1)


def minibatch_sgd(x, y, lr, batches, w=0.0, b=0.0):
    """Mini-batch SGD on the MSE of y ~ w*x + b, as ``nn.SGD`` in a loop over a batched dataset: one step per
    batch, each on the mean loss of that batch's rows only.

    ``batches`` holds one array of row indices per step, in the order the steps see them: the shuffle order is
    not invented here but taken from the dataset (an index column, or ``course_utils.minibatch.dataset_order``).
    Returns (ws, bs, losses) like ``gradient_descent``: losses[k] is the loss of batch k *before* step k (what
    the train cell returns), ws[k] and bs[k] the parameters after it.
    """
    x, y = _xy(x, y)
    lr = require_number("lr", lr, 0.0)
    w, b = require_number("w", w), require_number("b", b)
    if isinstance(batches, (str, bytes, np.ndarray)) or not hasattr(batches, "__len__"):
        raise TypeError(f"batches must be a list of index arrays (one per step), got {shown(batches)}")
    rows = []
    for k, batch in enumerate(batches):
        idx = np.asarray(batch)
        if idx.dtype.kind not in "iu" or idx.ndim != 1 or idx.size == 0:
            raise ValueError(f"batches[{k}] must be a non-empty 1-D array of row indices (ints), got {shown(batch)}")
        if idx.min() < 0 or idx.max() >= x.size:
            raise ValueError(f"batches[{k}] holds a row index outside 0..{x.size - 1}: {shown(batch)}")
        rows.append(idx.astype(np.int64))
    steps = len(rows)
    ws, bs, losses = np.empty(steps), np.empty(steps), np.empty(steps)
    with np.errstate(over="ignore", invalid="ignore"):
        for k, idx in enumerate(rows):
            xb, yb = x[idx], y[idx]
            err = w * xb + b - yb
            losses[k] = np.mean(err * err)
            w, b = w - lr * 2.0 * np.mean(err * xb), b - lr * 2.0 * np.mean(err)
            ws[k], bs[k] = w, b
    return ws, bs, losses
