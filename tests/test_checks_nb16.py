"""Notebook 16's checks: the references pass, and typical mistakes are named, each with its own message."""

import numpy as np
import pytest
from mindspore import Tensor, nn
from reference_solutions import reference

from course_utils.checks import nb16
from course_utils.exercises import CORRECT, INCORRECT


# train_function's reference decorates its step with @ms.jit, which needs the source of the function: exec'd
# outside a file it has none, so _train_model() below (written with Model) stands in for it.
@pytest.mark.parametrize("ex", [nb16.mlp_class, nb16.loss_and_metrics, nb16.accuracy_function], ids=lambda ex: ex.key)
def test_references_pass(ex):
    assert reference(ex)[1].startswith("[ok]")


def _mlp(kind="right"):
    class MLP(nn.Cell):
        def __init__(self, hidden=32, classes=3):
            super().__init__()
            act = [] if kind == "linear" else [nn.ReLU()]
            last = {"softmax": [nn.Softmax()], "relu last": [nn.ReLU()]}.get(kind, [])
            width = 32 if kind == "fixed width" else hidden
            out = 1 if kind == "one output" else classes
            layers = ([nn.Dense(2, out)] if kind == "one layer" else
                      [nn.Dense(2, width), *act, nn.Dense(width, width), *act, nn.Dense(width, out), *last])
            self.body = nn.SequentialCell(*(layers if kind != "linear then relu" else
                                            [nn.Dense(2, hidden), nn.Dense(hidden, classes), nn.ReLU()]))

        def construct(self, x):
            return self.body(x)

    return MLP


def _residual(order="in, middle, out", relu_after_sum=False):
    """The exercise's net with a skip, its layers defined in another order (or with the ReLU after the sum)."""
    class MLP(nn.Cell):
        def __init__(self, hidden=32, classes=3):
            super().__init__()
            if order == "out, middle, in":
                self.last, self.middle, self.first = (nn.Dense(hidden, classes), nn.Dense(hidden, hidden),
                                                      nn.Dense(2, hidden))
            else:
                self.first, self.middle, self.last = (nn.Dense(2, hidden), nn.Dense(hidden, hidden),
                                                      nn.Dense(hidden, classes))
            self.relu = nn.ReLU()

        def construct(self, x):
            h = self.relu(self.first(x))
            h = self.relu(h + self.middle(h)) if relu_after_sum else h + self.relu(self.middle(h))
            return self.last(h)

    return MLP


def _capstone_mlp():
    from capstone.model import MLP as ProjectMLP

    class MLP(ProjectMLP):  # the course's own helper, with the exercise's signature
        def __init__(self, hidden=32, classes=3):
            super().__init__(hidden=hidden, classes=classes)

    return MLP


def _train_model(mistake=None):
    """train_model written with Model (the reference uses a jit loop), with one typical mistake or none."""
    import mindspore.dataset as ds
    from mindspore.train import Model

    def train_model(net, loss_fn, x, y, lr, epochs, batch_size):
        if mistake == "new net":
            net = nn.SequentialCell(nn.Dense(2, 4), nn.Tanh(), nn.Dense(4, 3))
        optimizer = (nn.SGD if mistake == "sgd" else nn.Adam)(net.trainable_params(), learning_rate=lr)
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=mistake == "shuffle")
        data = data.batch(len(x) if mistake == "full batch" else batch_size, drop_remainder=mistake == "drop last")
        Model(net, loss_fn, optimizer).train(1 if mistake == "one epoch" else epochs, data, dataset_sink_mode=False)
        return net

    return train_model


def test_train_oracle_moves_downhill():
    x, y, init = nb16._train_setup()

    def loss(params):
        w1, c1, w2, c2 = params
        z = np.tanh(x @ w1.T + c1) @ w2.T + c2
        z = z - z.max(1, keepdims=True)
        return float(-np.mean(z[np.arange(len(y)), y] - np.log(np.exp(z).sum(1))))

    assert loss(nb16.train_oracle()) < loss(init)
    assert np.isclose(loss(nb16.train_oracle(epochs=0)), loss(init), rtol=1e-6)
    assert len(set(y.tolist())) == 3


def _right_accuracy(net, x, y):
    return float(np.mean(net(Tensor(x)).asnumpy().argmax(axis=1) == y))


