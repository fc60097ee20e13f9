"""Exercises of notebook 10 (classification).

10.3 trains the learner's classifier on data the lesson never showed (three spirals, a seed of their own)
and compares its held-out accuracy with a threshold justified by a numpy nearest-neighbour vote; 10.4 feeds
the learner's metric batches of different sizes and compares with a numpy confusion matrix. Two predictions:
one-hot labels with ``sparse=True``, and the best accuracy of a straight line on the moons.
"""

import warnings
from functools import partial

import numpy as np

from course_utils._validate import shown
from course_utils.data import make_spirals
from course_utils.exercises import FunctionExercise, Incorrect, Prediction, array, bind, close, name_the_mistake, number
from course_utils.messages import lazy, t
from course_utils.oracles import confusion_matrix, knn_accuracy, softmax_cross_entropy

# ---- 10.3: an MLP classifier in a Model ----------------------------------------------------------------
SPIRALS = {"n": 450, "classes": 3, "noise": 0.05, "seed": 21}  # the check's data: the lesson never shows it
N_TRAIN = 300
EPOCHS, BATCH = 60, 32
THRESHOLD = 0.85  # the numpy 5-nearest-neighbour vote reaches 0.953 on these held-out points, a line about 0.5
CHECK_SEED = 7  # initial weights and shuffle order of the check's training run
PROBE = np.random.RandomState(3).uniform(-1, 1, (64, 2)).astype(np.float32)  # points the untrained nets see


def spirals_split():
    points, labels = make_spirals(**SPIRALS)
    return points[:N_TRAIN], labels[:N_TRAIN], points[N_TRAIN:], labels[N_TRAIN:]


def _dataset(x, y, batch_size, shuffle):
    import mindspore.dataset as ds

    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=shuffle).batch(batch_size)


def _check_loss(loss_fn, logits):
    from mindspore import Tensor

    if loss_fn is None:
        raise Incorrect(t("the Model has no loss function: pass loss_fn as Model's second argument"))
    labels = np.arange(len(logits)) % logits.shape[1]
    try:
        value = loss_fn(Tensor(logits.astype(np.float32)), Tensor(labels.astype(np.int32)))
    except TypeError:
        raise Incorrect(t("the loss refuses int32 class labels: SoftmaxCrossEntropyWithLogits needs sparse=True "
                          "for labels that are class indices")) from None
    loss = array(value, t("the loss"))
    if loss.shape not in ((), (1,)):
        raise Incorrect(t("the loss gives {size} values for a batch of {n} points: one loss per point. "
                          "Average them: reduction='mean'", size=loss.size, n=len(logits)))
    got, want = float(loss.ravel()[0]), softmax_cross_entropy(logits, labels)
    if not close(got, want, rtol=1e-4, atol=1e-6):
        raise Incorrect(t("the loss of the checker's logits is {got:.5f}, but their mean softmax cross-entropy is "
                          "{want:.5f}: use nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')",
                          got=got, want=want))


