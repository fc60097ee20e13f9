"""Exercises and predictions of notebook 04 (datasets, mini-batches and epochs)."""

import numpy as np

from course_utils._validate import shown
from course_utils.checks._nets import one_neuron
from course_utils.exercises import NONE_HINT, Exercise, Prediction, ScaffoldExercise, as_number, bind
from course_utils.messages import lazy, t
from course_utils.minibatch import dataset_order
from course_utils.oracles import minibatch_sgd

# ---- 04.3: a pipeline in which every batch holds 16 shuffled rows ------------------------------------------
PIPELINE_ROWS, PIPELINE_BATCH = 50, 16
PIPELINE_SEED = 2024  # the dataset seed the check iterates with


def pipeline_data():
    """Exercise 04.3's data: 50 rows, x in [-1, 1), y = 0.5 - x + noise, float32 arrays of shape (50, 1)."""
    rng = np.random.RandomState(7)
    x = (2 * rng.rand(PIPELINE_ROWS, 1) - 1).astype(np.float32)
    y = (0.5 - x + rng.normal(0, 0.05, (PIPELINE_ROWS, 1))).astype(np.float32)
    return x, y


def _rows_of(batch):
    """A batch's arrays as a list of numpy arrays, or None if it is not a list/tuple of Tensors or arrays."""
    if isinstance(batch, dict):
        batch = list(batch.values())
    if not isinstance(batch, (list, tuple)):
        return None
    return [b.asnumpy() if hasattr(b, "asnumpy") else np.asarray(b) for b in batch]


def _check_pipeline(answer):
    if not hasattr(answer, "create_tuple_iterator") or not hasattr(answer, "get_dataset_size"):
        if hasattr(answer, "__next__"):
            return t("expected a mindspore.dataset dataset (what .batch(...) returns), got an iterator; the check "
                     "makes its own iterator, so give it the dataset itself")
        return t("expected a mindspore.dataset dataset (what .batch(...) returns), got {kind}; the check makes its "
                 "own iterator, so give it the dataset itself", kind=shown(answer))
    import mindspore.dataset as ds

    previous = ds.config.get_seed()
    ds.config.set_seed(PIPELINE_SEED)
    try:
        batches = [_rows_of(b) for b in answer.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    finally:
        ds.config.set_seed(previous)
    if not batches:
        return t("your dataset yields no batch at all")
    if any(b is None or len(b) != 2 for b in batches):
        return t("each batch should be the pair (x, y): two columns, got {n} column(s); build the "
                 "dataset from {{'x': x3, 'y': y3}} (or a tuple (x3, y3))", n=len(batches[0]))
    x3, y3 = pipeline_data()
    xs = [b[0] for b in batches]
    if xs[0].ndim < 2:
        return t("the rows are not batched (first x has shape {shape}): add .batch({batch}, ...)", shape=xs[0].shape,
                 batch=PIPELINE_BATCH)
    sizes = [len(b) for b in xs]
    if any(b.shape[1:] != (1,) for b in xs):
        return t("each x batch should have shape (16, 1), got {shape}", shape=xs[0].shape)
    values = np.concatenate(xs).ravel()
    if not np.all(np.isin(values, x3.ravel())):
        return t("your batches hold rows that are not in nb04.pipeline_data(): build the dataset from x3, y3")
    if len(set(values.tolist())) != len(values):
        return t("a row appears twice in one epoch: use the dataset's own shuffle (shuffle=True), not a repeat")
    if sizes[-1] < PIPELINE_BATCH and all(s == PIPELINE_BATCH for s in sizes[:-1]):
        return t("the batches hold {sizes}: the last one is the partial rest of the 50 rows; "
                 "drop it with drop_remainder=True", sizes=sizes)
    if any(s != PIPELINE_BATCH for s in sizes):
        return t("every batch should hold {batch} rows, yours hold {sizes}", batch=PIPELINE_BATCH, sizes=sizes)
    if np.array_equal(values, x3.ravel()[:len(values)]):
        return t("the rows come in their original order: shuffle them (shuffle=True)")
    ys = np.concatenate([b[1] for b in batches]).ravel()
    where = {v: i for i, v in enumerate(x3.ravel().tolist())}
    if not np.array_equal(ys, y3.ravel()[[where[v] for v in values.tolist()]]):
        return t("x and y no longer belong together: shuffle the rows (the dataset's shuffle), not each column "
                 "alone")
    return None


# ---- 04.5: the native loop, mini-batch SGD over shuffled epochs ---------------------------------------------
# (rows, batch_size, epochs, lr, seed, start): the checker's own problems; neither divides its rows evenly.
_LOOP_X1 = np.linspace(-1.0, 1.0, 23, dtype=np.float32).reshape(-1, 1)
_LOOP_X2 = np.linspace(0.0, 1.5, 40, dtype=np.float32).reshape(-1, 1)
LOOP_CASES = [
    (_LOOP_X1, (0.8 * _LOOP_X1 + 0.3 + 0.05 * np.cos(4 * _LOOP_X1)).astype(np.float32), 0.2, 5, 3, 11, (0.5, -0.3)),
    (_LOOP_X2, (1.0 - 1.5 * _LOOP_X2).astype(np.float32), 0.15, 16, 2, 3, (-0.4, 0.2)),
]


def _losses(value, what):
    if isinstance(value, (list, tuple)):
        numbers = []
        for item in value:
            number, problem = as_number(item, t("each entry of {what}", what=what))
            if problem:
                return None, problem
            numbers.append(number)
        return np.array(numbers, dtype=np.float64), None
    return None, t("{what} should be a list with one number per step, got {value}", what=what, value=shown(value))


def _close(a, b):
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-6))


