"""Exercises of notebook 15 (data-parallel training with msrun).

The oracles are written from the rules, not from MindSpore: sharding deals rows out like cards and wraps
around to the start; an all-reduce that sums N mean-gradients is a step N times as large; msrun gives
the workers of a machine started with ``--node_rank`` the ranks ``node_rank * local_worker_num + 0, 1, ...``.
"""

import hashlib
import math
import numbers
import shlex
from functools import partial

import numpy as np

from course_utils import oracles
from course_utils._validate import shown
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    ValueExercise,
    array,
    bind,
    brief_error,
    close,
    name_the_mistake,
    number,
)
from course_utils.messages import lazy, t

# Exercise 15.1: the rows shard_id=2 of num_shards=4 receives from a data set of 10 rows.
SHARD_ROWS, SHARD_ID, NUM_SHARDS = 10, 2, 4


def _expected_shard(n_rows, num_shards, shard_id):
    """Rows dealt out round-robin; the last round is filled up from the start (every shard gets ceil(n/k))."""
    per_shard = math.ceil(n_rows / num_shards)
    return [(shard_id + num_shards * i) % n_rows for i in range(per_shard)]


def _check_shard(answer):
    if hasattr(answer, "tolist"):  # a numpy array (or a Tensor) of row numbers
        answer = answer.asnumpy().tolist() if hasattr(answer, "asnumpy") else answer.tolist()
    if not isinstance(answer, (list, tuple)):
        raise Incorrect(t("expected a list of row numbers such as [1, 5], got {answer}", answer=shown(answer)))
    bad = [r for r in answer if isinstance(r, bool) or not isinstance(r, numbers.Integral)]
    if bad:
        raise Incorrect(t("row numbers are whole numbers (ints) such as 1 or 5, got {value}", value=shown(bad[0])))
    rows, expected = sorted(int(r) for r in answer), _expected_shard(SHARD_ROWS, NUM_SHARDS, SHARD_ID)
    if rows == sorted(expected):
        return
    if rows == [r for r in range(SHARD_ROWS) if r % NUM_SHARDS == SHARD_ID]:
        raise Incorrect(t("those are the rows dealt out, but every shard gets the same number of rows, "
                          "ceil({rows}/{shards}) = {per_shard}: what fills the last place?", rows=SHARD_ROWS,
                          shards=NUM_SHARDS, per_shard=len(expected)))
    if len(rows) == len(expected) and rows == list(range(rows[0], rows[0] + len(rows))):
        raise Incorrect(t("MindSpore does not cut the data set into blocks: it deals rows out like cards (0, 1, 2, "
                          "3, 0, ...)"))
    raise Incorrect(t("shard {shard} of {shards} does not get {rows}: deal the rows out one at a time, as section 2 "
                      "describes", shard=SHARD_ID, shards=NUM_SHARDS, rows=[int(r) for r in answer]))


# Exercise 15.4: 4 workers with gradients_mean=False: the learning rate that trains like one process at lr=0.5.
SUM_WORKERS, TARGET_LR = 4, 0.3


# Exercise 15.7: a job of three machines of different sizes; the msrun command of the third.
MASTER_ADDR, MASTER_PORT, SCRIPT = "192.168.7.21", 9010, "dp_train.py"
MACHINE_WORKERS = (4, 4, 2)  # the workers each machine starts; the first two run --node_rank=0 and --node_rank=1
# msrun's options in 2.10, as `msrun --help` lists them (tests/test_facts_15.py compares)
MSRUN_OPTIONS = ("worker_num", "local_worker_num", "master_addr", "master_port", "node_rank", "log_dir", "join",
                 "cluster_time_out", "bind_core", "bind_numa", "sim_level", "sim_rank_id", "rank_table_file",
                 "worker_log_name", "tail_worker_log")


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


def node_ranks(node_rank, local_worker_num):
    """The ranks msrun gives the workers of a machine started with ``--node_rank``: it assumes that every machine
    starts ``local_worker_num`` workers."""
    return [node_rank * local_worker_num + i for i in range(local_worker_num)]


