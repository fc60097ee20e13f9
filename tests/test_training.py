"""course_utils.training: the course's one training helper, the same code as notebook 03 shows, checked
against the numpy oracles (course_utils.oracles)."""

import json
from pathlib import Path

import numpy as np
import pytest

from course_utils import oracles, training
from course_utils.data import make_linear_data

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "03_train_one_step.ipynb"
X, Y = make_linear_data()


def _lesson_code():
    """The module's code below its imports: what notebook 03 shows."""
    text = (ROOT / "course_utils" / "training.py").read_text()
    return text[text.index("def flat_params"):].strip()


def test_notebook_03_shows_the_module_code_unchanged():
    cells = ["".join(c["source"]).strip() for c in json.loads(NOTEBOOK.read_text())["cells"]
             if c["cell_type"] == "code"]
    showing = [c for c in cells if "def train(" in c]
    assert len(showing) == 1, f"notebook 03 should define train once, found {len(showing)} cells"
    assert showing[0] == _lesson_code(), "notebook 03 and course_utils/training.py differ: copy one into the other"


def _net(w, b):
    import mindspore as ms
    from mindspore import nn

    net = nn.Dense(1, 1)
    net.weight.set_data(ms.Tensor([[w]], ms.float32))
    net.bias.set_data(ms.Tensor([b], ms.float32))
    return net


@pytest.mark.parametrize("lr, w0, b0", [(0.01, 0.0, 0.0), (0.5, 0.3, -0.2), (0.79, 1.0, 1.0)])
def test_sgd_follows_numpy_gradient_descent(lr, w0, b0):
    history = training.train(_net(w0, b0), X, Y, lr, steps=40)
    ws, bs, losses = oracles.gradient_descent(X, Y, lr, 40, w=w0, b=b0)
    assert history["params"].shape == (41, 2) and history["loss"].shape == history["grad_norm"].shape == (40,)
    np.testing.assert_allclose(history["params"][0], [w0, b0], atol=1e-7)
    np.testing.assert_allclose(history["params"][1:], np.stack([ws, bs], axis=1), atol=1e-5)
    np.testing.assert_allclose(history["loss"], losses, rtol=1e-4, atol=1e-7)
    gradients = -(np.diff(np.vstack([[w0, b0], np.stack([ws, bs], axis=1)]), axis=0)) / lr  # from the oracle's path
    np.testing.assert_allclose(history["grad_norm"], np.linalg.norm(gradients, axis=1), rtol=1e-3, atol=1e-6)


def test_a_given_optimizer_is_used_and_keeps_its_state():
    from mindspore import nn

    net = _net(0.0, 0.0)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    first = training.train(net, X, Y, lr=None, steps=10, optimizer=optimizer)
    second = training.train(net, X, Y, lr=None, steps=10, optimizer=optimizer)
    ws, bs, _ = oracles.gradient_descent(X, Y, 0.1, 20, momentum=0.9)
    path = np.vstack([first["params"][1:], second["params"][1:]])
    np.testing.assert_allclose(path, np.stack([ws, bs], axis=1), atol=1e-5)


def test_clip_limits_every_step_and_records_the_norm_before_clipping():
    net = _net(0.0, 0.0)
    history = training.train(net, X, Y, lr=0.1, steps=5, clip=0.5)
    moves = np.linalg.norm(np.diff(history["params"], axis=0), axis=1)
    assert np.all(history["grad_norm"] > 0.5), "the gradients are larger than the clip norm at the start"
    np.testing.assert_allclose(moves, 0.1 * 0.5, rtol=1e-4)  # each step: lr x clip norm
