"""The capstone data: y = sin(3x) + noise, something a straight line cannot fit."""

import numpy as np

from course_utils._validate import require_int, require_number
from course_utils.data import MAX_SAMPLES, SEED_RANGE


def make_sine_data(n, noise=0.05, seed=0):
    """Return ``(x, y)`` float32 arrays of shape (n, 1), x uniform in [-1, 1]."""
    n = require_int("n", n, 1, MAX_SAMPLES)
    noise = require_number("noise", noise, 0, 1e6)
    seed = require_int("seed", seed, *SEED_RANGE)
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 1)).astype(np.float32)
    y = (np.sin(3.0 * x) + rng.normal(0.0, noise, size=(n, 1))).astype(np.float32)
    return x, y