def _check_classifier(answer):
    import mindspore as ms
    from mindspore import Tensor, nn
    from mindspore.train import Model

    for classes in (4, 3):  # 4 first: a net that ignores the argument fails here
        ms.set_seed(CHECK_SEED)
        model = classifier.call(answer, classes)
        if not isinstance(model, Model):
            raise Incorrect(t("build_classifier({classes}) must return a mindspore.train.Model, got {model}",
                              classes=classes, model=shown(model)))
        net, call = model.predict_network, f"build_classifier({classes})"
        logits = array(net(Tensor(PROBE)), t("the output of the net of {call}", call=call))
        if logits.shape != (len(PROBE), classes):
            got = (t("{count} numbers per point", count=logits.shape[1]) if logits.ndim == 2
                   and len(logits) == len(PROBE) else t("an output of shape {shape}", shape=logits.shape))
            raise Incorrect(t("for {n} points the net of {call} gives {got}, expected shape ({n}, {classes}): one "
                              "logit per class (use the argument classes)", n=len(PROBE), call=call, got=got,
                              classes=classes))
        if not np.all(np.isfinite(logits)):
            raise Incorrect(t("the net of {call} gives NaN or inf before any training", call=call))
    sums = logits.sum(axis=1)
    if close(sums, np.ones_like(sums), rtol=1e-5, atol=1e-4) and logits.min() >= 0:
        raise Incorrect(t("the net's outputs are probabilities (each row sums to 1): the net ends with a softmax. "
                          "Return logits (end with a Dense layer); the loss applies the softmax itself"))
    a, b = PROBE[:32], PROBE[32:]  # a stack of Dense layers without a non-linearity is affine in its input
    if close(net(Tensor(0.3 * a + 0.7 * b)).asnumpy(), 0.3 * logits[:32] + 0.7 * logits[32:], rtol=1e-4, atol=1e-4):
        raise Incorrect(t("the net is linear in its input, like a single Dense layer: its boundaries are straight "
                          "lines. Put a non-linearity (nn.Tanh() or nn.ReLU()) between the Dense layers"))
    _check_loss(getattr(model, "_loss_fn", None), logits)
    metrics = getattr(model, "_metric_fns", None) or {}
    if "accuracy" not in metrics:
        raise Incorrect(t("the Model's metrics must include 'accuracy', got {metrics}",
                          metrics=sorted(metrics) or t("none")))
    optimizer = getattr(model, "_optimizer", None)
    if not isinstance(optimizer, nn.Adam):
        raise Incorrect(t("use nn.Adam(net.trainable_params(), learning_rate=...) as the optimizer, got {optimizer}",
                          optimizer=shown(optimizer)))

    x_train, y_train, x_test, y_test = spirals_split()
    ms.set_seed(CHECK_SEED)
    model.train(EPOCHS, _dataset(x_train, y_train, BATCH, True), dataset_sink_mode=False)
    reported = number(model.eval(_dataset(x_test, y_test, 150, False))["accuracy"], t("the 'accuracy' metric"))
    predicted = net(Tensor(x_test)).asnumpy()
    if not np.all(np.isfinite(predicted)):
        raise Incorrect(t("after {epochs} epochs the net gives NaN or inf: lower the learning rate (Adam: 0.005 to "
                          "0.05)", epochs=EPOCHS))
    accuracy = float(np.mean(predicted.argmax(axis=1) == y_test))
    if not close(reported, accuracy, rtol=1e-5, atol=1e-6):
        raise Incorrect(t("the metric 'accuracy' says {reported:.4f}, but {accuracy:.4f} of the held-out points are "
                          "classified right: use nn.Accuracy()", reported=reported, accuracy=accuracy))
    if accuracy < THRESHOLD:
        knn = knn_accuracy(x_train, y_train, x_test, y_test, k=5)
        raise Incorrect(t("after {epochs} epochs your classifier gets {accuracy:.3f} of the {n} held-out spiral "
                          "points right; expected at least {threshold} (a 5-nearest-neighbour vote gets {knn:.3f}). "
                          "Give it more hidden units (16 to 64) or a larger learning rate (Adam: 0.01 to 0.05)",
                          epochs=EPOCHS, accuracy=accuracy, n=len(y_test), threshold=THRESHOLD, knn=knn))


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
                               "all {n} points it is {want:.4f}. Count right points and points, divide in eval "
                               "(article 003's mistake)")),
    ({"over": "last batch"}, lazy("{what}, accuracy is {accuracy:.4f}, the last batch's only: add each batch to the "
                                  "counts instead of replacing them")),
]
PRECISION_MISTAKES = [  # part 2 of metric_oracle is the recall; a class a batch never predicted: left out, or 0
    ({"part": 2}, lazy("{what}, precision is {precision}, the recall: precision divides the right predictions of a "
                       "class by how often it was *predicted* (a column of the confusion matrix)")),
    *[({"over": "batches", "undefined": undefined},
       lazy("{what}, precision is {precision}, the mean of the batch precisions; over all points it is {want}: keep "
            "counts per class, divide in eval")) for undefined in (np.nan, 0.0)],
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
        raise Incorrect(t("{what}, eval() still counts the batches fed before clear(): reset every count in clear()",
                          what=what))
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
classifier = FunctionExercise(_check_classifier, signature="build_classifier(classes)", hints=[
    lazy("the lesson's mlp() has the shape you need; what must change for `classes` classes?"),
    lazy("net = nn.SequentialCell(nn.Dense(2, 32), nn.Tanh(), nn.Dense(32, 32), nn.Tanh(), nn.Dense(32, classes)); "
         "the loss and metrics as in the lesson's train(); Adam with learning_rate=0.02"),
])
multi_metric = FunctionExercise(_check_multi_metric, signature="AccuracyPrecision(classes)", cls=True, hints=[
    lazy("keep counts, not averages: how many points, how many right, and per class how often it was predicted "
         "and how often that prediction was right"),
    lazy("in update: predicted = logits.argmax(axis=1); self.right += (predicted == labels).sum(); "
         "self.predicted += np.bincount(predicted, minlength=self.classes); self.right_per_class += "
         "np.bincount(predicted[predicted == labels], minlength=self.classes); eval divides"),
])

bind(globals())
