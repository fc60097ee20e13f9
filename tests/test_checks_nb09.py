"""Notebook 09's checks: the settings tell the rules apart, and the named mistakes are named."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, ops  # noqa: E402
from mindspore.train import Callback, Metric  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb09  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402


def message(exercise, answer, status=INCORRECT):
    result = exercise.evaluate(answer)
    assert result.status == status, result.message
    return result.message


@pytest.mark.parametrize("ex", [nb09.keep_best, nb09.stop_below, nb09.rmse_metric], ids=lambda ex: ex.key)
def test_the_reference_passes(ex):
    assert reference(ex, Callback=Callback, Metric=Metric)[1].startswith("[ok]")


# ---- 09.3 KeepBest: one compact reference, with a hook for each mistake -------------------------------
class KeepBest(Callback):
    def on_train_begin(self, run_context):
        self.best, self.saved = np.inf, {}

    def _score(self, cb_params):
        return cb_params.eval_results["mse"]

    def _snapshot(self, cb_params):
        return {p.name: p.asnumpy().copy() for p in cb_params.network.trainable_params()}

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        if self._score(cb_params) < self.best:
            self.best, self.saved = self._score(cb_params), self._snapshot(cb_params)

    def on_train_end(self, run_context):
        for p in run_context.original_args().network.trainable_params():
            ops.assign(p, Tensor(self.saved[p.name]))


def keep_best_variant(**methods):
    return type("Variant", (KeepBest,), methods)


def test_keep_best_settings_tell_the_rules_apart():
    """In each setting the best epoch by validation mse is neither the last nor where eval_loss or the training
    loss is lowest, with a margin far above float32 noise; and the best epoch differs between the settings."""
    best = []
    for setting in nb09.KEEP_BEST_SETTINGS:
        rows = nb09.keep_best_oracle(setting)
        epochs = {}
        for rule in ("mse", "eval_loss", "last_step"):
            values = np.array([r[rule] for r in rows])
            epochs[rule] = int(np.argmin(values)) + 1
            assert np.sort(values)[1] > 1.1 * np.sort(values)[0], (rule, values)
        assert len({epochs["mse"], epochs["eval_loss"], epochs["last_step"], setting["epochs"]}) == 4, epochs
        best.append(epochs["mse"])
    assert len(set(best)) == len(best)


def test_keep_best_accepts_set_data_after_training():  # the PyNative trap is about training afterwards
    def on_train_end(self, run_context):
        for p in run_context.original_args().network.trainable_params():
            p.set_data(Tensor(self.saved[p.name]))

    message(nb09.keep_best, keep_best_variant(on_train_end=on_train_end), CORRECT)


def _wrong_shape_restore(self, run_context):
    for p in run_context.original_args().network.trainable_params():
        ops.assign(p, Tensor([1.0, 2.0, 3.0], ms.float32))


@pytest.mark.parametrize("wrong, text", [
    (keep_best_variant(_snapshot=lambda self, cb: {p.name: p.asnumpy() for p in cb.network.trainable_params()}),
     "the last epoch's weights"),  # no copies: asnumpy() shares memory with the Parameter
    (keep_best_variant(on_train_end=lambda self, run_context: None), "the last epoch's weights"),
    (keep_best_variant(_score=lambda self, cb: cb.eval_results["eval_loss"]), "where eval_loss is lowest"),
    (keep_best_variant(_score=lambda self, cb: float(cb.net_outputs.asnumpy())), "the training loss (net_outputs)"),
    (keep_best_variant(_score=lambda self, cb: -cb.eval_results["mse"]), "the net ends with the weights of epoch"),
    (type("OldStyle", (Callback,), {"epoch_end": lambda self, run_context: None}), "defines a 1.x method"),
    (keep_best_variant(on_train_end=_wrong_shape_restore), "MindSpore raised ValueError: For 'Assign'"),
    (KeepBest(), "(answer = KeepBest, the class itself, not an instance)"),
    (Metric, "derived from mindspore.train.Callback"),
])
def test_keep_best_names_the_mistake(wrong, text):
    got = message(nb09.keep_best, wrong)
    assert text in got and "C++" not in got and "----" not in got, got


def test_keep_best_half_written_scaffold_is_not_attempted():
    class HalfDone(Callback):  # on_train_epoch_end written, on_train_end still the scaffold's
        def on_train_epoch_end(self, run_context):
            self.best_weights = {p.name: p.asnumpy() for p in run_context.original_args().network.get_parameters()}

        def on_train_end(self, run_context):
            ...

    assert nb09.keep_best.evaluate(HalfDone).status == NOT_ATTEMPTED


# ---- 09.4 StopBelow -------------------------------------------------------------------------------
def _step_loss(run_context):
    return float(run_context.original_args().net_outputs.asnumpy())


class Threshold(Callback):  # stops never
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold


def stop_when(hook, condition):
    def method(self, run_context):
        if condition(self, run_context):
            run_context.request_stop()

    return type("Variant", (Threshold,), {hook: method})


def test_stop_thresholds_tell_the_mean_from_the_last_step_with_margin():
    means, lasts = nb09.numpy_epoch_losses(15)
    for threshold in nb09.STOP_THRESHOLDS:
        by_mean = nb09.expected_stop_epoch(threshold)
        by_last = next(k for k, loss in enumerate(lasts, 1) if loss < threshold)
        assert by_last < by_mean < 15
        # float32 training differs from the float64 oracle by far less than these margins
        assert means[by_mean - 2] > 1.2 * threshold and means[by_mean - 1] < threshold / 1.2
        assert abs(lasts[by_last - 1] - threshold) > 0.02 * threshold


@pytest.mark.parametrize("wrong, text", [
    (stop_when("on_train_epoch_end", lambda self, rc: _step_loss(rc) < self.threshold), "last step"),  # History's
    (stop_when("on_train_step_end", lambda self, rc: _step_loss(rc) < self.threshold),
     "last step drops below it: average all the epoch's steps"),  # stops in an epoch, one epoch early here
    (stop_when("on_train_step_end", lambda self, rc: rc.original_args().cur_step_num == 3), "middle of epoch 1"),
    (Threshold, "never stopped"),
    (stop_when("epoch_end", lambda self, rc: _step_loss(rc) < self.threshold), "1.x method"),
    (Threshold(0.1), "expected your class StopBelow(threshold) (answer = StopBelow, the class itself, not an "
                     "instance)"),
    (Metric, "derived from mindspore.train.Callback"),
])
def test_stop_below_names_the_mistake(wrong, text):
    assert text in message(nb09.stop_below, wrong)


# ---- 09.5 RMSE -----------------------------------------------------------------------------------
class SumOfSquares(Metric):  # the reference's accumulation, with eval() left to the variants
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._n, self._squared = 0, 0.0

    def update(self, *inputs):
        error = self._convert_data(inputs[0]).astype(np.float64) - self._convert_data(inputs[1])
        self._n += error.size
        self._squared += np.sum(error ** 2)


class MeanOfBatchRMSE(Metric):
    def clear(self):
        self._values = []

    def update(self, *inputs):
        error = self._convert_data(inputs[0]) - self._convert_data(inputs[1])
        self._values.append(np.sqrt(np.mean(error ** 2)))

    def eval(self):
        return float(np.mean(self._values))


def _no_reset(self):
    self.__dict__.setdefault("_n", 0)
    self.__dict__.setdefault("_squared", 0.0)


@pytest.mark.parametrize("wrong, text", [
    (MeanOfBatchRMSE, "average per-batch values"),
    (type("MSE", (SumOfSquares,), {"eval": lambda self: self._squared / self._n}), "square root"),
    (type("NoReset", (SumOfSquares,), {"clear": _no_reset, "eval": lambda self: np.sqrt(self._squared / self._n)}),
     "reset in clear()"),
    (type("Text", (SumOfSquares,), {"eval": lambda self: "0.5"}), "your metric's eval() must be a number, not text"),
    (MeanOfBatchRMSE(), "expected your class RMSE() (answer = RMSE, the class itself, not an instance)"),
    (Threshold, "derived from mindspore.train.Metric"),
])
def test_rmse_metric_names_the_mistake(wrong, text):
    assert text in message(nb09.rmse_metric, wrong)


def test_rmse_oracle_mistakes_differ_from_the_rmse():
    batches = [(np.ones((n, 1), np.float32) * k, np.zeros((n, 1), np.float32)) for n, k in ((1, 3.0), (3, 1.0))]
    assert nb09._numpy_rmse(batches) == pytest.approx(np.sqrt(12 / 4))  # (9 + 3) / 4 samples
    assert nb09._numpy_rmse(batches, average="rmse") == pytest.approx(2.0)
    assert nb09._numpy_rmse(batches, average="mse") == pytest.approx(np.sqrt(5.0))
    assert nb09._numpy_rmse(batches, root=False) == pytest.approx(3.0)
