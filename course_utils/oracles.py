"""Independent oracles in plain numpy (float64): what a MindSpore result is checked against.

Written once here and imported by the checks, the tests and the benchmarks. They share no code with the
MindSpore paths they check. The regression model is the one-neuron line y ~ w*x + b under the mean
squared error L(w, b) = mean((w*x + b - y)^2), as in ``nn.Dense(1, 1)`` + ``nn.MSELoss()``; the
classification oracles (notebook 10) are at the end.
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


# ---- classification (notebook 10): softmax cross-entropy, counts, and two references for accuracy -----
def _classes(labels, n=None):
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu" or labels.ndim != 1 or labels.size == 0 or labels.min() < 0:
        raise ValueError(f"labels must be a non-empty 1-D array of classes 0, 1, ... (ints), got {shown(labels)}")
    if n is not None and labels.size != n:
        raise ValueError(f"labels must hold one class per row ({n}), got {labels.size}")
    return labels.astype(np.int64)


def _logits(logits):
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[0] == 0 or logits.shape[1] < 2 or not np.all(np.isfinite(logits)):
        raise ValueError(f"logits must be a finite (n, classes) array with classes >= 2, got {shown(logits)}")
    return logits


def softmax_cross_entropy(logits, labels):
    """Mean over rows of -log softmax(logits)[label], computed stably (log-sum-exp), as
    ``nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")``."""
    logits = _logits(logits)
    labels = _classes(labels, len(logits))
    if labels.max() >= logits.shape[1]:
        raise ValueError(f"labels must be below the number of classes {logits.shape[1]}, got {labels.max()}")
    top = logits.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
    return float(np.mean(log_sum - logits[np.arange(len(labels)), labels]))


def confusion_matrix(predicted, labels, classes):
    """counts[i, j] = number of rows of true class i predicted as class j (rows: truth, columns: prediction).
    ``predicted`` holds classes (n,) or logits (n, classes), whose argmax is taken."""
    classes = require_int("classes", classes, 2, 1000)
    predicted = np.asarray(predicted)
    if predicted.ndim == 2:
        predicted = _logits(predicted).argmax(axis=1)
    predicted = _classes(predicted)
    labels = _classes(labels, predicted.size)
    if max(predicted.max(), labels.max()) >= classes:
        raise ValueError(f"classes must exceed every label and prediction, got {classes}")
    counts = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(counts, (labels, predicted), 1)
    return counts


def best_line_accuracy(points, labels):
    """The highest training accuracy any straight line reaches on 2-D points of two classes (exact).

    A line's classification changes only where its direction passes a critical one (perpendicular to the
    segment between two points), so trying one direction inside each interval between consecutive critical
    directions, with every threshold, tries every way a line can split the points."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2 or not np.all(np.isfinite(points)):
        raise ValueError(f"points must be a finite (n, 2) array, got {shown(points)}")
    labels = _classes(labels, len(points))
    if labels.max() > 1:
        raise ValueError(f"best_line_accuracy is for two classes (labels 0 and 1), got up to {labels.max()}")
    n = len(points)
    i, j = np.triu_indices(n, 1)
    diff = points[j] - points[i]
    critical = np.sort(np.mod(np.arctan2(diff[:, 1], diff[:, 0]) + np.pi / 2, np.pi))
    angles = np.concatenate([(critical[:-1] + critical[1:]) / 2, [(critical[-1] + critical[0] + np.pi) / 2]])
    best = 0
    for chunk in np.array_split(angles, max(1, angles.size // 2000)):
        order = np.argsort(points @ np.stack([np.cos(chunk), np.sin(chunk)]), axis=0)
        ones = labels[order]  # (n, directions): labels in the order of their projection
        ones_left = np.vstack([np.zeros((1, chunk.size), np.int64), np.cumsum(ones, axis=0)])
        left = np.arange(n + 1)[:, None]
        right_ones = ones_left[-1] - ones_left
        correct = (left - ones_left) + right_ones  # class 0 left of the threshold, class 1 right of it
        best = max(best, int(correct.max()), int((n - correct).max()))  # or the other way round
    return best / n


def knn_accuracy(train_points, train_labels, test_points, test_labels, k=5):
    """Accuracy on the test points of the k-nearest-neighbour vote over the training points (Euclidean; ties
    go to the smaller class): a model-free reference for what a flexible classifier can reach."""
    train_points = np.asarray(train_points, dtype=np.float64)
    test_points = np.asarray(test_points, dtype=np.float64)
    train_labels = _classes(train_labels, len(train_points))
    test_labels = _classes(test_labels, len(test_points))
    k = require_int("k", k, 1, len(train_points))
    distances = ((test_points[:, None, :] - train_points[None, :, :]) ** 2).sum(axis=2)
    nearest = train_labels[np.argsort(distances, axis=1, kind="stable")[:, :k]]
    votes = np.stack([(nearest == c).sum(axis=1) for c in range(train_labels.max() + 1)], axis=1)
    return float(np.mean(votes.argmax(axis=1) == test_labels))
