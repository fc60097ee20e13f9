"""Exercises and predictions of notebook 04 (datasets, mini-batches and epochs)."""

import numpy as np

from course_utils._validate import shown
from course_utils.checks._nets import one_neuron
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    bind,
    close,
    name_the_mistake,
    series,
)
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


def _with_seed(seed, run):
    """``run()`` with the dataset seed set to ``seed``, put back afterwards."""
    import mindspore.dataset as ds

    previous = ds.config.get_seed()
    ds.config.set_seed(seed)
    try:
        return run()
    finally:
        ds.config.set_seed(previous)


def _check_pipeline(answer):
    if not hasattr(answer, "create_tuple_iterator") or not hasattr(answer, "get_dataset_size"):
        raise Incorrect(t("expected a mindspore.dataset dataset (what .batch(...) returns), got {kind}; the check "
                          "makes its own iterator, so give it the dataset itself",
                          kind=t("an iterator") if hasattr(answer, "__next__") else shown(answer)))
    batches = _with_seed(PIPELINE_SEED, lambda: [[np.asarray(column) for column in batch] for batch in
                                                 answer.create_tuple_iterator(num_epochs=1, output_numpy=True)])
    if not batches:
        raise Incorrect(t("your dataset yields no batch at all"))
    if any(len(b) != 2 for b in batches):
        raise Incorrect(t("each batch should be the pair (x, y): two columns, got {n} column(s): which columns did "
                          "you give the dataset?", n=next(len(b) for b in batches if len(b) != 2)))
    x3, y3 = pipeline_data()
    xs = [b[0] for b in batches]
    if xs[0].ndim < 2:
        raise Incorrect(t("the rows are not batched: the first x has shape {shape}, expected ({batch}, 1)",
                          shape=xs[0].shape, batch=PIPELINE_BATCH))
    if any(b.shape[1:] != (1,) for b in xs):
        raise Incorrect(t("each x batch should have shape (16, 1), got {shape}", shape=xs[0].shape))
    values, sizes = np.concatenate(xs).ravel(), [len(b) for b in xs]
    if not np.all(np.isin(values, x3.ravel())):
        raise Incorrect(t("your batches hold rows that are not in nb04.pipeline_data(): which arrays did you give "
                          "the dataset?"))
    if len(set(values.tolist())) != len(values):
        raise Incorrect(t("a row appears twice in one epoch: an epoch should hold each row at most once"))
    if sizes[-1] < PIPELINE_BATCH and all(s == PIPELINE_BATCH for s in sizes[:-1]):
        raise Incorrect(t("the batches hold {sizes}: the last one is the partial rest of the 50 rows (section 3)",
                          sizes=sizes))
    if any(s != PIPELINE_BATCH for s in sizes):
        raise Incorrect(t("every batch should hold {batch} rows, yours hold {sizes}", batch=PIPELINE_BATCH,
                          sizes=sizes))
    if np.array_equal(values, x3.ravel()[:len(values)]):
        raise Incorrect(t("the rows come in their original order: the dataset is not shuffled"))
    where = {v: i for i, v in enumerate(x3.ravel().tolist())}
    rows = [np.array([where[v] for v in b.ravel().tolist()]) for b in xs]  # each batch's row numbers in x3
    if all(np.all(np.diff(r) == 1) for r in rows):
        raise Incorrect(t("each batch holds consecutive rows of x3: whole batches were shuffled, not the rows. "
                          "Where in the pipeline does your shuffle happen?"))
    if not np.array_equal(np.concatenate([b[1] for b in batches]).ravel(), y3.ravel()[np.concatenate(rows)]):
        raise Incorrect(t("x and y no longer belong together: each column was shuffled on its own"))


