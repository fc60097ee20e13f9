"""Exercises of notebook 15 (data-parallel training with msrun).

The oracles are written from the rules, not from MindSpore: sharding deals rows out like cards and wraps
around to the start; an all-reduce that sums N mean-gradients is a step N times as large; msrun gives
the workers of machine ``node_rank`` the ranks ``node_rank * local_worker_num + 0, 1, ...``.
"""

import math
import numbers
import shlex

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import NONE_HINT, Exercise, Prediction, ScaffoldExercise, as_array, as_number, bind
from course_utils.messages import lazy, t

# Exercise 15.1: the rows shard_id=2 of num_shards=4 receives from a data set of 10 rows.
SHARD_ROWS, SHARD_ID, NUM_SHARDS = 10, 2, 4


def expected_shard(n_rows, num_shards, shard_id):
    """Rows dealt out round-robin; the last round is filled up from the start (every shard gets ceil(n/k))."""
    per_shard = math.ceil(n_rows / num_shards)
    return [(shard_id + num_shards * i) % n_rows for i in range(per_shard)]


def _check_shard(answer):
    if hasattr(answer, "tolist"):  # a numpy array (or a Tensor) of row numbers
        answer = answer.asnumpy().tolist() if hasattr(answer, "asnumpy") else answer.tolist()
    if not isinstance(answer, (list, tuple)):
        return t("expected a list of row numbers such as [1, 5], got {answer}", answer=shown(answer))
    bad = [r for r in answer if isinstance(r, bool) or not isinstance(r, numbers.Integral)]
    if bad:
        return t("row numbers are whole numbers (ints) such as 1 or 5, got {value}", value=shown(bad[0]))
    rows = [int(r) for r in answer]
    expected = expected_shard(SHARD_ROWS, NUM_SHARDS, SHARD_ID)
    if sorted(rows) == sorted(expected):
        return None
    if sorted(rows) == [r for r in range(SHARD_ROWS) if r % NUM_SHARDS == SHARD_ID]:
        return t("those are the rows dealt out, but every shard gets the same number of rows, "
                 "ceil({rows}/{shards}) = {per_shard}: what fills the last place?", rows=SHARD_ROWS,
                 shards=NUM_SHARDS, per_shard=len(expected))
    if len(rows) == len(expected) and rows == sorted(rows) and rows[-1] - rows[0] == len(rows) - 1:
        return t("MindSpore does not cut the data set into blocks: it deals rows out like cards (0, 1, 2, 3, 0, "
                 "...)")
    return t("shard {shard} of {shards} does not get {rows}: try it with ds.NumpySlicesDataset and an index "
             "column", shard=SHARD_ID, shards=NUM_SHARDS, rows=rows)


# Exercise 15.4: 4 workers, gradients_mean=False, lr=0.5: the single-process learning rate that matches.
SUM_WORKERS, SUM_LR = 4, 0.5


def _check_sum_lr(answer):
    answer, problem = as_number(answer, t("the learning rate"))
    if problem:
        return problem
    expected = SUM_WORKERS * SUM_LR
    if math.isclose(answer, expected, rel_tol=1e-9):
        return None
    if math.isclose(answer, SUM_LR):
        return t("that is what gradients_mean=True gives; with a sum, how many shard gradients are added up?")
    if math.isclose(answer, 2 * SUM_LR):
        return t("that is right for 2 workers; here there are {workers}", workers=SUM_WORKERS)
    if math.isclose(answer, SUM_LR / SUM_WORKERS):
        return t("a sum is larger than a mean, not smaller: the step grows")
    return t("each of the {workers} ranks' gradients is a mean over its shard, about the full-batch gradient; "
             "what is the sum of {workers} of them?", workers=SUM_WORKERS)


# Exercise 15.6: the msrun command for the second of two machines with 4 workers each.
MASTER_ADDR, MASTER_PORT, MACHINES, PER_MACHINE, SCRIPT = "192.168.1.10", 8118, 2, 4, "dp_train.py"


def parse_msrun(command):
    """``{option: value}`` and the script of an msrun command (a string or a list of words)."""
    words = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
    if words[:1] == ["msrun"]:
        words = words[1:]
    elif words[1:3] == ["-m", "mindspore.parallel.cluster.run"]:
        words = words[3:]
    else:
        raise ValueError(t("the command should start with `msrun` (or python -m mindspore.parallel.cluster.run)"))
    options, script = {}, None
    while words:
        word = words.pop(0)
        if word.startswith("--"):
            key, _, value = word[2:].partition("=")
            options[key] = value if value else (words.pop(0) if words else "")
        else:
            script = word
            break
    return options, script


