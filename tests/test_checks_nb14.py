"""Notebook 14's checks: the references pass, typical mistakes are named, parallel workers are no mistake."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore.dataset as ds  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb14  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402
from course_utils.logs import mindspore_warnings  # noqa: E402


def pipeline(batch=None, shuffle=False, map_first=False, columns=("x", "y"), reader="csv", **map_options):
    """csv_pipeline with one typical mistake (or none): the reader, batch(...) options, the map's columns, options."""
    def csv_pipeline(path, batch_size, transform):
        def mapped(data):
            return data.map(operations=transform, input_columns=list(columns), **map_options) if columns else data

        if reader == "csv":
            dataset = ds.CSVDataset(path, column_defaults=[0.0, 0.0], column_names=["x", "y"], shuffle=shuffle)
        else:  # numpy reads the file, MindSpore only slices it
            table = np.loadtxt(path, delimiter=",", dtype=np.float32)
            dataset = ds.NumpySlicesDataset({"x": table[:, 0], "y": table[:, 1]}, shuffle=shuffle)
        if map_first:
            return mapped(dataset).batch(batch_size, **(batch or {}))
        return mapped(dataset.batch(batch_size, **(batch or {})))

    return csv_pipeline


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


@pytest.mark.parametrize("ex", [nb14.reading_pipeline, nb14.csv_pipeline], ids=lambda ex: ex.key)
def test_references_pass(ex):
    assert reference(ex, ds=ds)[1].startswith("[ok]")


@pytest.mark.parametrize("answer, expected", [
    (pipeline(map_first=True), "once per row: map before batch"),
    (pipeline(batch={"drop_remainder": True}), "the last, partial batch of 4 rows is missing"),
    (pipeline(shuffle=True), "ds.CSVDataset shuffles by default"),
    (pipeline(columns=()), "never ran"),
    (pipeline(columns=("x",)), "which columns does your map hand it"),
    (pipeline(reader="numpy"), "does not start from a ds.CSVDataset"),
    (lambda path, b, f: [f(*np.loadtxt(path, delimiter=",").T)], "a mindspore.dataset pipeline"),
])
def test_csv_mistakes_are_named(answer, expected):
    result = nb14.csv_pipeline.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_the_checker_deletes_its_file():
    seen = []

    def remember(path, batch_size, transform):
        seen.append(path)
        return pipeline()(path, batch_size, transform)

    assert nb14.csv_pipeline.evaluate(remember).status == CORRECT
    assert seen and not os.path.exists(os.path.dirname(seen[0]))


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
    (nb14.csv_pipeline, pipeline(num_parallel_workers=2, python_multiprocessing=True)),
    (nb14.csv_pipeline, pipeline(num_parallel_workers=2)),
])
def test_parallel_workers_are_accepted(ex, answer):
    result = ex.evaluate(answer)
    assert result.status == CORRECT, result.message


def test_map_before_batch_in_worker_processes_is_still_named():
    result = nb14.csv_pipeline.evaluate(pipeline(map_first=True, num_parallel_workers=2,
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



def test_reading_every_row_first_is_not_a_generator_dataset():
    def reading_pipeline(load, n, batch_size):  # numpy reads everything, MindSpore only slices it
        rows = [load(i) for i in range(n)]
        return ds.NumpySlicesDataset({"x": np.stack([r[0] for r in rows]), "y": np.stack([r[1] for r in rows])},
                                     shuffle=False).batch(batch_size)

    result = nb14.reading_pipeline.evaluate(reading_pipeline)
    assert result.status == INCORRECT and "does not start from a ds.GeneratorDataset" in result.message, result.message
