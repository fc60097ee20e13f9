"""Exercises of notebook 01 (MinimalNet: cells, parameters, dtypes)."""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import Exercise, as_array

# Exercise 01.2 starts from numpy's default dtype, float64.
X64 = np.linspace(0.0, 1.0, 5).reshape(5, 1)


def _check_param_count(answer):
    if isinstance(answer, bool) or not isinstance(answer, (int, np.integer)):
        return f"expected a whole number, got {shown(answer)}"
    if answer == 6:
        return "6 counts only the weight matrix (2 x 3); nn.Dense also has a bias, one per output"
    if answer == 5:
        return "the bias has one entry per *output* (2), not per input"
    if answer != 8:
        return f"{shown(answer, with_type=False)} is not it: count the weight matrix (out x in) plus the bias (out)"
    return None


def _check_float32(answer):
    if not isinstance(answer, np.ndarray):
        return f"expected a numpy array, got {type(answer).__name__}"
    if answer.dtype != np.float32:
        return f"dtype is {answer.dtype}; MindSpore's Dense weights are float32, so the input must be too"
    if answer.shape != X64.shape:
        return f"shape is {answer.shape}; Dense(1, 1) needs one column: shape {X64.shape}"
    if not np.allclose(answer, X64, atol=1e-7):
        return "the values changed; only the dtype should"
    return None


def _check_dense_twice(answer):
    import mindspore as ms
    from mindspore import nn, ops

    if not (isinstance(answer, type) and issubclass(answer, nn.Cell)):
        return f"expected a class that subclasses nn.Cell (not an instance), got {shown(answer)}"
    net = answer()
    params = net.trainable_params()
    if len(params) != 2:
        return (f"the net should own exactly one Dense(1, 1) (2 parameters), it has {len(params)}: "
                f"{[p.name for p in params]}")
    shapes = sorted(tuple(p.shape) for p in params)
    if shapes != [(1,), (1, 1)]:
        return f"the net should own one Dense(1, 1): a weight of shape (1, 1) and a bias of shape (1,), got {shapes}"
    # The checker's own values: a layer initialised to w = 1, b = 0 (or w = 0) gives the same output applied
    # once or twice, so the learner's initial values could not tell the two apart.
    weight, bias = np.array([[1.5]]), np.array([-0.25])
    for p in params:
        ops.assign(p, ms.Tensor(weight if len(p.shape) == 2 else bias, ms.float32))
    x = np.array([[0.5], [-1.0], [2.0]], dtype=np.float32)
    got, problem = as_array(net(ms.Tensor(x)), "the output of your net")
    if problem:
        return problem
    once = x @ weight.T + bias
    twice = once @ weight.T + bias
    if got.shape != (3, 1):
        return f"output shape is {got.shape}, expected (3, 1)"
    if np.allclose(got, once, atol=1e-6) and not np.allclose(once, twice, atol=1e-6):
        return "your construct applies the Dense layer once; apply the same layer to its own output"
    if not np.allclose(got, twice, rtol=1e-5, atol=1e-6):
        return f"for x = {x.ravel().tolist()} expected {twice.ravel().round(6).tolist()}, got {got.ravel().tolist()}"
    return None


param_count = Exercise("01.1", _check_param_count, hints=[
    "count the numbers the layer learns: look at the shapes of its weight and its bias",
    "nn.Dense(in, out) holds a weight of shape (out, in) and a bias of shape (out,)",
])
to_float32 = Exercise("01.2", _check_float32, hints=[
    "MindSpore refused the array because of its dtype: which dtype do the layer's parameters have?",
    "numpy arrays have .astype(np.float32)",
])
dense_twice = Exercise("01.3", _check_dense_twice, hints=[
    "reuse means one layer object: create it once and call it more than once",
    "create one nn.Dense(1, 1) in __init__ and call it twice in construct",
])
