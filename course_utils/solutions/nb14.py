"""Reference solutions of notebook 14 (see course_utils/solutions/__init__.py)."""


# %% reading_pipeline
class Rows:
    """A random-access source: row i is load(i), as reading the i-th file would give it."""

    def __init__(self, load, n):
        self.load, self.n = load, n

    def __getitem__(self, i):
        return self.load(i)

    def __len__(self):
        return self.n


def reading_pipeline(load, n, batch_size):
    dataset = ds.GeneratorDataset(Rows(load, n), column_names=["x", "y"], shuffle=False)  # it shuffles by default
    return dataset.batch(batch_size)


answer = reading_pipeline

nb14.reading_pipeline.check(answer)


# %% csv_pipeline
def csv_pipeline(path, batch_size, transform):
    dataset = ds.CSVDataset(path, column_defaults=[0.0, 0.0], column_names=["x", "y"], shuffle=False)  # no header
    dataset = dataset.batch(batch_size)  # keeps the last, partial batch
    return dataset.map(operations=transform, input_columns=["x", "y"])  # two columns in, two out, once per batch


answer = csv_pipeline

nb14.csv_pipeline.check(answer)
