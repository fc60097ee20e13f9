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
    array,
    bind,
    close,
    name_the_mistake,
    number,
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
        (dict(kind="mse"), lazy("{value:.4f} is the mean *squared* error, not the mean absolute error")),
        (dict(kind="sum"), lazy("{value:.4f} is the sum of the absolute errors: how does nn.L1Loss() reduce them "
                                "over the samples?")),
        (dict(kind="signed"), lazy("{value:.4f} is the mean of the signed errors: positive and negative errors "
                                   "cancelled out")),
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
        raise Incorrect(t("{answer} is not a Cell: a loss MindSpore can wrap is a Cell, as in section 2",
                          answer=shown(answer)))
    net = one_neuron(*LC_START)
    loss_net = nn.WithLossCell(net, answer())
    data, label = ms.Tensor(LC_X), ms.Tensor(LC_Y)
    out = loss_net(data, label)
    if not isinstance(out, ms.Tensor):
        raise Incorrect(t("construct(prediction, label) should return a MindSpore Tensor, got {kind}: MindSpore "
                          "differentiates only its own operations", kind=type(out).__name__))
    if out.size == len(LC_X):
        raise Incorrect(t("construct returns one loss per sample (shape {shape}); a loss is one number",
                          shape=tuple(out.shape)))
    got = number(out, t("the loss"))
    name_the_mistake(got, lambda kind: _log_cosh_oracle(kind)[0], [
        (dict(kind="sum"), lazy("{got:.5f} is the sum over the samples: reread how the exercise reduces them")),
        (dict(kind="cosh"), lazy("{got:.5f} is the mean of cosh(prediction - label): a step of the formula is "
                                 "missing")),
        (dict(kind="mse"), lazy("{got:.5f} is the mean squared error, not the log-cosh loss")),
    ], same=functools.partial(np.isclose, rtol=1e-5), got=got)
    want = _log_cosh_oracle()
    if not np.isclose(got, want[0], rtol=1e-5):
        raise Incorrect(t("on the check's own net and data the loss should be {want:.5f}, yours gives {got:.5f}",
                          want=want[0], got=got))
    grads = ms.grad(loss_net, None, net.trainable_params())(data, label)
    slopes = [float(np.sum(g.asnumpy())) for g in grads]
    if not close(slopes, want[1:], rtol=1e-4, atol=1e-6):
        raise Incorrect(t("the loss value is right, but MindSpore's gradients through your loss are {got} (w, b), "
                          "numpy's are {want}: can ms.grad follow every operation of your construct?",
                          got=np.round(slopes, 5).tolist(), want=np.round(want[1:], 5).tolist()))


# Exercise 02.5: a grid of (weight, bias), on the checker's own data, weights and biases, not the lesson's.
GRID_X = np.linspace(-1.0, 2.0, 9, dtype=np.float32).reshape(-1, 1)
GRID_Y = (-0.5 * GRID_X + 1.0 + 0.1 * np.sin(7.0 * GRID_X)).astype(np.float32)
GRID_WEIGHTS = np.array([-2.0, 0.5, 1.5])
GRID_BIASES = np.array([-1.0, 0.0, 0.6, 1.5])  # 3 weights, 4 biases: a transposed grid has another shape
START_WEIGHT, START_BIAS = 3.0, 0.4  # where the checker's net starts: neither is in the grid
LOSS_NAMES = {"mse": lazy("mse"), "mse_sum": lazy("mse sum"), "l1": lazy("l1")}  # _grid's kinds, in a message


def _grid(loss, weight=None, bias=None, twice=False, x=GRID_X, y=GRID_Y):
    """The loss for each (weight, bias) of the grid, rows the weights, columns the biases, in float64 numpy (the
    oracle). ``weight`` or ``bias``: that Parameter left at this value (never written); ``twice``: the loss cell
    called with predictions, so the net runs twice."""
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    out = np.zeros((len(GRID_WEIGHTS), len(GRID_BIASES)))
    for i, w in enumerate(GRID_WEIGHTS):
        for j, b in enumerate(GRID_BIASES):
            w_, b_ = (w if weight is None else weight), (b if bias is None else bias)
            e = w_ * (w_ * x + b_) + b_ - y if twice else w_ * x + b_ - y
            out[i, j] = {"mse": np.mean(e ** 2), "mse_sum": np.sum(e ** 2), "l1": np.mean(np.abs(e))}[loss]
    return out


_GRID_MISTAKES = [  # (settings of _grid, message)
    (dict(weight=START_WEIGHT, bias=START_BIAS), lazy("with {name} every loss of your grid is the same, the loss of "
                                                      "the net's own weight and bias: neither Parameter changed")),
    (dict(bias=START_BIAS), lazy("with {name} your losses do not change along a row: every column is the loss with "
                                 "the bias left at the net's own {bias}")),
    (dict(weight=START_WEIGHT), lazy("with {name} your losses do not change down a column: every row is the loss "
                                     "with the weight left at the net's own {weight}")),
    (dict(twice=True), lazy("with {name} your grid is the loss of net(net(x)): what does the loss cell expect as "
                            "its first argument? (prediction 02.1)")),
]
_OTHER_LOSS = lazy("with {name} your grid is the {other} loss: use the loss_fn you were given")


