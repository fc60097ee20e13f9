"""Exercises of notebook 14 (the input pipeline and its speed): a pipeline that maps once per batch, and two
predictions (what parallel workers do for a waiting pipeline; what sink mode changes on CPU).

The oracle of 14.3 is plain numpy slicing of the checker's own data (100 rows, batches of 16, so the last
batch is partial), with a transform that counts its calls; it shares no code with mindspore.dataset.
"""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import Prediction, ScaffoldExercise, bind
from course_utils.messages import lazy, t

CHECK_ROWS, CHECK_BATCH = 100, 16  # not the lesson's sizes: 7 batches, the last one of 4 rows


def _check_data():
    rng = np.random.default_rng(14)
    x = rng.uniform(-2.0, 2.0, size=(CHECK_ROWS, 1)).astype(np.float32)
    y = (3.0 * x - 1.0).astype(np.float32)
    return x, y


class _CountingTransform:
    """x -> [x, x^2, x^3] on a row or a batch, counting its calls and the rows it saw per call."""

    def __init__(self):
        self.rows_per_call = []

    def __call__(self, v):
        v = np.asarray(v, dtype=np.float32)
        self.rows_per_call.append(1 if v.ndim < 2 else v.shape[0])
        return np.concatenate([v, v ** 2, v ** 3], axis=-1).astype(np.float32)


def _expected_batches(x, y):
    starts = range(0, len(x), CHECK_BATCH)
    return [(np.concatenate([x[s:s + CHECK_BATCH], x[s:s + CHECK_BATCH] ** 2, x[s:s + CHECK_BATCH] ** 3], axis=1),
             y[s:s + CHECK_BATCH]) for s in starts]


def _check_batched_pipeline(answer):
    import mindspore.dataset as ds

    if not callable(answer):
        return t("expected your function batched_pipeline, got {answer}", answer=shown(answer))
    x, y = _check_data()
    transform = _CountingTransform()
    dataset = answer(x, y, CHECK_BATCH, transform)
    if dataset is None:
        return t("batched_pipeline returned None: end it with `return dataset`")
    if not isinstance(dataset, ds.Dataset):
        return t("expected a mindspore.dataset pipeline (what .batch(...).map(...) returns), got {dataset}",
                 dataset=shown(dataset))
    rows_out = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
    got = [tuple(np.asarray(col) for col in row) for row in rows_out]
    expected = _expected_batches(x, y)
    calls, rows = len(transform.rows_per_call), transform.rows_per_call
    if calls == CHECK_ROWS and set(rows) == {1}:
        return t("your transform ran {calls} times, once per row: map before batch. Batch first, then map, "
                 "so it runs once per batch ({batches} times for {rows} rows in batches of {batch_size})",
                 calls=calls, batches=len(expected), rows=CHECK_ROWS, batch_size=CHECK_BATCH)
    if calls == 0:
        return t("your transform never ran: map it over the 'x' column (input_columns=['x'])")
    if len(got) == len(expected) - 1:
        return t("{got} batches, expected {expected}: the last, partial batch of {rows} rows is missing "
                 "(drop_remainder must stay False)", got=len(got), expected=len(expected),
                 rows=CHECK_ROWS % CHECK_BATCH)
    if len(got) != len(expected):
        return t("{got} batches, expected {expected} ({rows} rows in batches of {batch_size})", got=len(got),
                 expected=len(expected), rows=CHECK_ROWS, batch_size=CHECK_BATCH)
    if any(len(row) != 2 for row in got):
        return t("each batch should hold two columns, (x, y), got {columns}", columns=len(got[0]))
    for k, ((gx, gy), (ex, ey)) in enumerate(zip(got, expected)):
        if gx.shape != ex.shape:
            return t("batch {k}: x has shape {got}, expected {expected} (the transform applied to x only)", k=k,
                     got=gx.shape, expected=ex.shape)
        if gy.shape != ey.shape or not np.allclose(gy, ey):
            if np.allclose(np.sort(np.concatenate([b[1] for b in got]), axis=0), np.sort(y, axis=0)):
                return t("batch {k}: the rows come in another order: keep shuffle=False so the batches follow the "
                         "data", k=k)
            return t("batch {k}: y differs from the data's y (map the transform over 'x' only, leave 'y' as it "
                     "is)", k=k)
        if not np.allclose(gx, ex, rtol=1e-5, atol=1e-6):
            return t("batch {k}: the transformed x differs from transform(x) of the data's rows {first}..", k=k,
                     first=k * CHECK_BATCH)
    if calls != len(expected):
        return t("your transform ran {calls} times for {batches} batches: map it once, after batch", calls=calls,
                 batches=len(expected))
    return None


