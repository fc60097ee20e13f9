"""Notebook 15's checks: the references pass, typical mistakes are named, and the rules the oracles are written
from (sharding, the all-reduce, msrun's ranks and defaults) are MindSpore's."""

import mindspore as ms
import numpy as np
import pytest
from reference_solutions import reference

from course_utils.checks import nb15
from course_utils.exercises import CORRECT, INCORRECT

SOLUTION = reference(nb15.node_command)[0]  # the msrun command of the third machine, the one with 2 workers


@pytest.mark.parametrize("ex", [nb15.shard_rows, nb15.sum_lr, nb15.reduced_grads, nb15.node_command],
                         ids=lambda ex: ex.key)
def test_references_pass(ex):
    assert reference(ex, shard_rows=nb15._expected_shard)[1].startswith("[ok]")


def _reducer(mistake=None):
    """all_reduced_gradients written here with numpy row indices, with one typical mistake or none."""
    def all_reduced_gradients(grad_fn, x, y, workers, gradients_mean=True):
        n, per_worker = len(x), []
        for rank in range(workers):
            rows = {"no fill": np.arange(rank, n, workers), "blocks": np.array_split(np.arange(n), workers)[rank]}.get(
                mistake, (rank + workers * np.arange(-(-n // workers))) % n)
            per_worker.append(grad_fn(ms.Tensor(x[rows]), ms.Tensor(y[rows])))
        if mistake in ("full batch", "per worker"):
            return grad_fn(ms.Tensor(x), ms.Tensor(y)) if mistake == "full batch" else per_worker
        summed = [sum(g[i] for g in per_worker) for i in range(len(per_worker[0]))]
        divide = {"always mean": True, "never mean": False}.get(mistake, gradients_mean)
        return [g / workers for g in summed] if divide else summed

    return all_reduced_gradients


@pytest.mark.parametrize("ex, answer", [
    (nb15.shard_rows, [2, 6, 0]), (nb15.shard_rows, (0, 2, 6)), (nb15.shard_rows, np.array([2, 6, 0])),
    (nb15.sum_lr, 0.075), (nb15.sum_lr, np.float32(0.075)), (nb15.sum_lr, 3 / 40), (nb15.reduced_grads, _reducer()),
    (nb15.node_command, "msrun --worker_num 10 --local_worker_num 2 --master_addr 192.168.7.21 --master_port 9010 "
                        "--node_rank 4 --join True /home/me/dp_train.py"),
    (nb15.node_command, ["python", "-m", "mindspore.parallel.cluster.run", "--node_rank=4", "--worker_num=10",
                         "--local_worker_num=2", "--master_port=9010", "--master_addr=192.168.7.21", "--join=True",
                         "dp_train.py"]),
], ids=lambda v: None)
def test_equivalent_answers_pass(ex, answer):
    result = ex.evaluate(answer)
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("ex, answer, text", [
    (nb15.shard_rows, [2, 6], "same number of rows"),
    (nb15.shard_rows, [5, 6, 7], "deals rows out like cards"),
    (nb15.shard_rows, [7, 5, 6], "deals rows out like cards"),
    (nb15.shard_rows, [5, 5, 7], "does not get"),
    (nb15.shard_rows, [2, 6, 9], "one at a time"),
    (nb15.shard_rows, "2, 6, 0", "list of row numbers"),
    (nb15.shard_rows, [2.5, 6, 0], "whole numbers"),
    (nb15.sum_lr, 0.3, "gradients_mean=True"),
    (nb15.sum_lr, 0.15, "2 workers"),
    (nb15.sum_lr, 1.2, "step like one process at lr = 4.8, not 0.3"),  # the lr the sum at 1.2 acts like
    (nb15.sum_lr, 1.0, "sum of 4 shard gradients"),
    (nb15.reduced_grads, _reducer("no fill"), "filled up from the start"),
    (nb15.reduced_grads, _reducer("blocks"), "not cut into blocks"),
    (nb15.reduced_grads, _reducer("always mean"), "only sums"),
    (nb15.reduced_grads, _reducer("never mean"), "divided by the number of workers"),
    (nb15.reduced_grads, _reducer("full batch"), "full-batch gradient"),
    (nb15.reduced_grads, _reducer("per worker"), "return the all-reduced gradients"),
    (nb15.node_command, SOLUTION.replace("--worker_num=10", "--worker_num=8"), "whole job"),  # the first two only
    (nb15.node_command, SOLUTION.replace("--worker_num=10", "--worker_num=12"), "whole job"),  # 3 machines of 4
    (nb15.node_command, SOLUTION.replace("--local_worker_num=2", "--local_worker_num=4"), "this machine starts"),
    (nb15.node_command, SOLUTION.replace("192.168.7.21", "127.0.0.1"), "reach the scheduler"),
    (nb15.node_command, SOLUTION.replace("192.168.7.21", "192.168.1.10"), "reach the scheduler"),  # the lesson's
    (nb15.node_command, SOLUTION.replace("--master_port=9010", "--master_port=8118"), "port"),
    # the third machine numbered 2, as if every machine had 2 workers: ranks 4 and 5, the second machine's
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=2"),
     "the ranks [4, 5] (node_rank × local_worker_num + 0, 1, ...), and the machine started with --node_rank=1 "
     "already has rank 4"),
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=3"), "--node_rank=1 already has rank 6"),
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=0"), "--node_rank=0 already has rank 0"),
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=5"),
     "the ranks [10, 11] (node_rank × local_worker_num + 0, 1, ...), but a job of 10 workers has the ranks 0 to 9"),
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=8"), "has the ranks 0 to 9"),  # rank 8 / 2
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=third"), "whole number"),
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=-2"), "negative ranks"),
    # without it MindSpore would hand out this machine's ranks, which a job of given ranks does not always survive
    (nb15.node_command, SOLUTION.replace("--node_rank=4 ", ""), "--node_rank is missing"),
    (nb15.node_command, SOLUTION.replace("--node_rank=4", "--node_rank=-1"), "--node_rank is missing"),  # the default
    (nb15.node_command, SOLUTION.replace("--join=True", "--join=False"), "--join=False is not right"),
    (nb15.node_command, SOLUTION.replace(" --join=True", ""), "--join is missing"),  # msrun's default: False
    (nb15.node_command, SOLUTION.replace(" dp_train.py", " --bogus_flag=3 dp_train.py"), "no option --bogus_flag"),
    (nb15.node_command, SOLUTION.replace("dp_train.py", "other.py"), "end with the script"),
    (nb15.node_command, SOLUTION.replace("msrun", "mpirun"), "start with `msrun`"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_typical_mistakes_are_named(ex, answer, text):
    result = ex.evaluate(answer)
    assert result.status == INCORRECT and text in result.message, result.message


def test_the_answer_of_15_7_is_not_in_the_notebook():
    """The lesson shows two machines of 2 workers; 15.7's total, its port and this machine's rank are its own."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for path in (root / "notebooks" / "15_data_parallel.ipynb", root / "zh" / "notebooks" / "15_data_parallel.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) + "".join("".join(o.get("text", "")) for o in c.get("outputs", []))
                          for c in cells)
        for part in ("--worker_num=10", "--node_rank=4", "--master_port=9010"):
            assert part not in text, f"{path.name} shows {part}"


def test_reduced_grads_is_not_fooled_by_inputs_or_constants():
    oracle = nb15.reduced_oracle(*nb15.REDUCE_CASES[0])
    for answer in (lambda grad_fn, x, y, workers, mean: (x, y),
                   lambda grad_fn, x, y, workers, mean: [np.zeros((1, 2)), np.zeros(1)],
                   lambda grad_fn, x, y, workers, mean: oracle):  # right for the first case only
        assert nb15.reduced_grads.evaluate(answer).status == INCORRECT


# ---- the rules behind the oracles --------------------------------------------------------------------------
@pytest.mark.parametrize("n_rows, num_shards", [(10, 2), (10, 4), (11, 2), (7, 3), (100, 4), (5, 8)])
def test_shard_oracle_matches_mindspore(n_rows, num_shards):
    import mindspore.dataset as ds

    for shard_id in range(num_shards):
        rows = ds.NumpySlicesDataset({"i": np.arange(n_rows)}, shuffle=False, num_shards=num_shards,
                                     shard_id=shard_id)
        got = [int(r["i"]) for r in rows.create_dict_iterator(output_numpy=True)]
        assert got == nb15._expected_shard(n_rows, num_shards, shard_id)


def test_sum_lr_oracle_is_the_sum_of_shard_means():
    """4 equal shards: the sum of their mean gradients is 4 times the full-batch gradient, so lr / 4 with the sum
    takes the step of lr with the full batch."""
    rng = np.random.default_rng(0)
    x = rng.random(100)
    y = 2 * x + rng.normal(0, 0.01, 100)
    grad = lambda xs, ys: np.array([np.mean(2 * (0.3 * xs - ys) * xs), np.mean(2 * (0.3 * xs - ys))])  # noqa: E731
    total = sum(grad(x[k::4], y[k::4]) for k in range(4))
    np.testing.assert_allclose(nb15.sum_lr.expected() * total, nb15.TARGET_LR * grad(x, y), rtol=1e-12)


def test_reduced_oracle_mean_of_equal_shards_is_the_full_batch():
    x, y, w, b = nb15._reduce_data(12, 2)
    full = nb15._mse_grads(x, y, w, b)
    for got, want in zip(nb15.reduced_oracle(12, 2, 3, True), full):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(nb15.reduced_oracle(12, 2, 3, False), full):  # a sum of 3 equal-shard means
        np.testing.assert_allclose(got, 3 * want, rtol=1e-12)


def test_parse_msrun_reads_both_option_styles():
    options, script = nb15.parse_msrun("msrun --worker_num=2 --join True train.py --lr 0.1")
    assert options == {"worker_num": "2", "join": "True"} and script == "train.py"


def test_node_rank_rule_and_join_default_match_msrun(monkeypatch):
    """The rank numbering the hint and the notebook teach is the one msrun's source applies; --join is off unless
    it is passed (so node_command insists on it)."""
    import inspect
    import sys

    from mindspore.parallel.cluster.process_entity._api import _ProcessManager
    from mindspore.parallel.cluster.run import get_args

    assert "node_id = self.node_rank * self.local_worker_num + index" in inspect.getsource(
        _ProcessManager._get_node_id_and_log_path)
    monkeypatch.setattr(sys, "argv", ["msrun", "dp_train.py"])
    assert get_args().join is False


def test_the_functional_step_must_all_reduce_without_the_reducer_section_6_showed(tmp_path):
    """15.6 asks for the all-reduce with the operator itself: a script that uses DistributedGradReducer (the
    answer shown in section 6) is refused before anything is launched."""
    script = tmp_path / "dp_exercise.py"
    script.write_text("grad_reducer = nn.DistributedGradReducer(optimizer.parameters)\n", encoding="utf-8")
    result = nb15.functional_dp.evaluate(str(script))
    assert result.status == INCORRECT and "DistributedGradReducer" in result.message, result.message


def test_the_solution_of_15_6_is_not_a_lesson_cell():
    """The reference all-reduces with ops.AllReduce; the notebook's own script (section 6) uses the reducer."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    solutions = (root / "course_utils" / "solutions" / "nb15.py").read_text(encoding="utf-8")
    solution = solutions.split("# %% functional_dp")[1].split("# %% ")[0]
    notebook = json.loads((root / "notebooks" / "15_data_parallel.ipynb").read_text(encoding="utf-8"))
    lesson = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "ops.AllReduce()" in solution and "AllReduce()" not in lesson
    assert "DistributedGradReducer" not in solution  # the check refuses it
