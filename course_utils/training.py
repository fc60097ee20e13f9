"""The course's one training helper, ``train(net, x, y, lr, steps=100, optimizer=None, clip=None)``.

Notebook 03 writes it as lesson code (its section on ``ms.value_and_grad``); the later notebooks import it
from here. tests/test_training.py keeps the two copies identical, so what a learner reads in notebook 03 is
what the other notebooks run. Everything below the imports is that notebook cell, unchanged.
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops


def flat_params(net):
    """All trainable parameters of `net` as one flat numpy array (a copy, not a view)."""
    return np.concatenate([p.asnumpy().ravel() for p in net.trainable_params()])


def train(net, x, y, lr, steps=100, optimizer=None, clip=None):
    """Train `net` on all of x, y (numpy float32 arrays of shape (n, 1)) for `steps` steps, MSE loss.

    The optimizer is nn.SGD(lr) unless you pass one (nn.Momentum, nn.Adam, or one that already stepped).
    clip: clip the gradients to this global norm. Returns a dict of numpy arrays: "loss" (each step's loss,
    before its update), "grad_norm" (before clipping) and "params" (before the first step, then after each).
    """
    loss_fn = nn.MSELoss()
    if optimizer is None:
        optimizer = nn.SGD(net.trainable_params(), learning_rate=lr)

    def forward(data, label):
        return loss_fn(net(data), label)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    data, label = Tensor(x), Tensor(y)
    history = {"loss": [], "grad_norm": [], "params": [flat_params(net)]}
    for _ in range(steps):
        loss, grads = grad_fn(data, label)
        history["grad_norm"].append(np.sqrt(sum(float((g.asnumpy().astype(np.float64) ** 2).sum()) for g in grads)))
        if clip is not None:
            grads = ops.clip_by_global_norm(grads, clip)
        optimizer(grads)
        history["loss"].append(loss.asnumpy().item())
        history["params"].append(flat_params(net))
    return {key: np.array(values) for key, values in history.items()}
