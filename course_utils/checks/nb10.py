"""Exercises of notebook 10 (classification).

10.3 hands the learner's held-out loss a net of its own (with Dropout, left in training mode) and three batches
of unequal size, and compares with a numpy forward pass and cross-entropy; 10.4 feeds
the learner's metric batches of different sizes and compares with a numpy confusion matrix. Two predictions:
one-hot labels with ``sparse=True``, and the best accuracy of a straight line on the moons.
"""

import warnings
from functools import partial

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import FunctionExercise, Incorrect, Prediction, array, bind, close, name_the_mistake, number
from course_utils.messages import lazy, t
from course_utils.oracles import confusion_matrix, softmax_cross_entropy

# ---- 10.3: the held-out loss by hand, in evaluation mode -------------------------------------------------
EVAL_BATCH = 50
EVAL_POINTS = 113  # batches of 50, 50 and 13: a mean of the batch means is not the mean over the points
EVAL_CLASSES = 3


def _dataset(x, y, batch_size, shuffle):
    import mindspore.dataset as ds

    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=shuffle).batch(batch_size)


def _evaluation_setup():
    """The check's own net weights (2-16-3, ReLU) and data: 113 points of 3 classes the lesson never shows."""
    rng = np.random.RandomState(31)
    weights = [rng.normal(0, 1, (16, 2)), rng.normal(0, 0.5, 16), rng.normal(0, 1, (EVAL_CLASSES, 16)),
               rng.normal(0, 0.5, EVAL_CLASSES)]
    points = rng.uniform(-2, 2, (EVAL_POINTS, 2))
    labels = rng.randint(0, EVAL_CLASSES, EVAL_POINTS)
    labels[2 * EVAL_BATCH:] = 0  # the small last batch is all class 0: its mean loss stands apart
    return [w.astype(np.float32) for w in weights], points.astype(np.float32), labels.astype(np.int32)


def evaluation_oracle(over="points"):
    """numpy: the mean cross-entropy of the check's net (no dropout) over its points, or over its batches."""
    (w1, b1, w2, b2), points, labels = _evaluation_setup()
    logits = np.maximum(points.astype(np.float64) @ w1.T + b1, 0) @ w2.T + b2
    if over == "points":
        return softmax_cross_entropy(logits, labels)
    if over == "sum":
        return softmax_cross_entropy(logits, labels) * EVAL_POINTS
    starts = range(0, EVAL_POINTS, EVAL_BATCH)
    return float(np.mean([softmax_cross_entropy(logits[i:i + EVAL_BATCH], labels[i:i + EVAL_BATCH]) for i in starts]))


def _evaluation_net():
    """The check's net, with a Dropout layer, left in training mode (as a net is after training)."""
    from mindspore import Tensor, nn

    (w1, b1, w2, b2), _, _ = _evaluation_setup()
    net = nn.SequentialCell(nn.Dense(2, 16, weight_init=Tensor(w1), bias_init=Tensor(b1)), nn.ReLU(),
                            nn.Dropout(p=0.5), nn.Dense(16, EVAL_CLASSES, weight_init=Tensor(w2), bias_init=Tensor(b2)))
    net.set_train(True)
    return net


def _check_evaluation_loss(held_out_loss):
    import mindspore as ms

    _, points, labels = _evaluation_setup()
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        values = [number(evaluation_loss.call(held_out_loss, _evaluation_net(), _dataset(points, labels, EVAL_BATCH,
                                                                                            False)),
                         t("held_out_loss(net, dataset)")) for _ in range(2)]
    finally:
        ms.set_context(mode=mode)
    got, want = values[0], evaluation_oracle()
    if close(got, want, rtol=1e-4, atol=1e-6):
        return
    if not close(values[1], got, rtol=1e-6, atol=1e-7):
        raise Incorrect(t("two calls on the same net and data give {a:.4f} and {b:.4f}: the net's Dropout is still "
                          "active, as in training", a=values[0], b=values[1]))
    name_the_mistake(got, evaluation_oracle, [
        ({"over": "batches"}, lazy("held_out_loss gives {got:.4f}, the mean of the 3 batch means; the last batch holds "
                                   "only 13 of the 113 points")),
        ({"over": "sum"}, lazy("held_out_loss gives {got:.4f}, the sum over the 113 points")),
    ], got=got)
    raise Incorrect(t("held_out_loss gives {got:.4f}, not the mean cross-entropy of the net over the 113 points of the "
                      "dataset: is it a loss, and not an accuracy?", got=got))


