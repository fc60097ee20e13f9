"""Notebook 06's checks: the schedule's closed form and its named mistakes, the range test's oracle and its
named mistakes (the verdicts every exercise owes are tests/test_exercise_contract.py's)."""

import math
import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import nn, ops  # noqa: E402
from mindspore.nn.learning_rate_schedule import LearningRateSchedule  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb06  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402


@pytest.fixture(autouse=True)
def in_a_scratch_dir(tmp_path, monkeypatch):
    """A failed graph compile writes rank_0/om/analyze_fail.ir into the working directory: not the repository."""
    monkeypatch.chdir(tmp_path)


def verdict(ex, answer, status=INCORRECT):
    result = ex.evaluate(answer)
    assert result.status == status, result.message
    return result.message


# ---- 06.2 warm-up then cosine ----------------------------------------------------------------------------
def test_warmup_cosine_closed_form_matches_mindspore_own_cells():
    warm, cos = nn.WarmUpLR(0.3, 5), nn.CosineDecayLR(0.05, 0.3, 10)
    for k in range(20):
        own = (warm if k < 5 else cos)(ms.Tensor([k if k < 5 else k - 5], ms.int32)).asnumpy().item()
        assert math.isclose(nb06.warmup_cosine_lr(k, 0.3, 0.05, 5, 15), own, rel_tol=1e-6, abs_tol=1e-7)


@pytest.mark.parametrize("settings", [s for s, _ in nb06.SCHEDULE_MISTAKES], ids=str)
def test_every_named_schedule_mistake_changes_the_schedule(settings):
    peak, low, warm, total = nb06.SCHEDULE_CASES[0]
    lrs = [nb06.warmup_cosine_lr(k, **{"peak_lr": peak, "min_lr": low, "warmup_steps": warm, "total_steps": total,
                                       **settings}) for k in range(total + 4)]
    assert not np.allclose(lrs, [nb06.warmup_cosine_lr(k, peak, low, warm, total) for k in range(total + 4)])


class Reference(LearningRateSchedule):  # the solution, here: MindSpore compiles no class defined by exec()
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()
        self.warmup_steps, self.peak, self.low, self.decay = warmup_steps, peak_lr, min_lr, total_steps - warmup_steps
        self.warmup = nn.WarmUpLR(peak_lr, warmup_steps)
        self.cosine = nn.CosineDecayLR(min_lr, peak_lr, total_steps - warmup_steps)

    def construct(self, global_step):
        if global_step < self.warmup_steps:
            return self.warmup(global_step)
        return self.cosine(global_step - self.warmup_steps)


class WithSelect(Reference):  # no Python `if`: both branches, one chosen by ops.select
    def construct(self, global_step):
        after = ops.maximum(global_step - self.warmup_steps, 0)
        return ops.select(global_step < self.warmup_steps, self.warmup(global_step), self.cosine(after))


def test_warmup_cosine_accepts_the_reference_and_a_select_version():
    for answer in (Reference, WithSelect):
        verdict(nb06.warmup_cosine, answer, CORRECT)


def _schedule(construct=None, cosine=None):
    """A Reference whose cosine is ``cosine(peak, low, warm, total)`` or whose construct is ``construct``."""
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        Reference.__init__(self, peak_lr, min_lr, warmup_steps, total_steps)
        if cosine:
            self.cosine = cosine(peak_lr, min_lr, warmup_steps, total_steps)
    return type("WarmupCosine", (Reference,), {"__init__": __init__, **({"construct": construct} if construct else {})})


def _no_hold(self, global_step):  # its own cosine, not clipped at the end: rises again
    if global_step < self.warmup_steps:
        return self.warmup(global_step)
    frac = (global_step - self.warmup_steps).astype(ms.float32) / self.decay
    return self.low + 0.5 * (self.peak - self.low) * (1.0 + ops.cos(math.pi * frac))


