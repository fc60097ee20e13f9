"""The row order in which a shuffled, batched ``mindspore.dataset`` pipeline hands out its samples.

A shuffled ``NumpySlicesDataset`` draws its order from the dataset seed (``ms.dataset.config.set_seed``,
which ``ms.set_seed`` also sets) when an iterator is created, and from nothing else but the number of rows:
a dataset of the row indices 0..n-1 built the same way yields the same order as the dataset of the data.
``dataset_order`` reads that order, so that a numpy oracle (``course_utils.oracles.minibatch_sgd``) can take
exactly the steps MindSpore takes.
"""

import numpy as np

from course_utils._validate import require_bool, require_int

MAX_ROWS = 10_000_000
MAX_EPOCHS = 10_000


def dataset_order(n, batch_size, epochs=1, seed=0, drop_remainder=False, shuffle=True):
    """One int64 array of row indices per step: what ``NumpySlicesDataset(..., shuffle=shuffle)
    .batch(batch_size, drop_remainder=drop_remainder)`` yields over ``epochs`` epochs of one iterator
    (``create_tuple_iterator(num_epochs=epochs)``: a new order each epoch), with the dataset seed ``seed``.

    The dataset seed is set to ``seed`` while the order is read and put back afterwards.
    """
    n = require_int("n (number of rows)", n, 1, MAX_ROWS)
    batch_size = require_int("batch_size", batch_size, 1, MAX_ROWS)
    epochs = require_int("epochs", epochs, 1, MAX_EPOCHS)
    seed = require_int("seed", seed, 0, 2**32 - 1)
    drop_remainder = require_bool("drop_remainder", drop_remainder)
    shuffle = require_bool("shuffle", shuffle)
    if drop_remainder and batch_size > n:
        raise ValueError(f"batch_size {batch_size} with drop_remainder=True leaves no batch of {n} rows")
    import mindspore.dataset as ds

    previous = ds.config.get_seed()
    ds.config.set_seed(seed)
    try:
        # The shuffle happens before batching, and batching only cuts each epoch's order into consecutive
        # pieces: so read whole epochs (one batch of n rows each, fast) and cut them here.
        # tests/test_minibatch.py checks this against the batched dataset itself.
        dataset = ds.NumpySlicesDataset({"index": np.arange(n, dtype=np.int64)}, shuffle=shuffle)
        iterator = dataset.batch(n).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
        epoch_orders = [np.asarray(batch[0], dtype=np.int64) for _ in range(epochs) for batch in iterator]
    finally:
        ds.config.set_seed(previous)
    full = n // batch_size * batch_size if drop_remainder else n
    return [order[start:start + batch_size] for order in epoch_orders for start in range(0, full, batch_size)]


def steps_per_epoch(n, batch_size, drop_remainder=False):
    """How many batches (steps) one epoch of n rows has: ceil(n / batch_size), or floor with drop_remainder."""
    n = require_int("n (number of rows)", n, 1, MAX_ROWS)
    batch_size = require_int("batch_size", batch_size, 1, MAX_ROWS)
    drop_remainder = require_bool("drop_remainder", drop_remainder)
    return n // batch_size if drop_remainder else -(-n // batch_size)
