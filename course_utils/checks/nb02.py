"""Exercises of notebook 02 (WithLossCell and loss functions)."""

import functools

import numpy as np

from course_utils._validate import shown
from course_utils.checks._nets import one_neuron
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    bind,
    close,
    name_the_mistake,
    number,
    series,
)
from course_utils.messages import lazy, t

# Exercise 02.3: fixed predictions and labels, so the answer does not depend on a random net.
PREDICTIONS = np.array([[0.4], [1.3], [1.5], [3.1]], dtype=np.float32)
LABELS = np.array([[1.0], [1.0], [2.2], [2.0]], dtype=np.float32)  # L1 0.675: no number the notebook prints


def _l1_mistake(kind):
    """What a typical mistake gives on PREDICTIONS and LABELS (kind "mae" is the right answer)."""
    diff = PREDICTIONS.astype(np.float64) - LABELS
    return {"mae": np.mean(np.abs(diff)), "mse": np.mean(diff ** 2), "sum": np.sum(np.abs(diff)),
            "signed": np.mean(diff)}[kind]


def _check_l1_by_hand(answer):
    value = number(answer, t("your answer"))
    name_the_mistake(value, _l1_mistake, [
        (dict(kind="mse"), lazy("{value:.4f} is the mean *squared* error; L1 takes the absolute difference")),
        (dict(kind="sum"), lazy("{value:.4f} is the sum; nn.L1Loss() averages over the samples (reduction='mean')")),
        (dict(kind="signed"), lazy("positive and negative errors cancelled out: take np.abs of the difference first")),
    ], same=np.isclose, value=value)
    if not np.isclose(value, _l1_mistake("mae")):
        raise Incorrect(t("{value:.4f} is not the mean absolute difference of PREDICTIONS and LABELS", value=value))


# Exercise 02.4: a loss of the learner's own, as a Cell, checked on the checker's net and data.
LC_X = np.array([[-1.0], [0.0], [0.5], [1.5], [3.0]], dtype=np.float32)
LC_Y = np.array([[0.5], [0.2], [1.5], [0.5], [4.5]], dtype=np.float32)
LC_START = (1.2, -0.3)  # the checker's net: w, b


def _log_cosh_oracle(kind="mean"):
    """(loss, dloss/dw, dloss/db) of the checker's net on LC_X, LC_Y in float64, for the log-cosh loss and the
    typical mistakes ("sum": summed, "cosh": no log, "mse": the mean squared error)."""
    x, y = LC_X.astype(np.float64).ravel(), LC_Y.astype(np.float64).ravel()
    e = LC_START[0] * x + LC_START[1] - y
    value, slope = {"mean": (np.log(np.cosh(e)), np.tanh(e)), "sum": (np.log(np.cosh(e)), np.tanh(e)),
                    "cosh": (np.cosh(e), np.sinh(e)), "mse": (e ** 2, 2 * e)}[kind]
    scale = 1.0 if kind == "sum" else 1.0 / len(x)
    return scale * np.array([value.sum(), (slope * x).sum(), slope.sum()])


def _check_log_cosh(answer):
    import mindspore as ms
    from mindspore import nn

    if not issubclass(answer, nn.Cell):
        raise Incorrect(t("{answer} is not a Cell: write class LogCoshLoss(nn.Cell)", answer=shown(answer)))
    net = one_neuron(*LC_START)
    loss_net = nn.WithLossCell(net, answer())
    data, label = ms.Tensor(LC_X), ms.Tensor(LC_Y)
    out = loss_net(data, label)
    if not isinstance(out, ms.Tensor):
        raise Incorrect(t("construct(prediction, label) should return a MindSpore Tensor, got {kind}: compute the "
                          "loss with MindSpore operations on the Tensors it receives", kind=type(out).__name__))
    if out.size == len(LC_X):
        raise Incorrect(t("construct returns one loss per sample (shape {shape}): reduce them to one number, the "
                          "mean over the samples", shape=tuple(out.shape)))
    got = number(out, t("the loss"))
    name_the_mistake(got, lambda kind: _log_cosh_oracle(kind)[0], [
        (dict(kind="sum"), lazy("{got:.5f} is the sum over the samples; the loss asked for is their mean")),
        (dict(kind="cosh"), lazy("{got:.5f} is the mean of cosh(prediction - label): take its log")),
        (dict(kind="mse"), lazy("{got:.5f} is the mean squared error; the exercise asks for log(cosh(...))")),
    ], same=functools.partial(np.isclose, rtol=1e-5), got=got)
    want = _log_cosh_oracle()
    if not np.isclose(got, want[0], rtol=1e-5):
        raise Incorrect(t("on the check's own net and data the loss should be {want:.5f}, yours gives {got:.5f}",
                          want=want[0], got=got))
    grads = ms.grad(loss_net, None, net.trainable_params())(data, label)
    slopes = [float(np.sum(g.asnumpy())) for g in grads]
    if not close(slopes, want[1:], rtol=1e-4, atol=1e-6):
        raise Incorrect(t("the loss value is right, but MindSpore's gradients through your loss are {got} (w, b), "
                          "numpy's are {want}: compute the loss with MindSpore operations on the Tensors (not numpy "
                          "on .asnumpy()), so that ms.grad can differentiate it", got=np.round(slopes, 5).tolist(),
                          want=np.round(want[1:], 5).tolist()))


