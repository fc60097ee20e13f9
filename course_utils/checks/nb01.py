"""Exercises of notebook 01 (MinimalNet: cells, parameters, dtypes)."""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import NONE_HINT, Exercise, Prediction, as_array, bind
from course_utils.messages import lazy, t

# Exercise 01.3 starts from numpy's default dtype, float64.
X64 = np.linspace(0.0, 1.0, 5).reshape(5, 1)


def _check_param_count(answer):
    if isinstance(answer, bool) or not isinstance(answer, (int, np.integer)):
        return t("expected a whole number, got {answer}", answer=shown(answer))
    if answer == 6:
        return t("6 counts only the weight matrix (2 x 3); nn.Dense also has a bias, one per output")
    if answer == 5:
        return t("the bias has one entry per *output* (2), not per input")
    if answer != 8:
        return t("{answer} is not it: count the weight matrix (out x in) plus the bias (out)",
                 answer=shown(answer, with_type=False))
    return None


def _check_float32(answer):
    if not isinstance(answer, np.ndarray):
        return t("expected a numpy array, got {kind}", kind=type(answer).__name__)
    if answer.dtype != np.float32:
        return t("dtype is {dtype}; MindSpore's Dense weights are float32, so the input must be too",
                 dtype=answer.dtype)
    if answer.shape != X64.shape:
        return t("shape is {shape}; Dense(1, 1) needs one column: shape {want}", shape=answer.shape, want=X64.shape)
    if not np.allclose(answer, X64, atol=1e-7):
        return t("the values changed; only the dtype should")
    return None


def _check_dense_twice(answer):
    import mindspore as ms
    from mindspore import nn, ops

    if not (isinstance(answer, type) and issubclass(answer, nn.Cell)):
        return t("expected a class that subclasses nn.Cell (not an instance), got {answer}", answer=shown(answer))
    net = answer()
    params = net.trainable_params()
    if len(params) != 2:
        return t("the net should own exactly one Dense(1, 1) (2 parameters), it has {count}: {names}",
                 count=len(params), names=[p.name for p in params])
    shapes = sorted(tuple(p.shape) for p in params)
    if shapes != [(1,), (1, 1)]:
        return t("the net should own one Dense(1, 1): a weight of shape (1, 1) and a bias of shape (1,), got "
                 "{shapes}", shapes=shapes)
    # The checker's own values: a layer initialised to w = 1, b = 0 (or w = 0) gives the same output applied
    # once or twice, so the learner's initial values could not tell the two apart.
    weight, bias = np.array([[1.5]]), np.array([-0.25])
    for p in params:
        ops.assign(p, ms.Tensor(weight if len(p.shape) == 2 else bias, ms.float32))
    x = np.array([[0.5], [-1.0], [2.0]], dtype=np.float32)
    got, problem = as_array(net(ms.Tensor(x)), t("the output of your net"))
    if problem:
        return problem
    once = x @ weight.T + bias
    twice = once @ weight.T + bias
    if got.shape != (3, 1):
        return t("output shape is {shape}, expected (3, 1)", shape=got.shape)
    if np.allclose(got, once, atol=1e-6) and not np.allclose(once, twice, atol=1e-6):
        return t("your construct applies the Dense layer once; apply the same layer to its own output")
    if not np.allclose(got, twice, rtol=1e-5, atol=1e-6):
        return t("for x = {x} expected {want}, got {got}", x=x.ravel().tolist(), want=twice.ravel().round(6).tolist(),
                 got=got.ravel().tolist())
    return None


