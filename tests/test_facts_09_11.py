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


def _one_neuron(seed):
    ms.set_seed(seed)
    return nn.Dense(1, 1, weight_init="normal", bias_init="zeros")


def _weights(net):
    return tuple(p.asnumpy().copy() for p in net.trainable_params())


@pytest.mark.parametrize("seed", [1, 2])
def test_model_and_a_hand_written_loop_give_bitwise_equal_weights_for_other_seeds(seed):
    """Notebook 09 section 3 shows it for seed 0 on batches of 20; not one lucky seed, and also full-batch."""
    x, y = make_linear_data()
    for batch_size in (20, 100):
        by_hand = _one_neuron(seed)
        step = nn.TrainOneStepCell(nn.WithLossCell(by_hand, nn.MSELoss()), nn.SGD(by_hand.trainable_params(), 0.5))
        for _ in range(5):
            for i in range(0, len(x), batch_size):
                step(Tensor(x[i:i + batch_size]), Tensor(y[i:i + batch_size]))
        with_model = _one_neuron(seed)
        Model(with_model, nn.MSELoss(), nn.SGD(with_model.trainable_params(), 0.5)).train(5, _dataset(x, y, batch_size))
        assert all(np.array_equal(a, b) for a, b in zip(_weights(by_hand), _weights(with_model)))


def test_model_has_no_train_step_hook_nor_the_names_article_003s_override_uses():
    """Notebook 09 ("a custom train step"): article 003's CustomModel.train_step uses self.grad, self.weights,
    self.network and self.loss_fn; Model has none of them, and never calls a train_step."""
    class CustomModel(Model):
        def train_step(self, data):
            raise AssertionError("Model called train_step")

    x, y = make_linear_data()
    net = _dense()
    assert not [name for name in ("train_step", "grad", "weights", "network", "loss_fn")
                if hasattr(Model(net, nn.MSELoss()), name)]
    CustomModel(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.5)).train(1, _dataset(x, y))
    assert net.weight.asnumpy().item() != 0.0  # it trained, without the override


def test_early_stopping_and_reduce_lr_on_plateau_do_nothing_under_train():
    """Notebook 09 (Prediction 09.2): with the default monitor 'eval_loss' and no validation, both log a warning
    at every epoch end (two a epoch), stop nothing and leave the learning rate alone."""
    from mindspore.train import EarlyStopping, ReduceLROnPlateau

    from course_utils.logs import mindspore_warnings

    x, y = make_linear_data()
    net = _dense()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.5)
    stopper, reducer = EarlyStopping(patience=0), ReduceLROnPlateau(factor=0.5, patience=0)
    with mindspore_warnings() as said:
        Model(net, nn.MSELoss(), optimizer, metrics={"mse"}).train(3, _dataset(x, y), callbacks=[stopper, reducer])
    assert stopper.stopped_epoch == 0 and float(optimizer.learning_rate.asnumpy()) == 0.5
    assert len(said) == 6 and all("eval_loss, which is not available" in m for m in said), said


def test_a_1x_callback_runs_under_train_with_one_warning_naming_its_hook():
    """Notebook 09 ("1.x callbacks"): train runs an epoch_end callback and warns once; fit refuses it."""
    from course_utils.logs import mindspore_warnings

    class OldStyle(Callback):
        def epoch_end(self, run_context):
            pass

    x, y = make_linear_data()
    net = _dense()
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.5), metrics={"mse"})
    with mindspore_warnings() as said:
        model.train(2, _dataset(x, y), callbacks=[OldStyle()])
    assert len(said) == 1 and "epoch_end" in said[0]
    with pytest.raises(ValueError, match="epoch_end"):
        model.fit(1, _dataset(x, y), _dataset(x, y), callbacks=[OldStyle()])


def test_learning_rate_scheduler_sets_the_rate_after_every_step():
    """Notebook 09 section 5's table: LearningRateScheduler(fn) sets the rate to fn(lr, step) after each step (with
    F.assign), so step k + 1 trains at the rate fn gave after step k; the weights follow numpy at those rates."""
    from mindspore.train import LambdaCallback, LearningRateScheduler

    x, y = make_linear_data()
    net = _dense()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.4)
    seen = []
    record = LambdaCallback(on_train_step_begin=lambda rc: seen.append(float(optimizer.learning_rate.asnumpy())))
    Model(net, nn.MSELoss(), optimizer).train(1, _dataset(x, y), callbacks=[record, LearningRateScheduler(
        lambda lr, step: lr * 0.5)])
    assert np.allclose(seen, [0.4, 0.2, 0.1, 0.05, 0.025])
    w = b = 0.0
    x64, y64 = x.astype(np.float64)[:, 0], y.astype(np.float64)[:, 0]
    for k, lr in enumerate(seen):
        xb, yb = x64[20 * k:20 * k + 20], y64[20 * k:20 * k + 20]
        err = w * xb + b - yb
        w, b = w - lr * 2 * np.mean(err * xb), b - lr * 2 * np.mean(err)
    assert np.allclose([p.asnumpy().item() for p in net.trainable_params()], [w, b], atol=1e-5)
    assert "F.assign(cb_params.optimizer.learning_rate" in inspect.getsource(LearningRateScheduler)


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


def test_what_the_integrity_section_rests_on(tmp_path):
    """Notebook 11 ("integrity", "only load checkpoints you trust"): a truncated .ckpt fails in the protobuf
    parser (its cause); MindSpore's documentation says the CRC is no cryptographic integrity check; its checkpoint
    encryption defaults to AES-GCM."""
    net = _dense()
    path = tmp_path / "net.ckpt"
    ms.save_checkpoint(net, str(path))
    os.truncate(path, path.stat().st_size // 2)
    with pytest.raises(ValueError, match="may be corrupted") as truncated:
        ms.load_checkpoint(str(path))
    assert type(truncated.value.__cause__).__module__.startswith("google.protobuf")
    assert "not a cryptographically secure integrity check" in " ".join(ms.save_checkpoint.__doc__.split())
    assert inspect.signature(ms.save_checkpoint).parameters["enc_mode"].default == "AES-GCM"