def _check_node_command(answer):
    if not isinstance(answer, (str, list, tuple)):
        return t("expected the command as a string, got {answer}", answer=shown(answer))
    try:
        options, script = parse_msrun(answer)
    except ValueError as exc:  # also shlex's "No closing quotation"
        return t("cannot read the command: {exc}", exc=exc)
    expected = {"worker_num": str(MACHINES * PER_MACHINE), "local_worker_num": str(PER_MACHINE),
                "master_addr": MASTER_ADDR, "master_port": str(MASTER_PORT), "node_rank": "1"}
    why = {"worker_num": t("--worker_num counts the workers of the whole job, on every machine"),
           "local_worker_num": t("--local_worker_num counts the workers this machine starts"),
           "master_addr": t("every machine must reach the scheduler on the first machine, at its address"),
           "master_port": t("every machine must use the port the first machine's scheduler listens on"),
           "node_rank": t("machines are numbered from 0; the second machine is node 1 (its workers get ranks "
                          "{first}..{last})", first=PER_MACHINE, last=2 * PER_MACHINE - 1)}
    for key, value in expected.items():
        if key not in options:
            return t("--{key} is missing: {why}", key=key, why=why[key])
        if options[key] != value:
            return t("--{key}={value} is not right: {why}", key=key, value=options[key], why=why[key])
    if options.get("join", "True") != "True":
        return t("keep --join=True: with --join=False msrun returns at once and leaves the workers running")
    if script is None or script.rsplit("/", 1)[-1] != SCRIPT:
        return t("the command must end with the script to run, {script}", script=SCRIPT)
    return None


# ---- 15.5 the all-reduced gradient of a data-parallel step, in one process ---------------------------
# (rows, features, workers, gradients_mean): equal shards with a mean, then shards that need filling up, summed
REDUCE_CASES = [(12, 2, 3, True), (10, 2, 4, False)]


def _reduce_data(n_rows, n_features):
    rng = np.random.default_rng(11 + n_rows)
    x = rng.uniform(-1.0, 1.0, (n_rows, n_features)).astype(np.float32)
    y = (x @ rng.normal(0.0, 1.0, (n_features, 1)) + 0.2).astype(np.float32)
    w = rng.normal(0.0, 0.5, (1, n_features)).astype(np.float32)
    return x, y, w, np.float32(-0.1)


def _mse_grads(x, y, w, b):
    """(dL/dW of shape (1, k), dL/db of shape (1,)) of L = mean((x @ W.T + b - y)**2), in float64."""
    r = x.astype(np.float64) @ w.astype(np.float64).T + float(b) - y.astype(np.float64)
    return [2.0 * (r.T @ x) / len(x), np.array([2.0 * r.mean()])]


def reduced_oracle(n_rows, n_features, workers, mean, shard=None):
    """The gradients every worker applies: each shard's mean gradient, summed over the workers, divided by
    their number if ``mean``. ``shard(n, workers, rank)`` gives a shard's rows (default: MindSpore's rule)."""
    x, y, w, b = _reduce_data(n_rows, n_features)
    shard = expected_shard if shard is None else shard
    per_worker = [_mse_grads(x[rows], y[rows], w, b) for rows in
                  (np.array(shard(n_rows, workers, rank)) for rank in range(workers))]
    total = [sum(g[i] for g in per_worker) for i in range(2)]
    return [g / workers for g in total] if mean else total


# typical mistakes, each as the rows or the reduction a learner might use
_VARIANTS = {
    "no fill": (lambda n, k, r: list(range(r, n, k)), None,
                lazy("the short shards must be filled up from the start (every shard has ceil(n / workers) rows)")),
    "blocks": (lambda n, k, r: [int(i) for i in np.array_split(np.arange(n), k)[r]], None,
               lazy("shards are dealt out like cards (rank r gets rows r, r + workers, ...), not cut into blocks")),
    "mean instead of sum": (None, True, lazy("with gradients_mean=False the all-reduce only sums; it does not "
                                             "divide")),
    "sum instead of mean": (None, False, lazy("with gradients_mean=True the sum is divided by the number of "
                                              "workers")),
}


