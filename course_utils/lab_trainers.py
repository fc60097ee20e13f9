"""Trainers behind the learning-rate lab: MindSpore, compiled once, and a plain-numpy reference.

``MindSporeTrainer`` trains y ~ w*x + b with MindSpore's autodiff and the update rules of ``nn.SGD``,
``nn.Momentum`` (momentum 0.9) and ``nn.Adam`` (defaults), written as MindSpore ops inside one ``@ms.jit``
function per optimizer. A chunk of steps is unrolled in the graph, the learning rate and the optimizer
state are Tensor arguments, so a new learning rate never recompiles: each optimizer compiles once, on
first use (or ahead of time with ``compile``). ``NumpyTrainer`` does the same arithmetic in numpy; the
benchmark uses it as the reference for speed, the tests compare both with an independent oracle.
"""


import numpy as np

from course_utils._validate import require_choice, require_int, require_number
from course_utils.data import check_xy

OPTIMIZERS = ("SGD", "Momentum", "Adam")
MOMENTUM = 0.9  # nn.Momentum(momentum=0.9)
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8  # nn.Adam's defaults
MAX_STEPS = 1000


class Run:
    """One training run: ``losses[k]`` is the loss at step k (before its update), ``path[k]`` is (w, b)
    before step k, so ``path`` has one more row than ``losses`` (its last row is the final (w, b))."""

    def __init__(self, optimizer, lr, losses, path):
        self.optimizer = optimizer
        self.lr = float(lr)
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

    def __repr__(self):
        w, b = self.final
        return f"Run({self.optimizer}, lr={self.lr:g}, steps={self.steps}, final w={w:.4g}, b={b:.4g})"


def check_settings(optimizer, lr, steps):
    """Raise ValueError/TypeError unless the three settings are usable (the lab clamps before calling)."""
    require_choice("optimizer", optimizer, OPTIMIZERS)
    require_number("lr", lr, 0, low_open=True)
    require_int("steps", steps, 1, MAX_STEPS)


class NumpyTrainer:
    """The same updates in float32 numpy, one Python loop iteration per step (the speed reference)."""

    name = "numpy"

    def __init__(self, x, y):
        check_xy(x, y)
        self.data = (x.copy(), y.copy())
        self._a = np.hstack([x, np.ones_like(x)])  # rows (x_i, 1): prediction = a @ (w, b)
        self._y = y[:, 0]

    def is_compiled(self, optimizer):
        return True

    def compile(self, optimizer):
        pass

    def launch(self, optimizer, lr, steps, start=(0.0, 0.0)):
        return self.train(optimizer, lr, steps, start)  # numpy has nothing to overlap: the work is done here

    def collect(self, pending):
        return pending

    def train(self, optimizer, lr, steps, start=(0.0, 0.0)):
        check_settings(optimizer, lr, steps)
        a, y, n = self._a, self._y, np.float32(len(self._y))
        theta = np.asarray(start, dtype=np.float32).copy()
        m = np.zeros(2, np.float32)
        v = np.zeros(2, np.float32)
        b1p = b2p = np.float32(1.0)
        lr32 = np.float32(lr)
        losses = np.empty(steps, np.float32)
        path = np.empty((steps + 1, 2), np.float32)
        path[0] = theta
        with np.errstate(all="ignore"):  # a diverging run overflows to inf/NaN: that is the lesson
            for k in range(steps):
                residual = a @ theta - y
                losses[k] = residual @ residual / n
                grad = np.float32(2.0) * (a.T @ residual) / n
                if optimizer == "SGD":
                    theta = theta - lr32 * grad
                elif optimizer == "Momentum":
                    m = np.float32(MOMENTUM) * m + grad
                    theta = theta - lr32 * m
                else:
                    m = m + (grad - m) * np.float32(1 - BETA1)
                    v = v + (grad * grad - v) * np.float32(1 - BETA2)
                    b1p, b2p = b1p * np.float32(BETA1), b2p * np.float32(BETA2)
                    step = lr32 * np.sqrt(np.float32(1) - b2p) / (np.float32(1) - b1p)
                    theta = theta - step * m / (np.sqrt(v) + np.float32(EPS))
                path[k + 1] = theta
        return Run(optimizer, lr, losses, path)