@pytest.mark.parametrize("answer, expected", [
    (_schedule(lambda self, s: self.warmup(s) if s < self.warmup_steps else self.cosine(s)),
     "starts at step 0 instead of at the end of the warm-up"),
    (_schedule(cosine=lambda p, low, w, total: nn.CosineDecayLR(low, p, total)), "decays over total_steps"),
    (_schedule(cosine=lambda p, low, w, total: nn.CosineDecayLR(0.0, p, total - w)), "ends at 0 instead of min_lr"),
    (_schedule(lambda self, s: self.peak * (s + 1).astype(ms.float32) / self.warmup_steps if s < self.warmup_steps
               else self.cosine(s - self.warmup_steps)), "one step ahead"),
    (_schedule(_no_hold), "must stay at min_lr"),
    (_schedule(lambda self, s: self.warmup(s) * np.float32("nan")), "must be a finite number, got nan"),
    (_schedule(lambda self, s: "0.1"), "not text"),
    (Reference(0.1, 0.01, 2, 10), "not an instance"),
    (nn.CosineDecayLR, "raised TypeError"),  # a MindSpore schedule, but not this one: its arguments differ
    (nn.Dense, "subclass of LearningRateSchedule"),
])
def test_warmup_cosine_names_the_mistake(answer, expected):
    assert expected in verdict(nb06.warmup_cosine, answer)


# ---- 06.4 the open-ended range test ----------------------------------------------------------------------
def _variant(set_lr=None, stop=True, grow_first=False, record_blowup=True, as_lists=False):
    def range_test(net, X, Y, lr_start, factor, blowup=4.0, max_steps=200):
        optimizer = nn.SGD(net.trainable_params(), learning_rate=lr_start)
        train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
        lrs, losses, lr = [], [], lr_start
        for _ in range(max_steps):
            if grow_first:
                lr = lr * factor
            (set_lr or (lambda o, v: ops.assign(o.learning_rate, ms.Tensor(v, ms.float32))))(optimizer, lr)
            loss = train_net(X, Y).asnumpy().item()
            blew_up = not np.isfinite(loss) or bool(losses and loss > blowup * min(losses))
            if stop and blew_up and not record_blowup:
                break
            lrs.append(lr)
            losses.append(loss)
            if stop and blew_up:
                break
            if not grow_first:
                lr = lr * factor
        return (lrs, losses) if as_lists else (np.array(lrs), np.array(losses))
    return range_test


def numpy_loop(net, X, Y, lr_start, factor, blowup=4.0, max_steps=200):  # right numbers, but the net never trains
    w, b = net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()
    return nb06.range_test_oracle(X.asnumpy(), Y.asnumpy(), lr_start, factor, blowup, max_steps, w, b)[:2]


def test_range_test_accepts_the_reference_and_lists():
    for answer in (reference(nb06.range_test)[0], _variant(as_lists=True)):
        verdict(nb06.range_test, answer, CORRECT)


@pytest.mark.parametrize("answer, expected", [
    (_variant(set_lr=lambda o, v: o.learning_rate.set_data(ms.Tensor(v, ms.float32))),
     "never used the new learning rates"),
    (_variant(stop=False), "should stop after step"),
    (_variant(grow_first=True), "the first step must use lr_start"),
    (_variant(record_blowup=False), "which is recorded too"),
    (numpy_loop, "the net you were given ends at"),  # regression: a numpy loop that never trains the net
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: ([1.0], [1.0, 2.0]), "1 learning rates but 2"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: 0.3, "must return (lrs, losses)"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: (["a"], ["b"]), "must hold numbers"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: (np.ones((2, 2)),) * 2, "must be 1-D"),
])
def test_range_test_names_the_mistake(answer, expected):
    message = verdict(nb06.range_test, answer)
    assert expected in message and message.count("range_test(net, X, Y, lr_start=") == 1, message


def test_range_oracle_stops_where_the_loss_blows_up():
    xs, ys = nb06.range_data()
    for lr_start, factor, blowup, max_steps, w, b in nb06.RANGE_CASES:
        lrs, losses, _end = nb06.range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w, b)
        assert np.allclose(lrs, lr_start * factor ** np.arange(len(lrs)))
        if len(lrs) < max_steps:
            assert losses[-1] > blowup * losses[:-1].min()
            assert np.all(losses[1:-1] <= blowup * np.minimum.accumulate(losses)[:-2])
