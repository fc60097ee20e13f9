"""Exercises of notebook 02 (WithLossCell and loss functions)."""

import functools

import numpy as np

from course_utils.checks._nets import one_neuron
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    bind,
    brief_error,
    close,
    name_the_mistake,
    number,
    series,
)
from course_utils.messages import lazy, t

# Exercise 02.3: fixed predictions and labels, so the answer does not depend on a random net.
PREDICTIONS = np.array([[0.5], [1.0], [1.5], [3.0]], dtype=np.float32)
LABELS = np.array([[1.0], [1.0], [2.0], [2.0]], dtype=np.float32)


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


def _check_l1_loss_cell(answer):
    import mindspore as ms
    from mindspore import nn

    if not isinstance(answer, nn.Cell):
        raise Incorrect(t("expected a Cell instance such as nn.WithLossCell(net, loss_fn), got {kind}",
                          kind=type(answer).__name__))
    params = {p.name.split(".")[-1]: p.asnumpy().astype(np.float64) for p in answer.trainable_params()}
    if set(params) != {"weight", "bias"}:
        raise Incorrect(t("the loss cell should wrap the one-neuron net (weight and bias), it has {names}",
                          names=sorted(params)))
    x = np.array([[0.0], [0.5], [1.0], [2.0]], dtype=np.float32)
    y = np.array([[0.1], [1.0], [2.5], [3.0]], dtype=np.float32)
    pred = x @ params["weight"].T + params["bias"]
    try:
        out = answer(ms.Tensor(x), ms.Tensor(y))
    except TypeError as exc:
        raise Incorrect(t("calling it as loss_cell(data, label) failed: {exc}", exc=brief_error(exc))) from None
    got = number(out, t("loss_cell(data, label)"))
    if np.isclose(got, np.mean((pred - y) ** 2), rtol=1e-5):
        raise Incorrect(t("that is the MSE loss; use nn.L1Loss() as the loss function"))
    mae = np.mean(np.abs(pred - y))
    if not np.isclose(got, mae, rtol=1e-5):
        raise Incorrect(t("loss_cell(x, y) gave {got:.6f}, but the mean absolute error of the net is {mae:.6f}",
                          got=got, mae=mae))


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


def _check_loss_curve(answer):
    from mindspore import nn

    for loss_fn, kind, name in ((nn.L1Loss(), "l1", "nn.L1Loss()"),
                                (nn.MSELoss(reduction="sum"), "mse_sum", 'nn.MSELoss(reduction="sum")')):
        got = loss_curve.call(answer, one_neuron(START_WEIGHT, START_BIAS), loss_fn, CURVE_WEIGHTS, CURVE_X, CURVE_Y)
        curve, want = series(got, t("what loss_curve returned (one loss per weight)"), len(CURVE_WEIGHTS)), _curve(kind)
        if close(curve, want):
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
    lazy("np.mean(np.abs(predictions - labels))"),
])
l1_loss_cell = Exercise(_check_l1_loss_cell, hints=[
    lazy("WithLossCell takes the network and a loss cell: MindSpore has a built-in L1 loss"),
    lazy("nn.WithLossCell(net, nn.L1Loss())"),
])
loss_curve = FunctionExercise(_check_loss_curve, signature="loss_curve(net, loss_fn, weights, x, y)", hints=[
    lazy("section 4 does this for three losses: for each w, write it into the weight (and 0 into the bias), then "
         "call a WithLossCell"),
    lazy("cell = nn.WithLossCell(net, loss_fn); for each w: ops.assign(net.dense.weight, Tensor([[w]], "
         "ms.float32)), ops.assign(net.dense.bias, Tensor([0.0], ms.float32)), then cell(Tensor(x), "
         "Tensor(y)).asnumpy().item()"),
])

bind(globals())