def _check_node_rank(value):
    """``--node_rank`` of the last machine: its workers must get the ranks the machines before it leave."""
    total, local = sum(MACHINE_WORKERS), MACHINE_WORKERS[-1]
    if value is None or value == "-1":  # msrun's default: MindSpore would hand out this machine's ranks itself,
        # which a job whose other machines were given theirs does not always survive (tests/test_facts_15.py)
        raise Incorrect(t("--node_rank is missing: the first two machines fix their workers' ranks with --node_rank; "
                          "fix this machine's too"))
    try:
        node_rank = int(value)
    except ValueError:
        raise Incorrect(t("--node_rank takes a whole number, got {value}", value=value)) from None
    if node_rank < 0:
        raise Incorrect(t("--node_rank={value} would give this machine's workers negative ranks", value=value))
    ranks = node_ranks(node_rank, local)
    if ranks == list(range(total - local, total)):
        return
    if ranks[-1] >= total:
        raise Incorrect(t("--node_rank={value} gives this machine's workers the ranks {ranks} (node_rank × "
                          "local_worker_num + 0, 1, ...), but a job of {total} workers has the ranks 0 to {last}",
                          value=value, ranks=ranks, total=total, last=total - 1))
    for machine, workers in enumerate(MACHINE_WORKERS[:-1]):
        taken = sorted(set(ranks) & set(node_ranks(machine, workers)))
        if taken:
            raise Incorrect(t("--node_rank={value} gives this machine's workers the ranks {ranks} (node_rank × "
                              "local_worker_num + 0, 1, ...), and the machine started with --node_rank={machine} "
                              "already has rank {rank}", value=value, ranks=ranks, machine=machine, rank=taken[0]))


def _check_node_command(answer):
    if not isinstance(answer, (str, list, tuple)):
        raise Incorrect(t("expected the command as a string, got {answer}", answer=shown(answer)))
    try:
        options, script = parse_msrun(answer)
    except ValueError as exc:  # also shlex's "No closing quotation"
        raise Incorrect(t("cannot read the command: {exc}", exc=exc)) from None
    expected = {"worker_num": str(sum(MACHINE_WORKERS)), "local_worker_num": str(MACHINE_WORKERS[-1]),
                "master_addr": MASTER_ADDR, "master_port": str(MASTER_PORT), "join": "True"}
    why = {"worker_num": t("--worker_num counts the workers of the whole job, on every machine"),
           "local_worker_num": t("--local_worker_num counts the workers this machine starts"),
           "master_addr": t("every machine must reach the scheduler on the first machine, at its address"),
           "master_port": t("every machine must use the port the first machine's scheduler listens on"),
           "join": t("without --join=True msrun returns at once and leaves the workers running (its default is "
                     "--join=False)")}
    for key, value in expected.items():
        if key not in options:
            raise Incorrect(t("--{key} is missing: {why}", key=key, why=why[key]))
        if options[key] != value:
            raise Incorrect(t("--{key}={value} is not right: {why}", key=key, value=options[key], why=why[key]))
    _check_node_rank(options.get("node_rank"))
    unknown = sorted(set(options) - set(MSRUN_OPTIONS))
    if unknown:
        raise Incorrect(t("msrun has no option --{option}: msrun --help lists the ones it has", option=unknown[0]))
    if script is None or script.rsplit("/", 1)[-1] != SCRIPT:
        raise Incorrect(t("the command must end with the script to run, {script}", script=SCRIPT))


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
    shard = _expected_shard if shard is None else shard
    per_worker = [_mse_grads(x[rows], y[rows], w, b) for rows in
                  (np.array(shard(n_rows, workers, rank)) for rank in range(workers))]
    total = [sum(g[i] for g in per_worker) for i in range(2)]
    return [g / workers for g in total] if mean else total


_REDUCE_MISTAKES = [  # (oracle settings, message): the rows or the reduction a learner might use
    ({"shard": lambda n, k, r: list(range(r, n, k))},
     lazy("for {setting}: the short shards must be filled up from the start (every shard has ceil(n / workers) "
          "rows)")),
    ({"shard": lambda n, k, r: [int(i) for i in np.array_split(np.arange(n), k)[r]]},
     lazy("for {setting}: shards are dealt out like cards (rank r gets rows r, r + workers, ...), not cut into "
          "blocks")),
    ({"mean": True}, lazy("for {setting}: with gradients_mean=False the all-reduce only sums; it does not divide")),
    ({"mean": False}, lazy("for {setting}: with gradients_mean=True the sum is divided by the number of workers")),
    ({"workers": 1, "mean": True}, lazy("for {setting} you returned the full-batch gradient; each worker sees only "
                                        "its shard, and the all-reduce combines the {workers} shard gradients")),
]


