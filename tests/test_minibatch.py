"""The mini-batch oracle (course_utils.oracles.minibatch_sgd) and the dataset's row order
(course_utils.minibatch.dataset_order), each against what MindSpore itself does."""

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from course_utils.data import make_linear_data
from course_utils.minibatch import dataset_order, steps_per_epoch
from course_utils.oracles import gradient_descent, minibatch_sgd

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"course-hypothesis-{os.getuid()}")


def _batched_indices(n, batch_size, epochs, seed, drop_remainder, shuffle=True):
    """The index batches of the real pipeline, batched by MindSpore (not cut by hand as dataset_order does)."""
    import mindspore.dataset as ds

    ds.config.set_seed(seed)
    data = ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.float32).reshape(-1, 1),
                                  "index": np.arange(n)}, shuffle=shuffle)
    iterator = data.batch(batch_size, drop_remainder=drop_remainder).create_tuple_iterator(num_epochs=epochs)
    return [b[1].asnumpy() for _ in range(epochs) for b in iterator]


@pytest.mark.parametrize("n, batch_size, epochs, seed, drop", [
    (100, 32, 3, 0, False), (100, 32, 3, 0, True), (37, 8, 4, 5, False), (10, 10, 2, 1, True), (7, 3, 2, 9, False)])
def test_dataset_order_is_the_pipeline_order(n, batch_size, epochs, seed, drop):
    got = dataset_order(n, batch_size, epochs, seed=seed, drop_remainder=drop)
    want = _batched_indices(n, batch_size, epochs, seed, drop)
    assert len(got) == len(want) == epochs * steps_per_epoch(n, batch_size, drop)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_dataset_order_reshuffles_each_epoch_and_restores_the_seed():
    import mindspore.dataset as ds

    ds.config.set_seed(123)
    order = dataset_order(50, 50, 2, seed=0)
    assert ds.config.get_seed() == 123
    assert sorted(order[0]) == list(range(50)) and not np.array_equal(order[0], order[1])
    assert np.array_equal(np.concatenate(dataset_order(9, 4, 1, shuffle=False)), np.arange(9))


def test_minibatch_sgd_is_what_mindspore_does():
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn

    x, y = make_linear_data(n=30, seed=3)
    ms.set_seed(0)
    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.3))
    ds.config.set_seed(4)
    data = ds.NumpySlicesDataset({"x": x, "y": y, "i": np.arange(30)}, shuffle=True).batch(7)
    losses, ws, order = [], [], []
    iterator = data.create_tuple_iterator(num_epochs=3)
    for _ in range(3):
        for xb, yb, ib in iterator:
            losses.append(step(xb, yb).asnumpy().item())
            ws.append(net.weight.asnumpy().item())
            order.append(ib.asnumpy())
    ref_ws, ref_bs, ref_losses = minibatch_sgd(x, y, 0.3, order)
    assert len(order) == 15 and [len(o) for o in order[:5]] == [7, 7, 7, 7, 2]
    assert np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6) and np.allclose(ws, ref_ws, rtol=1e-5, atol=1e-6)
    assert np.isclose(net.bias.asnumpy().item(), ref_bs[-1], atol=1e-6)


def test_one_full_batch_per_step_is_gradient_descent():
    x, y = make_linear_data(n=20)
    full = [np.arange(20)] * 15
    for a, b in zip(minibatch_sgd(x, y, 0.4, full, w=0.5, b=-0.1), gradient_descent(x, y, 0.4, 15, w=0.5, b=-0.1)):
        assert np.allclose(a, b, rtol=1e-12)


def test_minibatch_sgd_diverges_quietly():
    x, y = make_linear_data(n=10)
    ws, _, losses = minibatch_sgd(x, y, 50.0, [np.arange(10)] * 300)
    assert not np.isfinite(ws[-1]) or abs(ws[-1]) > 1e100


