"""Exercises of notebook 16 (capstone: a classifier for three spiral arms, from notebook to project).

Every check works on nets, data and settings of its own (not the notebook's spirals), against numpy.
"""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    array,
    bind,
    brief_error,
    close,
    name_the_mistake,
    number,
)
from course_utils.messages import lazy, t

# The checker's own points for 16.1: a grid over [-1.5, 1.5]^2.
_AXIS = np.linspace(-1.5, 1.5, 21, dtype=np.float32)
GRID = np.stack(np.meshgrid(_AXIS, _AXIS), axis=-1).reshape(-1, 2)


def _give_random_weights(net, seed):
    """The checker's own random values (its own generator: the learner's global seed is left alone). A net
    initialised to zeros, or to any symmetric values, would look like a straight line."""
    import mindspore as ms
    from mindspore import ops

    rng = np.random.default_rng(seed)
    for p in net.trainable_params():
        ops.assign(p, ms.Tensor(rng.normal(0.0, 0.7, tuple(p.shape)), p.dtype))


# ---- 16.1 the model ---------------------------------------------------------------------------------
def _check_mlp_class(answer):
    import mindspore as ms
    from mindspore import nn

    if not issubclass(answer, nn.Cell):
        raise Incorrect(t("MLP must subclass nn.Cell (class MLP(nn.Cell): ...), got {answer}", answer=shown(answer)))
    net = answer()
    shapes = [tuple(p.shape) for p in net.trainable_params()]
    _give_random_weights(net, 1)
    out = array(net(ms.Tensor(GRID)), t("the output of your net"))
    if out.shape != (len(GRID), 3):
        raise Incorrect(t("for points of shape {points} the output has shape {got}; expected one score per class, "
                          "shape ({rows}, 3): end with Dense(hidden, classes)", points=GRID.shape, got=out.shape,
                          rows=len(GRID)))
    if len(shapes) < 4:
        raise Incorrect(t("one Dense layer draws straight lines between the classes; add a hidden layer. "
                          "Parameters: {shapes}", shapes=shapes))
    if not np.all(np.isfinite(out)):
        raise Incorrect(t("the output holds NaN or inf for points in [-1.5, 1.5]^2"))
    if np.allclose(out.sum(1), 1.0, atol=1e-5) and np.all(out >= 0):
        raise Incorrect(t("the outputs are probabilities (each row sums to 1): return the raw scores (logits); the "
                          "loss applies the softmax itself"))
    if np.all(out >= 0):  # random weights give a last Dense layer negative scores somewhere on the grid
        raise Incorrect(t("the scores are never negative: the net ends with a nonlinearity (such as a ReLU after the "
                          "last Dense). End with Dense(hidden, classes), and put the nonlinearities between layers"))
    design = np.hstack([GRID, np.ones((len(GRID), 1))]).astype(np.float64)
    fit, *_ = np.linalg.lstsq(design, out, rcond=None)
    if np.max(np.abs(design @ fit - out)) < 1e-4:
        raise Incorrect(t("the output is still a linear function of the point, so the classes are split by straight "
                          "lines: put a nonlinearity such as nn.ReLU() between the layers"))
    if sum(p.size for p in answer(hidden=64).trainable_params()) <= sum(p.size for p in net.trainable_params()):
        raise Incorrect(t("MLP(hidden=64) has no more parameters than MLP(): use `hidden` as the width of the hidden "
                          "layers"))
    _check_the_skip(net)


def _residual_scores(params, skip=True, relu_after_sum=False):
    """The oracle in float64 numpy: h = relu(x W1' + c1); h = h + relu(h W2' + c2); scores = h W3' + c3."""
    w1, c1, w2, c2, w3, c3 = (np.asarray(p, dtype=np.float64) for p in params)
    h = np.maximum(GRID @ w1.T + c1, 0.0)
    inner = h @ w2.T + c2
    if relu_after_sum:
        h = np.maximum(h + inner, 0.0)
    else:
        h = h + np.maximum(inner, 0.0) if skip else np.maximum(inner, 0.0)
    return h @ w3.T + c3


