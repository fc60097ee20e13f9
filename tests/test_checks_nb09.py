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


@pytest.mark.parametrize("ex", [nb09.keep_best, nb09.warmup, nb09.correlation_metric], ids=lambda ex: ex.key)
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


# ---- 09.4 Warmup -----------------------------------------------------------------------------------
class Base(Callback):  # remembers the base rate; the variants write it
    def __init__(self, steps):
        super().__init__()
        self.steps = steps

    def on_train_begin(self, run_context):
        self.base = float(run_context.original_args().optimizer.learning_rate.asnumpy())


def warmup_variant(hook, step_of, write="assign"):
    """A Warmup that sets the rate in ``hook`` for step ``step_of(cb_params)``, with ops.assign or set_data."""
    def method(self, run_context):
        cb = run_context.original_args()
        rate = Tensor(self.base * min(1.0, step_of(cb) / self.steps), ms.float32)
        if write == "assign":
            ops.assign(cb.optimizer.learning_rate, rate)
        else:
            cb.optimizer.learning_rate.set_data(rate)
    return type("Variant", (Base,), {hook: method})


def test_warmup_schedules_are_told_apart():
    """In each setting every schedule of the checker ends far (float32 noise is ~1e-6) from every other."""
    for setting in nb09.WARMUP_SETTINGS:
        ends = {name: nb09.warmup_oracle(setting, name) for name in nb09.SCHEDULES}
        names = sorted(ends)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                assert max(abs(ends[a][0] - ends[b][0]), abs(ends[a][1] - ends[b][1])) > 1e-3, (a, b, setting)


@pytest.mark.parametrize("wrong, text", [
    (Base, "the rate never changed"),
    (warmup_variant("on_train_step_end", lambda cb: cb.cur_step_num + 1), "step 1 ran at the full rate"),
    (warmup_variant("on_train_step_begin", lambda cb: cb.cur_step_num - 1), "step 1 ran at rate 0"),
    (warmup_variant("on_train_step_begin", lambda cb: cb.cur_step_num, write="set_data"), "every step ran at step 1's"),
    (warmup_variant("on_train_step_end", lambda cb: cb.cur_step_num + 1, write="set_data"), "the rate never changed"),
    (warmup_variant("on_train_epoch_begin", lambda cb: cb.cur_epoch_num), "once an epoch"),
    (warmup_variant("on_train_step_begin", lambda cb: 2 * cb.cur_step_num), "warming up as asked gives"),
    (type("OldStyle", (Base,), {"step_begin": lambda self, run_context: None}), "the rate never changed"),
    (Base(3), "(answer = Warmup, the class itself, not an instance)"),
    (Metric, "derived from mindspore.train.Callback"),
])
def test_warmup_names_the_mistake(wrong, text):
    assert text in message(nb09.warmup, wrong)


# ---- 09.5 Correlation --------------------------------------------------------------------------------
class Sums(Metric):  # the reference's accumulation, with eval() left to the variants
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self.n, self.p, self.y, self.pp, self.yy, self.py = 0, 0.0, 0.0, 0.0, 0.0, 0.0

    def update(self, *inputs):
        p = inputs[0].asnumpy().astype(np.float64).ravel()
        y = inputs[1].asnumpy().astype(np.float64).ravel()
        self.n += p.size
        self.p, self.y, self.pp, self.yy, self.py = (self.p + p.sum(), self.y + y.sum(), self.pp + p @ p,
                                                     self.yy + y @ y, self.py + p @ y)

    def r(self):
        n = self.n
        return (self.py / n - self.p * self.y / n ** 2) / np.sqrt(
            (self.pp / n - (self.p / n) ** 2) * (self.yy / n - (self.y / n) ** 2))


class MeanOfBatchCorrelations(Metric):
    def clear(self):
        self._values = []

    def update(self, *inputs):
        p, y = (a.asnumpy().ravel() for a in inputs[:2])
        self._values.append(np.corrcoef(p, y)[0, 1])

    def eval(self):
        return float(np.mean(self._values))


def _no_reset(self):
    for name in ("n", "p", "y", "pp", "yy", "py"):
        self.__dict__.setdefault(name, 0)


@pytest.mark.parametrize("wrong, text", [
    (MeanOfBatchCorrelations, "the mean of the batches' correlations"),
    (type("Squared", (Sums,), {"eval": lambda self: float(self.r() ** 2)}), "the square of numpy's r"),
    (type("Unsigned", (Sums,), {"eval": lambda self: float(abs(self.r()))}), "the sign is lost"),
    (type("NoReset", (Sums,), {"clear": _no_reset, "eval": lambda self: float(self.r())}),
     "what does clear() leave behind"),
    (type("Text", (Sums,), {"eval": lambda self: "0.5"}), "your metric's eval() must be a number, not text"),
    (MeanOfBatchCorrelations(), "expected your class Correlation() (answer = Correlation, the class itself"),
    (Base, "derived from mindspore.train.Metric"),
])
def test_correlation_metric_names_the_mistake(wrong, text):
    assert text in message(nb09.correlation_metric, wrong)


def test_correlation_oracle_and_its_mistakes():
    batches = [(np.array([[1.0], [2.0]], np.float32), np.array([[1.0], [3.0]], np.float32)),
               (np.array([[3.0], [5.0]], np.float32), np.array([[2.0], [4.0]], np.float32))]
    r = np.corrcoef([1, 2, 3, 5], [1, 3, 2, 4])[0, 1]
    assert nb09._numpy_correlation(batches) == pytest.approx(r)
    assert nb09._numpy_correlation(batches, squared=True) == pytest.approx(r * r)
    assert nb09._numpy_correlation(batches, per_batch=True) == pytest.approx(1.0)  # two points: r = 1 each