def _check_reduced_grads(answer):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    if not callable(answer):
        return t("expected your function all_reduced_gradients, got {answer}", answer=shown(answer))
    for n_rows, n_features, workers, mean in REDUCE_CASES:
        x, y, w, b = _reduce_data(n_rows, n_features)
        net = nn.Dense(n_features, 1)
        ops.assign(net.weight, Tensor(w))
        ops.assign(net.bias, Tensor([b], ms.float32))
        loss = nn.MSELoss()

        def forward(data, label, net=net, loss=loss):
            return loss(net(data), label)

        grad_fn = ms.grad(forward, None, net.trainable_params())
        setting = t("{rows} rows, {workers} workers, gradients_mean={mean}", rows=n_rows, workers=workers, mean=mean)
        got = answer(grad_fn, x.copy(), y.copy(), workers, mean)
        if got is None:
            return t("for {setting} your function returned {got}; return the all-reduced gradients, one per "
                     "parameter (weight and bias), as grad_fn does. {hint}", setting=setting, got=shown(got),
                     hint=t(NONE_HINT))
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            return t("for {setting} your function returned {got}; return the all-reduced gradients, one per "
                     "parameter (weight and bias), as grad_fn does", setting=setting, got=shown(got))
        arrays = []
        for gradient, g, shape in zip((t("the weight gradient"), t("the bias gradient")), got, ((1, n_features), (1,))):
            arr, problem = as_array(g, gradient)
            if problem:
                return problem
            if arr.shape != shape:
                return t("for {setting} {gradient} has shape {got}, expected {expected}", setting=setting,
                         gradient=gradient, got=arr.shape, expected=shape)
            if not np.all(np.isfinite(arr)):
                return t("for {setting} {gradient} holds NaN or inf", setting=setting, gradient=gradient)
            arrays.append(arr)
        want = reduced_oracle(n_rows, n_features, workers, mean)
        if all(np.allclose(a, b_, rtol=1e-4, atol=1e-6) for a, b_ in zip(arrays, want)):
            continue
        for shard, variant_mean, why in _VARIANTS.values():
            other = reduced_oracle(n_rows, n_features, workers, mean if variant_mean is None else variant_mean, shard)
            if (variant_mean is None or variant_mean != mean) and all(
                    np.allclose(a, b_, rtol=1e-4, atol=1e-6) for a, b_ in zip(arrays, other)):
                return t("for {setting}: {why}", setting=setting, why=t(why))
        full = _mse_grads(x, y, w, b)
        if all(np.allclose(a, b_, rtol=1e-4, atol=1e-6) for a, b_ in zip(arrays, full)):
            return t("for {setting} you returned the full-batch gradient; each worker sees only its shard, and the "
                     "all-reduce combines the {workers} shard gradients", setting=setting, workers=workers)
        return t("for {setting} the weight gradient should be {want}, got {got}: shard the rows, take grad_fn on "
                 "each shard, then all-reduce", setting=setting, want=np.round(want[0], 5).tolist(),
                 got=np.round(arrays[0], 5).tolist())
    return None


# ---- predictions --------------------------------------------------------------------------------------


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
shard_rows = Exercise(_check_shard, hints=[
    lazy("sharding deals the rows out like cards, one to each rank in turn"),
    lazy("build ds.NumpySlicesDataset({'i': np.arange(10)}, shuffle=False, num_shards=4, shard_id=2) and list what "
         "it yields; or deal 10 cards to 4 players, and keep dealing from the top of the deck until every player has "
         "the same number"),
])
rank_results = Prediction(
    lazy("Each of the two ranks prints the loss of its last step and its final w and b. What do you "
                 "expect?"),
    {"a": (lazy("the same loss and the same weights on both ranks"),
           lazy("the weights are shared through the all-reduce, but each rank's loss is computed before it, on its "
                "own shard of 50 samples, so the two losses differ")),
     "b": (lazy("different losses, identical weights"),
           lazy("each rank reports the loss on its own shard (different samples, different loss); the all-reduce "
                "hands every rank the same mean gradient, so from the same start they take the same steps, bit for "
                "bit")),
     "c": (lazy("different losses, and weights that differ in the last digits"),
           lazy("float rounding could differ only if the ranks computed the update differently; they apply the "
                "same all-reduced gradient to the same weights with the same kernels, so the results are bitwise "
                "equal"))},
    answer="b")
sum_diverges = Prediction(
    lazy("dp_model.py also trains with gradients_mean=False: the all-reduce sums the 2 shard gradients, "
                 "at lr = 0.5. What happens?"),
    {"a": (lazy("the same as gradients_mean=True: the optimizer takes care of the worker count"),
           lazy("nothing divides by the number of workers when gradients_mean=False: the optimizer receives the "
                "sum and steps by lr times the sum")),
     "b": (lazy("it trains like lr = 1.0 in one process: on this task, that diverges"),
           lazy("the sum of 2 shard means is twice the full-batch gradient (section 1), so every step is that of "
                "lr = 1.0, above the stable limit 2/lambda_max of about 0.81: the weights grow without bound")),
     "c": (lazy("it trains like lr = 0.25: more slowly, but safely"),
           lazy("a sum is larger than a mean, not smaller: the step doubles instead of halving"))},
    answer="b")
sum_lr = Exercise(_check_sum_lr, hints=[
    lazy("each rank computes the mean gradient of its own shard; what does the all-reduce do with them?"),
    lazy("with equal shards, each rank's mean gradient is about the full-batch gradient g; the all-reduce adds 4 of "
         "them, and SGD steps by lr times what it receives"),
])
reduced_grads = ScaffoldExercise(_check_reduced_grads, hints=[
    lazy("three steps: the rows of each rank's shard, grad_fn on each shard, then add the workers' gradients up "
         "(and divide if gradients_mean)"),
    lazy("rank r's rows are expected_shard-like: r, r + workers, r + 2 * workers, ... wrapping around to the start "
         "until every shard has ceil(n / workers) rows; compare with shard_rows from section 2"),
    lazy("rows = [(rank + workers * i) % n for i in range(math.ceil(n / workers))]; then "
         "summed = [sum(g[i] for g in per_worker) for i in range(len(per_worker[0]))], divided by workers if "
         "gradients_mean"),
])
node_command = Exercise(_check_node_command, hints=[
    lazy("both machines run the same msrun command except for one option"),
    lazy("start from the 2-worker command above; the second machine runs the same command as the first except for "
         "--node_rank; --worker_num is the total over both machines"),
])

bind(globals())
