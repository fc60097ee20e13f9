"""Exercises of notebook 11 (data-parallel training with msrun).

The oracles are written from the rules, not from MindSpore: sharding deals rows out like cards and wraps
around to the start; an all-reduce that sums N mean-gradients is a step N times as large; msrun gives
the workers of machine ``node_rank`` the ranks ``node_rank * local_worker_num + 0, 1, ...``.
"""

import math
import numbers
import shlex

from course_utils._validate import shown
from course_utils.exercises import Exercise, as_number

# Exercise 11.1: the rows shard_id=2 of num_shards=4 receives from a data set of 10 rows.
SHARD_ROWS, SHARD_ID, NUM_SHARDS = 10, 2, 4


def expected_shard(n_rows, num_shards, shard_id):
    """Rows dealt out round-robin; the last round is filled up from the start (every shard gets ceil(n/k))."""
    per_shard = math.ceil(n_rows / num_shards)
    return [(shard_id + num_shards * i) % n_rows for i in range(per_shard)]


def _check_shard(answer):
    if hasattr(answer, "tolist"):  # a numpy array (or a Tensor) of row numbers
        answer = answer.asnumpy().tolist() if hasattr(answer, "asnumpy") else answer.tolist()
    if not isinstance(answer, (list, tuple)):
        return f"expected a list of row numbers such as [1, 5], got {shown(answer)}"
    bad = [r for r in answer if isinstance(r, bool) or not isinstance(r, numbers.Integral)]
    if bad:
        return f"row numbers are whole numbers (ints) such as 1 or 5, got {shown(bad[0])}"
    rows = [int(r) for r in answer]
    expected = expected_shard(SHARD_ROWS, NUM_SHARDS, SHARD_ID)
    if sorted(rows) == sorted(expected):
        return None
    if sorted(rows) == [r for r in range(SHARD_ROWS) if r % NUM_SHARDS == SHARD_ID]:
        return (f"those are the rows dealt out, but every shard gets the same number of rows, "
                f"ceil({SHARD_ROWS}/{NUM_SHARDS}) = {len(expected)}: what fills the last place?")
    if len(rows) == len(expected) and rows == sorted(rows) and rows[-1] - rows[0] == len(rows) - 1:
        return "MindSpore does not cut the data set into blocks: it deals rows out like cards (0, 1, 2, 3, 0, ...)"
    return (f"shard {SHARD_ID} of {NUM_SHARDS} does not get {rows}: try it with ds.NumpySlicesDataset and an "
            f"index column")


# Exercise 11.2: 4 workers, gradients_mean=False, lr=0.5: the single-process learning rate that matches.
SUM_WORKERS, SUM_LR = 4, 0.5


def _check_sum_lr(answer):
    answer, problem = as_number(answer, "the learning rate")
    if problem:
        return problem
    expected = SUM_WORKERS * SUM_LR
    if math.isclose(answer, expected, rel_tol=1e-9):
        return None
    if math.isclose(answer, SUM_LR):
        return "that is what gradients_mean=True gives; with a sum, how many shard gradients are added up?"
    if math.isclose(answer, 2 * SUM_LR):
        return f"that is right for 2 workers; here there are {SUM_WORKERS}"
    if math.isclose(answer, SUM_LR / SUM_WORKERS):
        return "a sum is larger than a mean, not smaller: the step grows"
    return (f"each of the {SUM_WORKERS} ranks' gradients is a mean over its shard, about the full-batch "
            f"gradient; what is the sum of {SUM_WORKERS} of them?")


# Exercise 11.3: the msrun command for the second of two machines with 4 workers each.
MASTER_ADDR, MASTER_PORT, MACHINES, PER_MACHINE, SCRIPT = "192.168.1.10", 8118, 2, 4, "dp_train.py"


def parse_msrun(command):
    """``{option: value}`` and the script of an msrun command (a string or a list of words)."""
    words = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
    if words[:1] == ["msrun"]:
        words = words[1:]
    elif words[1:3] == ["-m", "mindspore.parallel.cluster.run"]:
        words = words[3:]
    else:
        raise ValueError("the command should start with `msrun` (or python -m mindspore.parallel.cluster.run)")
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
        return f"expected the command as a string, got {shown(answer)}"
    try:
        options, script = parse_msrun(answer)
    except ValueError as exc:  # also shlex's "No closing quotation"
        return f"cannot read the command: {exc}"
    expected = {"worker_num": str(MACHINES * PER_MACHINE), "local_worker_num": str(PER_MACHINE),
                "master_addr": MASTER_ADDR, "master_port": str(MASTER_PORT), "node_rank": "1"}
    why = {"worker_num": "--worker_num counts the workers of the whole job, on every machine",
           "local_worker_num": "--local_worker_num counts the workers this machine starts",
           "master_addr": "every machine must reach the scheduler on the first machine, at its address",
           "master_port": "every machine must use the port the first machine's scheduler listens on",
           "node_rank": "machines are numbered from 0; the second machine is node 1 (its workers get ranks "
                        f"{PER_MACHINE}..{2 * PER_MACHINE - 1})"}
    for key, value in expected.items():
        if key not in options:
            return f"--{key} is missing: {why[key]}"
        if options[key] != value:
            return f"--{key}={options[key]} is not right: {why[key]}"
    if options.get("join", "True") != "True":
        return "keep --join=True: with --join=False msrun returns at once and leaves the workers running"
    if script is None or script.rsplit("/", 1)[-1] != SCRIPT:
        return f"the command must end with the script to run, {SCRIPT}"
    return None


shard_rows = Exercise("11.1", _check_shard, hints=[
    "sharding deals the rows out like cards, one to each rank in turn",
    "build ds.NumpySlicesDataset({'i': np.arange(10)}, shuffle=False, num_shards=4, shard_id=2) and list what it "
    "yields; or deal 10 cards to 4 players, and keep dealing from the top of the deck until every player has the same"
    " number",
])
sum_lr = Exercise("11.2", _check_sum_lr, hints=[
    "each rank computes the mean gradient of its own shard; what does the all-reduce do with them?",
    "with equal shards, each rank's mean gradient is about the full-batch gradient g; the all-reduce adds 4 of them, "
    "and SGD steps by lr times what it receives",
])
node_command = Exercise("11.3", _check_node_command, hints=[
    "both machines run the same msrun command except for one option",
    "start from the 2-worker command above; the second machine runs the same command as the first except for "
    "--node_rank; --worker_num is the total over both machines",
])