def _check_predict(answer):
    import mindspore as ms
    from mindspore import nn, ops

    if not callable(answer) or isinstance(answer, type):
        return t("expected a function predict(net, values) (answer = predict, without calling it), got {answer}",
                 answer=shown(answer))
    net = nn.Dense(1, 1)
    # The checker's own weights, so a prediction cannot come from anywhere but this net.
    ops.assign(net.weight, ms.Tensor([[-1.25]], ms.float32))
    ops.assign(net.bias, ms.Tensor([0.75], ms.float32))
    cases = [[0.0, 0.5, 2.0, -4.0],  # Python floats: float64 once numpy sees them
             [3, 1, 2],  # Python ints
             np.linspace(-1.0, 1.0, 7)]  # a float64 array, 1-D
    for values in cases:
        got = answer(net, values)
        if got is None:
            return t("predict(net, {values}) returned None. {hint}", values=_short(values), hint=t(NONE_HINT))
        if hasattr(got, "asnumpy"):
            return t("predict returned a MindSpore Tensor; return a numpy array: the Tensor's .asnumpy() gives one "
                     "(copy it if you keep it)")
        if not isinstance(got, np.ndarray):
            return t("predict should return a numpy array, got {got}", got=shown(got))
        want = -1.25 * np.asarray(values, dtype=np.float64) + 0.75
        if got.shape == (len(want), 1):
            return t("predict(net, {values}) has shape {shape}, the net's own (n, 1) batch shape: "
                     "return one number per value, shape ({n},) (.ravel() or .reshape(-1))",
                     values=_short(values), shape=got.shape, n=len(want))
        if got.shape != want.shape:
            return t("predict(net, {values}) has shape {shape}, expected {want}: one number per value",
                     values=_short(values), shape=got.shape, want=want.shape)
        arr, problem = as_array(got, t("the predictions"))
        if problem:
            return problem
        if not np.allclose(arr, want, rtol=1e-5, atol=1e-6):
            return t("predict(net, {values}) gave {got}, but this net (w = -1.25, b = 0.75) predicts {want}: "
                     "run the net you were given on the values", values=_short(values),
                     got=np.round(arr, 4).tolist(), want=np.round(want, 4).tolist())
    return None


def _short(values):
    return shown(list(np.asarray(values).tolist()) if isinstance(values, np.ndarray) else values, with_type=False)


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
param_count = Exercise(_check_param_count, hints=[
    lazy("count the numbers the layer learns: look at the shapes of its weight and its bias"),
    lazy("nn.Dense(in, out) holds a weight of shape (out, in) and a bias of shape (out,)"),
])
float64_input = Prediction(
    lazy("The net's weight is float32. What happens when you call net(Tensor(x64)) with a float64 "
                 "batch x64 of shape (4, 1)?"),
    {"a": (lazy("MindSpore converts the batch to float32 and returns a float32 output"),
           lazy("that is what numpy and PyTorch's type promotion make many people expect, but MindSpore does not "
                "convert silently: mixing float64 and float32 in a matrix multiplication is an error")),
     "b": (lazy("The output is float64: the higher precision wins"),
           lazy("numpy would promote to float64, but MindSpore's MatMul requires both inputs to have the same "
                "dtype and refuses instead of promoting")),
     "c": (lazy("A TypeError: the input and the weight must have the same dtype"),
           lazy("MindSpore checks dtypes strictly and converts nothing for you. Convert the data once, with "
                ".astype(np.float32), before making the Tensor"))},
    answer="c")
to_float32 = Exercise(_check_float32, hints=[
    lazy("MindSpore refused the array because of its dtype: which dtype do the layer's parameters have?"),
    lazy("numpy arrays have .astype(np.float32)"),
])
asnumpy_view = Prediction(
    lazy("t = Tensor(a) made a tensor from a numpy array a. Then view = t.asnumpy(), and view[1, 0] = "
                 "9.0. What does t hold at [1, 0] afterwards?"),
    {"a": (lazy("The old value: asnumpy() returns a copy, like Tensor(a) made one"),
           lazy("Tensor(array) does copy, which makes this tempting, but asnumpy() goes the other way without "
                "copying: it returns a view of the tensor's own memory")),
     "b": (lazy("9.0: asnumpy() returns a view of the tensor's memory"),
           lazy("writing into the array writes into the tensor. The same holds for a Parameter: a history of "
                "weights recorded with asnumpy() and no copy changes as training goes on (notebook 03)")),
     "c": (lazy("An error: the array returned by asnumpy() is read-only"),
           lazy("MindSpore does not mark it read-only; the write succeeds, and goes straight into the tensor"))},
    answer="b")
dense_twice = Exercise(_check_dense_twice, hints=[
    lazy("reuse means one layer object: create it once and call it more than once"),
    lazy("create one nn.Dense(1, 1) in __init__ and call it twice in construct"),
])
predict = Exercise(_check_predict, hints=[
    lazy("the values arrive as a Python list or a 1-D array: what dtype and shape does a Dense(1, 1) layer "
         "accept?"),
    lazy("np.asarray(values, dtype=np.float32).reshape(-1, 1), then Tensor(...), then net(...), then "
         ".asnumpy().ravel()"),
])

bind(globals())
