"""Trainers behind the lab: every learning rate of a setting in one batched run, in MindSpore or numpy.

The K models y ~ w_j*x + b_j (one per learning rate) are independent, so they train side by side as one
batch: theta has shape (2, K), the learning rates are a (1, K) Tensor. ``MindSporeTrainer`` computes the
gradient with MindSpore's autodiff (``ms.grad``) and applies the update rules of ``nn.SGD``,
``nn.Momentum`` (momentum beta, a Tensor argument) and ``nn.Adam`` (defaults) as MindSpore ops inside
one ``@ms.jit`` function per optimizer, ``chunk`` steps unrolled and called as often as the step count
needs. ``chunk=25`` (the default) compiles in about 1 s per optimizer and sweeps 401 learning rates over
100 steps in about 150 ms; ``chunk=100`` sweeps in about 65 ms but compiles in 4 to 6 s (measured here on a quiet
machine, 2026-12-03, interleaved medians: ``benchmarks/lab_update_speed.py`` prints both). A sweep is computed
once per setting and every process compiles each optimizer it uses, so the compile is what a learner waits for
(the lab's first display, a classroom's start). Learning rates, beta, start and optimizer
state are Tensor arguments of a fixed shape, so a new setting never recompiles: each optimizer compiles once,
on its first use. ``NumpyTrainer`` does the
same batched arithmetic in float32 numpy (the speed reference); the tests compare both with MindSpore's
own optimizers and with an independent float64 oracle.
"""

import numpy as np

from course_utils._validate import require_choice, require_int, require_number
from course_utils.data import check_xy
from course_utils.lab.runs import Sweep

OPTIMIZERS = ("SGD", "Momentum", "Adam")
MOMENTUM = 0.9  # nn.Momentum's usual momentum, the lab's default beta
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8  # nn.Adam's defaults
MAX_STEPS = 1000
LR_GRID = np.round(10.0 ** np.arange(-3.0, 1.0 + 1e-9, 0.01), 12)  # the slider's positions: 0.001 .. 10, 401 values


def check_settings(optimizer, lr, steps, momentum=MOMENTUM):
    """Raise ValueError/TypeError unless the settings are usable (the lab clamps before calling)."""
    require_choice("optimizer", optimizer, OPTIMIZERS)
    require_number("lr", lr, 0, low_open=True)
    require_int("steps", steps, 1, MAX_STEPS)
    require_number("momentum", momentum, 0.0, 1.0, high_open=True)


def _check_lrs(lrs, width):
    lrs = np.asarray(lrs, dtype=np.float64).ravel()
    if not 1 <= lrs.size <= width:
        raise ValueError(f"expected 1 to {width} learning rates, got {lrs.size}")
    if not np.all(np.isfinite(lrs) & (lrs > 0)):
        raise ValueError("learning rates must be finite and > 0")
    return lrs


class _Trainer:
    """What both trainers share: ``sweep`` (the batch) and ``train`` (one learning rate, a column of it)."""

    width = len(LR_GRID)

    def train(self, optimizer, lr, steps, start=(0.0, 0.0), momentum=MOMENTUM):
        """Train one learning rate; return a Run."""
        check_settings(optimizer, lr, steps, momentum)
        return self.sweep(optimizer, [lr], steps, start, momentum).run(0)

    def sweep(self, optimizer, lrs, steps, start=(0.0, 0.0), momentum=MOMENTUM):
        """Train every learning rate of ``lrs`` (default: the slider's grid) from ``start``; return a Sweep."""
        lrs = LR_GRID if lrs is None else _check_lrs(lrs, self.width)
        check_settings(optimizer, float(lrs[0]), steps, momentum)
        start = np.asarray(start, dtype=np.float64)
        if start.shape != (2,) or not np.all(np.isfinite(start)):
            raise ValueError(f"start must be a finite pair (w, b), got {start.tolist()}")
        padded = np.concatenate([lrs, np.full(self.width - lrs.size, lrs[-1])])  # one batch shape: no recompile
        losses, paths = self._batch(optimizer, padded, steps, start, momentum)
        k = lrs.size
        return Sweep(optimizer, lrs, losses[:, :k], paths[:, :, :k], start,
                     momentum if optimizer == "Momentum" else None)


class NumpyTrainer(_Trainer):
    """The same batched updates in float32 numpy, one Python loop iteration per step (the speed reference)."""

    name = "numpy"

    def __init__(self, x, y):
        check_xy(x, y)
        self.data = (x.copy(), y.copy())
        self._a = np.hstack([x, np.ones_like(x)])  # rows (x_i, 1): predictions = a @ theta
        self._y = y

    def is_compiled(self, optimizer):
        return True

    def compile(self, optimizer):
        pass

    def _batch(self, optimizer, lrs, steps, start, momentum):
        a, y, n = self._a, self._y, np.float32(len(self._y))
        theta = np.repeat(start.astype(np.float32)[:, None], lrs.size, axis=1)
        m = np.zeros_like(theta)
        v = np.zeros_like(theta)
        b1p = b2p = np.float32(1.0)
        lr = lrs.astype(np.float32)[None, :]
        beta = np.float32(momentum)
        losses = np.empty((steps, lrs.size), np.float32)
        paths = np.empty((steps + 1, 2, lrs.size), np.float32)
        paths[0] = theta
        with np.errstate(all="ignore"):  # a diverging run overflows to inf/NaN: that is the lesson
            for k in range(steps):
                residual = a @ theta - y
                losses[k] = np.einsum("nk,nk->k", residual, residual) / n
                grad = np.float32(2.0) * (a.T @ residual) / n
                if optimizer == "SGD":
                    theta = theta - lr * grad
                elif optimizer == "Momentum":
                    m = beta * m + grad
                    theta = theta - lr * m
                else:
                    m = m + (grad - m) * np.float32(1 - BETA1)
                    v = v + (grad * grad - v) * np.float32(1 - BETA2)
                    b1p, b2p = b1p * np.float32(BETA1), b2p * np.float32(BETA2)
                    step = lr * (np.sqrt(np.float32(1) - b2p) / (np.float32(1) - b1p))
                    theta = theta - step * m / (np.sqrt(v) + np.float32(EPS))
                paths[k + 1] = theta
        return losses, paths


