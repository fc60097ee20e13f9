"""The exercises of notebook 10 accept the reference solutions and reject typical wrong answers."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import nn  # noqa: E402
from mindspore.train import Metric, Model  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb10  # noqa: E402
from course_utils.data import make_spirals  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402
from course_utils.oracles import knn_accuracy  # noqa: E402

ms.runtime.launch_blocking()  # as notebook 10 does: PyNative steps of small nets run several times faster


def test_the_threshold_of_10_3_is_justified_by_the_references():
    """Nearest neighbours reach about 95 % on the check's held-out spirals, so 85 % is fair; the spirals are
    not the lesson's moons."""
    x_train, y_train, x_test, y_test = nb10.spirals_split()
    assert knn_accuracy(x_train, y_train, x_test, y_test, k=5) >= nb10.THRESHOLD + 0.08
    assert len(y_train) == 300 and len(y_test) == 150 and set(np.unique(y_test)) == {0, 1, 2}
    assert not np.array_equal(make_spirals(**nb10.SPIRALS)[0], make_spirals(450, 3, 0.05, seed=0)[0])


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


@pytest.mark.parametrize("ex", [nb10.classifier, nb10.multi_metric], ids=["10.3", "10.4"])
def test_the_reference_solutions_pass(ex):
    _, printed = reference(ex, Model=Model, Metric=Metric)
    assert printed.startswith("[ok]"), printed


# ---- 10.3 build_classifier ----------------------------------------------------------------------------------
def make_builder(hidden=32, activation=nn.Tanh, lr=0.02, out=None, loss=None, metrics=None, optimizer=nn.Adam,
                 softmax=False):
    def build_classifier(classes):
        act = [activation()] if activation else []
        layers = [nn.Dense(2, hidden), *act, nn.Dense(hidden, hidden), *act, nn.Dense(hidden, out or classes)]
        net = nn.SequentialCell(*layers, *([nn.Softmax()] if softmax else []))
        loss_fn = loss if loss is not None else nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        opt = optimizer(net.trainable_params(), learning_rate=lr)
        return Model(net, loss_fn, opt, metrics=metrics if metrics is not None else {"accuracy": nn.Accuracy()})
    return build_classifier


def test_classifier_accepts_a_relu_net():
    result = nb10.classifier.evaluate(make_builder(activation=nn.ReLU, lr=0.01, metrics={"accuracy"}))
    assert result.status == CORRECT, result.message


class Constant(Metric):
    """A metric called accuracy that is not."""

    def clear(self):
        pass

    def update(self, *inputs):
        pass

    def eval(self):
        return 0.99


@pytest.mark.parametrize("builder, expected", [
    (make_builder(activation=None), "linear in its input"),
    (make_builder(out=3), "gives 3 numbers per point, expected shape (64, 4)"),
    (make_builder(out=2), "gives 2 numbers per point"),
    (make_builder(softmax=True), "ends with a softmax"),
    (make_builder(loss=nn.SoftmaxCrossEntropyWithLogits()), "sparse=True"),
    (make_builder(loss=nn.SoftmaxCrossEntropyWithLogits(sparse=True)), "reduction='mean'"),
    (make_builder(loss=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum")), "mean softmax"),
    (make_builder(metrics={"loss"}), "must include 'accuracy'"),
    (make_builder(metrics={"accuracy": Constant()}), "use nn.Accuracy()"),
    (make_builder(optimizer=nn.SGD, lr=0.1), "nn.Adam"),
    (make_builder(hidden=4, lr=0.001), "expected at least 0.85"),
    (lambda classes: nn.Dense(2, classes), "must return a mindspore.train.Model"),
])
def test_classifier_rejects_typical_mistakes(builder, expected):
    result = nb10.classifier.evaluate(builder)
    assert result.status == INCORRECT and expected in result.message, result.message


# ---- 10.4 AccuracyPrecision ---------------------------------------------------------------------------------
class Reference(Metric):
    """The reference's counts, with a _batch step the mistakes below alter."""

    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.clear()

    def clear(self):
        self.n, self.right = 0, 0
        self.predicted, self.hits = np.zeros(self.classes), np.zeros(self.classes)

    def _batch(self, inputs):
        return self._convert_data(inputs[0]).argmax(axis=1), self._convert_data(inputs[1])

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


class PrecisionAveraged(ArticleAverages):
    """Right accuracy, but precision as the mean of the batch precisions."""

    def clear(self):
        super().clear()
        Reference.clear(self)

    def update(self, *inputs):
        super().update(*inputs)
        Reference.update(self, *inputs)

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
    def clear(self):
        if not hasattr(self, "n"):
            super().clear()


class WrongAxis(Reference):
    def _batch(self, inputs):
        predicted, labels = super()._batch((inputs[0].T, inputs[1]))
        return np.resize(predicted, labels.shape), labels


def _returning(make):
    """A Reference whose eval returns make(its right result)."""
    return type("Returning", (Reference,), {"eval": lambda self: make(Reference.eval(self))})


@pytest.mark.parametrize("answer, expected", [
    (ArticleAverages, "the mean of the 4 batch accuracies"),
    (PrecisionAveraged, "the mean of the batch precisions"),
    (Recall, "the recall"),
    (LastBatchOnly, "the last batch's only"),
    (NeverCleared, "still counts the batches fed before clear()"),
    (_returning(lambda r: {**r, "precision": float(r["precision"].mean())}), "one value per class, shape (3,)"),
    (_returning(lambda r: {**r, "precision": np.full(3, np.nan)}), "NaN or inf"),
    (_returning(lambda r: r["accuracy"]), "must return a dict"),
    (_returning(lambda r: {**r, "accuracy": "0.9"}), "not text"),
    (WrongAxis, "your answer raised ValueError"),
    (Reference(3), "not an instance"),
    (nn.Accuracy, "raised TypeError"),
    (int, "expected a class derived from mindspore.train.Metric"),
])
def test_multi_metric_rejects_typical_mistakes(answer, expected):
    result = nb10.multi_metric.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message
