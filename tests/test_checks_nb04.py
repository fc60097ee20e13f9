"""Checks of notebook 04: the facts its predictions state, and each check's named mistakes."""

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
import pytest
from mindspore import nn, ops
from reference_solutions import reference

from course_utils.checks import nb04
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT
from course_utils.minibatch import dataset_order
from course_utils.oracles import least_squares, minibatch_sgd


def test_prediction_answers_match_mindspore():
    x = np.arange(100, dtype=np.float32).reshape(-1, 1)
    ds.config.set_seed(5)
    data = ds.NumpySlicesDataset({"x": x}, shuffle=True)
    first = np.concatenate([d[0].asnumpy() for d in data])
    second = np.concatenate([d[0].asnumpy() for d in data])
    assert np.array_equal(first, second) and nb04.same_order_twice.answer == "b"
    steps = {}
    for drop in (False, True):
        iterator = data.batch(32, drop_remainder=drop).create_tuple_iterator(num_epochs=3)
        steps[drop] = sum(1 for _ in range(3) for _batch in iterator)
        data = ds.NumpySlicesDataset({"x": x}, shuffle=True)  # a node feeds one pipeline only
    assert (steps[False], steps[True]) == (12, 9) and nb04.steps_in_three_epochs.answer == "b"


def test_batch_one_near_bound_is_what_numpy_measures():
    x, y = make_linear_data()
    fit = least_squares(x, y)
    for seed in range(5, 10):  # other shuffles than the notebook's 0-4; the mean over the last epoch, as there
        ws, bs, _ = minibatch_sgd(x, y, 0.78, dataset_order(100, 1, 20, seed=seed))
        with np.errstate(over="ignore", invalid="ignore"):
            distance = np.mean(np.hypot(ws[-100:] - fit[0], bs[-100:] - fit[1]))
        assert not np.isfinite(distance) or distance > 0.1
    assert nb04.batch_one_near_bound.answer == "c"


# ---- 04.3 the pipeline ----------------------------------------------------------------------------------------
def _pipeline(shuffle=True, batch=16, drop=True, data=None, columns=("x", "y"), batch_shuffle=False):
    x3, y3 = nb04.pipeline_data() if data is None else data
    dataset = ds.NumpySlicesDataset({c: {"x": x3, "y": y3, "z": y3}[c] for c in columns}, shuffle=shuffle)
    dataset = dataset.batch(batch, drop_remainder=drop)
    return dataset.shuffle(8) if batch_shuffle else dataset


def test_the_references_and_a_generator_dataset_pass():
    for ex in (nb04.pipeline, nb04.held_out_curve):
        result = ex.evaluate(reference(ex, ds=ds)[0])
        assert result.status == CORRECT, result.message
    rows = list(zip(*nb04.pipeline_data()))  # a random-access source of (x, y) rows
    generated = ds.GeneratorDataset(rows, ["x", "y"], shuffle=True).batch(16, drop_remainder=True)
    assert nb04.pipeline.evaluate(generated).status == CORRECT


@pytest.mark.parametrize("make, message", [
    (lambda: _pipeline(drop=False), "partial rest of the 50 rows"),
    (lambda: _pipeline(shuffle=False), "original order"),
    (lambda: _pipeline(shuffle=False, batch_shuffle=True), "consecutive rows"),  # regression: whole batches shuffled
    (lambda: _pipeline(batch=10), "every batch should hold 16 rows"),
    (lambda: _pipeline(batch=1, drop=False).create_tuple_iterator(), "got an iterator"),
    (lambda: _pipeline(columns=("x", "y", "z")), "two columns"),
    (lambda: _pipeline(data=(np.ones((50, 1), np.float32) * 3, np.ones((50, 1), np.float32))), "not in"),
    (lambda: ds.NumpySlicesDataset(dict(zip("xy", nb04.pipeline_data())), shuffle=True), "not batched"),
    (lambda: [1, 2, 3], "expected a mindspore.dataset dataset"),
])
def test_pipeline_names_typical_mistakes(make, message):
    result = nb04.pipeline.evaluate(make())
    assert result.status == INCORRECT and message in result.message, result.message


# ---- 04.5 the training and held-out curves -----------------------------------------------------------------
def _curve(reshuffle=True, shuffle=True, drop=False, reduce="weighted", full_batch=False, optimizer="SGD",
           train=True, spoil=False, val_at="end", val_with_step=False, val_in_numpy=False):
    def train_and_validate(net, x, y, x_val, y_val, lr, batch_size, epochs):
        size = len(x) if full_batch else batch_size
        dataset = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=shuffle).batch(size, drop_remainder=drop)
        opt = (nn.SGD(net.trainable_params(), learning_rate=lr) if optimizer == "SGD"
               else nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9))
        loss_net = nn.WithLossCell(net, nn.MSELoss())
        step = nn.TrainOneStepCell(loss_net, opt)
        held_out = (ms.Tensor(x_val), ms.Tensor(y_val))
        iterator = dataset.create_tuple_iterator(num_epochs=epochs)
        train_losses, val_losses = [], []
        for _ in range(epochs):
            if val_at == "begin":
                val_losses.append(loss_net(*held_out).asnumpy().item())
            losses, rows = [], []
            for xb, yb in (iterator if reshuffle else dataset):
                losses.append((step if train else loss_net)(xb, yb).asnumpy().item())
                rows.append(xb.shape[0])
            train_losses.append({"weighted": float(np.dot(losses, rows) / np.sum(rows)),
                                 "plain": float(np.mean(losses)), "last": losses[-1]}[reduce])
            if val_at == "end":
                if val_in_numpy:  # the right number, without MindSpore: allowed, the training is what counts
                    w, b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
                    val_losses.append(float(np.mean((w * x_val.astype(np.float64) + b - y_val) ** 2)))
                else:
                    val_losses.append((step if val_with_step else loss_net)(*held_out).asnumpy().item())
        if spoil:  # the right curves, then the net is put somewhere else
            ops.assign(net.dense.weight, ms.Tensor([[0.0]], ms.float32))
        return train_losses, val_losses

    return train_and_validate