# ---- 04.5: a training curve and a held-out curve, one point per epoch ---------------------------------------
# (x, y, x_val, y_val, lr, batch_size, epochs, seed, start): the checker's own problems; neither batch size
# divides its training rows evenly, so a plain mean of the step losses is not the mean over the epoch's samples.
_LOOP_X1 = np.linspace(-1.0, 1.0, 23, dtype=np.float32).reshape(-1, 1)
_LOOP_X2 = np.linspace(0.0, 1.5, 40, dtype=np.float32).reshape(-1, 1)
_VAL_X1 = np.linspace(-0.95, 0.9, 9, dtype=np.float32).reshape(-1, 1)
_VAL_X2 = np.linspace(0.05, 1.45, 12, dtype=np.float32).reshape(-1, 1)
LOOP_CASES = [
    (_LOOP_X1, (0.8 * _LOOP_X1 + 0.3 + 0.05 * np.cos(4 * _LOOP_X1)).astype(np.float32),
     _VAL_X1, (0.8 * _VAL_X1 + 0.3 - 0.05 * np.sin(3 * _VAL_X1)).astype(np.float32), 0.2, 5, 3, 11, (0.5, -0.3)),
    (_LOOP_X2, (1.0 - 1.5 * _LOOP_X2).astype(np.float32),
     _VAL_X2, (1.02 - 1.5 * _VAL_X2).astype(np.float32), 0.15, 16, 2, 3, (-0.4, 0.2)),
]
_LOOP_MISTAKES = [  # (how a mistake changes the oracle's run, what that mistake is)
    ({"reduce": "plain"},
     lazy("each epoch's training loss is the plain mean of its step losses, which gives the last, smaller batch "
          "as much weight as a full one (section 6)")),
    ({"reduce": "last"}, lazy("each epoch's training loss is the loss of its last step only, not the mean over the "
                              "epoch's samples")),
    ({"val_at": "begin"}, lazy("the held-out losses are one epoch late: each is the net's loss before the epoch's "
                               "first step")),
    ({"val_step": True}, lazy("your held-out losses are those of a net that also took a step on the held-out rows, "
                              "as a train cell does with whatever it is given")),
    ({"full_batch": True}, lazy("each step used all {n} rows: the dataset is not batched")),
    ({"same_order": True},
     lazy("every epoch took the batches in the same order: how many iterators does your loop create? (section 2)")),
    ({"shuffle": False}, lazy("the batches come in the rows' own order: the dataset is not shuffled")),
    ({"drop_remainder": True}, lazy("you dropped the last, partial batch of each epoch; the exercise keeps it")),
]


def _check_held_out_curve(train_and_validate):
    for case in LOOP_CASES:
        x, x_val, lr, batch_size, epochs = case[0], case[2], case[4], case[5], case[6]
        try:
            _check_curve_case(train_and_validate, *case)
        except Incorrect as wrong:
            call = t("train_and_validate(net, x, y, x_val, y_val, lr={lr}, batch_size={batch_size}, epochs={epochs}) "
                     "on {n} training and {m} held-out rows", lr=lr, batch_size=batch_size, epochs=epochs, n=len(x),
                     m=len(x_val))
            raise Incorrect(t("{fn}: {why}", fn=call, why=str(wrong))) from None


def _curve_oracle(x, y, x_val, y_val, lr, batch_size, epochs, seed, start, full_batch=False, same_order=False,
                  reduce="weighted", val_at="end", val_step=False, **how):
    """Numpy on the batches the dataset seed gives (or a mistake's batches): the per-epoch training loss, the
    held-out MSE at each epoch's end (or beginning), and the final (w, b). ``val_step``: the held-out rows were
    measured with the train cell, which also took a step on them."""
    n, m = len(x), len(x_val)
    if full_batch:
        batches = [np.arange(n)] * epochs
    elif same_order:
        batches = dataset_order(n, batch_size, 1, seed=seed) * epochs
    else:
        batches = dataset_order(n, batch_size, epochs, seed=seed, **how)
    per_epoch = len(batches) // epochs
    steps = []  # (row indices into x followed by x_val, which epoch, a held-out step?)
    for e in range(epochs):
        steps += [(batch, e, False) for batch in batches[per_epoch * e:per_epoch * (e + 1)]]
        if val_step:
            steps.append((np.arange(n, n + m), e, True))
    ws, bs, losses = minibatch_sgd(np.concatenate([x, x_val]), np.concatenate([y, y_val]), lr,
                                   [rows for rows, _, _ in steps], w=start[0], b=start[1])
    x64, y64 = x_val.astype(np.float64), y_val.astype(np.float64)
    train, val = [], []
    for e in range(epochs):
        mine = [k for k, (_, epoch, held) in enumerate(steps) if epoch == e and not held]
        sizes = np.array([len(steps[k][0]) for k in mine], dtype=np.float64)
        train.append({"weighted": np.sum(losses[mine] * sizes) / np.sum(sizes), "plain": np.mean(losses[mine]),
                      "last": losses[mine[-1]]}[reduce])
        if val_step:
            val.append(losses[mine[-1] + 1])  # the held-out step's loss, before its update
            continue
        k = mine[-1] if val_at == "end" else mine[0] - 1  # the step after which the held-out rows are measured
        w, b = (ws[k], bs[k]) if k >= 0 else start
        val.append(np.mean((w * x64 + b - y64) ** 2))
    return np.array(train), np.array(val), (ws[-1], bs[-1])


