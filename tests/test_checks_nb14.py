"""The exercise and predictions of notebook 14 accept their references and reject typical wrong answers."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore.dataset as ds  # noqa: E402
import pytest  # noqa: E402

from course_utils.checks import nb14  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402
from course_utils.logs import mindspore_warnings  # noqa: E402


def reference(x, y, batch_size, transform):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size).map(
        operations=transform, input_columns=["x"])


def map_before_batch(x, y, batch_size, transform):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).map(
        operations=transform, input_columns=["x"]).batch(batch_size)


def drops_the_last_batch(x, y, batch_size, transform):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size, drop_remainder=True).map(
        operations=transform, input_columns=["x"])


def shuffles(x, y, batch_size, transform):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(batch_size).map(
        operations=transform, input_columns=["x"])


def forgets_the_transform(x, y, batch_size, transform):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size)


def transforms_y_too(x, y, batch_size, transform):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size).map(
        operations=transform, input_columns=["y"]).map(operations=transform, input_columns=["x"])


def returns_arrays(x, y, batch_size, transform):
    return [(transform(x[s:s + batch_size]), y[s:s + batch_size]) for s in range(0, len(x), batch_size)]


def no_return(x, y, batch_size, transform):
    ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size).map(transform, input_columns=["x"])


def stub(x, y, batch_size, transform):
    dataset = ...
    return dataset


def test_reference_is_correct():
    assert nb14.batched_pipeline.evaluate(reference).status == CORRECT


@pytest.mark.parametrize("answer, expected", [
    (map_before_batch, "once per row: map before batch"),
    (drops_the_last_batch, "the last, partial batch of 4 rows is missing"),
    (shuffles, "another order: keep shuffle=False"),
    (forgets_the_transform, "never ran"),
    (transforms_y_too, "map the transform over 'x' only"),
    (returns_arrays, "expected a mindspore.dataset pipeline"),
    (no_return, "returned None"),
    (42, "expected your function"),
])
def test_typical_mistakes_are_named(answer, expected):
    result = nb14.batched_pipeline.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_an_unfinished_stub_is_not_attempted():
    assert nb14.batched_pipeline.evaluate(stub).status == NOT_ATTEMPTED
    assert nb14.batched_pipeline.evaluate(...).status == NOT_ATTEMPTED


def test_the_check_data_is_not_the_lesson_data():
    x, _ = nb14._check_data()
    assert len(x) % nb14.CHECK_BATCH and len(x) != 512 and nb14.CHECK_BATCH != 32


@pytest.mark.parametrize("prediction, right", [(nb14.workers_for_waiting, "b"), (nb14.sink_on_cpu, "c")])
def test_predictions(prediction, right):
    assert prediction.evaluate(right).status == CORRECT
    for wrong in {"a", "b", "c"} - {right}:
        assert prediction.evaluate(wrong).status == INCORRECT
    assert prediction.evaluate("z").status == INCORRECT and prediction.evaluate(...).status == NOT_ATTEMPTED


def test_mindspore_warnings_collects_and_restores():
    from mindspore import log as ms_log

    logger = ms_log._get_logger()
    before = (logger.level, list(logger.handlers))
    with mindspore_warnings() as said:
        logger.warning("a test warning")
        logger.info("not collected")
    assert said == ["a test warning"]
    assert (logger.level, list(logger.handlers)) == before
    with pytest.raises(ZeroDivisionError), mindspore_warnings():
        raise ZeroDivisionError
    assert (logger.level, list(logger.handlers)) == before


# ---- 14.2 ---------------------------------------------------------------------------------------------
class Rows:
    def __init__(self, load, n):
        self.load, self.n = load, n

    def __getitem__(self, i):
        return self.load(i)

    def __len__(self):
        return self.n


class ShortRows(Rows):
    def __len__(self):
        return self.n - 5


def reading_reference(load, n, batch_size):
    return ds.GeneratorDataset(Rows(load, n), column_names=["x", "y"], shuffle=False).batch(batch_size)


def reading_shuffled(load, n, batch_size):  # the default: shuffle=True for a random-access source
    return ds.GeneratorDataset(Rows(load, n), column_names=["x", "y"]).batch(batch_size)


def reading_short(load, n, batch_size):
    return ds.GeneratorDataset(ShortRows(load, n), column_names=["x", "y"], shuffle=False).batch(batch_size)


def reading_renamed(load, n, batch_size):
    return ds.GeneratorDataset(Rows(load, n), column_names=["data", "label"], shuffle=False).batch(batch_size)


def reading_dropped(load, n, batch_size):
    return ds.GeneratorDataset(Rows(load, n), column_names=["x", "y"], shuffle=False).batch(batch_size, True)


def reading_stub(load, n, batch_size):
    dataset = ...
    return dataset.batch(batch_size)


def test_reading_reference_is_correct():
    assert nb14.reading_pipeline.evaluate(reading_reference).status == CORRECT


@pytest.mark.parametrize("answer, expected", [
    (reading_shuffled, "shuffles a random-access source by default"),
    (reading_short, "40 rows came out, expected 45"),
    (reading_renamed, "expected ['x', 'y']"),
    (reading_dropped, "40 rows came out"),
    (lambda load, n, b: None, "returned None"),
    ("reading_pipeline", "expected your function"),
])
def test_reading_mistakes_are_named(answer, expected):
    result = nb14.reading_pipeline.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_reading_stub_is_not_attempted():
    assert nb14.reading_pipeline.evaluate(reading_stub).status == NOT_ATTEMPTED
