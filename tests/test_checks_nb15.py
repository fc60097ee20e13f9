"""The checkers of notebook 15 accept the reference solutions and explain typical wrong answers."""

import numpy as np
import pytest

from course_utils.checks import nb15
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def verdict(exercise, answer):
    return exercise.evaluate(answer)


# ---- 15.1 sharding ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n_rows, num_shards", [(10, 2), (10, 4), (11, 2), (7, 3), (100, 4), (5, 8)])
def test_shard_oracle_matches_mindspore(n_rows, num_shards):
    import mindspore.dataset as ds

    for shard_id in range(num_shards):
        rows = ds.NumpySlicesDataset({"i": np.arange(n_rows)}, shuffle=False, num_shards=num_shards,
                                     shard_id=shard_id)
        got = [int(r["i"]) for r in rows.create_dict_iterator(output_numpy=True)]
        assert got == nb15.expected_shard(n_rows, num_shards, shard_id)


def test_shard_rows_accepts_the_solution_in_any_order():
    assert verdict(nb15.shard_rows, [2, 6, 0]).status == CORRECT
    assert verdict(nb15.shard_rows, (0, 2, 6)).status == CORRECT
    assert verdict(nb15.shard_rows, np.array([2, 6, 0])).status == CORRECT
    assert verdict(nb15.shard_rows, ...).status == NOT_ATTEMPTED


@pytest.mark.parametrize("answer, text", [
    ([2, 6], "same number of rows"),
    ([5, 6, 7], "deals rows out like cards"),
    ([2, 6, 9], "does not get"),
    ("2, 6, 0", "list of row numbers"),
    ([2.5, 6, 0], "whole numbers"),
    (2, "list of row numbers"),
])
def test_shard_rows_explains_wrong_answers(answer, text):
    result = verdict(nb15.shard_rows, answer)
    assert result.status == INCORRECT and text in result.message


# ---- 15.4 gradient sum ------------------------------------------------------------------------------
def test_sum_lr_accepts_the_solution():
    assert verdict(nb15.sum_lr, 2.0).status == CORRECT
    assert verdict(nb15.sum_lr, 2).status == CORRECT
    assert verdict(nb15.sum_lr, np.float32(2.0)).status == CORRECT


@pytest.mark.parametrize("answer, text", [
    (0.5, "gradients_mean=True"),
    (1.0, "2 workers"),
    (0.125, "not smaller"),
    (3.0, "sum of 4"),
    ("2.0", "must be a number, not text"),
    (True, "must be a number, got bool"),
])
def test_sum_lr_explains_wrong_answers(answer, text):
    result = verdict(nb15.sum_lr, answer)
    assert result.status == INCORRECT and text in result.message


def test_sum_lr_oracle_is_the_sum_of_shard_means():
    """4 equal shards: the sum of their mean gradients is 4 times the full-batch gradient."""
    rng = np.random.default_rng(0)
    x = rng.random(100)
    y = 2 * x + rng.normal(0, 0.01, 100)
    grad = lambda xs, ys: np.array([np.mean(2 * (0.3 * xs - ys) * xs), np.mean(2 * (0.3 * xs - ys))])  # noqa: E731
    total = sum(grad(x[k::4], y[k::4]) for k in range(4))
    np.testing.assert_allclose(nb15.SUM_LR * total, (nb15.SUM_WORKERS * nb15.SUM_LR) * grad(x, y), rtol=1e-12)


# ---- 15.6 msrun on two machines -------------------------------------------------------------------
SOLUTION = ("msrun --worker_num=8 --local_worker_num=4 --master_addr=192.168.1.10 --master_port=8118 "
            "--node_rank=1 --log_dir=logs --join=True dp_train.py")


def test_node_command_accepts_equivalent_spellings():
    assert verdict(nb15.node_command, SOLUTION).status == CORRECT
    spaced = ("msrun --worker_num 8 --local_worker_num 4 --master_addr 192.168.1.10 --master_port 8118 "
              "--node_rank 1 /home/me/dp_train.py")
    assert verdict(nb15.node_command, spaced).status == CORRECT
    as_list = ["python", "-m", "mindspore.parallel.cluster.run", "--node_rank=1", "--worker_num=8",
               "--local_worker_num=4", "--master_port=8118", "--master_addr=192.168.1.10", "dp_train.py"]
    assert verdict(nb15.node_command, as_list).status == CORRECT


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
    result = verdict(nb15.node_command, wrong)
    assert result.status == INCORRECT and text in result.message, result.message