def _check_reduced_case(answer, n_rows, n_features, workers, mean):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    x, y, w, b = _reduce_data(n_rows, n_features)
    net, loss = nn.Dense(n_features, 1), nn.MSELoss()
    ops.assign(net.weight, Tensor(w))
    ops.assign(net.bias, Tensor([b], ms.float32))

    def forward(data, label):
        return loss(net(data), label)

    setting = t("{rows} rows, {workers} workers, gradients_mean={mean}", rows=n_rows, workers=workers, mean=mean)
    got = reduced_grads.call(answer, ms.grad(forward, None, net.trainable_params()), x, y, workers, mean)
    if not isinstance(got, (list, tuple)) or len(got) != 2:
        raise Incorrect(t("for {setting} your function returned {got}; return the all-reduced gradients, one per "
                          "parameter (weight and bias), as grad_fn does", setting=setting, got=shown(got)))
    names = (t("the weight gradient"), t("the bias gradient"))
    arrays = [array(g, gradient) for g, gradient in zip(got, names)]
    for gradient, arr, shape in zip(names, arrays, ((1, n_features), (1,))):
        if arr.shape != shape:
            raise Incorrect(t("for {setting} {gradient} has shape {got}, expected {expected}", setting=setting,
                              gradient=gradient, got=arr.shape, expected=shape))
        if not np.all(np.isfinite(arr)):
            raise Incorrect(t("for {setting} {gradient} holds NaN or inf", setting=setting, gradient=gradient))
    oracle, same = partial(reduced_oracle, n_rows, n_features, workers=workers, mean=mean), partial(close, atol=1e-6)
    want = oracle()
    if not same(arrays, want):
        name_the_mistake(arrays, oracle, _REDUCE_MISTAKES, same=same, setting=setting, workers=workers)
        raise Incorrect(t("for {setting} the weight gradient should be {want}, got {got}: shard the rows, take "
                          "grad_fn on each shard, then all-reduce", setting=setting, want=np.round(want[0], 5).tolist(),
                          got=np.round(arrays[0], 5).tolist()))


def _check_reduced_grads(answer):
    for case in REDUCE_CASES:
        _check_reduced_case(answer, *case)


# ---- the functional data-parallel step (section 6) ----------------------------------------------------------
DP_LR, DP_MOMENTUM, DP_STEPS, DP_START = 0.1, 0.9, 15, (0.2, -0.1)


def dp_exercise_data():
    """The checker's data for the functional data-parallel exercise: 24 rows, y = -1.5x + 0.7 + noise (float32)."""
    rng = np.random.default_rng(15)
    x = rng.uniform(-1.0, 2.0, (24, 1)).astype(np.float32)
    return x, (-1.5 * x + 0.7 + rng.normal(0.0, 0.05, (24, 1))).astype(np.float32)


def dp_exercise_setup(rank, group_size):
    """What the exercise's script trains, on each rank: a one-neuron net starting at DP_START, this rank's shard
    of dp_exercise_data() (rows rank, rank + group_size, ..., as num_shards/shard_id deal them) as Tensors,
    and the number of steps."""
    import mindspore as ms

    from course_utils.checks._nets import one_neuron

    x, y = dp_exercise_data()
    return one_neuron(*DP_START), ms.Tensor(x[rank::group_size]), ms.Tensor(y[rank::group_size]), DP_STEPS


def _dp_oracle(gradient_scale=1.0, momentum=DP_MOMENTUM):
    """One process, full batch, in float64: Momentum as nn.Momentum does it (its gradient times gradient_scale)."""
    x, y = dp_exercise_data()
    ws, bs, _ = oracles.gradient_descent(x, y, DP_LR * gradient_scale, DP_STEPS, w=DP_START[0], b=DP_START[1],
                                         momentum=momentum)
    return np.array([ws[-1], bs[-1]])


_DP_MISTAKES = [
    ({"gradient_scale": 2.0}, lazy("both ranks end where one process would with every gradient doubled: the two "
                                   "shards' gradients were added up, not averaged")),
    ({"momentum": 0.0}, lazy("that is plain SGD: use the nn.Momentum optimizer the script creates")),
]


_LAUNCHED = {}  # the ranks' results by the script's SHA-256