@pytest.mark.parametrize("batches, error, match", [
    ("0123", TypeError, "list of index arrays"),
    (np.arange(4), TypeError, "list of index arrays"),
    (5, TypeError, "list of index arrays"),
    ([np.array([0.5, 1.0])], ValueError, r"batches\[0\].*ints"),
    ([np.array([], dtype=int)], ValueError, r"batches\[0\].*non-empty"),
    ([np.array([0, 1]), np.array([[1]])], ValueError, r"batches\[1\].*1-D"),
    ([np.array([0, 10])], ValueError, r"outside 0\.\.9"),
    ([np.array([-1])], ValueError, "outside"),
    ([["a"]], ValueError, "ints"),
])
def test_minibatch_sgd_refuses_bad_batches(batches, error, match):
    x, y = make_linear_data(n=10)
    with pytest.raises(error, match=match):
        minibatch_sgd(x, y, 0.1, batches)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"lr": float("nan")}, ValueError, "lr must be a finite number"),
    ({"lr": -0.1}, ValueError, "lr must be a number >= 0"),
    ({"lr": "0.1"}, TypeError, "lr must be a number"),
    ({"w": None}, TypeError, "w must be a number"),
])
def test_minibatch_sgd_refuses_bad_numbers(kwargs, error, match):
    x, y = make_linear_data(n=10)
    args = {"lr": 0.1, "batches": [np.arange(10)], **kwargs}
    with pytest.raises(error, match=match):
        minibatch_sgd(x, y, **args)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n": 0}, ValueError, "n .number of rows. must be an int from 1"),
    ({"n": 10.0}, TypeError, "n .number of rows. must be an int"),
    ({"batch_size": 0}, ValueError, "batch_size must be an int from 1"),
    ({"batch_size": True}, TypeError, "batch_size must be an int"),
    ({"epochs": 0}, ValueError, "epochs must be an int from 1"),
    ({"seed": -1}, ValueError, "seed must be an int from 0"),
    ({"drop_remainder": 1}, TypeError, "drop_remainder must be True or False"),
    ({"shuffle": "yes"}, TypeError, "shuffle must be True or False"),
    ({"batch_size": 11, "drop_remainder": True}, ValueError, "leaves no batch"),
])
def test_dataset_order_refuses_bad_arguments(kwargs, error, match):
    args = {"n": 10, "batch_size": 4, **kwargs}
    with pytest.raises(error, match=match):
        dataset_order(**args)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 500), batch_size=st.integers(1, 600), drop=st.booleans())
def test_steps_per_epoch_counts_the_batches(n, batch_size, drop):
    steps = steps_per_epoch(n, batch_size, drop)
    sizes = [min(batch_size, n - start) for start in range(0, n, batch_size)]
    assert steps == len([s for s in sizes if s == batch_size or not drop])


junk = st.one_of(st.none(), st.text(max_size=3), st.floats(allow_nan=True), st.booleans(), st.lists(st.integers()))


@settings(max_examples=60, deadline=None)
@given(n=st.one_of(junk, st.integers(-5, 20)), batch_size=st.one_of(junk, st.integers(-5, 20)),
       drop=st.one_of(junk, st.booleans()))
def test_steps_per_epoch_refuses_junk_clearly(n, batch_size, drop):
    try:
        steps = steps_per_epoch(n, batch_size, drop)
    except (TypeError, ValueError) as exc:
        assert any(name in str(exc) for name in ("n (number of rows)", "batch_size", "drop_remainder"))
    else:
        assert isinstance(steps, int) and steps >= 0


@settings(max_examples=60, deadline=None)
@given(lr=st.one_of(junk, st.floats(0, 2)),
       batches=st.one_of(junk, st.lists(st.lists(st.integers(-2, 12)), max_size=4)))
def test_minibatch_sgd_refuses_junk_clearly(lr, batches):
    x, y = make_linear_data(n=10)
    try:
        ws, bs, losses = minibatch_sgd(x, y, lr, batches)
    except (TypeError, ValueError) as exc:
        assert any(word in str(exc) for word in ("lr", "batches")), str(exc)
    else:
        assert len(ws) == len(bs) == len(losses) == len(batches)
