"""Exercises of notebook 01 (MinimalNet: cells, parameters, dtypes)."""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import Exercise, FunctionExercise, Incorrect, Prediction, array, bind, close
from course_utils.messages import lazy, t

# Exercise 01.3 starts from numpy's default dtype, float64.
X64 = np.linspace(0.0, 1.0, 5).reshape(5, 1)


_COUNT_MISTAKES = {6: lazy("6 counts only the weight matrix (2 x 3): the layer holds something besides the weight "
                           "matrix"),
                   5: lazy("5 counts one number per input and one per output: look again at the shape of the "
                           "weight"),
                   9: lazy("9 counts the weight matrix and one more number per input: look again at the shape of "
                           "the bias")}


def _check_param_count(answer):
    if isinstance(answer, bool) or not isinstance(answer, (int, np.integer)):
        raise Incorrect(t("expected a whole number, got {answer}", answer=shown(answer)))
    if answer in _COUNT_MISTAKES:
        raise Incorrect(t(_COUNT_MISTAKES[int(answer)]))
    if answer != 8:
        raise Incorrect(t("{answer} is not it: count the entries of every trainable Parameter of nn.Dense(3, 2)",
                          answer=shown(answer, with_type=False)))


def _check_float32(answer):
    if not isinstance(answer, np.ndarray):
        raise Incorrect(t("expected a numpy array, got {kind}", kind=type(answer).__name__))
    if answer.dtype != np.float32:
        raise Incorrect(t("dtype is {dtype}; MindSpore's Dense weights are float32, so the input must be too",
                          dtype=answer.dtype))
    if answer.shape != X64.shape:
        raise Incorrect(t("shape is {shape}; Dense(1, 1) needs one column: shape {want}", shape=answer.shape,
                          want=X64.shape))
    if not close(answer, X64, rtol=1e-5, atol=1e-7):
        raise Incorrect(t("the values changed; only the dtype should"))


def _check_dense_twice(answer):
    import mindspore as ms
    from mindspore import nn, ops

    if not issubclass(answer, nn.Cell):
        raise Incorrect(t("{answer} is not a Cell: look at how section 1 defines MinimalNet", answer=shown(answer)))
    net = answer()
    params = net.trainable_params()
    if len(params) != 2:
        raise Incorrect(t("the net should own exactly one Dense(1, 1) (2 parameters), it has {count}: {names}",
                          count=len(params), names=[p.name for p in params]))
    shapes = sorted(tuple(p.shape) for p in params)
    if shapes != [(1,), (1, 1)]:
        raise Incorrect(t("the net should own one Dense(1, 1): a weight of shape (1, 1) and a bias of shape (1,), "
                          "got {shapes}", shapes=shapes))
    # The checker's own values: a layer initialised to w = 1, b = 0 (or w = 0) gives the same output applied
    # once or twice, so the learner's initial values could not tell the two apart.
    weight, bias = np.array([[1.5]]), np.array([-0.25])
    for p in params:
        ops.assign(p, ms.Tensor(weight if len(p.shape) == 2 else bias, ms.float32))
    x = np.array([[0.5], [-1.0], [2.0]], dtype=np.float32)
    got = array(net(ms.Tensor(x)), t("the output of your net"))
    once = x @ weight.T + bias
    twice = once @ weight.T + bias
    if got.shape != (3, 1):
        raise Incorrect(t("output shape is {shape}, expected (3, 1)", shape=got.shape))
    if close(got, once, rtol=1e-5, atol=1e-6):
        raise Incorrect(t("your construct applies the Dense layer once: for x = {x} it gives {got}, expected {want}",
                          x=x.ravel().tolist(), got=got.ravel().round(6).tolist(),
                          want=twice.ravel().round(6).tolist()))
    if not close(got, twice, rtol=1e-5, atol=1e-6):
        raise Incorrect(t("for x = {x} expected {want}, got {got}", x=x.ravel().tolist(),
                          want=twice.ravel().round(6).tolist(), got=got.ravel().tolist()))