RIGHT_LOSS = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")


@pytest.mark.parametrize("ex, answer, text", [
    (nb16.mlp_class, _mlp(), "is not added back to its output"),
    (nb16.mlp_class, _capstone_mlp(), "is not added back to its output"),
    (nb16.mlp_class, _residual(relu_after_sum=True), "your ReLU comes after the sum"),
    (nb16.mlp_class, _mlp("linear"), "still a linear function of the point"),
    (nb16.mlp_class, _mlp("one layer"), "add a hidden layer"),
    (nb16.mlp_class, _mlp("one output"), "end with Dense(hidden, classes)"),
    (nb16.mlp_class, _mlp("softmax"), "return the raw scores"),
    (nb16.mlp_class, _mlp("fixed width"), "use `hidden` as the width"),
    (nb16.mlp_class, _mlp("relu last"), "the scores are never negative"),
    (nb16.mlp_class, _mlp("linear then relu"), "the scores are never negative"),  # a linear classifier, clipped
    (nb16.mlp_class, _mlp()(), "not an instance"),
    (nb16.mlp_class, type("MLP", (), {}), "must subclass nn.Cell"),
    (nb16.loss_and_metrics, (nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean"), {"accuracy"}),
     "not one-hot rows: has the loss been told so?"),
    (nb16.loss_and_metrics, (nn.SoftmaxCrossEntropyWithLogits(sparse=True), {"accuracy"}),
     "which argument of the loss says how to reduce it"),
    (nb16.loss_and_metrics, (nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum"), {"accuracy"}),
     "the sum over the batch"),
    (nb16.loss_and_metrics, (nn.MSELoss(), {"accuracy"}), "the loss"),
    (nb16.loss_and_metrics, (RIGHT_LOSS, {"mse"}), "has no 'accuracy'"),
    (nb16.loss_and_metrics, (RIGHT_LOSS, "accuracy"), "metrics must be a set of names"),
    (nb16.loss_and_metrics, RIGHT_LOSS, "expected the pair (loss_fn, metrics)"),
    (nb16.train_function, _train_model("sgd"), "plain SGD"),
    (nb16.train_function, _train_model("drop last"), "the last, smaller batch"),
    (nb16.train_function, _train_model("full batch"), "one full batch per epoch"),
    (nb16.train_function, _train_model("one epoch"), "that is 1 epoch"),
    (nb16.train_function, _train_model("new net"), "did not change: train the net you are given"),
    (nb16.train_function, _train_model("shuffle"), "without shuffling"),
    (nb16.accuracy_function, lambda net, x, y: float(np.sum(net(Tensor(x)).asnumpy().argmax(1) == y)),
     "number of correct predictions"),
    (nb16.accuracy_function, lambda net, x, y: 100 * _right_accuracy(net, x, y), "is a percentage"),
    (nb16.accuracy_function, lambda net, x, y: net(Tensor(x)).asnumpy().argmax(1) == y, "returned an array"),
    (nb16.accuracy_function, lambda net, x, y: float(np.mean(net(Tensor(x)).asnumpy().argmax(0)[:1] == y)),
     "which axis of the scores holds the classes"),
    (nb16.accuracy_function, lambda net, x, y: float("nan"), "finite number"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_typical_mistakes_are_named(ex, answer, text):
    result = ex.evaluate(answer)
    assert result.status == INCORRECT and text in result.message, result.message


@pytest.mark.parametrize("ex, answer", [
    (nb16.mlp_class, _residual("out, middle, in")), (nb16.loss_and_metrics, (RIGHT_LOSS, {"accuracy"})),
    (nb16.loss_and_metrics, (nn.CrossEntropyLoss(), {"accuracy", "loss"})), (nb16.train_function, _train_model()),
], ids=lambda v: None)
def test_other_right_answers_pass(ex, answer):
    result = ex.evaluate(answer)
    assert result.status == CORRECT, result.message


def test_train_function_is_not_fooled_by_inputs_or_constants():
    for answer in (lambda net, loss_fn, x, y, lr, epochs, batch_size: net, lambda *args: nb16.train_oracle()):
        assert nb16.train_function.evaluate(answer).status == INCORRECT


def test_the_first_hint_does_not_give_the_net_away():
    assert "SequentialCell(" not in nb16.mlp_class.hints[0]
