"""The course's data set: y = w*x + b + noise, as float32 arrays of shape (n, 1)."""

import math

import numpy as np


def _check_number(name, value, positive=False, allow_zero=True):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and (value < 0 or (value == 0 and not allow_zero)):
        raise ValueError(f"{name} must be {'> 0' if not allow_zero else '>= 0'}, got {value!r}")


def make_linear_data(n=100, w=2.0, b=0.0, noise=0.01, seed=0):
    """Return ``(x, y)`` with x ~ U[0, 1) and y = w*x + b + N(0, noise), both float32 of shape (n, 1).

    With the defaults this is exactly the data of the course's source article:
    ``np.random.seed(0); x = np.random.rand(100, 1); y = 2 * x + np.random.normal(0, 0.01, (100, 1))``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n (number of samples) must be an int, got {type(n).__name__} {n!r}")
    if n <= 0:
        raise ValueError(f"n (number of samples) must be positive, got {n}")
    _check_number("w", w)
    _check_number("b", b)
    _check_number("noise", noise, positive=True)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an int in [0, 2**32), got {seed!r}")
    rng = np.random.RandomState(seed)  # the legacy generator, so the stream equals np.random.seed(seed)
    x = rng.rand(n, 1).astype(np.float32)
    y = (w * x + b + rng.normal(0.0, noise, size=(n, 1)).astype(np.float32)).astype(np.float32)
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
