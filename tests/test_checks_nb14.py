"""Notebook 14's checks: the references pass, typical mistakes are named, parallel workers are no mistake."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore.dataset as ds  # noqa: E402
import pytest  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb14  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402
from course_utils.logs import mindspore_warnings  # noqa: E402


def pipeline(batch=None, shuffle=False, map_first=False, columns=("x",), **map_options):
    """batched_pipeline with one typical mistake (or none): batch(...) options, the map's columns and options."""
    def batched_pipeline(x, y, batch_size, transform):
        def mapped(data):
            return data.map(operations=transform, input_columns=list(columns), **map_options) if columns else data

        dataset = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=shuffle)
        if map_first:
            return mapped(dataset).batch(batch_size, **(batch or {}))
        return mapped(dataset.batch(batch_size, **(batch or {})))

    return batched_pipeline


class Rows:  # the notebook's random-access source
    def __init__(self, load, n):
        self.load, self.n = load, n

    def __getitem__(self, i):
        return self.load(i)

    def __len__(self):
        return self.n


class ShortRows(Rows):
    def __len__(self):
        return self.n - 5


def reading(rows=Rows, drop=False, **options):
    """reading_pipeline over a source class, with GeneratorDataset options (shuffle=None: its default)."""
    options = {"column_names": ["x", "y"], "shuffle": False, **options}
    return lambda load, n, batch_size: ds.GeneratorDataset(rows(load, n), **options).batch(batch_size, drop)


@pytest.mark.parametrize("ex", [nb14.reading_pipeline, nb14.batched_pipeline], ids=lambda ex: ex.key)
def test_references_pass(ex):
    assert reference(ex, ds=ds)[1].startswith("[ok]")


@pytest.mark.parametrize("answer, expected", [
    (pipeline(map_first=True), "once per row: map before batch"),
    (pipeline(batch={"drop_remainder": True}), "the last, partial batch of 4 rows is missing"),
    (pipeline(shuffle=True), "another order: keep shuffle=False"),
    (pipeline(columns=()), "never ran"),
    (pipeline(columns=("y",)), "x has shape (16, 1), expected (16, 3)"),
    (lambda x, y, batch_size, transform: pipeline()(x, y, batch_size, transform).map(transform, input_columns=["y"]),
     "map the transform over 'x' only"),
    (lambda x, y, b, f: [(f(x[s:s + b]), y[s:s + b]) for s in range(0, len(x), b)], "a mindspore.dataset pipeline"),
])
def test_batched_mistakes_are_named(answer, expected):
    result = nb14.batched_pipeline.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


@pytest.mark.parametrize("options, expected", [
    ({"shuffle": None}, "shuffles a random-access source by default"),
    ({"rows": ShortRows}, "40 rows came out, expected 45"),
    ({"column_names": ["data", "label"]}, "expected ['x', 'y']"),
    ({"drop": True}, "40 rows came out"),
])
def test_reading_mistakes_are_named(options, expected):
    result = nb14.reading_pipeline.evaluate(reading(**options))
    assert result.status == INCORRECT and expected in result.message, result.message


@pytest.mark.parametrize("ex, answer", [  # worker processes: the checker's load and transform log to a file
    (nb14.reading_pipeline, reading(num_parallel_workers=2)),  # python_multiprocessing=True by default here
    (nb14.batched_pipeline, pipeline(num_parallel_workers=2, python_multiprocessing=True)),
    (nb14.batched_pipeline, pipeline(num_parallel_workers=2)),
])
def test_parallel_workers_are_accepted(ex, answer):
    result = ex.evaluate(answer)
    assert result.status == CORRECT, result.message


def test_map_before_batch_in_worker_processes_is_still_named():
    result = nb14.batched_pipeline.evaluate(pipeline(map_first=True, num_parallel_workers=2,
                                                     python_multiprocessing=True))
    assert "once per row: map before batch" in result.message, result.message


def test_the_check_data_is_not_the_lesson_data():
    assert len(nb14._CHECK_X) % nb14.CHECK_BATCH and len(nb14._CHECK_X) != 512 and nb14.CHECK_BATCH != 32


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
