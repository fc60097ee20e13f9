"""The exercises of notebook 09 accept the reference solutions and reject typical wrong answers."""

import os

os.environ.setdefault("GLOG_v", "3")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, ops  # noqa: E402
from mindspore.train import Callback, Metric  # noqa: E402

from course_utils.checks import nb09  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402


# ---- 09.3 KeepBest ----------------------------------------------------------------------------------
class KeepBestReference(Callback):
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


class KeepBestWithSetData(KeepBestReference):
    """Also right: after training, set_data is safe (the PyNative trap is about training afterwards)."""

    def on_train_end(self, run_context):
        for p in run_context.original_args().network.trainable_params():
            p.set_data(Tensor(self.saved[p.name]))


class WithoutCopies(KeepBestReference):
    def _snapshot(self, cb_params):
        return {p.name: p.asnumpy() for p in cb_params.network.trainable_params()}  # shares memory


class NeverRestores(KeepBestReference):
    def on_train_end(self, run_context):
        pass


class WatchesEvalLoss(KeepBestReference):
    def _score(self, cb_params):
        return cb_params.eval_results["eval_loss"]


class WatchesTrainingLoss(KeepBestReference):
    def _score(self, cb_params):
        return float(cb_params.net_outputs.asnumpy())


class KeepsTheWorst(KeepBestReference):
    def _score(self, cb_params):
        return -cb_params.eval_results["mse"]


class OldStyleHooks(Callback):
    def epoch_end(self, run_context):
        pass


class Scaffold(Callback):  # the notebook's scaffold, untouched
    def on_train_begin(self, run_context):
        self.best_mse, self.best_weights = float("inf"), None

    def on_train_epoch_end(self, run_context):
        mse = ...
        if mse < self.best_mse:
            ...

    def on_train_end(self, run_context):
        ...


class HalfDone(Scaffold):
    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        mse = cb_params.eval_results["mse"]
        if mse < self.best_mse:
            self.best_mse = mse
            self.best_weights = {p.name: p.asnumpy().copy() for p in cb_params.network.trainable_params()}


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


@pytest.mark.parametrize("answer", [KeepBestReference, KeepBestWithSetData])
def test_keep_best_accepts_correct_answers(answer):
    result = nb09.keep_best.evaluate(answer)
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("wrong, text", [
    (WithoutCopies, "the last epoch's weights"),
    (NeverRestores, "the last epoch's weights"),
    (WatchesEvalLoss, "where eval_loss is lowest"),
    (WatchesTrainingLoss, "the training loss (net_outputs)"),
    (KeepsTheWorst, "the net ends with the weights of epoch"),
    (OldStyleHooks, "defines a 1.x method"),
    (KeepBestReference(), "not an instance"),
    (Metric, "derived from mindspore.train.Callback"),
    ("KeepBest", "derived from mindspore.train.Callback"),
])
def test_keep_best_rejects_wrong_answers(wrong, text):
    result = nb09.keep_best.evaluate(wrong)
    assert result.status == INCORRECT and text in result.message, result.message


@pytest.mark.parametrize("answer", [Scaffold, HalfDone, ...])
def test_keep_best_scaffold_is_not_attempted(answer):
    assert nb09.keep_best.evaluate(answer).status == NOT_ATTEMPTED


# ---- predictions 09.1, 09.2 -----------------------------------------------------------------------
@pytest.mark.parametrize("prediction", [nb09.eval_loss_meaning, nb09.plateau_under_train])
def test_predictions_explain_every_option(prediction):
    assert prediction.evaluate(...).status == NOT_ATTEMPTED
    for letter, (_text, why) in prediction.options.items():
        result = prediction.evaluate(letter)
        assert (result.status == CORRECT) == (letter == prediction.answer) and why in result.message


# ---- 09.4 ----------------------------------------------------------------------------------------
def _step_losses(run_context):
    return float(run_context.original_args().net_outputs.asnumpy())


class StopBelow(Callback):  # the reference solution of the notebook
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def on_train_epoch_begin(self, run_context):
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(_step_losses(run_context))

    def on_train_epoch_end(self, run_context):
        if np.mean(self.losses) < self.threshold:
            run_context.request_stop()