# ---- 10.4: accuracy and precision over all batches -----------------------------------------------------
METRIC_CLASSES = 3
_same = partial(close, rtol=1e-5, atol=1e-6)  # a metric's numbers: as exact as float64 division gives them


def metric_batches(seed, sizes):
    """Batches of (logits float32, labels int32) for 3 classes; logits are noisy one-hot rows of the labels,
    so that about 60 % are right and every class is predicted."""
    rng = np.random.RandomState(seed)
    out = []
    for size in sizes:
        labels = rng.randint(0, METRIC_CLASSES, size).astype(np.int32)
        logits = (1.2 * np.eye(METRIC_CLASSES)[labels] + rng.normal(0, 0.8, (size, METRIC_CLASSES)))
        out.append((logits.astype(np.float32), labels))
    return out


def metric_oracle(batches, undefined=np.nan, over="points"):
    """(accuracy, precision per class, recall per class) over all rows of the batches; a precision or recall
    with nothing to divide by is ``undefined``. As the typical mistakes compute them: over="last batch" (only
    the last batch counts), over="batches" (the mean of the batch values, an undefined one left out)."""
    if over == "batches":
        with warnings.catch_warnings():  # a class no batch predicted: nanmean of nothing
            warnings.simplefilter("ignore", RuntimeWarning)
            return tuple(np.nanmean(v, axis=0) for v in zip(*(metric_oracle([b], undefined) for b in batches)))
    batches = batches[-1:] if over == "last batch" else batches
    counts = confusion_matrix(np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches]),
                              METRIC_CLASSES)
    right = np.diag(counts).astype(np.float64)
    predicted, true = counts.sum(axis=0), counts.sum(axis=1)
    return (np.trace(counts) / counts.sum(), np.where(predicted > 0, right / np.maximum(predicted, 1), undefined),
            np.where(true > 0, right / np.maximum(true, 1), undefined))


ACCURACY_MISTAKES = [
    ({"over": "batches"}, lazy("{what}, accuracy is {accuracy:.4f}, the mean of the {batches} batch accuracies; over "
                               "all {n} points it is {want:.4f} (article 003's mistake)")),
    ({"over": "last batch"}, lazy("{what}, accuracy is {accuracy:.4f}, the last batch's only")),
]
PRECISION_MISTAKES = [  # part 2 of metric_oracle is the recall; a class a batch never predicted: left out, or 0
    ({"part": 2}, lazy("{what}, precision is {precision}, the recall: what does precision divide by?")),
    *[({"over": "batches", "undefined": undefined},
       lazy("{what}, precision is {precision}, the mean of the batch precisions; over all points it is {want}"))
      for undefined in (np.nan, 0.0)],
]


def _read(result, n):
    if not isinstance(result, dict) or not {"accuracy", "precision"} <= set(result):
        raise Incorrect(t("eval() must return a dict with 'accuracy' and 'precision', got {result}",
                          result=shown(result)))
    accuracy = number(result["accuracy"], t("eval()['accuracy'] after {n} points", n=n))
    precision = array(result["precision"], t("eval()['precision'] after {n} points", n=n))
    if precision.shape != (METRIC_CLASSES,):
        raise Incorrect(t("eval()['precision'] must hold one value per class, shape ({classes},), got shape "
                          "{shape}", classes=METRIC_CLASSES, shape=precision.shape))
    if not np.all(np.isfinite(precision)):
        raise Incorrect(t("eval()['precision'] holds NaN or inf: {precision}", precision=precision))
    return accuracy, precision


def _feed(metric, batches):
    from mindspore import Tensor

    metric.clear()
    for logits, labels in batches:
        metric.update(Tensor(logits), Tensor(labels))
    return _read(metric.eval(), sum(len(b[1]) for b in batches))


def _diagnose(got, batches, what):
    (accuracy, precision), n = got, sum(len(b[1]) for b in batches)
    want_acc, want_prec, _ = metric_oracle(batches)
    if not _same(accuracy, want_acc):
        name_the_mistake(accuracy, lambda **how: metric_oracle(batches, **how)[0], ACCURACY_MISTAKES, same=_same,
                         what=what, accuracy=accuracy, batches=len(batches), n=n, want=want_acc)
        raise Incorrect(t("{what}, expected accuracy {want:.4f} over all {n} points, got {accuracy:.4f}", what=what,
                          want=want_acc, n=n, accuracy=accuracy))
    if not _same(precision, want_prec):
        name_the_mistake(precision, lambda part=1, **how: metric_oracle(batches, **how)[part], PRECISION_MISTAKES,
                         same=_same, what=what, precision=np.round(precision, 4), want=np.round(want_prec, 4))
        raise Incorrect(t("{what}, expected precision {want} over all {n} points, got {precision}", what=what,
                          want=np.round(want_prec, 4), n=n, precision=np.round(precision, 4)))