def _check_predict(answer):
    import mindspore as ms
    from mindspore import nn, ops

    net = nn.Dense(1, 1)
    # The checker's own weights, so a prediction cannot come from anywhere but this net.
    ops.assign(net.weight, ms.Tensor([[-1.25]], ms.float32))
    ops.assign(net.bias, ms.Tensor([0.75], ms.float32))
    cases = [[0.0, 0.5, 2.0, -4.0],  # Python floats: float64 once numpy sees them
             [3, 1, 2],  # Python ints
             np.linspace(-1.0, 1.0, 7)]  # a float64 array, 1-D
    for values in cases:
        got, want = predict.call(answer, net, values), -1.25 * np.asarray(values, dtype=np.float64) + 0.75
        shown_values = shown(list(np.asarray(values).tolist()), with_type=False)
        if hasattr(got, "asnumpy"):
            raise Incorrect(t("predict returned a MindSpore Tensor; the exercise asks for a numpy array (section 5 "
                              "converts between the two)"))
        if not isinstance(got, np.ndarray):
            raise Incorrect(t("predict should return a numpy array, got {got}", got=shown(got)))
        if got.shape == (len(want), 1):
            raise Incorrect(t("predict(net, {values}) has shape {shape}, the net's own (n, 1) batch shape; expected "
                              "({n},), one number per value",
                              values=shown_values, shape=got.shape, n=len(want)))
        if got.shape != want.shape:
            raise Incorrect(t("predict(net, {values}) has shape {shape}, expected {want}: one number per value",
                              values=shown_values, shape=got.shape, want=want.shape))
        got = array(got, t("the predictions"))
        if not close(got, want, rtol=1e-5, atol=1e-6):
            raise Incorrect(t("predict(net, {values}) gave {got}, but this net predicts {want}: run the net you "
                              "were given on the values", values=shown_values,
                              got=np.round(got, 4).tolist(), want=np.round(want, 4).tolist()))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
param_count = Exercise(_check_param_count, hints=[
    lazy("count the numbers the layer learns: every entry of every trainable Parameter it holds"),
    lazy("nn.Dense(in, out) holds a weight of shape (out, in) and a bias of shape (out,)"),
])
float64_input = Prediction(
    lazy("The net's weight is float32. What happens when you call net(Tensor(x64)) with a float64 batch x64 of shape "
         "(4, 1)?"),
    {"a": (lazy("MindSpore converts the batch to float32 and returns a float32 output"),
           lazy("that is what numpy and PyTorch's type promotion make many people expect, but MindSpore does not "
                "convert silently: mixing float64 and float32 in a matrix multiplication is an error")),
     "b": (lazy("The output is float64: the higher precision wins"),
           lazy("numpy would promote to float64, but MindSpore's MatMul requires both inputs to have the same "
                "dtype and refuses instead of promoting")),
     "c": (lazy("A TypeError: the input and the weight must have the same dtype"),
           lazy("MindSpore checks dtypes strictly and converts nothing for you. Convert the data once, to float32, "
                "before making the Tensor"))},
    answer="c")
to_float32 = Exercise(_check_float32, hints=[
    lazy("MindSpore refused the array because of its dtype: which dtype do the layer's parameters have?"),
    lazy("numpy converts an array to another dtype, its values unchanged, with a method of the array; the dtype "
         "to ask for is the one section 2 printed for the layer's parameters"),
])
asnumpy_view = Prediction(
    lazy("t = Tensor(a) made a tensor from a numpy array a. Then view = t.asnumpy(), and view[1, 0] = 9.0. What does "
         "t hold at [1, 0] afterwards?"),
    {"a": (lazy("The old value: asnumpy() returns a copy, like Tensor(a) made one"),
           lazy("Tensor(array) does copy, which makes this tempting, but asnumpy() goes the other way without "
                "copying: it returns a view of the tensor's own memory")),
     "b": (lazy("9.0: asnumpy() returns a view of the tensor's memory"),
           lazy("writing into the array writes into the tensor. The same holds for a Parameter: a history of "
                "weights recorded with asnumpy() and no copy changes as training goes on (notebook 03)")),
     "c": (lazy("An error: the array returned by asnumpy() is read-only"),
           lazy("MindSpore does not mark it read-only; the write succeeds, and goes straight into the tensor"))},
    answer="b")
dense_twice = FunctionExercise(_check_dense_twice, signature="DenseTwice()", cls=True, hints=[
    lazy("reuse means one layer object: create it once and call it more than once"),
    lazy("the layer is created in __init__, as in section 1; in construct, the output of the first call is the "
         "input of the second"),
])
predict = FunctionExercise(_check_predict, signature="predict(net, values)", hints=[
    lazy("the values arrive as a Python list or a 1-D array: what dtype and shape does a Dense(1, 1) layer "
         "accept?"),
    lazy("on the way in, the values become a float32 batch of shape (n, 1) (section 4 showed what fails "
         "otherwise); on the way out, the net's (n, 1) output becomes the 1-D numpy array the exercise asks for"),
])

bind(globals())
