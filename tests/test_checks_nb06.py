"""The exercises of notebook 06 accept their reference solutions and reject typical wrong answers."""

import math
import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from mindspore import nn, ops  # noqa: E402
from mindspore.nn.learning_rate_schedule import LearningRateSchedule  # noqa: E402

from course_utils.checks import nb06  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402


@pytest.fixture(autouse=True)
def in_a_scratch_dir(tmp_path, monkeypatch):
    """A failed graph compile writes rank_0/om/analyze_fail.ir into the working directory: not the repository."""
    monkeypatch.chdir(tmp_path)


# ---- closed form ---------------------------------------------------------------------------------------
def test_warmup_cosine_closed_form_matches_mindspore_own_cells():
    warm, cos = nn.WarmUpLR(0.3, 5), nn.CosineDecayLR(0.05, 0.3, 10)
    for k in range(20):
        own = (warm if k < 5 else cos)(ms.Tensor([k if k < 5 else k - 5], ms.int32)).asnumpy().item()
        assert math.isclose(nb06.warmup_cosine_lr(k, 0.3, 0.05, 5, 15), own, rel_tol=1e-6, abs_tol=1e-7)


# ---- 06.2 warm-up then cosine ----------------------------------------------------------------------------
class Reference(LearningRateSchedule):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()
        self.warmup_steps = warmup_steps
        self.warmup = nn.WarmUpLR(peak_lr, warmup_steps)
        self.cosine = nn.CosineDecayLR(min_lr, peak_lr, total_steps - warmup_steps)

    def construct(self, global_step):
        if global_step < self.warmup_steps:
            return self.warmup(global_step)
        return self.cosine(global_step - self.warmup_steps)


class WithSelect(LearningRateSchedule):  # no Python `if`: both branches, one chosen by ops.select
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()
        self.warmup_steps = warmup_steps
        self.warmup = nn.WarmUpLR(peak_lr, warmup_steps)
        self.cosine = nn.CosineDecayLR(min_lr, peak_lr, total_steps - warmup_steps)

    def construct(self, global_step):
        after = ops.maximum(global_step - self.warmup_steps, 0)
        return ops.select(global_step < self.warmup_steps, self.warmup(global_step), self.cosine(after))


class Unshifted(Reference):
    def construct(self, global_step):
        if global_step < self.warmup_steps:
            return self.warmup(global_step)
        return self.cosine(global_step)


class WholeTotal(Reference):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__(peak_lr, min_lr, warmup_steps, total_steps)
        self.cosine = nn.CosineDecayLR(min_lr, peak_lr, total_steps)


class NoMin(Reference):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__(peak_lr, min_lr, warmup_steps, total_steps)
        self.cosine = nn.CosineDecayLR(0.0, peak_lr, total_steps - warmup_steps)


class WarmupAhead(Reference):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__(peak_lr, min_lr, warmup_steps, total_steps)
        self.peak = peak_lr

    def construct(self, global_step):
        if global_step < self.warmup_steps:
            return self.peak * (global_step + 1).astype(ms.float32) / self.warmup_steps
        return self.cosine(global_step - self.warmup_steps)


class NoHold(LearningRateSchedule):  # its own cosine, not clipped at the end: rises again
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()
        self.peak, self.low, self.warm, self.decay = peak_lr, min_lr, warmup_steps, total_steps - warmup_steps
        self.warmup = nn.WarmUpLR(peak_lr, warmup_steps)

    def construct(self, global_step):
        if global_step < self.warm:
            return self.warmup(global_step)
        t = (global_step - self.warm).astype(ms.float32) / self.decay
        return self.low + 0.5 * (self.peak - self.low) * (1.0 + ops.cos(math.pi * t))


class Scaffold(LearningRateSchedule):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()
        ...

    def construct(self, global_step):
        ...


def test_warmup_cosine_accepts_the_reference_and_a_select_version():
    for answer in (Reference, WithSelect):
        result = nb06.warmup_cosine.evaluate(answer)
        assert result.status == CORRECT, result.message


@pytest.mark.parametrize("answer, expected", [
    (Unshifted, "starts at step 0 instead of at the end of the warm-up"),
    (WholeTotal, "decays over total_steps"),
    (NoMin, "ends at 0 instead of min_lr"),
    (WarmupAhead, "one step ahead"),
    (NoHold, "must stay at min_lr"),
    (Reference(0.1, 0.01, 2, 10), "not an instance"),
    (nn.CosineDecayLR, "raised TypeError"),  # a MindSpore schedule, but not this one: its arguments differ
    (0.1, "subclass of LearningRateSchedule"),
])
def test_warmup_cosine_rejects_typical_mistakes(answer, expected):
    result = nb06.warmup_cosine.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_warmup_cosine_scaffold_is_not_attempted():
    assert nb06.warmup_cosine.evaluate(Scaffold).status == NOT_ATTEMPTED
    assert nb06.warmup_cosine.evaluate(...).status == NOT_ATTEMPTED


