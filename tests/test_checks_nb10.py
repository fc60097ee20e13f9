"""The exercises of notebook 10 accept the reference solutions and reject typical wrong answers."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import nn  # noqa: E402
from mindspore.train import Metric, Model  # noqa: E402

from course_utils.checks import nb10  # noqa: E402
from course_utils.data import make_spirals  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402
from course_utils.oracles import knn_accuracy  # noqa: E402

ms.runtime.launch_blocking()  # as notebook 10 does: PyNative steps of small nets run several times faster


# ---- 10.1, 10.2 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prediction, right", [(nb10.one_hot_sparse, "c"), (nb10.linear_accuracy, "c")])
def test_predictions(prediction, right):
    assert prediction.evaluate(...).status == NOT_ATTEMPTED
    assert prediction.evaluate(right).status == CORRECT
    for letter in prediction.options:
        if letter != right:
            assert prediction.evaluate(letter).status == INCORRECT


def test_the_threshold_of_10_3_is_justified_by_the_references():
    """Nearest neighbours reach about 95 % on the check's held-out spirals, so 85 % is fair; the spirals are
    not the lesson's moons."""
    x_train, y_train, x_test, y_test = nb10.spirals_split()
    assert knn_accuracy(x_train, y_train, x_test, y_test, k=5) >= nb10.THRESHOLD + 0.08
    assert len(y_train) == 300 and len(y_test) == 150 and set(np.unique(y_test)) == {0, 1, 2}
    assert not np.array_equal(make_spirals(**nb10.SPIRALS)[0], make_spirals(450, 3, 0.05, seed=0)[0])


# ---- 10.3 build_classifier ----------------------------------------------------------------------------------
def make_builder(hidden=32, activation=nn.Tanh, lr=0.02, out=None, loss=None, metrics=None, optimizer=nn.Adam,
                 softmax=False):
    def build_classifier(classes):
        act = [activation()] if activation else []
        layers = [nn.Dense(2, hidden), *act, nn.Dense(hidden, hidden), *act, nn.Dense(hidden, out or classes)]
        if softmax:
            layers.append(nn.Softmax())
        net = nn.SequentialCell(*layers)
        loss_fn = loss if loss is not None else nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        opt = optimizer(net.trainable_params(), learning_rate=lr)
        return Model(net, loss_fn, opt, metrics=metrics if metrics is not None else {"accuracy": nn.Accuracy()})
    return build_classifier


def test_classifier_accepts_the_reference_and_a_relu_net():
    assert nb10.classifier.evaluate(make_builder()).status == CORRECT
    assert nb10.classifier.evaluate(make_builder(hidden=32, activation=nn.ReLU, lr=0.01,
                                                 metrics={"accuracy"})).status == CORRECT


def test_classifier_scaffold_is_not_attempted():
    def build_classifier(classes):
        net = ...
        loss_fn = ...
        optimizer = ...
        return Model(net, loss_fn, optimizer, metrics=...)

    assert nb10.classifier.evaluate(build_classifier).status == NOT_ATTEMPTED


