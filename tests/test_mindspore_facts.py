"""Facts about MindSpore 2.10's internals that the lessons rely on, pinned here and not in lesson cells.

A lesson shows the public behaviour and says why in a sentence; where the why is in MindSpore's own source
(a private name, a docstring, the body of a method), the check lives here: it runs on the pinned version,
and a patch release that changes it fails this file, not a learner's notebook.
"""

import inspect

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
from mindspore import Tensor, nn, ops  # noqa: E402


def _lr_used(change, at_step=2, mode=None):
    """The learning rate each of 4 SGD steps used (from the bias update) when ``change(optimizer)`` runs
    before step ``at_step``, in the functional style (value_and_grad + optimizer(grads))."""
    previous = ms.get_context("mode")
    if mode is not None:
        ms.set_context(mode=mode)
    try:
        net = nn.Dense(1, 1, weight_init="zero", bias_init="zero")
        optimizer = nn.SGD(net.trainable_params(), 0.1)
        grad_fn = ms.value_and_grad(lambda x, y: ((net(x) - y) ** 2).mean(), None, optimizer.parameters)
        x, y = Tensor(np.ones((4, 1), np.float32)), Tensor(np.ones((4, 1), np.float32))
        used = []
        for step in range(4):
            if step == at_step:
                change(optimizer)
            before = net.bias.asnumpy().item()
            _, grads = grad_fn(x, y)
            optimizer(grads)
            used.append(round((before - net.bias.asnumpy().item()) / grads[1].asnumpy().item(), 4))
        return used
    finally:
        ms.set_context(mode=previous)


def _set_data(optimizer):
    optimizer.learning_rate.set_data(Tensor(0.01, ms.float32))


def test_set_data_is_ignored_once_the_compiled_optimizer_step_has_run():
    """Notebook 06 section 4 (and 08, 11): set_data gives new memory, which the compiled step does not read."""
    assert "@jit" in inspect.getsource(nn.SGD.construct)  # the optimizer's step is compiled, also in PyNative
    assert _lr_used(_set_data, mode=ms.PYNATIVE_MODE) == [0.1, 0.1, 0.1, 0.1]  # functional style: ignored
    assert _lr_used(_set_data, at_step=0, mode=ms.PYNATIVE_MODE) == [0.01] * 4  # before the first step: works
    assign = lambda opt: ops.assign(opt.learning_rate, Tensor(0.01, ms.float32))  # noqa: E731
    assert _lr_used(assign, mode=ms.PYNATIVE_MODE) == [0.1, 0.1, 0.01, 0.01]
    copy = lambda opt: opt.learning_rate.copy_(Tensor(0.01, ms.float32))  # noqa: E731
    assert _lr_used(copy, mode=ms.PYNATIVE_MODE) == [0.1, 0.1, 0.01, 0.01]


def test_learning_rate_scheduler_changes_the_rate_with_assign():
    from mindspore.train.callback import LearningRateScheduler

    source = inspect.getsource(LearningRateScheduler)
    assert "assign(cb_params.optimizer.learning_rate" in source and "set_data" not in source


def test_set_auto_parallel_context_is_marked_for_removal_and_auto_parallel_is_ascend_only():
    """Notebook 15 section 8."""
    from mindspore.parallel.auto_parallel import AutoParallel

    assert "will be deprecated and removed in future versions" in " ".join(ms.set_auto_parallel_context.__doc__.split())
    assert "``Ascend``" in AutoParallel.__doc__.split("Supported Platforms:")[1].split("Examples")[0]
    assert "CPU only supports data parallel" in ms.set_auto_parallel_context.__doc__


def test_the_cpu_float16_matmul_is_float32_arithmetic_rounded():
    """Notebook 12 section 5, on sizes other than the notebook's."""
    rng = np.random.default_rng(3)
    for n in (3, 33, 130):
        a = Tensor(rng.standard_normal((n, n), dtype=np.float32)).astype(ms.float16)
        half = ops.matmul(a, a).asnumpy()
        rounded = ops.matmul(a.astype(ms.float32), a.astype(ms.float32)).astype(ms.float16).asnumpy()
        assert np.array_equal(half.view(np.uint16), rounded.view(np.uint16)), n


def test_in_graph_mode_set_data_reaches_the_step(tmp_path, monkeypatch):
    """Notebook 06: the trap is PyNative's; a graph-mode TrainOneStepCell reads the new value."""
    monkeypatch.chdir(tmp_path)  # graph compilation may write rank_0/ into the working directory
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net = nn.Dense(1, 1, weight_init="zero", bias_init="zero")
        optimizer = nn.SGD(net.trainable_params(), 0.1)
        train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
        x, y = Tensor(np.ones((4, 1), np.float32)), Tensor(np.ones((4, 1), np.float32))
        used = []
        for step in range(4):
            if step == 2:
                _set_data(optimizer)
            bias = net.bias.asnumpy().item()
            gradient = 2 * (bias + net.weight.asnumpy().item() - 1.0)
            train(x, y)
            used.append(round((bias - net.bias.asnumpy().item()) / gradient, 4))
    finally:
        ms.set_context(mode=previous)
    assert used == [0.1, 0.1, 0.01, 0.01]


def test_jit_compiles_once_per_python_number_and_once_for_a_tensor():
    """Notebook 05 section 1 times it; here the compile cache counts it."""
    from mindspore.graph import api as graph_api

    @ms.jit
    def step(theta, lr):
        return theta - lr * theta

    theta = Tensor(np.ones((2, 1), np.float32))
    before = len(graph_api.ms_compile_cache)
    for value in (0.021, 0.022, 0.023):
        step(theta, value)
    floats = len(graph_api.ms_compile_cache) - before
    for value in (0.021, 0.022, 0.023):
        step(theta, Tensor(value, ms.float32))
    assert (floats, len(graph_api.ms_compile_cache) - before - floats) == (3, 1)


def test_eval_loss_is_made_anew_for_every_validation_batch():
    """Notebook 09, Going further "what eval_loss covers": eval_loss is the last batch's loss."""
    source = inspect.getsource(ms.train.Model._eval_process)
    assert source.index('get_metric_fn("loss")') > source.index("for next_element in dataset_helper")


def test_early_stopping_writes_no_checkpoint_and_the_loaders_use_no_pickle():
    """Notebook 11 section 4 and Going further "only load checkpoints you trust"."""
    import mindspore.parallel.transform_safetensors as safetensors_loader
    from mindspore.train import EarlyStopping

    assert "save_checkpoint" not in inspect.getsource(EarlyStopping)
    for module in (ms.train.serialization, safetensors_loader):
        assert "pickle" not in inspect.getsource(module), module.__name__


def test_msrun_and_init_as_notebook_15_describes_them():
    from mindspore.communication import init
    from mindspore.parallel.cluster.process_entity._api import _ProcessManager

    assert "if self.join:" in inspect.getsource(_ProcessManager.run)  # msrun waits only with --join
    rule = [line.strip() for line in inspect.getsource(_ProcessManager._get_node_id_and_log_path).splitlines()
            if "node_id =" in line and "node_rank" in line]
    assert rule == ["node_id = self.node_rank * self.local_worker_num + index"]
    source = inspect.getsource(init)
    chosen = {device: source.split(f'device_target == "{device}":')[1].split('"')[1]
              for device in ("Ascend", "GPU", "CPU")}
    assert chosen == {"Ascend": "hccl", "GPU": "nccl", "CPU": "mccl"}
    assert "mpirun -output-filename" in ms.ops.operations.comm_ops._HostAllGather.__doc__  # docs still use mpirun
