"""The loss surface of the one-neuron model y = w*x + b under mean squared error, computed from the data.

The loss L(w, b) = mean((w*x + b - y)^2) is a quadratic bowl. Its Hessian does not depend on (w, b):
H = 2 * [[mean(x^2), mean(x)], [mean(x), 1]]. Plain gradient descent is stable exactly when
lr < 2 / (largest eigenvalue of H); heavy-ball momentum (MindSpore's nn.Momentum) when
lr < 2 * (1 + momentum) / (largest eigenvalue).
"""

import numpy as np

from course_utils import oracles
from course_utils._validate import require_int, require_series, shown
from course_utils.data import check_xy
from course_utils.oracles import CONVERGED
from course_utils.oracles import steps_to_converge as oracle_steps_to_converge


def _floats(name, value):
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a number or an array of numbers, got {shown(value)}")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{name} must be a number or an array of numbers, got {shown(value)}") from None


class LossSurface:
    """Exact facts about the loss of ``y ~ w*x + b`` on one data set, in float64."""

    def __init__(self, x, y):
        check_xy(x, y)
        if np.ptp(x) == 0:  # also a single sample
            raise ValueError(f"x must take at least two different values: with x constant ({x[0, 0]:g}) every line "
                             f"through the mean of the data fits equally well, so there is no single best (w, b)")
        self.x = x[:, 0].astype(np.float64)
        self.y = y[:, 0].astype(np.float64)
        self.hessian = oracles.hessian(self.x)
        self.eigenvalues, self.eigenvectors = np.linalg.eigh(self.hessian)  # ascending
        w, b = oracles.least_squares(self.x, self.y)
        self.optimum = (w, b)
        self.min_loss = float(self.loss(w, b))

    @property
    def lambda_max(self):
        return float(self.eigenvalues[-1])

    @property
    def lambda_min(self):
        return float(self.eigenvalues[0])

    @property
    def condition_number(self):
        return self.lambda_max / self.lambda_min

    def stability_bound(self, momentum=0.0):
        """Largest stable learning rate: 2 / lambda_max for plain GD, 2 (1 + momentum) / lambda_max with momentum."""
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
        return 2.0 * (1.0 + momentum) / self.lambda_max

    def best_sgd_lr(self):
        """The learning rate that makes plain GD contract fastest: 2 / (lambda_min + lambda_max)."""
        return 2.0 / (self.lambda_min + self.lambda_max)

    def loss(self, w, b):
        """L(w, b) for scalars or same-shaped arrays of w and b (evaluated in closed form, no loop)."""
        w, b = _floats("w", w), _floats("b", b)
        if w.shape != b.shape:
            raise ValueError(f"w and b must have the same shape, got {w.shape} and {b.shape}")
        x, y = self.x, self.y
        # mean((w x + b - y)^2) expanded into moments of the data, so a 200x200 grid costs nothing
        return (w * w * np.mean(x * x) + b * b + np.mean(y * y) + 2 * w * b * np.mean(x)
                - 2 * w * np.mean(x * y) - 2 * b * np.mean(y))

    def grid(self, w_range, b_range, n=120):
        """Return (W, B, L) arrays of shape (n, n) over the given (lo, hi) ranges, for contour plots."""
        for name, rng in (("w_range", w_range), ("b_range", b_range)):
            rng = require_series(name, rng)
            if len(rng) != 2 or not (np.all(np.isfinite(rng)) and rng[0] < rng[1]):
                raise ValueError(f"{name} must be (lo, hi) with lo < hi, got {rng!r}")
        require_int("n", n, 2, 2000)  # 2000 x 2000 float64 grids are 32 MB each: beyond that, a MemoryError
        W, B = np.meshgrid(np.linspace(*w_range, n), np.linspace(*b_range, n))
        return W, B, self.loss(W, B)

    def __repr__(self):
        return (f"LossSurface(n={len(self.x)}, eigenvalues=({self.lambda_min:.3f}, {self.lambda_max:.3f}), "
                f"sgd bound={self.stability_bound():.3f}, optimum=({self.optimum[0]:.4f}, {self.optimum[1]:.4f}))")


def steps_to_converge(trajectory, optimum, tol=CONVERGED):
    """First step k after which |w - w*| < tol and |b - b*| < tol for good, or None if never
    (``oracles.steps_to_converge``, the course's one criterion ``CONVERGED``).

    ``trajectory`` has one row (w, b) per step, starting with the initial point (row 0).
    """
    path = require_series("trajectory", trajectory, ndim=None, allow_empty=True)
    if path.ndim != 2 or path.shape[1] != 2 or len(path) == 0:
        raise ValueError(f"trajectory must have shape (steps + 1, 2), got {path.shape}")
    optimum = require_series("optimum", optimum)
    return oracle_steps_to_converge(path, optimum, tol)