@pytest.mark.parametrize("builder, expected", [
    (make_builder(activation=None), "linear in its input"),
    (make_builder(out=3), "gives 3 numbers per point, expected shape (64, 4)"),
    (make_builder(out=2), "gives 2 numbers per point"),
    (make_builder(softmax=True), "ends with a softmax"),
    (make_builder(loss=nn.SoftmaxCrossEntropyWithLogits()), "sparse=True"),
    (make_builder(loss=nn.SoftmaxCrossEntropyWithLogits(sparse=True)), "reduction='mean'"),
    (make_builder(loss=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum")), "mean softmax"),
    (make_builder(metrics={"loss"}), "must include 'accuracy'"),
    (make_builder(optimizer=nn.SGD, lr=0.1), "nn.Adam"),
    (make_builder(hidden=4, lr=0.001), "expected at least 0.85"),
    (lambda classes: None, "returned None"),
    (lambda classes: nn.Dense(2, classes), "must return a mindspore.train.Model"),
    ("build_classifier", "the function build_classifier itself"),
])
def test_classifier_rejects_typical_mistakes(builder, expected):
    result = nb10.classifier.evaluate(builder)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_classifier_rejects_a_metric_called_accuracy_that_is_not():
    class Constant(Metric):
        def clear(self):
            pass

        def update(self, *inputs):
            pass

        def eval(self):
            return 0.99

    result = nb10.classifier.evaluate(make_builder(metrics={"accuracy": Constant()}))
    assert result.status == INCORRECT and "use nn.Accuracy()" in result.message, result.message


# ---- 10.4 AccuracyPrecision ---------------------------------------------------------------------------------
class Reference(Metric):
    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.clear()

    def clear(self):
        self.n, self.right = 0, 0
        self.predicted, self.hits = np.zeros(self.classes), np.zeros(self.classes)

    def _batch(self, inputs):
        logits, labels = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        return logits.argmax(axis=1), labels

    def update(self, *inputs):
        predicted, labels = self._batch(inputs)
        self.n += len(labels)
        self.right += int((predicted == labels).sum())
        self.predicted += np.bincount(predicted, minlength=self.classes)
        self.hits += np.bincount(predicted[predicted == labels], minlength=self.classes)

    def eval(self):
        return {"accuracy": self.right / self.n, "precision": self.hits / np.maximum(self.predicted, 1)}


class ArticleAverages(Reference):
    """Article 003: per-batch accuracy and precision, averaged over the batches."""

    def clear(self):
        self.batches, self.acc, self.prec = 0, 0.0, np.zeros(self.classes)

    def update(self, *inputs):
        predicted, labels = self._batch(inputs)
        hits = np.bincount(predicted[predicted == labels], minlength=self.classes)
        self.acc += np.mean(predicted == labels)
        self.prec += hits / np.maximum(np.bincount(predicted, minlength=self.classes), 1)
        self.batches += 1

    def eval(self):
        return {"accuracy": self.acc / self.batches, "precision": self.prec / self.batches}


class PrecisionAveraged(Reference):
    """Right accuracy, but precision as the mean of the batch precisions."""

    def clear(self):
        super().clear()
        self.batches, self.prec = 0, np.zeros(self.classes)

    def update(self, *inputs):
        super().update(*inputs)
        predicted, labels = self._batch(inputs)
        self.prec += (np.bincount(predicted[predicted == labels], minlength=self.classes)
                      / np.maximum(np.bincount(predicted, minlength=self.classes), 1))
        self.batches += 1

    def eval(self):
        return {"accuracy": self.right / self.n, "precision": self.prec / self.batches}


class Recall(Reference):
    def clear(self):
        super().clear()
        self.true = np.zeros(self.classes)

    def update(self, *inputs):
        super().update(*inputs)
        self.true += np.bincount(self._batch(inputs)[1], minlength=self.classes)

    def eval(self):
        return {"accuracy": self.right / self.n, "precision": self.hits / self.true}


class LastBatchOnly(Reference):
    def update(self, *inputs):
        self.clear()
        super().update(*inputs)


class NeverCleared(Reference):
    def __init__(self, classes):
        super().__init__(classes)
        self.started = True

    def clear(self):
        if not getattr(self, "started", False):
            super().clear()


class MacroPrecision(Reference):
    def eval(self):
        result = super().eval()
        return {"accuracy": result["accuracy"], "precision": float(result["precision"].mean())}


class WrongAxis(Reference):
    def _batch(self, inputs):
        logits, labels = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        return np.resize(logits.argmax(axis=0), labels.shape), labels


def test_multi_metric_accepts_the_reference():
    assert nb10.multi_metric.evaluate(Reference).status == CORRECT


def test_multi_metric_scaffold_is_not_attempted():
    class AccuracyPrecision(Metric):
        def __init__(self, classes):
            super().__init__()
            self.classes = classes
            self.clear()

        def clear(self):
            ...

        def update(self, *inputs):
            ...

        def eval(self):
            accuracy = ...
            precision = ...
            return {"accuracy": accuracy, "precision": precision}

    assert nb10.multi_metric.evaluate(AccuracyPrecision).status == NOT_ATTEMPTED


@pytest.mark.parametrize("answer, expected", [
    (ArticleAverages, "the mean of the 4 batch accuracies"),
    (PrecisionAveraged, "the mean of the batch precisions"),
    (Recall, "the recall"),
    (LastBatchOnly, "the last batch's only"),
    (NeverCleared, "still counts the batches fed before clear()"),
    (MacroPrecision, "one value per class, shape (3,)"),
    (WrongAxis, "your answer raised ValueError"),
    (Reference(3), "not an instance"),
    (nn.Accuracy, "raised TypeError"),
    (int, "expected a class derived from mindspore.train.Metric"),
])
def test_multi_metric_rejects_typical_mistakes(answer, expected):
    result = nb10.multi_metric.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_a_line_gets_about_half_of_the_checks_spirals():
    """The exercise text says the best linear model gets about 50 % of the check's held-out spirals."""
    import mindspore.dataset as ds

    x_train, y_train, x_test, y_test = nb10.spirals_split()
    ms.set_seed(0)
    net = nn.Dense(2, 3)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Adam(net.trainable_params(), learning_rate=0.02), metrics={"accuracy"})
    model.train(nb10.EPOCHS, ds.NumpySlicesDataset({"x": x_train, "y": y_train}).batch(nb10.BATCH))
    accuracy = model.eval(ds.NumpySlicesDataset({"x": x_test, "y": y_test}, shuffle=False).batch(150))["accuracy"]
    assert 0.4 < accuracy < 0.6, accuracy


JUNK = [None, 0, 1.5, float("nan"), "c", b"x", [], [1, 2], {"accuracy": 1.0}, np.zeros(3), object(), print, type,
        lambda *args: None, lambda *args: "text", lambda *args: float("inf"), lambda *args: np.zeros((2, 2))]


@pytest.mark.parametrize("exercise", [nb10.classifier, nb10.multi_metric], ids=["10.3", "10.4"])
@pytest.mark.parametrize("junk", JUNK, ids=[f"junk{i}" for i in range(len(JUNK))])
def test_junk_is_rejected_without_raising(exercise, junk):
    result = exercise.evaluate(junk)
    assert result.status in (INCORRECT, NOT_ATTEMPTED) and result.message, result


def test_a_metric_returning_junk_is_rejected():
    class NaNPrecision(Reference):
        def eval(self):
            return {"accuracy": self.right / self.n, "precision": np.full(self.classes, np.nan)}

    class NotADict(Reference):
        def eval(self):
            return self.right / self.n

    class TextAccuracy(Reference):
        def eval(self):
            return {"accuracy": "0.9", "precision": super().eval()["precision"]}

    for answer, expected in ((NaNPrecision, "NaN or inf"), (NotADict, "must return a dict"),
                             (TextAccuracy, "not text")):
        result = nb10.multi_metric.evaluate(answer)
        assert result.status == INCORRECT and expected in result.message, result.message