def test_parse_msrun_reads_both_option_styles():
    options, script = nb15.parse_msrun("msrun --worker_num=2 --join True train.py --lr 0.1")
    assert options == {"worker_num": "2", "join": "True"} and script == "train.py"


def test_node_rank_rule_matches_msrun():
    """The rank numbering the hint and the notebook teach is the one msrun's source applies."""
    import inspect

    from mindspore.parallel.cluster.process_entity._api import _ProcessManager

    assert "node_id = self.node_rank * self.local_worker_num + index" in inspect.getsource(
        _ProcessManager._get_node_id_and_log_path)


# ---- 15.5 the all-reduced gradient ----------------------------------------------------------------
def _reducer(mistake=None):
    """all_reduced_gradients written here with numpy row indices, with one typical mistake or none."""
    import mindspore as ms

    def all_reduced_gradients(grad_fn, x, y, workers, gradients_mean=True):
        n = len(x)
        per_worker = []
        for rank in range(workers):
            if mistake == "no fill":
                rows = np.arange(rank, n, workers)
            elif mistake == "blocks":
                rows = np.array_split(np.arange(n), workers)[rank]
            else:
                rows = (rank + workers * np.arange(-(-n // workers))) % n
            per_worker.append(grad_fn(ms.Tensor(x[rows]), ms.Tensor(y[rows])))
        if mistake == "full batch":
            return grad_fn(ms.Tensor(x), ms.Tensor(y))
        if mistake == "per worker":
            return per_worker
        summed = [sum(g[i] for g in per_worker) for i in range(len(per_worker[0]))]
        divide = {"always mean": True, "never mean": False}.get(mistake, gradients_mean)
        return [g / workers for g in summed] if divide else summed

    return all_reduced_gradients


def test_reduced_oracle_mean_of_equal_shards_is_the_full_batch():
    x, y, w, b = nb15._reduce_data(12, 2)
    full = nb15._mse_grads(x, y, w, b)
    for got, want in zip(nb15.reduced_oracle(12, 2, 3, True), full):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(nb15.reduced_oracle(12, 2, 3, False), full):  # a sum of 3 equal-shard means
        np.testing.assert_allclose(got, 3 * want, rtol=1e-12)


def test_reduced_grads_accepts_the_reference():
    result = nb15.reduced_grads.evaluate(_reducer())
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("mistake, text", [
    ("no fill", "filled up from the start"),
    ("blocks", "not cut into blocks"),
    ("always mean", "only sums"),
    ("never mean", "divided by the number of workers"),
    ("full batch", "full-batch gradient"),
    ("per worker", "return the all-reduced gradients"),
])
def test_reduced_grads_rejects(mistake, text):
    result = nb15.reduced_grads.evaluate(_reducer(mistake))
    assert result.status == INCORRECT and text in result.message, result.message


def test_reduced_grads_is_not_fooled_by_inputs_or_constants():
    oracle = nb15.reduced_oracle(*nb15.REDUCE_CASES[0])
    for answer in (lambda grad_fn, x, y, workers, mean: (x, y),
                   lambda grad_fn, x, y, workers, mean: [np.zeros((1, 2)), np.zeros(1)],
                   lambda grad_fn, x, y, workers, mean: oracle,  # right for the first case only
                   "all_reduced_gradients"):
        assert nb15.reduced_grads.evaluate(answer).status == INCORRECT


def _reduce_stub(grad_fn, x, y, workers, gradients_mean=True):
    summed = ...
    return summed


def test_reduced_grads_scaffold_is_not_attempted():
    assert nb15.reduced_grads.evaluate(_reduce_stub).status == NOT_ATTEMPTED


@pytest.mark.parametrize("prediction, right", [(nb15.rank_results, "b"), (nb15.sum_diverges, "b")])
def test_predictions_explain_every_option(prediction, right):
    assert prediction.evaluate(right).status == CORRECT
    for letter, (_text, why) in prediction.options.items():
        if letter != right:
            result = prediction.evaluate(letter)
            assert result.status == INCORRECT and why in result.message
