"""Checks of notebook 04: each accepts its reference and rejects typical mistakes with the expected message."""

import numpy as np
import pytest

from course_utils.checks import nb04
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED, Prediction

ALL = [nb04.same_order_twice, nb04.steps_in_three_epochs, nb04.pipeline, nb04.batch_one_near_bound,
       nb04.minibatch_loop]


@pytest.mark.parametrize("exercise", ALL, ids=[e.name for e in ALL])
def test_not_attempted(exercise):
    assert exercise.evaluate(...).status == NOT_ATTEMPTED


@pytest.mark.parametrize("prediction", [e for e in ALL if isinstance(e, Prediction)], ids=lambda p: p.name)
def test_predictions_explain_every_option(prediction):
    assert prediction.evaluate(prediction.answer).status == CORRECT
    for letter, (_text, why) in prediction.options.items():
        if letter != prediction.answer:
            result = prediction.evaluate(letter)
            assert result.status == INCORRECT and why in result.message


def test_prediction_answers_match_mindspore():
    import mindspore.dataset as ds

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
    from course_utils.data import make_linear_data
    from course_utils.minibatch import dataset_order
    from course_utils.oracles import least_squares, minibatch_sgd

    x, y = make_linear_data()
    fit = least_squares(x, y)
    for seed in range(5, 10):  # other shuffles than the notebook's 0-4; the mean over the last epoch, as there
        ws, bs, _ = minibatch_sgd(x, y, 0.78, dataset_order(100, 1, 20, seed=seed))
        with np.errstate(over="ignore", invalid="ignore"):
            distance = np.mean(np.hypot(ws[-100:] - fit[0], bs[-100:] - fit[1]))
        assert not np.isfinite(distance) or distance > 0.1
    assert nb04.batch_one_near_bound.answer == "c"


# ---- 04.3 the pipeline ----------------------------------------------------------------------------------------
def _pipeline(shuffle=True, batch=16, drop=True, data=None, columns=("x", "y")):
    import mindspore.dataset as ds

    x3, y3 = nb04.pipeline_data() if data is None else data
    arrays = {"x": x3, "y": y3, "z": y3}
    return ds.NumpySlicesDataset({c: arrays[c] for c in columns}, shuffle=shuffle).batch(batch, drop_remainder=drop)


def test_pipeline_accepts_the_reference_and_a_generator_dataset():
    import mindspore.dataset as ds

    assert nb04.pipeline.evaluate(_pipeline()).status == CORRECT
    x3, y3 = nb04.pipeline_data()

    class Rows:
        def __getitem__(self, i):
            return x3[i], y3[i]

        def __len__(self):
            return len(x3)

    generated = ds.GeneratorDataset(Rows(), ["x", "y"], shuffle=True).batch(16, drop_remainder=True)
    assert nb04.pipeline.evaluate(generated).status == CORRECT


@pytest.mark.parametrize("make, message", [
    (lambda: _pipeline(drop=False), "drop_remainder=True"),
    (lambda: _pipeline(shuffle=False), "original order"),
    (lambda: _pipeline(batch=10), "every batch should hold 16 rows"),
    (lambda: _pipeline(batch=1, drop=False).create_tuple_iterator(), "got an iterator"),
    (lambda: _pipeline(columns=("x", "y", "z")), "two columns"),
    (lambda: _pipeline(data=(np.ones((50, 1), np.float32) * 3, np.ones((50, 1), np.float32))), "not in"),
    (lambda: [1, 2, 3], "expected a mindspore.dataset dataset"),
    (lambda: float("nan"), "expected a mindspore.dataset dataset"),
])
def test_pipeline_names_typical_mistakes(make, message):
    result = nb04.pipeline.evaluate(make())
    assert result.status == INCORRECT and message in result.message, result.message


def test_pipeline_refuses_unbatched_rows():
    import mindspore.dataset as ds

    x3, y3 = nb04.pipeline_data()
    result = nb04.pipeline.evaluate(ds.NumpySlicesDataset({"x": x3, "y": y3}, shuffle=True))
    assert result.status == INCORRECT and "not batched" in result.message


# ---- 04.5 the mini-batch loop ------------------------------------------------------------------------------
def _loop(reshuffle=True, shuffle=True, drop=False, record_per_epoch=False, full_batch=False, optimizer="SGD",
          train=True):
    import mindspore.dataset as ds
    from mindspore import nn

    def train_minibatch(net, x, y, lr, batch_size, epochs):
        losses = []
        size = len(x) if full_batch else batch_size
        dataset = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=shuffle).batch(size, drop_remainder=drop)
        opt = (nn.SGD(net.trainable_params(), learning_rate=lr) if optimizer == "SGD"
               else nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9))
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
        iterator = dataset.create_tuple_iterator(num_epochs=epochs)
        for _ in range(epochs):
            epoch_losses = []
            for data in (iterator if reshuffle else dataset):
                if train:
                    epoch_losses.append(step(*data).asnumpy().item())
                else:
                    epoch_losses.append(nn.WithLossCell(net, nn.MSELoss())(*data).asnumpy().item())
            losses += [float(np.mean(epoch_losses))] if record_per_epoch else epoch_losses
        return losses

    return train_minibatch


def test_minibatch_loop_accepts_the_reference():
    result = nb04.minibatch_loop.evaluate(_loop())
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("kwargs, message", [
    ({"reshuffle": False}, "same order"),
    ({"shuffle": False}, "shuffle=True"),
    ({"drop": True}, "partial batch"),
    ({"record_per_epoch": True}, "one per epoch"),
    ({"full_batch": True}, "used all"),
    ({"optimizer": "Momentum"}, "should be"),
    ({"train": False}, "never changed"),
])
def test_minibatch_loop_names_typical_mistakes(kwargs, message):
    result = nb04.minibatch_loop.evaluate(_loop(**kwargs))
    assert result.status == INCORRECT and message in result.message, result.message


def test_minibatch_loop_scaffold_and_junk():
    def train_minibatch(net, x, y, lr, batch_size, epochs):
        losses = []
        ...
        return losses

    assert nb04.minibatch_loop.evaluate(train_minibatch).status == NOT_ATTEMPTED
    for junk, message in ((lambda *a: None, "returned None"), (lambda *a: "0.1", "list with one number per step"),
                          (lambda *a: [float("nan")], "finite"), (lambda *a: [1, "x"], "must be a number"),
                          (3, "expected a function"), (int, "expected a function")):
        result = nb04.minibatch_loop.evaluate(junk)
        assert result.status == INCORRECT and message in result.message, (junk, result.message)


def test_minibatch_loop_restores_the_dataset_seed():
    import mindspore.dataset as ds

    ds.config.set_seed(77)
    nb04.minibatch_loop.evaluate(_loop())
    nb04.pipeline.evaluate(_pipeline())
    assert ds.config.get_seed() == 77
