"""Each exercise check accepts the reference solution and rejects typical wrong answers."""

import numpy as np
import pytest

from course_utils.checks import nb00, nb01, nb02, nb03
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def status(exercise, answer):
    return exercise.evaluate(answer).status


def message(exercise, answer):
    return exercise.evaluate(answer).message


ALL = [nb00.version, nb00.default_mode, nb01.param_count, nb01.to_float32, nb01.dense_twice,
       nb02.l1_by_hand, nb02.l1_loss_cell, nb03.learning_rate, nb03.least_squares]


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.name)
def test_not_attempted(exercise):
    assert status(exercise, ...) == NOT_ATTEMPTED


def test_nb00():
    import mindspore as ms

    assert status(nb00.version, ms.__version__) == CORRECT
    assert "not the installed version" in message(nb00.version, "1.8.1")
    assert "expected a string" in message(nb00.version, 2.1)
    assert status(nb00.default_mode, ms.PYNATIVE_MODE) == CORRECT
    assert "2.10 starts in PyNative" in message(nb00.default_mode, ms.GRAPH_MODE)
    assert status(nb00.default_mode, "graph") == INCORRECT


def test_nb01_param_count():
    assert status(nb01.param_count, 8) == CORRECT
    assert "also has a bias" in message(nb01.param_count, 6)
    assert "per *output*" in message(nb01.param_count, 5)
    assert status(nb01.param_count, 8.0) == INCORRECT


def test_nb01_to_float32():
    assert status(nb01.to_float32, nb01.X64.astype(np.float32)) == CORRECT
    assert "dtype is float64" in message(nb01.to_float32, nb01.X64)
    assert "shape is (5,)" in message(nb01.to_float32, nb01.X64.astype(np.float32).ravel())
    assert "values changed" in message(nb01.to_float32, np.zeros((5, 1), np.float32))
    import mindspore as ms

    assert "numpy array" in message(nb01.to_float32, ms.Tensor(nb01.X64.astype(np.float32)))


def test_nb01_dense_twice():
    from mindspore import nn

    class DenseTwice(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1)

        def construct(self, x):
            return self.dense(self.dense(x))

    class DenseOnce(DenseTwice):
        def construct(self, x):
            return self.dense(x)

    class TwoLayers(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Dense(1, 1), nn.Dense(1, 1)

        def construct(self, x):
            return self.b(self.a(x))

    assert status(nb01.dense_twice, DenseTwice) == CORRECT
    assert "applies the Dense layer once" in message(nb01.dense_twice, DenseOnce)
    assert "exactly one Dense" in message(nb01.dense_twice, TwoLayers)
    assert "not an instance" in message(nb01.dense_twice, DenseTwice())


def test_nb02_l1_by_hand():
    diff = nb02.PREDICTIONS.astype(np.float64) - nb02.LABELS
    assert status(nb02.l1_by_hand, np.mean(np.abs(diff))) == CORRECT
    assert "mean *squared* error" in message(nb02.l1_by_hand, np.mean(diff ** 2))
    assert "is the sum" in message(nb02.l1_by_hand, np.sum(np.abs(diff)))
    assert "cancelled out" in message(nb02.l1_by_hand, np.mean(diff))
    assert "single number" in message(nb02.l1_by_hand, [1.0, 2.0])


def test_nb02_l1_loss_cell():
    from mindspore import nn

    net = nn.Dense(1, 1, weight_init="normal")
    assert status(nb02.l1_loss_cell, nn.WithLossCell(net, nn.L1Loss())) == CORRECT
    assert "that is the MSE loss" in message(nb02.l1_loss_cell, nn.WithLossCell(net, nn.MSELoss()))
    assert "expected a Cell instance" in message(nb02.l1_loss_cell, nn.L1Loss)
    assert status(nb02.l1_loss_cell, nn.WithLossCell(net, nn.HuberLoss())) == INCORRECT


def test_nb03_gradient_descent_matches_closed_form_and_mindspore_facts():
    ws, bs, losses = nb03.gradient_descent(0.7, steps=300)
    x, y = make_linear_data()
    design = np.hstack([x, np.ones_like(x)]).astype(np.float64)
    (w_ls, b_ls), *_ = np.linalg.lstsq(design, y.astype(np.float64).ravel(), rcond=None)
    assert abs(ws[-1] - w_ls) < 1e-8 and abs(bs[-1] - b_ls) < 1e-8
    assert np.all(np.diff(losses) <= 1e-15)
    ws, bs, _ = nb03.gradient_descent(0.01)  # the article's recipe (FACTS: w = 0.57, b = 0.64)
    assert abs(ws[-1] - 0.57) < 0.02 and abs(bs[-1] - 0.64) < 0.02


def test_nb03_learning_rate():
    for lr in (0.3, 0.5, 0.79):
        assert status(nb03.learning_rate, lr) == CORRECT, lr
    assert "Try a larger one" in message(nb03.learning_rate, 0.01)
    assert "diverges" in message(nb03.learning_rate, 0.9)
    assert "Try a smaller one" in message(nb03.learning_rate, 0.81)
    assert "must be positive" in message(nb03.learning_rate, -0.5)
    assert "must be a number, not text" in message(nb03.learning_rate, "0.5")


def test_nb03_least_squares():
    x, y = make_linear_data()
    design = np.hstack([x, np.ones_like(x)]).astype(np.float64)
    (w, b), *_ = np.linalg.lstsq(design, y.astype(np.float64).ravel(), rcond=None)
    assert status(nb03.least_squares, (w, b)) == CORRECT
    assert "line the data was made from" in message(nb03.least_squares, (2.0, 0.0))
    w0 = float(np.sum(x * y) / np.sum(x * x))
    assert "through the origin" in message(nb03.least_squares, (w0, 0.0))
    assert "expected a pair" in message(nb03.least_squares, 2.0)
    assert status(nb03.least_squares, (w + 0.01, b)) == INCORRECT
