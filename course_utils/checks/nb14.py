"""Exercises of notebook 14 (the input pipeline): a GeneratorDataset over a random-access source, a CSV file read
with ds.CSVDataset and transformed once per batch on both columns, two predictions (parallel workers for a
waiting pipeline; sink mode on CPU). The oracles slice the checker's own data with numpy; its load and transform
log their calls to a file, where worker processes (python_multiprocessing=True) write too."""

import os
import tempfile
from functools import partial

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import FunctionExercise, Incorrect, Prediction, bind, close
from course_utils.messages import lazy, t

CHECK_ROWS, CHECK_BATCH = 100, 16  # 14.3, not the lesson's sizes: 7 batches, the last one of 4 rows
READ_ROWS, READ_BATCH = 45, 10  # 14.2: 5 batches, the last one of 5 rows
_CHECK_X = np.random.default_rng(14).uniform(-2.0, 2.0, size=(CHECK_ROWS, 1)).astype(np.float32)
_CHECK_Y = (3.0 * _CHECK_X - 1.0).astype(np.float32)  # the learner's function gets copies
_READ_X = np.random.default_rng(41).uniform(-1.0, 1.0, size=(READ_ROWS, 1)).astype(np.float32)
_READ_Y = (0.5 - _READ_X).astype(np.float32)  # load(i) hands out copies of row i


def _load(log, i):
    """The checker's load(i): row i as (x, y) arrays of shape (1,), logged."""
    log(i)
    return _READ_X[int(i)].copy(), _READ_Y[int(i)].copy()


def _transform(log, v):
    """x -> [x, x^2, x^3] on a row or a batch, logging the rows it saw per call."""
    v = np.asarray(v, dtype=np.float32)
    log(1 if v.ndim < 2 else v.shape[0])
    return np.concatenate([v, v ** 2, v ** 3], axis=-1).astype(np.float32)


def _run(exercise, answer, arguments):
    """(dataset, its batches, the numbers logged) of the learner's function called on ``arguments(log)``."""
    import mindspore.dataset as ds

    with tempfile.TemporaryFile() as file:
        dataset = exercise.call(answer, *arguments(lambda number: os.write(file.fileno(), b"%d\n" % int(number))))
        if not isinstance(dataset, ds.Dataset):
            raise Incorrect(t("expected a mindspore.dataset pipeline, got {dataset}", dataset=shown(dataset)))
        batches = [tuple(map(np.asarray, row)) for row in dataset.create_tuple_iterator(num_epochs=1,
                                                                                          output_numpy=True)]
        file.seek(0)
        return dataset, batches, [int(line) for line in file]


def _leaves(dataset):
    """The source datasets at the bottom of a pipeline (Dataset.children, followed down)."""
    children = list(getattr(dataset, "children", []) or [])
    return [dataset] if not children else [leaf for child in children for leaf in _leaves(child)]