def _check_the_skip(net):
    """The learner's net with the checker's weights against the oracle, under each way to read its parameters."""
    import mindspore as ms

    values = [(tuple(p.shape), p.asnumpy()) for p in net.trainable_params()]
    hidden = next((shape[0] for shape, _ in values if len(shape) == 2 and shape[1] == 2), None)
    want = sorted([(hidden, 2), (hidden,), (hidden, hidden), (hidden,), (3, hidden), (3,)])
    if hidden is None or sorted(shape for shape, _ in values) != want:
        raise Incorrect(t("expected three Dense layers, 2 -> hidden, hidden -> hidden and hidden -> classes; the "
                          "parameters have shapes {shapes}", shapes=[shape for shape, _ in values]))
    by_shape = {shape: value for shape, value in values if len(shape) == 2}
    biases = [value for shape, value in values if shape == (hidden,)]
    c3 = next(value for shape, value in values if shape == (3,))
    readings = [(by_shape[(hidden, 2)], b1, by_shape[(hidden, hidden)], b2, by_shape[(3, hidden)], c3)
                for b1, b2 in (biases, biases[::-1])]  # which hidden bias is the first layer's: try both
    got = array(net(ms.Tensor(GRID)), t("the output of your net")).astype(np.float64)

    def matches(**variant):
        return any(np.allclose(got, _residual_scores(r, **variant), rtol=1e-4, atol=1e-4) for r in readings)

    if matches():
        return
    if matches(skip=False):
        raise Incorrect(t("this is the plain MLP, Dense -> ReLU -> Dense -> ReLU -> Dense: the middle layer's input "
                          "is not added back to its output"))
    if matches(relu_after_sum=True):
        raise Incorrect(t("your ReLU comes after the sum; in this MLP the middle layer's own ReLU comes before its "
                          "input is added back"))
    raise Incorrect(t("with the checker's weights your scores differ from relu(first(x)) -> h + relu(middle(h)) -> "
                      "last(h), computed in numpy"))