def test_warmup_cosine_rejects_non_finite_values():
    class Nan(Reference):
        def construct(self, global_step):
            return self.warmup(global_step) * np.float32("nan")

    result = nb06.warmup_cosine.evaluate(Nan)
    assert result.status == INCORRECT and "nan" in result.message.lower(), result.message


# ---- 06.4 the open-ended range test ----------------------------------------------------------------------
def range_reference(net, X, Y, lr_start, factor, blowup=4.0, max_steps=200):
    optimizer = nn.SGD(net.trainable_params(), learning_rate=lr_start)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    lrs, losses, lr = [], [], lr_start
    for _ in range(max_steps):
        ops.assign(optimizer.learning_rate, ms.Tensor(lr, ms.float32))
        loss = train_net(X, Y).asnumpy().item()
        lrs.append(lr)
        losses.append(loss)
        if not np.isfinite(loss) or loss > blowup * min(losses):
            break
        lr = lr * factor
    return np.array(lrs), np.array(losses)


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


def test_range_test_accepts_the_reference_and_lists():
    for answer in (range_reference, _variant(as_lists=True)):
        result = nb06.range_test.evaluate(answer)
        assert result.status == CORRECT, result.message


@pytest.mark.parametrize("answer, expected", [
    (_variant(set_lr=lambda o, v: o.learning_rate.set_data(ms.Tensor(v, ms.float32))), "set_data"),
    (_variant(stop=False), "should stop after step"),
    (_variant(grow_first=True), "the first step must use lr_start"),
    (_variant(record_blowup=False), "which is recorded too"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: None, "returned None"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: ([1.0], [1.0, 2.0]), "1 learning rates but 2"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: 0.3, "must return (lrs, losses)"),
    (lambda net, X, Y, lr_start, factor, blowup=4.0, max_steps=200: (["a"], ["b"]), "must hold numbers"),
    (range_reference.__name__, "expected your function"),
])
def test_range_test_rejects_typical_mistakes(answer, expected):
    result = nb06.range_test.evaluate(answer)
    assert result.status == INCORRECT and expected in result.message, result.message


def test_range_test_scaffold_is_not_attempted():
    def range_test(net, X, Y, lr_start, factor, blowup=4.0, max_steps=200):
        lrs, losses = [], []
        for _ in range(max_steps):
            ...
        return np.array(lrs), np.array(losses)

    assert nb06.range_test.evaluate(range_test).status == NOT_ATTEMPTED


def test_range_oracle_stops_where_the_loss_blows_up():
    xs, ys = nb06.range_data()
    for lr_start, factor, blowup, max_steps, w, b in nb06.RANGE_CASES:
        lrs, losses = nb06.range_test_oracle(xs, ys, lr_start, factor, blowup, max_steps, w, b)
        assert np.allclose(lrs, lr_start * factor ** np.arange(len(lrs)))
        if len(lrs) < max_steps:
            assert losses[-1] > blowup * losses[:-1].min()
            assert np.all(losses[1:-1] <= blowup * np.minimum.accumulate(losses)[:-2])


# ---- predictions -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prediction", [nb06.past_the_end, nb06.set_data_ignored])
def test_predictions_explain_every_option(prediction):
    assert prediction.evaluate(prediction.answer).status == CORRECT
    for letter in prediction.options:
        if letter != prediction.answer:
            result = prediction.evaluate(letter)
            assert result.status == INCORRECT and f"({letter})" in result.message


# ---- junk never raises and is never accepted ---------------------------------------------------------------
junk = st.recursive(
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.text(max_size=8), st.none(),
              st.booleans(), st.just(object()), st.just(np.float32("nan")), st.just(np.ones((2, 2)))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner)), max_leaves=4)
junk_functions = junk.map(lambda value: (lambda *args, **kwargs: value))


@pytest.mark.parametrize("exercise", [nb06.warmup_cosine, nb06.range_test], ids=lambda e: e.name)
@settings(max_examples=8, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(answer=st.one_of(junk, junk_functions))
def test_junk_gets_a_verdict_and_is_never_accepted(exercise, answer):
    result = exercise.evaluate(answer)  # must not raise
    assert result.status in (INCORRECT, NOT_ATTEMPTED) and result.message


class ReturnsJunk(LearningRateSchedule):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()

    def construct(self, global_step):
        return "0.1"


def test_a_schedule_returning_text_is_refused():
    result = nb06.warmup_cosine.evaluate(ReturnsJunk)
    assert result.status == INCORRECT and "not text" in result.message, result.message