# ---- 14.2 a GeneratorDataset over a random-access source --------------------------------------------------
def _check_reading_pipeline(answer):
    dataset, got, read = _run(reading_pipeline, answer, lambda log: (partial(_load, log), READ_ROWS, READ_BATCH))
    import mindspore.dataset as ds

    if not any(type(leaf) is ds.GeneratorDataset for leaf in _leaves(dataset)):  # NumpySlicesDataset is a subclass
        raise Incorrect(t("the pipeline does not start from a ds.GeneratorDataset over Rows(load, n): let MindSpore "
                          "call __getitem__ for each row, rather than reading every row first"))
    if dataset.get_col_names() != ["x", "y"]:
        raise Incorrect(t("the columns are {columns}, expected ['x', 'y']", columns=dataset.get_col_names()))
    rows = np.concatenate([g[0] for g in got]) if got else np.zeros((0, 1))
    if len(rows) != READ_ROWS:
        raise Incorrect(t("{got} rows came out, expected {expected}: what do __len__ and __getitem__ return?",
                          got=len(rows), expected=READ_ROWS))
    if sorted(read) != list(range(READ_ROWS)):
        raise Incorrect(t("load was called for rows {rows}..., expected each row 0..{last} once",
                          rows=sorted(set(read))[:8], last=READ_ROWS - 1))
    if not np.array_equal(rows, _READ_X):
        if np.array_equal(np.sort(rows, axis=0), np.sort(_READ_X, axis=0)):
            raise Incorrect(t("the rows come in another order than 0, 1, ..., n-1: GeneratorDataset shuffles a "
                              "random-access source by default"))
        raise Incorrect(t("the x values differ from load(i)'s"))
    sizes = [len(g[0]) for g in got]
    if sizes != [READ_BATCH] * (READ_ROWS // READ_BATCH) + [READ_ROWS % READ_BATCH]:
        raise Incorrect(t("batch sizes {sizes}, expected batches of {batch_size} and a last one of 5", sizes=sizes,
                          batch_size=READ_BATCH))
    if not np.array_equal(np.concatenate([g[1] for g in got]), _READ_Y):
        raise Incorrect(t("the y column differs from load(i)'s y"))


# ---- 14.3 a CSV file read by MindSpore, both columns transformed once per batch ---------------------------
def _write_csv(folder):
    """The checker's file: CHECK_ROWS lines "x,y", no header; returns its path."""
    path = os.path.join(folder, "check.csv")
    np.savetxt(path, np.hstack([_CHECK_X, _CHECK_Y]), delimiter=",", fmt="%.9g")
    return path


def _pair_transform(log, x, y):
    """(x, y) -> (columns [x, x^2], 10 y): the checker's transform of both columns, logging the rows per call."""
    x, y = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
    log(x.shape[0] if x.ndim else 1)
    return np.stack([x, x ** 2], axis=-1).astype(np.float32), (10.0 * y).astype(np.float32)


def _check_csv_pipeline(answer):
    import mindspore.dataset as ds

    with tempfile.TemporaryDirectory() as folder:
        path = _write_csv(folder)
        try:
            dataset, got, rows_per_call = _run(csv_pipeline, answer, lambda log: (path, CHECK_BATCH,
                                                                                  partial(_pair_transform, log)))
        except Incorrect:
            raise
        except Exception as error:  # a pipeline that fails when it runs: MindSpore's message is long
            if "required positional argument" in str(error):
                raise Incorrect(t("the transform takes two arguments, x and y, and got fewer: which columns does "
                                  "your map hand it?")) from None
            raise Incorrect(t("the pipeline failed when it ran: {error}",
                              error=str(error).strip().splitlines()[0][:200])) from None
    if not any(isinstance(leaf, ds.CSVDataset) for leaf in _leaves(dataset)):
        raise Incorrect(t("the pipeline does not start from a ds.CSVDataset: MindSpore should read the file, not "
                          "numpy"))
    wx = _CHECK_X[:, 0]
    expected = [(np.stack([wx[s:s + CHECK_BATCH], wx[s:s + CHECK_BATCH] ** 2], axis=-1),
                 10.0 * _CHECK_Y[s:s + CHECK_BATCH, 0]) for s in range(0, CHECK_ROWS, CHECK_BATCH)]
    calls, batches = len(rows_per_call), len(expected)
    if calls == CHECK_ROWS and set(rows_per_call) == {1}:
        raise Incorrect(t("your transform ran {calls} times, once per row: map before batch. Once per batch is "
                          "{batches} times for {rows} rows in batches of {batch_size}", calls=calls, batches=batches,
                          rows=CHECK_ROWS, batch_size=CHECK_BATCH))
    if calls == 0:
        raise Incorrect(t("your transform never ran: is its map part of the pipeline you return?"))
    if len(got) == batches - 1:
        raise Incorrect(t("{got} batches, expected {expected}: the last, partial batch of {rows} rows is missing",
                          got=len(got), expected=batches,
                          rows=CHECK_ROWS % CHECK_BATCH))
    if len(got) != batches:
        raise Incorrect(t("{got} batches, expected {expected} ({rows} rows in batches of {batch_size})",
                          got=len(got), expected=batches, rows=CHECK_ROWS, batch_size=CHECK_BATCH))
    if any(len(row) != 2 for row in got):
        raise Incorrect(t("each batch should hold two columns, (x, y), got {columns}", columns=len(got[0])))
    for k, ((gx, gy), (ex, ey)) in enumerate(zip(got, expected)):
        if gx.shape != ex.shape or gy.shape != ey.shape:
            raise Incorrect(t("batch {k}: the columns have shapes {got}, expected {expected}: the transform's "
                              "output as it is", k=k, got=(gx.shape, gy.shape), expected=(ex.shape, ey.shape)))
        if not (close(gx, ex, rtol=1e-5, atol=1e-6) and close(gy, ey, rtol=1e-5, atol=1e-6)):
            read = np.concatenate([b[0][:, 0] for b in got])
            if close(np.sort(read), np.sort(wx)):
                raise Incorrect(t("batch {k}: the rows come in another order than the file's: ds.CSVDataset "
                                  "shuffles by default", k=k))
            raise Incorrect(t("batch {k}: the values differ from transform(x, y) of the file's lines {first}..",
                              k=k, first=k * CHECK_BATCH))
    if calls != batches:
        raise Incorrect(t("your transform ran {calls} times for {batches} batches: how many maps does your pipeline "
                          "have?", calls=calls, batches=batches))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
workers_for_waiting = Prediction(
    lazy("Each row of a pipeline waits 1 ms (as reading a file does) and uses almost no CPU. "
         "With num_parallel_workers=2 instead of 1 on the map, how long does loading take?"),
    {"a": (lazy("About as long: Python's global interpreter lock lets only one worker run at a time"),
           lazy("The lock is released while a thread waits (time.sleep, reading a file, a network request), so two "
                "waiting workers overlap. The lock limits CPU-bound Python, not waiting.")),
     "b": (lazy("About half as long"),
           lazy("Right: the waits overlap, so two workers halve the time, whatever the number of cores.")),
     "c": (lazy("Longer: two workers cost more than they give on a small machine"),
           lazy("Starting worker threads costs little; worker *processes* (python_multiprocessing=True) would cost "
                "more. Here the threads overlap their waits and the time halves."))},
    "b")
reading_pipeline = FunctionExercise(_check_reading_pipeline, signature="reading_pipeline(load, n, batch_size)", hints=[
    lazy("Rows answers two questions, what row i is and how many rows there are; __init__ already keeps what both "
         "answers need"),
    lazy("ds.GeneratorDataset takes the source object and the names of its columns, one per element of a row"),
    lazy("the check wants the rows in the order 0, 1, ..., n-1: look up what GeneratorDataset does with the order "
         "of a random-access source unless it is told otherwise"),
])
csv_pipeline = FunctionExercise(
    _check_csv_pipeline, signature="csv_pipeline(path, batch_size, transform)", hints=[
    lazy("MindSpore's reader for comma-separated text is ds.CSVDataset; like MindDataset it shuffles unless told "
         "not to, and column_defaults gives the columns' types"),
    lazy("the order of the steps decides how often the transform runs; a map given both columns' names hands the "
         "transform two arguments and takes two results"),
    lazy("the file has no header line: the reader needs the two columns' names from you, and float defaults so that "
         "it reads numbers"),
])
sink_on_cpu = Prediction(
    lazy("An epoch has 16 batches. On this CPU, model.train(2, dataset, callbacks=[counter], "
         "dataset_sink_mode=True, sink_size=8) runs. How many times does on_train_step_end fire?"),
    {"a": (lazy("16: two epochs of 8 steps, because sink_size makes an epoch 8 steps long"),
           lazy("That is what happens on Ascend and GPU, where sink mode sends sink_size batches to the device per "
                "call. On CPU, sink mode is not used: every batch is a step, as without it.")),
     "b": (lazy("2: with sink mode the callbacks fire once per sinking, not per step"),
           lazy("On a device in sink mode, step hooks see one 'step' per sinking. On CPU there is no sinking.")),
     "c": (lazy("32: on CPU sink mode and sink_size change nothing"),
           lazy("Right: the CPU backend falls back to feeding batches one at a time, so 2 epochs x 16 steps."))},
    "c")

bind(globals())
