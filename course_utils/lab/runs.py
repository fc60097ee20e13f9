"""What a trainer returns: one ``Run`` (one learning rate) or one ``Sweep`` (every learning rate of a setting).

A ``Sweep`` holds the losses and (w, b) paths of K independent models trained side by side, one per
learning rate, from the same start with the same optimizer, momentum and step count. The lab trains a
sweep once per setting; a slider move then only picks a column (``sweep.run(i)``).
"""

import numpy as np

from course_utils.oracles import CONVERGED


class Run:
    """One training run: ``losses[k]`` is the loss at step k (before its update), ``path[k]`` is (w, b)
    before step k, so ``path`` has one more row than ``losses`` (its last row is the final (w, b))."""

    def __init__(self, optimizer, lr, losses, path, momentum=None):
        self.optimizer = optimizer
        self.lr = float(lr)
        self.momentum = momentum  # beta of Momentum; None for the other optimizers
        self.losses = np.asarray(losses, dtype=np.float64)
        self.path = np.asarray(path, dtype=np.float64)
        if self.path.shape != (len(self.losses) + 1, 2):
            raise ValueError(f"path must have shape ({len(self.losses) + 1}, 2), got {self.path.shape}")

    @property
    def steps(self):
        return len(self.losses)

    @property
    def final(self):
        return tuple(float(v) for v in self.path[-1])

    @property
    def label(self):
        beta = f" β={self.momentum:.2f}" if self.optimizer == "Momentum" and self.momentum is not None else ""
        return f"{self.optimizer}{beta} lr={self.lr:.3g}"

    def __repr__(self):
        w, b = self.final
        return f"Run({self.label}, steps={self.steps}, final w={w:.4g}, b={b:.4g})"


class Sweep:
    """K learning rates trained as one batch: ``losses`` (steps, K), ``paths`` (steps + 1, 2, K)."""

    def __init__(self, optimizer, lrs, losses, paths, start=(0.0, 0.0), momentum=None):
        self.optimizer = optimizer
        self.lrs = np.asarray(lrs, dtype=np.float64)
        self.losses = np.asarray(losses)
        self.paths = np.asarray(paths)
        self.start = tuple(float(v) for v in start)
        self.momentum = momentum
        k = len(self.lrs)
        if self.losses.shape[1:] != (k,) or self.paths.shape != (len(self.losses) + 1, 2, k):
            raise ValueError(f"a sweep of {k} learning rates needs losses (steps, {k}) and paths (steps + 1, 2, {k}), "
                             f"got {self.losses.shape} and {self.paths.shape}")

    @property
    def steps(self):
        return len(self.losses)

    @property
    def label(self):
        return f"Momentum β={self.momentum:.2f}" if self.optimizer == "Momentum" else self.optimizer

    def truncated(self, steps):
        """The same sweep, stopped after ``steps`` steps (a shorter budget needs no new training)."""
        if not 1 <= steps <= self.steps:
            raise ValueError(f"steps must be in 1..{self.steps}, got {steps}")
        return Sweep(self.optimizer, self.lrs, self.losses[:steps], self.paths[:steps + 1], self.start, self.momentum)

    def index(self, lr, rel=1e-9):
        """The column trained with ``lr``, or None if this sweep did not train that learning rate."""
        i = int(np.argmin(np.abs(np.log(self.lrs) - np.log(lr))))
        return i if abs(self.lrs[i] - lr) <= rel * lr else None

    def run(self, i):
        """Column ``i`` as a Run."""
        return Run(self.optimizer, self.lrs[i], self.losses[:, i], self.paths[:, :, i], self.momentum)

    def final_losses(self):
        return self.losses[-1].astype(np.float64)

    def steps_to_converge(self, optimum, tol=CONVERGED):
        """Per learning rate: the first step from which w and b stay within ``tol`` of ``optimum``
        (``oracles.steps_to_converge`` for every column at once); NaN where a run never converges."""
        with np.errstate(invalid="ignore", over="ignore"):
            inside = np.all(np.abs(self.paths - np.asarray(optimum, dtype=np.float64)[None, :, None]) < tol, axis=1)
        n = len(inside)
        last_outside = n - 1 - np.argmax(~inside[::-1], axis=0)  # meaningful only where some point is outside
        result = np.where(inside.all(axis=0), 0.0, last_outside + 1.0)
        return np.where(inside[-1], result, np.nan)

    def __repr__(self):
        return (f"Sweep({self.optimizer}, {len(self.lrs)} learning rates {self.lrs[0]:.3g}..{self.lrs[-1]:.3g}, "
                f"{self.steps} steps)")