def _numpy_curve(net, x, y, x_val, y_val, lr, batch_size, epochs):
    """The right curves from numpy alone, on the check's own shuffle: the net is never trained."""
    w, b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
    order = dataset_order(len(x), batch_size, epochs, seed=ds.config.get_seed())
    ws, bs, losses = minibatch_sgd(x, y, lr, order, w=w, b=b)
    per = len(order) // epochs
    train = [float(np.dot(losses[e * per:(e + 1) * per], [len(r) for r in order[e * per:(e + 1) * per]]) / len(x))
             for e in range(epochs)]
    val = [float(np.mean((ws[(e + 1) * per - 1] * x_val + bs[(e + 1) * per - 1] - y_val) ** 2)) for e in range(epochs)]
    return train, val


def test_the_curves_check_also_accepts_a_numpy_held_out_loss():
    assert nb04.held_out_curve.evaluate(_curve(val_in_numpy=True)).status == CORRECT


@pytest.mark.parametrize("answer, message", [
    (_curve(reduce="plain"), "plain mean of its step losses"),
    (_curve(reduce="last"), "loss of its last step only"),
    (_curve(val_at="begin"), "one epoch late"),
    (_curve(val_with_step=True), "also took a step on the held-out rows"),
    (_curve(reshuffle=False), "same order"),
    (_curve(shuffle=False), "not shuffled"),
    (_curve(drop=True), "partial batch"),
    (_curve(full_batch=True), "used all"),
    (_curve(optimizer="Momentum"), "should be"),
    (_curve(train=False), "never changed"),
    (_numpy_curve, "never changed"),  # numpy's curves, the net untouched
    (_curve(spoil=True), "the curves are right, but the net"),
    (lambda *a: [0.1, 0.2, 0.3], "expected a pair"),
    (lambda *a: ([0.1, 0.2, 0.3], [1, "x", 2]), "must be a number"),
    (lambda *a: ([0.1, 0.2], [0.1, 0.2]), "should hold 3 numbers"),
])
def test_held_out_curve_names_typical_mistakes(answer, message):
    result = nb04.held_out_curve.evaluate(answer)
    assert result.status == INCORRECT and message in result.message, result.message
    assert result.message.startswith("incorrect: train_and_validate(net, x, y, x_val, y_val, lr=0.2, batch_size=5, "
                                     "epochs=3) on 23 training and 9 held-out rows")


def test_the_curves_oracle_weights_only_uneven_epochs():
    """The oracle's per-epoch weighting: with a batch size that divides the rows, weighted and plain agree."""
    x, y, x_val, y_val, lr, _, epochs, seed, start = nb04.LOOP_CASES[0]
    weighted = nb04._curve_oracle(x[:20], y[:20], x_val, y_val, lr, 5, epochs, seed, start)[0]
    plain = nb04._curve_oracle(x[:20], y[:20], x_val, y_val, lr, 5, epochs, seed, start, reduce="plain")[0]
    assert np.allclose(weighted, plain)
    uneven = nb04._curve_oracle(*nb04.LOOP_CASES[0])[0]
    assert not np.allclose(uneven, nb04._curve_oracle(*nb04.LOOP_CASES[0], reduce="plain")[0], rtol=1e-4)


def test_checks_restore_the_dataset_seed():
    ds.config.set_seed(77)
    nb04.held_out_curve.evaluate(_curve())
    nb04.pipeline.evaluate(_pipeline())
    assert ds.config.get_seed() == 77


def test_sgd_beats_gradient_descent_for_other_shuffles_and_initial_weights():
    """Moved from the lesson's section 5: after 20 epochs at lr 0.3, mini-batch SGD (batch 10) ends 10 times
    closer to the fit than full-batch gradient descent, for dataset seeds and initial weights 0-4."""
    from course_utils.oracles import gradient_descent

    x, y = make_linear_data(n=100, seed=0)
    optimum = np.array(least_squares(x, y))
    for seed in range(5):
        ms.set_seed(seed)
        w_start = nn.Dense(1, 1, weight_init="normal", bias_init="zero").weight.asnumpy().item()
        s_ws, s_bs, _ = minibatch_sgd(x, y, 0.3, dataset_order(100, 10, 20, seed=seed), w=w_start)
        g_ws, g_bs, _ = gradient_descent(x, y, 0.3, 20, w=w_start)
        sgd = np.abs([s_ws[-1] - optimum[0], s_bs[-1] - optimum[1]]).max()
        gd = np.abs([g_ws[-1] - optimum[0], g_bs[-1] - optimum[1]]).max()
        assert sgd * 10 < gd, (seed, sgd, gd)
