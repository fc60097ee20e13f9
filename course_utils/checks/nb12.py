"""Exercises of notebook 12 (capstone: a small MLP for y = sin(3x))."""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import Exercise, as_array

# An independent held-out grid: the noiseless target, never seen in training.
GRID = np.linspace(-1.0, 1.0, 201, dtype=np.float32).reshape(-1, 1)
TARGET = np.sin(3.0 * GRID.astype(np.float64))


def _check_mlp_class(answer):
    import mindspore as ms
    from mindspore import nn, ops

    if not (isinstance(answer, type) and issubclass(answer, nn.Cell)):
        return f"expected a class that subclasses nn.Cell (not an instance), got {shown(answer)}"
    net = answer()
    shapes = [tuple(p.shape) for p in net.trainable_params()]
    # The checker's own random values (its own generator: the learner's global seed is left alone). A net
    # initialised to zeros, or to any symmetric values, outputs a constant and would look like a straight line.
    rng = np.random.default_rng(1)
    for p in net.trainable_params():
        ops.assign(p, ms.Tensor(rng.normal(0.0, 0.7, tuple(p.shape)), p.dtype))
    out, problem = as_array(net(ms.Tensor(GRID)), "the output of your net")
    if problem:
        return problem
    if out.shape != GRID.shape:
        return f"for input of shape {GRID.shape} the output has shape {out.shape}; end with Dense(hidden, 1)"
    if len(shapes) < 4:
        return f"one Dense layer is MinimalNet again (a straight line); add a hidden layer. Parameters: {shapes}"
    if not np.all(np.isfinite(out)):
        return "the output holds NaN or inf for inputs in [-1, 1]"
    values = out.ravel()
    line = np.polyval(np.polyfit(GRID.ravel(), values, 1), GRID.ravel())
    if np.max(np.abs(values - line)) < 1e-6:
        return "the output is still a straight line in x: put a nonlinearity such as nn.Tanh() between the layers"
    return None


def _check_trained_net(answer):
    import mindspore as ms
    from mindspore import nn

    if not isinstance(answer, nn.Cell):
        return f"expected your trained network (a Cell instance), got {type(answer).__name__}"
    pred, problem = as_array(answer(ms.Tensor(GRID)), "the output of your net")
    if problem:
        return problem
    if pred.shape != GRID.shape:
        return f"for input of shape {GRID.shape} the output has shape {pred.shape}"
    if not np.all(np.isfinite(pred)):
        return "your net predicts NaN or inf: training diverged. Lower the learning rate and train again"
    mse = float(np.mean((pred - TARGET) ** 2))
    line_mse = float(np.mean((np.polyval(np.polyfit(GRID.ravel(), TARGET.ravel(), 1), GRID.ravel())
                              - TARGET.ravel()) ** 2))
    if len(answer.trainable_params()) <= 2:
        return f"a single Dense layer fits at best a straight line (MSE {line_mse:.3f} on the grid); use the MLP"
    if not mse <= 0.01:
        return (f"MSE against sin(3x) on a fresh grid is {mse:.4f}; it needs to be below 0.01. "
                f"Train longer or try another learning rate")
    return None


mlp_class = Exercise("12.1", _check_mlp_class, hints=[
    "two hidden layers with a smooth activation between them, in an nn.SequentialCell",
    "nn.SequentialCell(nn.Dense(1, 32), nn.Tanh(), nn.Dense(32, 32), nn.Tanh(), nn.Dense(32, 1))",
])
trained_net = Exercise("12.2", _check_trained_net, hints=[
    "a non-linear fit needs more steps than the line of 03: think of the optimizer, its lr and epochs",
    "Adam with lr around 0.01 for a few dozen epochs of mini-batches of 32 works",
])
