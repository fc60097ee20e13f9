"""Notebook 16's checks: each accepts its reference and rejects typical mistakes with its own message."""

import numpy as np
import pytest

from course_utils.checks import nb16
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def _mlp(kind="right"):
    from mindspore import nn

    class MLP(nn.Cell):
        def __init__(self, hidden=32, classes=3):
            super().__init__()
            act = [] if kind == "linear" else [nn.ReLU()]
            last = [nn.Softmax()] if kind == "softmax" else []
            width = 32 if kind == "fixed width" else hidden
            out = 1 if kind == "one output" else classes
            layers = ([nn.Dense(2, out)] if kind == "one layer" else
                      [nn.Dense(2, width), *act, nn.Dense(width, width), *act, nn.Dense(width, out), *last])
            self.body = nn.SequentialCell(*layers)

        def construct(self, x):
            return self.body(x)

    return MLP


def test_mlp_class_accepts_the_reference_and_names_mistakes():
    assert nb16.mlp_class.evaluate(...).status == NOT_ATTEMPTED
    assert nb16.mlp_class.evaluate(_mlp()).status == CORRECT
    for kind, text in [("linear", "still a linear function of the point"), ("one layer", "add a hidden layer"),
                       ("one output", "end with Dense(hidden, classes)"), ("softmax", "return the raw scores"),
                       ("fixed width", "use `hidden` as the width")]:
        result = nb16.mlp_class.evaluate(_mlp(kind))
        assert result.status == INCORRECT and text in result.message, (kind, result.message)
    assert "not an instance" in nb16.mlp_class.evaluate(_mlp()()).message
    assert len(nb16.mlp_class.hints) == 3 and "SequentialCell(" not in nb16.mlp_class.hints[0]


def test_mlp_scaffold_is_not_attempted():
    from mindspore import nn

    class MLP(nn.Cell):
        def __init__(self, hidden=32, classes=3):
            super().__init__()
            self.body = ...

        def construct(self, x):
            return self.body(x)

    assert nb16.mlp_class.evaluate(MLP).status == NOT_ATTEMPTED


def test_loss_and_metrics():
    from mindspore import nn

    right = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    assert nb16.loss_and_metrics.evaluate((..., ...)).status == NOT_ATTEMPTED
    assert nb16.loss_and_metrics.evaluate((right, ...)).status == NOT_ATTEMPTED
    assert nb16.loss_and_metrics.evaluate((right, {"accuracy"})).status == CORRECT
    assert nb16.loss_and_metrics.evaluate((nn.CrossEntropyLoss(), {"accuracy", "loss"})).status == CORRECT
    for answer, text in [
        ((nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean"), {"accuracy"}), "needs sparse=True"),
        ((nn.SoftmaxCrossEntropyWithLogits(sparse=True), {"accuracy"}), "reduction='mean'"),  # default: none
        ((nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum"), {"accuracy"}), "the sum over the batch"),
        ((nn.MSELoss(), {"accuracy"}), "the loss"),
        ((right, {"mse"}), "has no 'accuracy'"),
        ((right, "accuracy"), "metrics must be a set of names"),
        (right, "expected the pair (loss_fn, metrics)"),
    ]:
        result = nb16.loss_and_metrics.evaluate(answer)
        assert result.status == INCORRECT and text in result.message, (text, result.message)


def _train_model(mistake=None):
    """train_model written with Model (the reference uses a jit loop), with one typical mistake or none."""
    import mindspore.dataset as ds
    from mindspore import nn
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


def test_train_function_accepts_the_reference():
    result = nb16.train_function.evaluate(_train_model())
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("mistake, text", [
    ("sgd", "plain SGD"),
    ("drop last", "the last, smaller batch"),
    ("full batch", "one full batch per epoch"),
    ("one epoch", "that is 1 epoch"),
    ("new net", "did not change: train the net you are given"),
    ("shuffle", "without shuffling"),
])
def test_train_function_rejects(mistake, text):
    result = nb16.train_function.evaluate(_train_model(mistake))
    assert result.status == INCORRECT and text in result.message, result.message


def test_train_function_is_not_fooled_by_inputs_or_constants():
    for answer in (lambda net, loss_fn, x, y, lr, epochs, batch_size: net, lambda *args: None,
                   lambda *args: nb16.train_oracle(), "train_model", 0.01):
        assert nb16.train_function.evaluate(answer).status == INCORRECT


def _train_stub(net, loss_fn, x, y, lr, epochs, batch_size):
    optimizer = ...
    return optimizer


def test_train_function_scaffold_is_not_attempted():
    assert nb16.train_function.evaluate(_train_stub).status == NOT_ATTEMPTED


def test_accuracy_function():
    from mindspore import Tensor

    def right(net, x, y):
        return float(np.mean(net(Tensor(x)).asnumpy().argmax(axis=1) == y))

    assert nb16.accuracy_function.evaluate(right).status == CORRECT
    mistakes = [
        (lambda net, x, y: float(np.sum(net(Tensor(x)).asnumpy().argmax(1) == y)), "number of correct predictions"),
        (lambda net, x, y: 100 * right(net, x, y), "is a percentage"),
        (lambda net, x, y: net(Tensor(x)).asnumpy().argmax(1) == y, "returned an array"),
        (lambda net, x, y: float(np.mean(net(Tensor(x)).asnumpy().argmax(0)[:1] == y)), "argmax of the scores"),
        (lambda net, x, y: float("nan"), "finite number"),
        (lambda net, x, y: "0.9", "not text"),
    ]
    for answer, text in mistakes:
        result = nb16.accuracy_function.evaluate(answer)
        assert result.status == INCORRECT and text in result.message, (text, result.message)

    def stub(net, x, y):
        scores = ...
        return scores

    assert nb16.accuracy_function.evaluate(stub).status == NOT_ATTEMPTED


@pytest.mark.parametrize("prediction, right", [(nb16.resume_exact, "a"), (nb16.amp_speed, "b")])
def test_predictions_explain_every_option(prediction, right):
    assert prediction.evaluate(right).status == CORRECT
    for letter, (_text, why) in prediction.options.items():
        if letter != right:
            result = prediction.evaluate(letter)
            assert result.status == INCORRECT and why in result.message
