"""The course's data sets: y = w*x + b + noise as float32 arrays of shape (n, 1); 2-D points for classification."""

import numpy as np

from course_utils._validate import require_int, require_number

MAX_SAMPLES = 10_000_000  # 80 MB of float32 pairs: far more than any lesson needs, far below a MemoryError
SEED_RANGE = (0, 2**32 - 1)  # numpy's legacy generator (and ms.set_seed) accept exactly these


def make_linear_data(n=100, w=2.0, b=0.0, noise=0.01, seed=0):
    """Return ``(x, y)`` with x ~ U[0, 1) and y = w*x + b + N(0, noise), both float32 of shape (n, 1).

    With the defaults this is exactly the data of the course's source article:
    ``np.random.seed(0); x = np.random.rand(100, 1); y = 2 * x + np.random.normal(0, 0.01, (100, 1))``.
    """
    n = require_int("n (number of samples)", n, 1, MAX_SAMPLES)
    w, b = require_number("w", w), require_number("b", b)
    noise = require_number("noise", noise, low=0)
    seed = require_int("seed", seed, *SEED_RANGE)
    rng = np.random.RandomState(seed)  # the legacy generator, so the stream equals np.random.seed(seed)
    x = rng.rand(n, 1).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        y = (w * x + b + rng.normal(0.0, noise, size=(n, 1)).astype(np.float32)).astype(np.float32)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"w={w:g}, b={b:g}, noise={noise:g} give values of y beyond float32's range (about 3.4e38): "
                         f"use smaller ones")
    return x, y


def check_xy(x, y=None):
    """Raise a clear error unless x (and y) are finite float32 arrays of shape (n, 1) with the same n."""
    for name, arr in (("x", x), ("y", y)):
        if arr is None and name == "y":
            continue
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(arr).__name__}; "
                            f"convert a Tensor with .asnumpy()")
        if arr.dtype != np.float32 or arr.ndim != 2 or arr.shape[1] != 1 or arr.shape[0] == 0:
            raise ValueError(f"{name}: expected a float32 array of shape (n, 1), got {arr.dtype} {arr.shape}; "
                             f"use {name}.reshape(-1, 1).astype(np.float32)")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or inf")
    if y is not None and x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")


def _points(n, noise, seed, classes=2):
    """Validated arguments of the 2-D classification data makers, and their random generator."""
    n = require_int("n (number of points)", n, classes, MAX_SAMPLES)
    noise = require_number("noise", noise, low=0, high=10)
    seed = require_int("seed", seed, *SEED_RANGE)
    return n, noise, np.random.RandomState(seed)


def _shuffled(rng, points, labels):
    order = rng.permutation(len(labels))  # classes mixed, so any slice (a mini-batch, a split) holds all
    return np.ascontiguousarray(points[order], dtype=np.float32), labels[order].astype(np.int32)


def make_moons(n=200, noise=0.1, seed=0):
    """Two interleaving half-circles in 2-D: ``(points, labels)``, float32 (n, 2) and int32 (n,) in {0, 1}.

    Class 0 is the upper moon (centre (0, 0)), class 1 the lower one (centre (1, 0.5)), each radius 1, with
    n // 2 and n - n // 2 points at random angles, plus Gaussian noise of standard deviation ``noise`` on
    each coordinate; the rows are shuffled. No straight line separates the two classes.
    """
    n, noise, rng = _points(n, noise, seed)
    sizes = (n // 2, n - n // 2)
    angles = [rng.uniform(0.0, np.pi, size) for size in sizes]
    upper = np.stack([np.cos(angles[0]), np.sin(angles[0])], axis=1)
    lower = np.stack([1.0 - np.cos(angles[1]), 0.5 - np.sin(angles[1])], axis=1)
    points = np.concatenate([upper, lower]) + rng.normal(0.0, noise, size=(n, 2))
    labels = np.repeat(np.arange(2), sizes)
    return _shuffled(rng, points, labels)


def make_spirals(n=300, classes=3, noise=0.1, seed=0):
    """``classes`` interleaved spiral arms in 2-D: ``(points, labels)``, float32 (n, 2) and int32 (n,).

    Arm k holds n // classes points (the first n % classes arms one more) at random radii r in [0, 1) and
    angles 4 r + 2 pi k / classes (each arm turns by 4 rad, about 230 degrees), plus Gaussian noise of standard
    deviation ``noise`` on each coordinate; the rows are shuffled. Labels are 0 .. classes - 1.
    """
    classes = require_int("classes", classes, 2, 10)
    n, noise, rng = _points(n, noise, seed, classes)
    sizes = [n // classes + (k < n % classes) for k in range(classes)]
    radii = rng.uniform(0.0, 1.0, n)
    labels = np.repeat(np.arange(classes), sizes)
    angles = 4.0 * radii + 2.0 * np.pi * labels / classes
    points = radii[:, None] * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    points = points + rng.normal(0.0, noise, size=(n, 2))
    return _shuffled(rng, points, labels)
