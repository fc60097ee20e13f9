"""The capstone data: three spiral arms in 2-D (no straight line separates them), split three ways, and the
batches of every epoch in an order that depends only on the seed and the epoch (so a resumed run reads
exactly the batches the uninterrupted run would have read)."""

import numpy as np

from course_utils.data import make_spirals


def load_splits(data):
    """``{"train": (x, y), "val": (x, y), "test": (x, y)}`` for the ``data`` section of a configuration."""
    sizes = {"train": data["n_train"], "val": data["n_val"], "test": data["n_test"]}
    return {name: make_spirals(n, data["classes"], data["noise"], data["seed"] + k)
            for k, (name, n) in enumerate(sizes.items())}


def epoch_order(seed, epoch, n):
    """The row order of epoch ``epoch`` (0-based): a permutation of range(n) from (seed, epoch) alone."""
    return np.random.RandomState([seed, epoch]).permutation(n)


class EpochBatches:
    """A GeneratorDataset source: each pass yields the next epoch's batches, ``(x, y)`` numpy pairs.

    ``first_epoch`` is where a resumed run starts. With ``num_shards`` workers, shard ``shard_id`` takes
    rows ``shard_id::num_shards`` of each global batch of ``batch_size`` rows, so the workers' batches
    together are exactly the single process's batch.
    """

    def __init__(self, x, y, batch_size, seed, first_epoch=0, num_shards=1, shard_id=0):
        self.x, self.y, self.batch_size, self.seed = x, y, batch_size, seed
        self.epoch, self.num_shards, self.shard_id = first_epoch, num_shards, shard_id

    def __iter__(self):
        order = epoch_order(self.seed, self.epoch, len(self.x))
        self.epoch += 1
        batches = [order[i:i + self.batch_size][self.shard_id::self.num_shards]
                   for i in range(0, len(order), self.batch_size)]
        return iter([(self.x[rows], self.y[rows]) for rows in batches])