# ---- 14.2 a GeneratorDataset over a random-access source --------------------------------------------------
READ_ROWS, READ_BATCH = 45, 10  # 5 batches, the last one of 5 rows


def _reader():
    """The checker's load(i): row i as (x, y) arrays of shape (1,), counting which rows were read."""
    rng = np.random.default_rng(41)
    xs = rng.uniform(-1.0, 1.0, size=(READ_ROWS, 1)).astype(np.float32)
    ys = (0.5 - xs).astype(np.float32)
    read = []

    def load(i):
        i = int(i)
        read.append(i)
        return xs[i].copy(), ys[i].copy()

    return load, xs, ys, read


def _check_reading_pipeline(answer):
    import mindspore.dataset as ds

    if not callable(answer):
        return t("expected your function reading_pipeline, got {answer}", answer=shown(answer))
    load, xs, ys, read = _reader()
    dataset = answer(load, READ_ROWS, READ_BATCH)
    if dataset is None:
        return t("reading_pipeline returned None: end it with `return dataset.batch(batch_size)`")
    if not isinstance(dataset, ds.Dataset):
        return t("expected a mindspore.dataset pipeline, got {dataset}", dataset=shown(dataset))
    if dataset.get_col_names() != ["x", "y"]:
        return t("the columns are {columns}, expected ['x', 'y']: pass column_names=['x', 'y']",
                 columns=dataset.get_col_names())
    got = [tuple(np.asarray(c) for c in row) for row in dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    rows = np.concatenate([g[0] for g in got]) if got else np.zeros((0, 1))
    if len(rows) != READ_ROWS:
        return t("{got} rows came out, expected {expected}: __len__ must return n, and __getitem__(i) load(i)",
                 got=len(rows), expected=READ_ROWS)
    if sorted(read) != list(range(READ_ROWS)):
        return t("load was called for rows {rows}..., expected each row 0..{last} once", rows=sorted(set(read))[:8],
                 last=READ_ROWS - 1)
    if not np.array_equal(rows, xs):
        if np.array_equal(np.sort(rows, axis=0), np.sort(xs, axis=0)):
            return t("the rows come in another order: GeneratorDataset shuffles a random-access source by "
                     "default; pass shuffle=False")
        return t("the x values differ from load(i)'s: __getitem__(i) should return self.load(i) as it is")
    if [len(g[0]) for g in got] != [READ_BATCH] * (READ_ROWS // READ_BATCH) + [READ_ROWS % READ_BATCH]:
        return t("batch sizes {sizes}, expected batches of {batch_size} and a last one of 5",
                 sizes=[len(g[0]) for g in got], batch_size=READ_BATCH)
    if not np.array_equal(np.concatenate([g[1] for g in got]), ys):
        return t("the y column differs from load(i)'s y")
    return None


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
reading_pipeline = ScaffoldExercise(_check_reading_pipeline, hints=[
    lazy("__getitem__(i) returns what load(i) returns; __len__ returns how many rows there are"),
    lazy("ds.GeneratorDataset(Rows(load, n), column_names=['x', 'y'], ...): look up its shuffle default"),
    lazy("dataset = ds.GeneratorDataset(Rows(load, n), column_names=['x', 'y'], shuffle=False)"),
])
batched_pipeline = ScaffoldExercise(_check_batched_pipeline, hints=[
    lazy("two calls on the dataset, in this order: one groups the rows, the other applies the transform"),
    lazy("ds.NumpySlicesDataset({'x': x, 'y': y}, shuffle=False), then .batch(batch_size), then "
         ".map(operations=..., input_columns=...)"),
    lazy("dataset = ds.NumpySlicesDataset({'x': x, 'y': y}, shuffle=False).batch(batch_size)"
         ".map(operations=transform, input_columns=['x'])"),
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