def _watched_neuron(w, b):
    """A one-neuron net like one_neuron(w, b) that records the (w, b) it runs with (a numpy grid never runs it)."""
    import mindspore as ms
    from mindspore import nn, ops

    class WatchedNeuron(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1)
            self.seen = []

        def construct(self, x):
            self.seen.append((self.dense.weight.asnumpy().item(), self.dense.bias.asnumpy().item()))
            return self.dense(x)

    net = WatchedNeuron()
    ops.assign(net.dense.weight, ms.Tensor([[w]], ms.float32))
    ops.assign(net.dense.bias, ms.Tensor([b], ms.float32))
    return net


def _check_loss_grid(answer):
    from mindspore import nn

    shape = (len(GRID_WEIGHTS), len(GRID_BIASES))
    for loss_fn, kind, name in ((nn.L1Loss(), "l1", "nn.L1Loss()"),
                                (nn.MSELoss(reduction="sum"), "mse_sum", 'nn.MSELoss(reduction="sum")')):
        net = _watched_neuron(START_WEIGHT, START_BIAS)
        got = loss_grid.call(answer, net, loss_fn, GRID_WEIGHTS, GRID_BIASES, GRID_X, GRID_Y)
        if not isinstance(got, np.ndarray) and not hasattr(got, "asnumpy"):
            raise Incorrect(t("loss_grid should return a 2-D numpy array, got {got}", got=shown(got)))
        grid, want = array(got, t("what loss_grid returned")), _grid(kind)
        if grid.shape == shape[::-1] and close(grid.T, want):
            raise Incorrect(t("your grid holds the right losses, but transposed (shape {shape}): entry [i, j] is "
                              "weights[i] with biases[j]", shape=grid.shape))
        if grid.shape != shape:
            raise Incorrect(t("loss_grid returned shape {shape}; expected {want}: one row per weight, one column "
                              "per bias", shape=grid.shape, want=shape))
        if not np.all(np.isfinite(grid)):
            raise Incorrect(t("the grid holds NaN or inf"))
        if close(grid, want):
            seen = {(round(w, 4), round(b, 4)) for w, b in net.seen}
            missing = [(w, b) for w in GRID_WEIGHTS for b in GRID_BIASES
                       if (round(float(w), 4), round(float(b), 4)) not in seen]
            if missing:
                raise Incorrect(t("the numbers are right, but the net you were given never ran with w = {w:g}, "
                                  "b = {b:g} ({n} of the {total} pairs are missing): each loss must come from "
                                  "that net, through a WithLossCell", w=missing[0][0], b=missing[0][1],
                                  n=len(missing), total=grid.size))
            continue
        name_the_mistake(grid, functools.partial(_grid, kind), _GRID_MISTAKES, name=name, bias=START_BIAS,
                         weight=START_WEIGHT)
        for other in LOSS_NAMES:  # its own kind cannot match here: that grid was right
            name_the_mistake(grid, _grid, [(dict(loss=other), _OTHER_LOSS)], name=name, other=t(LOSS_NAMES[other]))
        i, j = np.unravel_index(int(np.argmax(~np.isclose(grid, want, rtol=1e-4, atol=1e-5))), shape)
        raise Incorrect(t("with loss_fn = {name}, entry [{i}, {j}] (w = {w:g}, b = {b:g}) should be {want:.4f}, "
                          "yours is {got:.4f}", name=name, i=int(i), j=int(j), w=GRID_WEIGHTS[i], b=GRID_BIASES[j],
                          want=want[i, j], got=grid[i, j]))


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
    lazy("L1 measures each sample's error by its size, whatever its sign, then reduces them to one number"),
    lazy("a sample's error is its prediction minus its label; numpy has a function for the size of a number, "
         "and nn.L1Loss() reduces with reduction='mean'"),
])
log_cosh = FunctionExercise(_check_log_cosh, signature="LogCoshLoss()", cls=True, hints=[
    lazy("a loss is a Cell like any other: __init__ calls super().__init__(), and construct(prediction, label) "
         "returns one number"),
    lazy("compute it on the Tensors construct receives with MindSpore's own operations (mindspore.ops): the "
         "functions numpy would use have the same names there"),
])
loss_grid = FunctionExercise(_check_loss_grid, signature="loss_grid(net, loss_fn, weights, biases, x, y)", hints=[
    lazy("section 4's loop moved one Parameter; here both move: one loss per (weight, bias) pair, each pair written "
         "into the net before its loss is computed"),
    lazy("a value written into a Parameter must have that Parameter's shape and dtype, as in section 4; the "
         "grid's rows follow the weights, its columns the biases"),
])

bind(globals())
