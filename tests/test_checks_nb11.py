"""The checkers of notebook 11 accept the reference solutions and explain typical wrong answers."""

import numpy as np
import pytest

from course_utils.checks import nb11
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def verdict(exercise, answer):
    return exercise.evaluate(answer)


# ---- 11.1 sharding ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n_rows, num_shards", [(10, 2), (10, 4), (11, 2), (7, 3), (100, 4), (5, 8)])
def test_shard_oracle_matches_mindspore(n_rows, num_shards):
    import mindspore.dataset as ds

    for shard_id in range(num_shards):
        rows = ds.NumpySlicesDataset({"i": np.arange(n_rows)}, shuffle=False, num_shards=num_shards,
                                     shard_id=shard_id)
        got = [int(r["i"]) for r in rows.create_dict_iterator(output_numpy=True)]
        assert got == nb11.expected_shard(n_rows, num_shards, shard_id)


def test_shard_rows_accepts_the_solution_in_any_order():
    assert verdict(nb11.shard_rows, [2, 6, 0]).status == CORRECT
    assert verdict(nb11.shard_rows, (0, 2, 6)).status == CORRECT
    assert verdict(nb11.shard_rows, np.array([2, 6, 0])).status == CORRECT
    assert verdict(nb11.shard_rows, ...).status == NOT_ATTEMPTED


@pytest.mark.parametrize("answer, text", [
    ([2, 6], "same number of rows"),
    ([5, 6, 7], "deals rows out like cards"),
    ([2, 6, 9], "does not get"),
    ("2, 6, 0", "list of row numbers"),
    ([2.5, 6, 0], "whole numbers"),
    (2, "list of row numbers"),
])
def test_shard_rows_explains_wrong_answers(answer, text):
    result = verdict(nb11.shard_rows, answer)
    assert result.status == INCORRECT and text in result.message


# ---- 11.2 gradient sum ------------------------------------------------------------------------------
def test_sum_lr_accepts_the_solution():
    assert verdict(nb11.sum_lr, 2.0).status == CORRECT
    assert verdict(nb11.sum_lr, 2).status == CORRECT
    assert verdict(nb11.sum_lr, np.float32(2.0)).status == CORRECT


@pytest.mark.parametrize("answer, text", [
    (0.5, "gradients_mean=True"),
    (1.0, "2 workers"),
    (0.125, "not smaller"),
    (3.0, "sum of 4"),
    ("2.0", "must be a number, not text"),
    (True, "must be a number, got bool"),
])
def test_sum_lr_explains_wrong_answers(answer, text):
    result = verdict(nb11.sum_lr, answer)
    assert result.status == INCORRECT and text in result.message


def test_sum_lr_oracle_is_the_sum_of_shard_means():
    """4 equal shards: the sum of their mean gradients is 4 times the full-batch gradient."""
    rng = np.random.default_rng(0)
    x = rng.random(100)
    y = 2 * x + rng.normal(0, 0.01, 100)
    grad = lambda xs, ys: np.array([np.mean(2 * (0.3 * xs - ys) * xs), np.mean(2 * (0.3 * xs - ys))])  # noqa: E731
    total = sum(grad(x[k::4], y[k::4]) for k in range(4))
    np.testing.assert_allclose(nb11.SUM_LR * total, (nb11.SUM_WORKERS * nb11.SUM_LR) * grad(x, y), rtol=1e-12)


# ---- 11.3 msrun on two machines -------------------------------------------------------------------
SOLUTION = ("msrun --worker_num=8 --local_worker_num=4 --master_addr=192.168.1.10 --master_port=8118 "
            "--node_rank=1 --log_dir=logs --join=True dp_train.py")


def test_node_command_accepts_equivalent_spellings():
    assert verdict(nb11.node_command, SOLUTION).status == CORRECT
    spaced = ("msrun --worker_num 8 --local_worker_num 4 --master_addr 192.168.1.10 --master_port 8118 "
              "--node_rank 1 /home/me/dp_train.py")
    assert verdict(nb11.node_command, spaced).status == CORRECT
    as_list = ["python", "-m", "mindspore.parallel.cluster.run", "--node_rank=1", "--worker_num=8",
               "--local_worker_num=4", "--master_port=8118", "--master_addr=192.168.1.10", "dp_train.py"]
    assert verdict(nb11.node_command, as_list).status == CORRECT


@pytest.mark.parametrize("wrong, text", [
    (SOLUTION.replace("--worker_num=8", "--worker_num=4"), "whole job"),
    (SOLUTION.replace("--local_worker_num=4", "--local_worker_num=8"), "this machine starts"),
    (SOLUTION.replace("192.168.1.10", "127.0.0.1"), "reach the scheduler"),
    (SOLUTION.replace("--master_port=8118", "--master_port=8119"), "port"),
    (SOLUTION.replace("--node_rank=1", "--node_rank=2"), "numbered from 0"),
    (SOLUTION.replace("--node_rank=1 ", ""), "--node_rank is missing"),
    (SOLUTION.replace("--join=True", "--join=False"), "--join=True"),
    (SOLUTION.replace("dp_train.py", "other.py"), "end with the script"),
    (SOLUTION.replace("msrun", "mpirun"), "start with `msrun`"),
    (42, "as a string"),
])
def test_node_command_explains_wrong_answers(wrong, text):
    result = verdict(nb11.node_command, wrong)
    assert result.status == INCORRECT and text in result.message, result.message


def test_parse_msrun_reads_both_option_styles():
    options, script = nb11.parse_msrun("msrun --worker_num=2 --join True train.py --lr 0.1")
    assert options == {"worker_num": "2", "join": "True"} and script == "train.py"


def test_node_rank_rule_matches_msrun():
    """The rank numbering the hint and the notebook teach is the one msrun's source applies."""
    import inspect

    from mindspore.parallel.cluster.process_entity._api import _ProcessManager

    assert "node_id = self.node_rank * self.local_worker_num + index" in inspect.getsource(
        _ProcessManager._get_node_id_and_log_path)
