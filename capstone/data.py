"""The capstone data: y = sin(3x) + noise, something a straight line cannot fit."""

import numpy as np


def make_sine_data(n, noise=0.05, seed=0):
    """Return ``(x, y)`` float32 arrays of shape (n, 1), x uniform in [-1, 1]."""
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if not isinstance(noise, (int, float)) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 1)).astype(np.float32)
    y = (np.sin(3.0 * x) + rng.normal(0.0, noise, size=(n, 1))).astype(np.float32)
    return x, y