class MindSporeTrainer(_Trainer):
    """Train with MindSpore: one compiled, batched chunk of ``chunk`` steps per optimizer."""

    name = "MindSpore"

    def __init__(self, x, y, chunk=25):
        check_xy(x, y)
        require_int("chunk", chunk, 1, 200)
        import mindspore as ms

        self._ms = ms
        self.chunk = chunk
        self.data = (x.copy(), y.copy())  # what it trains on: the lab draws the loss surface of this data
        self._a = ms.Tensor(np.hstack([x, np.ones_like(x)]))  # (n, 2) float32
        self._y = ms.Tensor(y)
        self._functions = {}  # optimizer -> its jit function (compiled on the first call)
        self._compiled = set()

    def with_data(self, x, y):
        """A trainer for other data of the same shape that shares this one's compiled functions."""
        check_xy(x, y)
        if x.shape != tuple(self._y.shape):
            raise ValueError(f"with_data needs data of shape {tuple(self._y.shape)} (other shapes recompile), "
                             f"got {x.shape}")
        import copy

        other = copy.copy(self)
        other.data = (x.copy(), y.copy())
        other._a = self._ms.Tensor(np.hstack([x, np.ones_like(x)]))
        other._y = self._ms.Tensor(y)
        return other

    def is_compiled(self, optimizer):
        return optimizer in self._compiled

    def compile(self, optimizer):
        """Compile the optimizer's batched chunk now (about a second) instead of on its first sweep."""
        require_choice("optimizer", optimizer, OPTIMIZERS)
        if optimizer not in self._compiled:
            self._batch(optimizer, LR_GRID, 1, np.zeros(2), MOMENTUM)

    def _batch(self, optimizer, lrs, steps, start, momentum):
        ms = self._ms
        fn = self._function(optimizer)
        theta = ms.Tensor(np.repeat(start.astype(np.float32)[:, None], lrs.size, axis=1))
        zeros = ms.Tensor(np.zeros((2, lrs.size), np.float32))
        one = ms.Tensor(1.0, ms.float32)
        state = [theta, zeros, zeros, one, one]
        lr = ms.Tensor(lrs.astype(np.float32)[None, :])  # Tensors: no recompile for new values
        beta = ms.Tensor(momentum, ms.float32)
        chunks = []
        for _ in range(-(-steps // self.chunk)):  # each chunk starts from the state the last one returned
            losses, path, *state = fn(self._a, self._y, *state, lr, beta)
            chunks.append((losses, path))
        self._compiled.add(optimizer)
        losses = np.concatenate([c[0].asnumpy() for c in chunks])[:steps]
        paths = np.concatenate([theta.asnumpy()[None]] + [c[1].asnumpy() for c in chunks])[:steps + 1]
        return losses, paths

    def _function(self, optimizer):
        if optimizer in self._functions:
            return self._functions[optimizer]
        ms = self._ms
        ops = ms.ops
        chunk = self.chunk

        def total_mse(theta, a, y):  # the K models' losses summed: its gradient is each model's own
            return ops.sum(ops.mean(ops.square(ops.matmul(a, theta) - y), axis=0))

        gradient = ms.grad(total_mse, grad_position=0)  # MindSpore's autodiff, as in ms.value_and_grad

        def sgd(theta, m, v, b1p, b2p, grad, lr, beta):  # nn.SGD: p -= lr * g
            return theta - lr * grad, m, v, b1p, b2p

        def momentum(theta, m, v, b1p, b2p, grad, lr, beta):  # nn.Momentum: m = beta m + g; p -= lr m
            m = m * beta + grad
            return theta - lr * m, m, v, b1p, b2p

        def adam(theta, m, v, b1p, b2p, grad, lr, beta):  # nn.Adam, bias correction folded into the step size
            m = m + (grad - m) * (1 - BETA1)
            v = v + (grad * grad - v) * (1 - BETA2)
            b1p = b1p * BETA1
            b2p = b2p * BETA2
            step = lr * (ops.sqrt(1 - b2p) / (1 - b1p))
            return theta - step * m / (ops.sqrt(v) + EPS), m, v, b1p, b2p

        update = {"SGD": sgd, "Momentum": momentum, "Adam": adam}[optimizer]

        def run_chunk(a, y, theta, m, v, b1p, b2p, lr, beta):
            thetas, losses = [], []
            for _ in range(chunk):  # unrolled at compile time
                thetas.append(theta)
                # each model's loss before its step (the compiler shares this forward pass with the gradient's)
                losses.append(ops.mean(ops.square(ops.matmul(a, theta) - y), axis=0))
                theta, m, v, b1p, b2p = update(theta, m, v, b1p, b2p, gradient(theta, a, y), lr, beta)
            thetas.append(theta)
            return ops.stack(losses), ops.stack(thetas[1:]), theta, m, v, b1p, b2p

        self._functions[optimizer] = ms.jit(run_chunk)
        return self._functions[optimizer]