def _check_minibatch_loop(answer):
    if not callable(answer) or isinstance(answer, type):
        return t("expected a function train_minibatch(net, x, y, lr, batch_size, epochs) (answer = "
                 "train_minibatch, without calling it), got {answer}", answer=shown(answer))
    import mindspore.dataset as ds

    for x, y, lr, batch_size, epochs, seed, start in LOOP_CASES:
        n = len(x)
        call = t("train_minibatch(net, x, y, lr={lr}, batch_size={batch_size}, epochs={epochs}) on {n} rows",
                 lr=lr, batch_size=batch_size, epochs=epochs, n=n)
        net = one_neuron(*start)
        previous = ds.config.get_seed()
        ds.config.set_seed(seed)
        try:
            got = answer(net, x, y, lr, batch_size, epochs)
        finally:
            ds.config.set_seed(previous)
        if got is None:
            return t("{call} returned None. {hint}", call=call, hint=t(NONE_HINT))
        losses, problem = _losses(got, t("the losses"))
        if problem:
            return t("{fn}: {why}", fn=call, why=problem)
        if not np.all(np.isfinite(losses)):
            return t("{call}: the losses hold NaN or inf", call=call)
        w, b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
        order = dataset_order(n, batch_size, epochs, seed=seed)
        want_ws, want_bs, want = minibatch_sgd(x, y, lr, order, w=start[0], b=start[1])
        steps = len(order)
        if _close(losses, want) and abs(w - want_ws[-1]) < 1e-4 and abs(b - want_bs[-1]) < 1e-4:
            continue
        full = [np.arange(n)] * epochs
        if _close(losses, minibatch_sgd(x, y, lr, full, w=start[0], b=start[1])[2]):
            return t("{call}: each step used all {n} rows; batch the dataset with .batch(batch_size)", call=call, n=n)
        if len(losses) == epochs:
            return t("{call}: got {epochs} losses, one per epoch; record one per step: {steps} steps "
                     "({per_epoch} batches per epoch)", call=call, epochs=epochs, steps=steps,
                     per_epoch=steps // epochs)
        first_epoch = dataset_order(n, batch_size, 1, seed=seed)
        if _close(losses, minibatch_sgd(x, y, lr, first_epoch * epochs, w=start[0], b=start[1])[2]):
            return t("{call}: every epoch took the batches in the same order: `for data in dataset` (or "
                     "create_tuple_iterator() inside the epoch loop) makes a new iterator each epoch, which starts "
                     "from the same seed. Create one iterator before the loop with "
                     "dataset.create_tuple_iterator(num_epochs=epochs) and loop over it in every epoch", call=call)
        unshuffled = dataset_order(n, batch_size, epochs, seed=seed, shuffle=False)
        if _close(losses, minibatch_sgd(x, y, lr, unshuffled, w=start[0], b=start[1])[2]):
            return t("{call}: the batches come in the rows' own order: build the dataset with shuffle=True",
                     call=call)
        dropped = dataset_order(n, batch_size, epochs, seed=seed, drop_remainder=True)
        if _close(losses, minibatch_sgd(x, y, lr, dropped, w=start[0], b=start[1])[2]):
            return t("{call}: you dropped the last, partial batch of each epoch ({got} steps instead of "
                     "{steps}); keep it (drop_remainder=False, the default)", call=call, got=len(losses), steps=steps)
        if len(losses) != steps:
            return t("{call}: expected {steps} losses (one per step), got {got}", call=call, steps=steps,
                     got=len(losses))
        if abs(w - start[0]) < 1e-7 and abs(b - start[1]) < 1e-7:
            return t("{call}: the net's weights never changed: train the net you are given, with a train cell on "
                     "it", call=call)
        k = int(np.argmax(~np.isclose(losses, want, rtol=1e-4, atol=1e-6)))
        return t("{call}: the loss of step {step} should be {want:.6f} (SGD on the batches of a shuffled "
                 "dataset, the check's seed), got {got:.6f}. Did you set a seed, use another optimizer, or "
                 "record the loss after the update?", call=call, step=k + 1, want=want[k], got=losses[k])
    return None


# ---- predictions ---------------------------------------------------------------------------------------------


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
same_order_twice = Prediction(
    lazy("dataset = a shuffled NumpySlicesDataset of the 100 rows. You run `for data in dataset:` to the end, "
                 "then a second `for data in dataset:`. In what order do the rows come the second time?"),
    {"a": (lazy("In a new random order: the dataset is shuffled"),
           lazy("that is what a shuffled dataset is for, and what an iterator made with num_epochs=2 does between its "
                "epochs. But each `for` loop makes a NEW iterator, and a new iterator draws its order from the same "
                "dataset seed again")),
     "b": (lazy("In the same order as the first time"),
           lazy("`for data in dataset` calls dataset.create_tuple_iterator(num_epochs=1); the new iterator reads the "
                "dataset seed, which has not changed, and draws the same order. Reshuffling happens between the "
                "epochs of ONE iterator")),
     "c": (lazy("Not at all: the second loop yields nothing, the dataset is used up"),
           lazy("a Python generator would behave that way, but a dataset is a pipeline you can read many times: each "
                "loop starts it again from the first batch"))},
    answer="b")
steps_in_three_epochs = Prediction(
    lazy("100 rows, batch(32), trained for 3 epochs. How many steps (weight updates) is that, with "
                 "drop_remainder=False and with drop_remainder=True?"),
    {"a": (lazy("9 and 9: a batch has 32 rows, whatever the flag says"),
           lazy("without drop_remainder the 4 rows left after three full batches still form a batch, a small one, and "
                "it makes a step of its own")),
     "b": (lazy("12 and 9"),
           lazy("ceil(100 / 32) = 4 batches per epoch, the last one with 4 rows; drop_remainder=True drops it and "
                "leaves 3. Three epochs: 12 and 9 steps")),
     "c": (lazy("10 and 9: 300 rows make 9 full batches and one of 12 rows"),
           lazy("that would be true if batches ran on across the epochs (as with repeat(3) before batch). Each epoch "
                "is batched on its own, so each ends with its own partial batch of 4 rows")),
     "d": (lazy("12 and 12: dropping only shortens the last batch"),
           lazy("drop_remainder drops the whole partial batch, so the step it would make is gone too"))},
    answer="b")
pipeline = Exercise(_check_pipeline, hints=[
    lazy("section 1 builds and batches a dataset and section 3 shows what drops a partial last batch: put those "
         "pieces together on x3 and y3, shuffled"),
    lazy("answer = ds.NumpySlicesDataset({'x': x3, 'y': y3}, shuffle=True).batch(16, drop_remainder=True)"),
])
batch_one_near_bound = Prediction(
    lazy("Full-batch gradient descent on this data is stable below lr = 0.807. What does SGD with ONE sample "
                 "per step do at lr = 0.78, within 20 epochs?"),
    {"a": (lazy("It converges faster than gradient descent: it makes 100 times as many steps"),
           lazy("more steps help only while each step is stable. A single sample has its own curvature, 2(x² + 1), up "
                "to nearly 4 on this data, so its own bound is as low as 0.51: at 0.78 those steps overshoot")),
     "b": (lazy("The same as gradient descent: the learning-rate bound belongs to the loss, not to the batch size"),
           lazy("the bound 2 / λ_max belongs to the loss of the batch a step uses. On one sample the curvature is "
                "larger than on the average of all 100, so the bound is smaller")),
     "c": (lazy("It does not settle: it drifts far from the fit"),
           lazy("steps on single samples with x near 1 have a curvature near 4 and overshoot at lr 0.78 (their bound "
                "is about 0.51); the full-batch bound 0.807 does not protect them"))},
    answer="c")
minibatch_loop = ScaffoldExercise(_check_minibatch_loop, hints=[
    lazy("put together the dataset of section 2 (without the index column) and the loop of section 4, on the "
         "arrays and the net you are given"),
    lazy("dataset = ds.NumpySlicesDataset({'x': x, 'y': y}, shuffle=True).batch(batch_size); train_net = "
         "nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), "
         "learning_rate=lr)); iterator = dataset.create_tuple_iterator(num_epochs=epochs); then for each epoch: "
         "for data in iterator: losses.append(train_net(*data).asnumpy().item())"),
])

bind(globals())