# Exercise 02.5: the checker's own data and weights, not the lesson's.
CURVE_X = np.linspace(-1.0, 2.0, 9, dtype=np.float32).reshape(-1, 1)
CURVE_Y = (-0.5 * CURVE_X + 1.0 + 0.1 * np.sin(7.0 * CURVE_X)).astype(np.float32)
CURVE_WEIGHTS = np.array([-2.0, -0.5, 0.0, 1.5, 3.0])
START_WEIGHT, START_BIAS = 3.0, 0.4  # where the checker's net starts: the bias is not 0
LOSS_NAMES = {"mse": lazy("mse"), "mse_sum": lazy("mse sum"), "l1": lazy("l1")}  # _curve's kinds, in a message


def _curve(loss, bias=0.0, twice=False, weights=CURVE_WEIGHTS, x=CURVE_X, y=CURVE_Y):
    """The loss for each weight with the bias fixed, in float64 numpy (the oracle); ``twice``: the loss cell
    called with predictions, so the net runs twice."""
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    out = []
    for w in weights:
        e = w * (w * x + bias) + bias - y if twice else w * x + bias - y
        out.append({"mse": np.mean(e ** 2), "mse_sum": np.sum(e ** 2), "l1": np.mean(np.abs(e))}[loss])
    return np.array(out)


_CURVE_MISTAKES = [  # (settings of _curve, message)
    (dict(bias=START_BIAS), lazy("with {name} your curve is the loss with the bias left at the net's {bias}: set "
                                 "the bias to 0 as well (ops.assign on net.dense.bias)")),
    (dict(twice=True), lazy("your curve is the loss of net(net(x)): call the loss cell with the inputs, "
                            "cell(Tensor(x), Tensor(y)), not with predictions (prediction 02.1)")),
]
_OTHER_LOSS = lazy("with {name} your curve is the {other} loss: use the loss_fn you were given")


def _counting_neuron(w, b):
    """A one-neuron net like one_neuron(w, b) that counts how often it runs (a numpy curve never runs it)."""
    import mindspore as ms
    from mindspore import nn, ops

    class CountingNeuron(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1)
            self.calls = 0

        def construct(self, x):
            self.calls += 1
            return self.dense(x)

    net = CountingNeuron()
    ops.assign(net.dense.weight, ms.Tensor([[w]], ms.float32))
    ops.assign(net.dense.bias, ms.Tensor([b], ms.float32))
    return net


def _check_loss_curve(answer):
    from mindspore import nn

    for loss_fn, kind, name in ((nn.L1Loss(), "l1", "nn.L1Loss()"),
                                (nn.MSELoss(reduction="sum"), "mse_sum", 'nn.MSELoss(reduction="sum")')):
        net = _counting_neuron(START_WEIGHT, START_BIAS)
        got = loss_curve.call(answer, net, loss_fn, CURVE_WEIGHTS, CURVE_X, CURVE_Y)
        curve, want = series(got, t("what loss_curve returned (one loss per weight)"), len(CURVE_WEIGHTS)), _curve(kind)
        if close(curve, want):
            if net.calls < len(CURVE_WEIGHTS):
                raise Incorrect(t("the numbers are right, but the net you were given ran {calls} time(s) for {n} "
                                  "weights: compute each loss with MindSpore, through a WithLossCell around that net",
                                  calls=net.calls, n=len(CURVE_WEIGHTS)))
            last = (net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item())
            if not close(last, (CURVE_WEIGHTS[-1], 0.0)):
                raise Incorrect(t("the numbers are right, but the net's Parameters end at w = {w:.4f}, b = {b:.4f}, "
                                  "not at the last weight and 0: write each w into net.dense.weight (and 0 into "
                                  "net.dense.bias), then run the loss cell", w=last[0], b=last[1]))
            continue
        if close(curve, np.full_like(curve, curve[0]), rtol=1e-6, atol=1e-9):
            raise Incorrect(t("every loss is the same: the weight never changed. Write each w into the Parameter "
                              "with ops.assign(net.dense.weight, Tensor([[w]], ms.float32)) before computing the "
                              "loss"))
        name_the_mistake(curve, functools.partial(_curve, kind), _CURVE_MISTAKES, name=name, bias=START_BIAS)
        for other in LOSS_NAMES:  # its own kind cannot match here: that curve was right
            name_the_mistake(curve, _curve, [(dict(loss=other), _OTHER_LOSS)], name=name, other=t(LOSS_NAMES[other]))
        raise Incorrect(t("with loss_fn = {name}, expected {want} for weights {weights} (bias 0), got {got}",
                          name=name, want=np.round(want, 4).tolist(), weights=CURVE_WEIGHTS.tolist(),
                          got=np.round(curve, 4).tolist()))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