def _check_multi_metric(answer):
    from mindspore import Tensor, nn
    from mindspore.train import Metric, Model

    if not issubclass(answer, Metric):
        raise Incorrect(t("expected a class derived from mindspore.train.Metric, got {answer}", answer=shown(answer)))
    metric, first = answer(METRIC_CLASSES), metric_batches(11, (5, 17, 2, 9))
    _diagnose(_feed(metric, first), first, t("for batches of {sizes} points", sizes="5, 17, 2, 9"))
    batches, what = metric_batches(12, (30, 4, 11)), t("for batches of {sizes} points (after clear())",
                                                       sizes="30, 4, 11")
    got = _feed(metric, batches)  # the same object again: clear() must reset it
    if not _same(got, metric_oracle(batches)[:2]) and _same(got, metric_oracle(first + batches)[:2]):
        raise Incorrect(t("{what}, eval() still counts the batches fed before clear()", what=what))
    _diagnose(got, batches, what)
    # inside Model.eval: a fixed linear classifier of 2-D points, 40 points in batches of 16, 16, 8
    rng = np.random.RandomState(13)
    points = rng.normal(size=(40, 2)).astype(np.float32)
    labels = rng.randint(0, METRIC_CLASSES, 40).astype(np.int32)
    weight = np.array([[1.0, 0.2], [-0.5, 1.0], [-0.5, -1.2]], np.float32)
    net = nn.Dense(2, METRIC_CLASSES, weight_init=Tensor(weight), bias_init="zeros")
    result = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                   metrics={"ap": answer(METRIC_CLASSES)}).eval(_dataset(points, labels, 16, False))["ap"]
    batches = [(points[i:i + 16] @ weight.T, labels[i:i + 16]) for i in range(0, 40, 16)]
    _diagnose(_read(result, 40), batches, t("inside Model.eval, on 40 points in batches of 16, 16, 8"))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
one_hot_sparse = Prediction(
    lazy("One-hot float32 labels go into SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean'). What "
         "happens?"),
    {"a": (lazy("the same loss as with the class indices: sparse=True only makes it faster"),
           lazy("sparse is not a speed switch: it says which format the labels are in. With sparse=True the loss "
                "reads each label as one class index, so a row [0, 1] is not something it can read.")),
     "b": (lazy("a number, but a wrong one, silently"),
           lazy("that would be the worst case, and it does happen with another mistake (labels counted from 1, "
                "below), but not here: the loss checks the labels' type and shape first.")),
     "c": (lazy("an error: the one-hot labels are refused"),
           lazy("float32 labels are refused by type (sparse labels must be int32 or int64), and int one-hot rows "
                "by shape (sparse labels have one dimension fewer than the logits)."))},
    answer="c")
linear_accuracy = Prediction(
    lazy("With the best possible straight line, what accuracy does a linear classifier reach on the moons' "
         "training points?"),
    {"a": (lazy("about 50 %: no better than guessing"),
           lazy("a line cannot follow the moons' curves, but it still puts most of each moon on its own side: "
                "guessing is far worse than the best line.")),
     "b": (lazy("about 75 %"),
           lazy("a line through the middle does better than that: only the tips of the moons, which reach into "
                "the other moon's hollow, end up on the wrong side.")),
     "c": (lazy("about 90 %"),
           lazy("the best line misclassifies only the moons' tips, about one point in ten; the last tenth needs a "
                "curved boundary, which no amount of training gives a linear model.")),
     "d": (lazy("100 %, given enough epochs"),
           lazy("training finds the best line, but the best line is still a line: the tips of each moon reach "
                "past any line that separates the rest."))},
    answer="c")
evaluation_loss = FunctionExercise(_check_evaluation_loss, signature="held_out_loss(net, dataset)", hints=[
    lazy("first the mode: a net with Dropout must not drop units while it is evaluated"),
    lazy("a batch's mean loss times its number of points is that batch's total: add the totals and the numbers of "
         "points over all batches, then divide once"),
])
multi_metric = FunctionExercise(_check_multi_metric, signature="AccuracyPrecision(classes)", cls=True, hints=[
    lazy("keep counts, not averages: how many points, how many right, and per class how often it was predicted "
         "and how often that prediction was right"),
    lazy("in update, a row's predicted class is the argmax of its logits; np.bincount with minlength counts per "
         "class, over all the points or over the right ones only; clear() sets the counts to zero, eval() divides"),
])

bind(globals())