def _check_curve_case(train_and_validate, x, y, x_val, y_val, lr, batch_size, epochs, seed, start):
    net = one_neuron(*start)
    got = _with_seed(seed, lambda: held_out_curve.call(train_and_validate, net, x, y, x_val, y_val, lr,
                                                        batch_size, epochs))
    if not isinstance(got, (list, tuple)) or len(got) != 2:
        raise Incorrect(t("expected a pair (train_losses, val_losses), two lists of {epochs} numbers each, got {value}",
                          epochs=epochs, value=shown(got)))
    train_got = series(got[0], t("train_losses"), epochs)
    val_got = series(got[1], t("val_losses"), epochs)
    w, b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
    case = (x, y, x_val, y_val, lr, batch_size, epochs, seed, start)
    want_train, want_val, (want_w, want_b) = _curve_oracle(*case)

    def same(u, v):
        return close(u, v, rtol=1e-4, atol=1e-6)

    if abs(w - start[0]) < 1e-7 and abs(b - start[1]) < 1e-7:
        raise Incorrect(t("the net's weights never changed: was the net you were given trained?"))
    if same(train_got, want_train) and same(val_got, want_val) and abs(w - want_w) < 1e-4 and abs(b - want_b) < 1e-4:
        return
    name_the_mistake((train_got, val_got), lambda **how: _curve_oracle(*case, **how)[:2], _LOOP_MISTAKES,
                     same=same, n=len(x))
    if same(train_got, want_train) and same(val_got, want_val):
        raise Incorrect(t("the curves are right, but the net you were given ends at w = {w:.5f}, b = {b:.5f}, not "
                          "{want_w:.5f}, {want_b:.5f}: how many steps did that net take, and on which rows?", w=w,
                          b=b, want_w=want_w, want_b=want_b))
    if not same(train_got, want_train):
        k = int(np.argmax(~np.isclose(train_got, want_train, rtol=1e-4, atol=1e-6)))
        raise Incorrect(t("the training loss of epoch {epoch} should be {want:.6f} (SGD on the batches of a shuffled "
                          "dataset, the check's seed; each step's loss before its update, weighted by its batch's "
                          "rows), got {got:.6f}. Did you set a seed, use another optimizer, or record the loss after "
                          "the update?", epoch=k + 1, want=want_train[k], got=train_got[k]))
    k = int(np.argmax(~np.isclose(val_got, want_val, rtol=1e-4, atol=1e-6)))
    raise Incorrect(t("the held-out loss of epoch {epoch} should be {want:.6f} (the MSE of the net on all of x_val, "
                      "y_val after the epoch's last step), got {got:.6f}. Did you train on the held-out rows, or "
                      "measure them with the train cell (which also takes a step)?", epoch=k + 1, want=want_val[k],
                      got=val_got[k]))


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
    lazy("section 1 builds and batches a dataset, section 2 shuffles one and section 3 shows what drops a partial "
         "last batch: put those pieces together on x3 and y3"),
    lazy("the rows are shuffled when the dataset is built, and batched afterwards; .batch takes the number of rows "
         "and the flag of section 3"),
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
held_out_curve = FunctionExercise(_check_held_out_curve, hints=[
    lazy("the dataset, the train cell and the one iterator are section 4's; section 6 computed an epoch's mean "
         "over its samples from the step losses and the batch sizes"),
    lazy("the held-out loss needs a cell that computes the loss of the net and takes no step: notebook 02 built "
         "one; the train cell would take a step"),
], signature="train_and_validate(net, x, y, x_val, y_val, lr, batch_size, epochs)")

bind(globals())
