"""The course's data set: y = w*x + b + noise, as float32 arrays of shape (n, 1)."""

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
