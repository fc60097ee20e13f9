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
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402

ms.runtime.launch_blocking()  # as notebook 10 does: PyNative steps of small nets run several times faster


def test_the_checks_mistakes_give_other_numbers_than_the_answer():
    """On the check's data, the mean over batches and the sum are far from the mean over the points (so the
    named mistakes cannot be confused with the answer), and the data is not the lesson's moons (3 classes)."""
    want = nb10.evaluation_oracle()
    assert abs(nb10.evaluation_oracle("batches") - want) > 0.1 * want
    assert nb10.evaluation_oracle("sum") == pytest.approx(want * nb10.EVAL_POINTS)
    _, _, labels = nb10._evaluation_setup()
    assert set(np.unique(labels)) == {0, 1, 2} and len(labels) % nb10.EVAL_BATCH == 13


def test_the_checks_net_is_the_oracles_net_in_evaluation_mode():
    """The numpy oracle is the check's MindSpore net with Dropout passing everything through."""
    from mindspore import Tensor

    net = nb10._evaluation_net()
    assert net.training
    _, points, labels = nb10._evaluation_setup()
    net.set_train(False)
    loss = float(nn.CrossEntropyLoss()(net(Tensor(points)), Tensor(labels)).asnumpy())
    assert loss == pytest.approx(nb10.evaluation_oracle(), rel=1e-5)


@pytest.mark.parametrize("ex", [nb10.evaluation_loss, nb10.multi_metric], ids=["10.3", "10.4"])
def test_the_reference_solutions_pass(ex):
    _, printed = reference(ex, Model=Model, Metric=Metric)
    assert printed.startswith("[ok]"), printed


# ---- 10.3 held_out_loss -------------------------------------------------------------------------------------
def make_held_out_loss(evaluation_mode=True, loss=None, over="points", what="loss"):
    def held_out_loss(net, dataset):
        if evaluation_mode:
            net.set_train(False)
        totals, counts, right = [], [], 0
        for x, y in dataset.create_tuple_iterator():
            loss_fn = loss or nn.CrossEntropyLoss()
            totals.append(float(loss_fn(net(x), y).asnumpy()))
            counts.append(len(y))
            right += int((net(x).asnumpy().argmax(axis=1) == y.asnumpy()).sum())
        if what == "accuracy":
            return right / sum(counts)
        if over == "batches":
            return float(np.mean(totals))
        if over == "sum":
            return float(np.dot(totals, counts))
        return float(np.dot(totals, counts) / sum(counts))
    return held_out_loss


def test_held_out_loss_accepts_the_fused_loss_summed():
    """SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum") over the batches, divided once, is right too."""
    def held_out_loss(net, dataset):
        net.set_train(False)
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum")
        total = points = 0
        for x, y in dataset.create_tuple_iterator():
            total += float(loss_fn(net(x), y).asnumpy())
            points += len(y)
        return total / points
    assert nb10.evaluation_loss.evaluate(held_out_loss).status == CORRECT
    assert nb10.evaluation_loss.evaluate(make_held_out_loss()).status == CORRECT


@pytest.mark.parametrize("answer, expected", [
    (make_held_out_loss(evaluation_mode=False), "Dropout is still active"),
    (make_held_out_loss(over="batches"), "the mean of the 3 batch means"),
    (make_held_out_loss(over="sum"), "the sum over the 113 points"),
    (make_held_out_loss(what="accuracy"), "not an accuracy"),
    (lambda net, dataset: "3.5", "must be a"),
])
def test_held_out_loss_rejects_typical_mistakes(answer, expected):
    result = nb10.evaluation_loss.evaluate(answer)
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
        return inputs[0].asnumpy().argmax(axis=1), inputs[1].asnumpy()

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