def _check_functional_dp(path):
    import os

    from course_utils.launcher import LaunchError, launch

    if not isinstance(path, (str, os.PathLike)) or not str(path).endswith(".py"):
        raise Incorrect(t("answer with the name of your script, such as \"dp_exercise.py\", got {path}",
                          path=shown(path)))
    if not os.path.isfile(path):
        raise Incorrect(t("there is no file {path} here: run the %%writefile cell first", path=path))
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if "\n...  #" in source or source.rstrip().endswith("..."):
        raise Incorrect(t("{path} still holds the `...` line of the scaffold: write the step there", path=path))
    if "DistributedGradReducer" in source:
        raise Incorrect(t("{path} uses nn.DistributedGradReducer, which section 6 showed: this time all-reduce the "
                          "gradients with the communication operator itself", path=path))
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _LAUNCHED:  # a script checked again unchanged (another language, a second Run All) is not rerun
        try:
            _LAUNCHED[key] = launch(os.path.abspath(path), num_workers=2, timeout=240).results
        except LaunchError as err:
            raise Incorrect(t("msrun could not run {path}: {error}", path=path, error=brief_error(err))) from None
    results = [_LAUNCHED[key].get(rank) for rank in (0, 1)]
    if not all(isinstance(r, dict) and {"w", "b"} <= set(r) for r in results):
        raise Incorrect(t("each rank must write result_rank_<rank>.json with its final w and b (the scaffold's "
                          "last lines), got {results}", results=shown(_LAUNCHED[key])))
    got = [np.array([number(r["w"], "w"), number(r["b"], "b")]) for r in results]
    if not close(got[0], got[1], rtol=1e-6, atol=1e-7):
        raise Incorrect(t("the two ranks end apart (rank 0: w = {w0:.6f}, rank 1: w = {w1:.6f}): each applied "
                          "only its own shard's gradient. All-reduce the gradients before the update",
                          w0=got[0][0], w1=got[1][0]))
    name_the_mistake(got[0], _dp_oracle, _DP_MISTAKES, same=lambda a, b: close(a, b, rtol=1e-4, atol=1e-5))
    want = _dp_oracle()
    if not close(got[0], want, rtol=1e-4, atol=1e-5):
        raise Incorrect(t("both ranks end at w = {w:.6f}, b = {b:.6f}; one process with Momentum on the full batch "
                          "ends at w = {want_w:.6f}, b = {want_b:.6f}: {steps} steps of the optimizer on the reduced "
                          "gradients", w=got[0][0], b=got[0][1], want_w=want[0], want_b=want[1], steps=DP_STEPS))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
shard_rows = Exercise(_check_shard, hints=[
    lazy("sharding deals the rows out like cards, one to each rank in turn"),
    lazy("deal 10 cards to 4 players, one at a time from the top of the deck; when the deck runs out before every "
         "player has as many cards as the first, go on dealing from the top again"),
])
rank_results = Prediction(
    lazy("Each of the two ranks prints the loss of its last step and its final w and b. What do you expect?"),
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
sum_lr = ValueExercise(lambda: TARGET_LR / SUM_WORKERS, what=lazy("the learning rate"), fields={
    "workers": SUM_WORKERS, "target": TARGET_LR, "times": SUM_WORKERS * SUM_WORKERS * TARGET_LR}, mistakes=[
    (lambda: SUM_WORKERS * TARGET_LR, lazy("with lr = {got:g} the {workers} workers step like one process at lr = "
                                           "{times:g}, not {target:g}")),  # the lr their sum at 0.5 acts like
    (lambda: TARGET_LR, lazy("that is right with gradients_mean=True; with a sum, each step is {workers} times as "
                             "large")),
    (lambda: TARGET_LR / 2, lazy("that is right for 2 workers; here there are {workers}")),
], otherwise=lazy("with gradients_mean=False every step is lr times the sum of {workers} shard gradients; one process "
                  "at lr = {target:g} steps by {target:g} times the full-batch gradient"), hints=[
    lazy("each rank computes the mean gradient of its own shard; what does the all-reduce do with them when "
         "gradients_mean=False?"),
    lazy("with equal shards each rank's mean gradient is about the full-batch gradient: how many times the "
         "full-batch gradient is their sum? SGD's step is lr times what it receives: make that the step of one "
         "process at lr = 0.3"),
])
reduced_grads = FunctionExercise(
    _check_reduced_grads, signature="all_reduced_gradients(grad_fn, x, y, workers, gradients_mean=True)", hints=[
    lazy("three steps: the rows of each rank's shard, grad_fn on each shard, then add the workers' gradients up "
         "(and divide if gradients_mean)"),
    lazy("rank r's rows are r, r + workers, r + 2 * workers, ... wrapping around to the start until every shard "
         "has ceil(n / workers) rows; compare with shard_rows from section 2"),
    lazy("the wrap-around is a modulo n; grad_fn(x[rows], y[rows]) gives one tuple of gradients per rank; add the "
         "tuples position by position (one sum per weight: zip helps), then divide by workers when gradients_mean"),
])
functional_dp = Exercise(_check_functional_dp, hints=[
    lazy("the step of section 6 without its reducer: a function for the gradients, then each gradient summed over "
         "the ranks, divided by their number, then the update; `steps` times on this rank's shard"),
    lazy("mindspore.ops.AllReduce() builds the operator that sums a Tensor over every rank (in a jit function too); "
         "get_group_size() is the number of ranks; the gradients come as a tuple, one per parameter"),
])
node_command = Exercise(_check_node_command, hints=[
    lazy("msrun gives the workers of a machine the ranks node_rank × local_worker_num + 0, 1, ...: write down the "
         "ranks the first two machines take, then the ranks left for the third"),
    lazy("write down the ranks the first two machines take; the third machine's workers take the next ones: which "
         "--node_rank, with this machine's --local_worker_num, gives the first of them? --worker_num counts every "
         "machine"),
])

bind(globals())