# ---- 16.2 the loss and the metrics ---------------------------------------------------------------------
def _loss_setup():
    rng = np.random.default_rng(7)
    logits = rng.normal(0.0, 2.0, (12, 3)).astype(np.float32)
    labels = rng.integers(0, 3, 12).astype(np.int32)
    shifted = logits.astype(np.float64) - logits.max(1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return logits, labels, float(-np.mean(log_p[np.arange(12), labels]))


def _check_loss_and_metrics(answer):
    import mindspore as ms

    if not (isinstance(answer, tuple) and len(answer) == 2):
        raise Incorrect(t("expected the pair (loss_fn, metrics), got {answer}", answer=shown(answer)))
    loss_fn, metrics = answer
    if not callable(loss_fn):
        raise Incorrect(t("loss_fn must be a loss cell such as nn.MSELoss(), got {loss_fn}", loss_fn=shown(loss_fn)))
    logits, labels, want = _loss_setup()
    try:
        value = array(loss_fn(ms.Tensor(logits), ms.Tensor(labels)), t("the loss"))
    except (TypeError, ValueError, RuntimeError) as exc:
        raise Incorrect(t("your loss fails on scores of shape (12, 3) and class numbers of shape (12,) ({error}): the "
                          "labels are class numbers, one per row, not one-hot rows: has the loss been told so?",
                          error=brief_error(exc, limit=160))) from None
    if value.size != 1:
        raise Incorrect(t("the loss is an array of shape {shape}: one number over the batch is expected; which "
                          "argument of the loss says how to reduce it?", shape=value.shape))
    got = number(value, t("the loss"))
    if np.isclose(got, want * len(labels), rtol=1e-4):
        raise Incorrect(t("the loss is the sum over the batch ({got:.4f}), not the mean ({want:.4f})", got=got,
                          want=want))
    if not np.isclose(got, want, rtol=1e-4):
        raise Incorrect(t("on the check's 12 scores the loss is {got:.4f}, the mean cross-entropy is {want:.4f}",
                          got=got, want=want))
    if not isinstance(metrics, (set, dict, list, tuple)):
        raise Incorrect(t("metrics must be a set of names such as {{'accuracy'}}, got {metrics}",
                          metrics=shown(metrics)))
    if "accuracy" not in set(metrics):
        raise Incorrect(t("metrics {names} has no 'accuracy', what the challenge scores",
                          names=sorted(map(str, metrics))))


# ---- 16.3 the training function ----------------------------------------------------------------------
TRAIN_LR, TRAIN_EPOCHS, TRAIN_BATCH = 0.05, 3, 16  # the check's settings: 40 rows, so batches of 16, 16, 8


def _train_setup():
    """The checker's own task and net: 40 points in 2-D, 3 classes by angle, a 2-4-3 tanh net of its own."""
    rng = np.random.default_rng(12)
    x = rng.uniform(-1.0, 1.0, (40, 2)).astype(np.float32)
    y = (np.floor((np.arctan2(x[:, 1], x[:, 0]) + np.pi) / (2 * np.pi / 3)) % 3).astype(np.int32)
    init = [rng.normal(0.0, 0.8, (4, 2)), rng.normal(0.0, 0.3, (4,)), rng.normal(0.0, 0.8, (3, 4)),
            rng.normal(0.0, 0.3, (3,))]
    return x, y, [a.astype(np.float32) for a in init]


def train_oracle(lr=TRAIN_LR, epochs=TRAIN_EPOCHS, batch_size=TRAIN_BATCH, optimizer="adam", drop_last=False):
    """Numpy (float64) mini-batch training of the 2-4-3 tanh net on the mean cross-entropy, batches in order;
    Adam as MindSpore defines it (beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected step) or plain SGD."""
    x, y, init = _train_setup()
    x = x.astype(np.float64)
    params = [p.astype(np.float64) for p in init]
    m, v, step = [0.0] * len(params), [0.0] * len(params), 0  # Adam's moments start at zero
    for _ in range(epochs):
        for start in range(0, len(x), batch_size):
            xb, yb = x[start:start + batch_size], y[start:start + batch_size]
            if drop_last and len(xb) < batch_size:
                continue
            w1, c1, w2, c2 = params
            h = np.tanh(xb @ w1.T + c1)
            z = h @ w2.T + c2
            p = np.exp(z - z.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            d = (p - np.eye(3)[yb]) / len(xb)
            dh = (d @ w2) * (1.0 - h ** 2)
            grads = [dh.T @ xb, dh.sum(0), d.T @ h, d.sum(0)]
            step += 1
            for i, g in enumerate(grads):
                if optimizer == "sgd":
                    params[i] = params[i] - lr * g
                    continue
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g ** 2
                corrected_lr = lr * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
                params[i] = params[i] - corrected_lr * m[i] / (np.sqrt(v[i]) + 1e-8)
    return params


_TRAIN_MISTAKES = [  # the reasons are shown with t(why, epochs=TRAIN_EPOCHS - 1)
    ({"optimizer": "sgd"}, lazy("that is plain SGD; use nn.Adam(net.trainable_params(), learning_rate=lr)")),
    ({"drop_last": True}, lazy("the last, smaller batch (8 of the 40 rows) was skipped; train on it too")),
    ({"batch_size": 40}, lazy("that is one full batch per epoch; split each epoch into batches of batch_size rows")),
    ({"epochs": TRAIN_EPOCHS - 1}, lazy("that is {epochs} epochs; train for `epochs` passes over the data")),
    ({"epochs": 1}, lazy("that is 1 epoch; train for `epochs` passes over the data")),
]


def _check_train_function(answer):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    x, y, init = _train_setup()
    net = nn.SequentialCell(nn.Dense(2, 4), nn.Tanh(), nn.Dense(4, 3))
    for param, value in zip(net.trainable_params(), init):
        ops.assign(param, Tensor(value, ms.float32))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    answer(net, loss_fn, x.copy(), y.copy(), TRAIN_LR, TRAIN_EPOCHS, TRAIN_BATCH)
    got = [p.asnumpy().astype(np.float64) for p in net.trainable_params()]
    if not all(np.all(np.isfinite(g)) for g in got):
        raise Incorrect(t("after your training the net's weights hold NaN or inf"))
    if close(got, init, rtol=1e-3, atol=1e-4):
        raise Incorrect(t("the net's weights did not change: train the net you are given, in place (not a new one), "
                          "with an optimizer over net.trainable_params()"))
    want = train_oracle()
    if close(got, want, rtol=1e-3, atol=1e-4):
        return
    setting = t("40 rows, lr {lr}, {epochs} epochs, batches of {batch_size}", lr=TRAIN_LR, epochs=TRAIN_EPOCHS,
                batch_size=TRAIN_BATCH)
    try:
        name_the_mistake(got, train_oracle, _TRAIN_MISTAKES, same=lambda g, w: close(g, w, rtol=1e-3, atol=1e-4),
                         epochs=TRAIN_EPOCHS - 1)
    except Incorrect as why:
        raise Incorrect(t("on the check's data ({setting}): {why}", setting=setting, why=why)) from None
    err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
    raise Incorrect(t("on the check's data ({setting}) your weights differ from Adam's by up to {err:.3g}: the loss_fn "
                      "you are given, nn.Adam, batches in order without shuffling, every batch once per epoch",
                      setting=setting, err=err))


# ---- 16.4 the evaluation ------------------------------------------------------------------------------
def _check_accuracy_function(answer):
    import mindspore as ms
    from mindspore import nn

    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 1.0, (50, 2)).astype(np.float32)
    y = rng.integers(0, 3, 50).astype(np.int32)
    net = nn.SequentialCell(nn.Dense(2, 5), nn.ReLU(), nn.Dense(5, 3))
    _give_random_weights(net, 4)
    want = float(np.mean(net(ms.Tensor(x)).asnumpy().argmax(1) == y))
    result = accuracy_function.call(answer, net, x.copy(), y.copy())
    values = result.asnumpy() if hasattr(result, "asnumpy") else result
    if isinstance(values, np.ndarray) and values.size > 1:
        raise Incorrect(t("your function returned an array of shape {shape}: return one number, the fraction of "
                          "correct predictions", shape=values.shape))
    got = number(result, t("your accuracy"))
    name_the_mistake(got, lambda scale: scale * want, [
        ({"scale": len(y)}, lazy("{got:g} is the number of correct predictions; divide by the number of points "
                                 "({points})")),
        ({"scale": 100}, lazy("{got:g} is a percentage; return the fraction ({want:.2f})")),
    ], got=got, points=len(y), want=want)
    if not np.isclose(got, want):
        raise Incorrect(t("on the check's 50 points and net the accuracy is {want:.2f}, yours {got:.4g}: which axis "
                          "of the scores holds the classes (one row per point)?", want=want,
                          got=got))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
mlp_class = FunctionExercise(_check_mlp_class, signature="MLP(hidden=32, classes=3)", cls=True, hints=[
    lazy("nn.SequentialCell chains cells one after the other, it cannot add two of their outputs: keep the three "
         "Dense layers as attributes in __init__ and write the forward pass in construct yourself"),
    lazy("in construct: the first layer and a ReLU; then add to that the ReLU of the middle layer applied to "
         "it (the skip); then the last layer. A ReLU has no weights, so one cell can serve both places"),
])
loss_and_metrics = Exercise(_check_loss_and_metrics, hints=[
    lazy("the labels are class numbers (0, 1, 2) and the net gives one score per class: which loss of notebook 10 "
         "compares scores with class numbers, and which metric counts the right answers?"),
    lazy("that loss of notebook 10 takes the raw scores (logits) and applies the softmax itself; two of its "
         "arguments need setting: one says the labels are class numbers, not one-hot rows, the other that the batch "
         "is averaged"),
    lazy("answer is a tuple: first the loss Cell itself (an instance, not the class), then a set of metric names; "
         "Model also reports the loss when 'loss' is among them"),
], parts=2)
train_function = FunctionExercise(
    _check_train_function, signature="train_model(net, loss_fn, x, y, lr, epochs, batch_size)", hints=[
    lazy("the pieces of notebook 07 (or 09): an optimizer, the loss you are given, a step, and two loops, over "
         "epochs and over batches"),
    lazy("an Adam optimizer over the net's trainable parameters at the rate you are given; a function of "
         "(inputs, labels) that returns the loss, differentiated with respect to the optimizer's parameters; "
         "the batches are consecutive slices of x and y"),
    lazy("in the loops: the gradient function gives the loss and the gradients, and the optimizer takes the "
         "gradients. Or build a Model of the net, the loss and the optimizer, and train it on a dataset that "
         "is not shuffled"),
])
accuracy_function = FunctionExercise(_check_accuracy_function, signature="accuracy(net, x, y)", hints=[
    lazy("the net gives one score per class and point; the predicted class is the one with the highest score. What "
         "fraction of the points gets its own label?"),
    lazy("the net's output, as a numpy array, has one row per point: along which axis do you look for the "
         "highest score, and what does its position mean?"),
    lazy("compare the predicted classes with y element by element; the mean of that comparison is the "
         "fraction, returned as a Python float"),
])
resume_exact = Prediction(
    lazy("A run of 12 epochs is stopped after epoch 5 and resumed from last.ckpt (weights, Adam's moments, "
         "the epoch and the early-stop state) with --resume. How do its final weights compare with a run "
         "that was never stopped?"),
    {"a": (lazy("bitwise identical"),
           lazy("nothing that decides a step is lost: the weights and Adam's state are in last.ckpt, and the order "
                "of every epoch's batches is a function of (seed, epoch) alone, so epoch 6 reads the same batches "
                "either way")),
     "b": (lazy("equal to about 6 digits: a checkpoint rounds, and restarting changes the order of the sums"),
           lazy("a checkpoint holds every float32 exactly, and the resumed run computes the same operations on the "
                "same batches in the same order: there is nothing to round differently")),
     "c": (lazy("clearly different: a fresh dataset restarts the shuffling at epoch 1"),
           lazy("it would with a dataset that shuffles by itself (its shuffle state is not in the checkpoint); the "
                "project's EpochBatches derives each epoch's order from (seed, epoch), so it cannot restart"))},
    answer="a")
amp_speed = Prediction(
    lazy("The same training with mixed precision O3 (the whole net in float16) on this CPU: how does "
         "a training step compare with O0 (float32)?"),
    {"a": (lazy("about twice as fast: half the bits to move"),
           lazy("that is what float16 buys on GPUs and NPUs with float16 units; on this CPU MindSpore's float16 "
                "MatMul computes in float32 and rounds the result (the cell above), so there is nothing to gain")),
     "b": (lazy("no faster: about the same, or slower"),
           lazy("MindSpore's CPU kernels compute float16 in float32, and O3 adds casts between float16 and float32 "
                "around the layers; on a net this small the step costs about the same, sometimes more, never "
                "clearly less")),
     "c": (lazy("several times slower: emulating float16 in software is expensive"),
           lazy("nothing is computed bit by bit in software: the CPU runs its float32 kernels and rounds to "
                "float16 (notebook 12), so a step costs a few casts more, not a different order of cost"))},
    answer="b")

bind(globals())