called_with_predictions = Prediction(
    lazy("loss_net = nn.WithLossCell(net, nn.MSELoss()). What does loss_net(net(X), Y) do, called with the "
         "predictions instead of the inputs?"),
    {"a": (lazy("It raises an error: WithLossCell expects inputs, not predictions"),
           lazy("nothing can tell the two apart: predictions have the same shape and dtype as the inputs here, so "
                "MindSpore has no reason to complain")),
     "b": (lazy("It returns the same loss: WithLossCell notices it already has predictions"),
           lazy("WithLossCell does not inspect what it gets; its construct always runs the network on its first "
                "argument before the loss")),
     "c": (lazy("It returns a different number, silently: the loss of net(net(X)) against Y"),
           lazy("construct(data, label) runs the net on whatever comes first, so the predictions go through the "
                "net a second time. No error, just a wrong number: pass the inputs"))},
    answer="c")
auto_prefix_names = Prediction(
    lazy("demo_net's parameters are named dense.weight and dense.bias. You wrap it in MyWithLossCell, but built "
         "WITHOUT auto_prefix=False (so with MindSpore's default, auto_prefix=True). What are demo_net's own "
         "parameter names afterwards?"),
    {"a": (lazy("Still dense.weight and dense.bias: wrapping does not change the net"),
           lazy("that is what most people expect, but the wrapper and the net hold the very same Parameter "
                "objects, and auto_prefix renames those objects when the net is assigned as self.backbone")),
     "b": (lazy("backbone.dense.weight and backbone.dense.bias, in the wrapper and in demo_net alike"),
           lazy("assigning a cell to an attribute of a cell with auto_prefix=True prefixes its Parameters' names "
                "with the attribute name, and the Parameters are shared, so the net's own names change too. Names "
                "matter when you save and load checkpoints (notebook 11): that is why the lesson's cell passes "
                "auto_prefix=False")),
     "c": (lazy("The wrapper's are backbone.dense.weight, the net keeps dense.weight"),
           lazy("that would need two sets of Parameters, but the wrapper holds the net's own Parameter objects (it "
                "must: training through the wrapper has to change the net), so there is only one name per "
                "Parameter"))},
    answer="b")
l1_by_hand = Exercise(_check_l1_by_hand, hints=[
    lazy("L1 is the mean of the absolute errors: you need the errors first, then np.abs and a mean"),
    lazy("nn.L1Loss() uses reduction='mean': add up the four absolute errors and divide by their number"),
])
log_cosh = FunctionExercise(_check_log_cosh, signature="LogCoshLoss()", cls=True, hints=[
    lazy("a loss is a Cell like any other: __init__ calls super().__init__(), and construct(prediction, label) "
         "returns one number"),
    lazy("MindSpore has ops.cosh and ops.log (also as Tensor methods); a Tensor's .mean() averages it"),
])
loss_curve = FunctionExercise(_check_loss_curve, signature="loss_curve(net, loss_fn, weights, x, y)", hints=[
    lazy("section 4 does this for three losses: for each w, write it into the weight (and 0 into the bias), then "
         "call a WithLossCell"),
    lazy("build the WithLossCell once, before the loop; ops.assign writes a value into a Parameter, and the "
         "value must have the Parameter's shape and dtype: (1, 1) float32 for the weight, (1,) for the bias"),
])

bind(globals())
