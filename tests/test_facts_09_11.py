"""MindSpore 2.10 facts behind notebooks 09 and 11, pinned here rather than in lesson cells.

The lessons show the public behaviour (what a run prints and ends with); what rests on MindSpore's source, a
private name or an output format, and the seed replications that show a result is not one lucky seed, live here:
a patch release that changes them fails this file, not a learner's notebook.
"""

import contextlib
import inspect
import io
import os
import re

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
import mindspore.dataset as ds  # noqa: E402
from mindspore import Tensor, nn  # noqa: E402
from mindspore.train import BackupAndRestore, Callback, Model, TimeMonitor  # noqa: E402

from course_utils.data import make_linear_data  # noqa: E402


def _dataset(x, y, batch_size=20):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size)


def _dense():
    return nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")


# ---- notebook 09 -------------------------------------------------------------------------------------------
class EvalSpy(Callback):
    def __init__(self):
        super().__init__()
        self.validations = 0

    def on_eval_end(self, run_context):
        self.validations += 1


def test_fit_skips_the_eval_hooks_of_callbacks_named_like_built_ins_except_timemonitor():
    """Notebook 09 ("what eval_loss covers"): fit calls on_eval_* of your callbacks, not of built-in ones. The
    rule (Model._eval_during_train) goes by class name, so a class of yours named History loses them too;
    TimeMonitor is the exception: it times the validation epochs ("Eval ...") before the training epoch ends."""
    x, y = make_linear_data()
    net = _dense()
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.5), metrics={"mse"})
    spy, impostor = EvalSpy(), type("History", (EvalSpy,), {})()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        model.fit(2, _dataset(x[:80], y[:80]), _dataset(x[80:], y[80:]), callbacks=[spy, impostor, TimeMonitor()])
    assert spy.validations == 2 and impostor.validations == 0
    assert [line.split(" epoch time")[0] for line in printed.getvalue().splitlines()] == ["Eval", "Train"] * 2
    assert "cb.__class__.__name__ in internal_cb_names" in inspect.getsource(Model._eval_during_train)


def test_timemonitor_prints_one_line_per_epoch_in_this_form():
    """Notebook 09 section 5 shows TimeMonitor's (run-dependent) output; its form is pinned here."""
    x, y = make_linear_data()
    net = _dense()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.5)).train(2, _dataset(x, y),
                                                                          callbacks=[TimeMonitor()])
    lines = printed.getvalue().splitlines()
    assert len(lines) == 2 and all(
        re.fullmatch(r"Train epoch time: \d+\.\d{3} ms, per step time: \d+\.\d{3} ms", line) for line in lines), lines


def test_lossmonitor_checks_every_step_not_only_the_printed_ones():
    """Notebook 09 section 5: LossMonitor(100) still ends the run at the first inf/NaN loss (step 19 here)."""
    from mindspore.train import LossMonitor

    x, y = make_linear_data()
    net = _dense()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=5.0)
    with pytest.raises(ValueError, match="loss is NAN or INF"), contextlib.redirect_stdout(io.StringIO()):
        Model(net, nn.MSELoss(), optimizer).train(50, _dataset(x, y), callbacks=[LossMonitor(100)])
    assert int(optimizer.global_step.asnumpy()[0]) < 50 * 5


# ---- notebook 11 -------------------------------------------------------------------------------------------
def _training(seed):
    class MinimalNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1, weight_init="normal", bias_init="zero")

        def construct(self, x):
            return self.dense(x)

    ms.set_seed(seed)
    net = MinimalNet()
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)


@pytest.mark.parametrize("seed, stop", [(1, 2), (2, 5), (3, 9)])
def test_a_full_batch_resume_is_exact_for_other_seeds_and_stops(seed, stop, tmp_path):
    """Notebook 11 section 3 shows one exact resume (seed 0, step 10 of 30); not one lucky seed."""
    x, y = (Tensor(a) for a in make_linear_data())
    net_1, step_1 = _training(seed)
    for _ in range(10):
        step_1(x, y)
    net_2, step_2 = _training(seed)
    for _ in range(stop):
        step_2(x, y)
    ms.save_checkpoint(step_2, str(tmp_path / "interrupted.ckpt"))
    net_3, step_3 = _training(seed + 100)
    ms.load_param_into_net(step_3, ms.load_checkpoint(str(tmp_path / "interrupted.ckpt")))
    for _ in range(10 - stop):
        step_3(x, y)
    for a, b in zip(net_1.get_parameters(), net_3.get_parameters()):
        assert np.array_equal(a.asnumpy(), b.asnumpy())


def test_backup_and_restore_saves_no_epoch_and_set_init_step_is_undocumented():
    """Notebook 11 section 5: BackupAndRestore loads the train network's state in on_train_begin and saves it at
    each epoch end, with no epoch number (so a restart runs every epoch again unless initial_epoch is given);
    Dataset.set_init_step has no docstring on 2.10 and is what Model's own failure recovery calls."""
    source = inspect.getsource(BackupAndRestore)
    assert "save_checkpoint(train_net, self.backup_file)" in source and "append_dict" not in source
    assert ds.Dataset.set_init_step.__doc__ is None
    assert "set_init_step" in inspect.getsource(inspect.getmodule(Model))


def test_backup_and_restore_deletes_its_file_when_training_ends(tmp_path):
    x, y = make_linear_data()
    net = _dense()
    folder = str(tmp_path / "backup")
    Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1)).train(2, _dataset(x, y),
                                                                          callbacks=[BackupAndRestore(folder)])
    assert os.listdir(folder) == []


def test_no_built_in_callback_writes_the_best_checkpoint():
    """Notebook 11 section 4: mindspore.train has no best-checkpoint callback; EarlyStopping keeps the best
    weights in memory (restore_best_weights) and writes no file."""
    from mindspore.train import EarlyStopping

    assert not [name for name in dir(ms.train) if "best" in name.lower()]
    assert "restore_best_weights" in inspect.signature(EarlyStopping).parameters
    assert "save_checkpoint" not in inspect.getsource(EarlyStopping)