class MindSporeTrainer:
    """Train with MindSpore: one compiled chunk of ``chunk`` steps per optimizer, called as often as needed."""

    name = "MindSpore"

    def __init__(self, x, y, chunk=50):
        check_xy(x, y)
        require_int("chunk", chunk, 1, 200)
        import mindspore as ms

        self._ms = ms
        self.chunk = chunk
        self.data = (x.copy(), y.copy())  # what it trains on: the lab draws the loss surface of this data
        self._a = ms.Tensor(np.hstack([x, np.ones_like(x)]))  # (n, 2) float32
        self._y = ms.Tensor(y)
        self._compiled = {}  # optimizer -> jit function that has run once
        self._functions = {}

    def with_data(self, x, y):
        """A trainer for other data of the same shape that shares this one's compiled functions."""
        check_xy(x, y)
        if x.shape != tuple(self._y.shape):
            raise ValueError(f"with_data needs data of shape {tuple(self._y.shape)} (other shapes recompile), "
                             f"got {x.shape}")
        other = object.__new__(MindSporeTrainer)
        other.__dict__.update(self.__dict__)
        other.data = (x.copy(), y.copy())
        other._a = self._ms.Tensor(np.hstack([x, np.ones_like(x)]))
        other._y = self._ms.Tensor(y)
        return other

    def is_compiled(self, optimizer):
        return optimizer in self._compiled

    def compile(self, optimizer):
        """Compile the optimizer's chunk function now (a few seconds) instead of on the first train()."""
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
        if optimizer not in self._compiled:
            fn = self._function(optimizer)
            fn(self._a, self._y, *self._initial_state((0.0, 0.0)), self._ms.Tensor(0.0, self._ms.float32))
            self._compiled[optimizer] = fn

    def train(self, optimizer, lr, steps, start=(0.0, 0.0)):
        """Train ``steps`` steps from ``start`` = (w, b); return a Run."""
        return self.collect(self.launch(optimizer, lr, steps, start))

    def launch(self, optimizer, lr, steps, start=(0.0, 0.0)):
        """Queue the run on MindSpore; ``collect`` waits for its result. MindSpore executes a compiled graph
        asynchronously, but each chunk needs the state the one before returned, so this returns once the
        last chunk is queued: only that one may still be running while the caller draws (the lab does)."""
        check_settings(optimizer, lr, steps)
        self.compile(optimizer)
        fn = self._compiled[optimizer]
        state = self._initial_state(start)
        lr_tensor = self._ms.Tensor(float(lr), self._ms.float32)  # a Tensor: no recompile for a new lr
        pending = []
        for _ in range(-(-steps // self.chunk)):  # each chunk starts from the state the last one returned
            chunk_records, *state = fn(self._a, self._y, *state, lr_tensor)
            pending.append(chunk_records)
        return optimizer, lr, steps, start, pending

    def collect(self, pending):
        optimizer, lr, steps, start, chunks = pending
        records = np.concatenate([chunk.asnumpy() for chunk in chunks])[:steps]  # waits for MindSpore
        path = np.vstack([np.asarray(start, dtype=np.float32)[None, :], records[:, 1:]])
        return Run(optimizer, lr, records[:, 0], path)

    def _initial_state(self, start):
        ms = self._ms
        theta = ms.Tensor(np.asarray(start, dtype=np.float32).reshape(2, 1))
        zeros = ms.Tensor(np.zeros((2, 1), np.float32))
        one = ms.Tensor(1.0, ms.float32)
        return theta, zeros, zeros, one, one

    def _function(self, optimizer):
        if optimizer in self._functions:
            return self._functions[optimizer]
        ms = self._ms
        ops = ms.ops
        chunk = self.chunk

        def mse(theta, a, y):
            return ops.mean(ops.square(ops.matmul(a, theta) - y))

        gradient = ms.grad(mse, grad_position=0)  # MindSpore's autodiff, as in ms.value_and_grad

        def sgd(theta, m, v, b1p, b2p, grad, lr):  # nn.SGD: p -= lr * g
            return theta - lr * grad, m, v, b1p, b2p

        def momentum(theta, m, v, b1p, b2p, grad, lr):  # nn.Momentum (ApplyMomentum): m = 0.9 m + g; p -= lr m
            m = m * MOMENTUM + grad
            return theta - lr * m, m, v, b1p, b2p

        def adam(theta, m, v, b1p, b2p, grad, lr):  # nn.Adam, bias correction folded into the step size
            m = m + (grad - m) * (1 - BETA1)
            v = v + (grad * grad - v) * (1 - BETA2)
            b1p = b1p * BETA1
            b2p = b2p * BETA2
            step = lr * ops.sqrt(1 - b2p) / (1 - b1p)
            return theta - step * m / (ops.sqrt(v) + EPS), m, v, b1p, b2p

        update = {"SGD": sgd, "Momentum": momentum, "Adam": adam}[optimizer]

        def run_chunk(a, y, theta, m, v, b1p, b2p, lr):
            thetas = [theta]
            for _ in range(chunk):  # unrolled at compile time
                theta, m, v, b1p, b2p = update(theta, m, v, b1p, b2p, gradient(theta, a, y), lr)
                thetas.append(theta)
            path = ops.concat(thetas, axis=1)  # (2, chunk + 1): (w, b) before each step, and the last
            # the loss at every point of the path at once: fewer kernel launches than one per step
            losses = ops.mean(ops.square(ops.matmul(a, path) - y), axis=0)
            records = ops.concat((losses[:chunk].reshape(chunk, 1), path[:, 1:].T), axis=1)
            return records, theta, m, v, b1p, b2p

        self._functions[optimizer] = ms.jit(run_chunk)
        return self._functions[optimizer]