class StopOnLastStep(Callback):  # like History: the last step's loss, not the epoch's mean
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def on_train_epoch_end(self, run_context):
        if _step_losses(run_context) < self.threshold:
            run_context.request_stop()


class StopOnAnyStep(Callback):  # stops in the middle of an epoch
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def on_train_step_end(self, run_context):
        if _step_losses(run_context) < self.threshold:
            run_context.request_stop()


class StopAfterThreeSteps(StopOnAnyStep):
    def on_train_step_end(self, run_context):
        if run_context.original_args().cur_step_num == 3:
            run_context.request_stop()


class NeverStops(StopBelow):
    def on_train_epoch_end(self, run_context):
        pass


class OldStyleStop(Callback):  # the 1.x hook: model.fit refuses it
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def epoch_end(self, run_context):
        if _step_losses(run_context) < self.threshold:
            run_context.request_stop()


def test_stop_thresholds_tell_the_mean_from_the_last_step_with_margin():
    means, lasts = nb09.numpy_epoch_losses(15)
    for threshold in nb09.STOP_THRESHOLDS:
        by_mean = nb09.expected_stop_epoch(threshold)
        by_last = next(k for k, loss in enumerate(lasts, 1) if loss < threshold)
        assert by_last < by_mean < 15
        # float32 training differs from the float64 oracle by far less than these margins
        assert means[by_mean - 2] > 1.2 * threshold and means[by_mean - 1] < threshold / 1.2
        assert abs(lasts[by_last - 1] - threshold) > 0.02 * threshold


def test_stop_below_accepts_the_reference():
    assert nb09.stop_below.evaluate(...).status == NOT_ATTEMPTED
    result = nb09.stop_below.evaluate(StopBelow)
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("wrong, text", [
    (StopOnLastStep, "last step"),
    (StopOnAnyStep, "last step drops below it: average all the epoch's steps"),  # stops one epoch early here
    (StopAfterThreeSteps, "middle of epoch 1"),
    (NeverStops, "never stopped"),
    (OldStyleStop, "1.x method"),
    (StopBelow(0.1), "not an instance"),
    (Metric, "derived from mindspore.train.Callback"),
])
def test_stop_below_rejects_wrong_answers(wrong, text):
    result = nb09.stop_below.evaluate(wrong)
    assert result.status == INCORRECT and text in result.message, result.message


# ---- 09.5 ----------------------------------------------------------------------------------------
class RMSE(Metric):  # the reference solution of the notebook
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._n, self._squared = 0, 0.0

    def update(self, *inputs):
        error = self._convert_data(inputs[0]).astype(np.float64) - self._convert_data(inputs[1])
        self._n += error.size
        self._squared += np.sum(error ** 2)

    def eval(self):
        return float(np.sqrt(self._squared / self._n))


class MeanOfBatchRMSE(RMSE):
    def clear(self):
        self._values = []

    def update(self, *inputs):
        error = self._convert_data(inputs[0]) - self._convert_data(inputs[1])
        self._values.append(np.sqrt(np.mean(error ** 2)))

    def eval(self):
        return float(np.mean(self._values))


class MeanSquaredError(RMSE):
    def eval(self):
        return self._squared / self._n


class NoReset(RMSE):
    def __init__(self):
        super().__init__()
        self._n, self._squared = 0, 0.0

    def clear(self):
        pass


def test_rmse_metric_accepts_the_reference():
    assert nb09.rmse_metric.evaluate(...).status == NOT_ATTEMPTED
    result = nb09.rmse_metric.evaluate(RMSE)
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("wrong, text", [
    (MeanOfBatchRMSE, "average per-batch values"),
    (MeanSquaredError, "square root"),
    (NoReset, "clear()"),
    (RMSE(), "not an instance"),
    (StopBelow, "derived from mindspore.train.Metric"),
])
def test_rmse_metric_rejects_wrong_answers(wrong, text):
    result = nb09.rmse_metric.evaluate(wrong)
    assert result.status == INCORRECT and text in result.message, result.message
