"""Notebook 07's checks: the named mistakes of per-tensor clipping, of gradient accumulation in the graph and of the
pinball loss, and
the facts their data and the predictions rest on (the verdicts every exercise owes are
tests/test_exercise_contract.py's)."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import nn, ops  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb07  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402


@pytest.fixture
def graph_mode():
    """Run one test in graph mode and give the process back its previous mode."""
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=previous)


def verdict(ex, answer, status=INCORRECT):
    result = ex.evaluate(answer)
    assert result.status == status, result.message
    return result.message


def _norm(grads):
    return ops.sqrt(ops.addn([ops.reduce_sum(ops.square(g)) for g in grads]))


# ---- 07.3 clipping each gradient by its own norm -------------------------------------------------------
def test_clip_cases_cover_both_branches_and_the_default():
    """Every case with several tensors has one longer and one shorter than max_norm."""
    cases = list(nb07.clip_cases())
    assert cases[0][1] is None
    for grads, max_norm in cases:
        norms = [np.linalg.norm(g.astype(np.float64)) for g in grads]
        limit = 1.0 if max_norm is None else max_norm
        if len(grads) > 1:
            assert any(n > limit for n in norms) and any(n < limit for n in norms), (norms, limit)


def test_clip_each_accepts_correct_answers():
    for answer in (reference(nb07.clip_each)[0],
                   lambda grads, max_norm=1.0: tuple(ops.clip_by_norm(g, max_norm) for g in grads)):
        verdict(nb07.clip_each, answer, CORRECT)


@pytest.mark.parametrize("answer, says", [
    (lambda grads, max_norm=1.0: ops.clip_by_global_norm(grads, max_norm), "one factor from their global norm"),
    (lambda grads, max_norm=1.0: tuple(g * max_norm / ops.norm(g) for g in grads), "scaled them up"),
    (lambda grads, max_norm=1.0: grads, "came back unchanged"),
    (lambda grads: grads, "came back unchanged"),  # the default max_norm=1.0 is used in the first case
    (lambda grads, max_norm=1.0: tuple(g * ops.clamp(max_norm / ops.norm(g) ** 2, max=1.0) for g in grads),
     "should have norm"),  # no square root
    (lambda grads, max_norm=1.0: _norm(grads), "expected a tuple"),
    (lambda grads, max_norm=1.0: grads[:1], "2 gradients went in, 1 came out"),
    (lambda grads, max_norm=1.0: tuple(g.reshape(-1) for g in grads), "keep each shape"),
    (lambda grads, max_norm=1.0: tuple(np.asarray(g.asnumpy()) for g in grads), "not a MindSpore Tensor"),
    (lambda grads, max_norm=1.0: tuple(ops.clamp(g, -max_norm, max_norm) for g in grads), "should have norm"),
])
def test_clip_each_names_the_mistake(answer, says):
    assert says in verdict(nb07.clip_each, answer)


def test_clip_each_check_tells_per_tensor_from_global_clipping():
    """On every case with several tensors the two clippings differ, so the check cannot be passed by either."""
    for grads, max_norm in nb07.clip_cases():
        limit = 1.0 if max_norm is None else max_norm
        if len(grads) > 1:
            each, together = nb07.clip_oracle(grads, limit), nb07.clip_oracle(grads, limit, together=True)
            assert not all(np.allclose(a, b, rtol=1e-3) for a, b in zip(each, together))


# ---- 07.4 gradient accumulation inside the compiled step ---------------------------------------------------
class AccumulateReference(nn.TrainOneStepCell):  # the solution, here: MindSpore compiles no class defined by exec()
    def __init__(self, network, optimizer, k, every_call=False, no_mean=False, no_reset=False, update=True):
        super().__init__(network, optimizer)
        self.k, self.every_call, self.no_mean, self.no_reset, self.update = k, every_call, no_mean, no_reset, update
        self.sums = self.weights.clone(prefix="sum", init="zeros")
        self.calls = ms.Parameter(ms.Tensor(0, ms.int32), name="calls", requires_grad=False)

    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        for total, g in zip(self.sums, grads):
            ops.assign_add(total, g)
        ops.assign_add(self.calls, 1)
        if self.every_call:
            self.optimizer(grads)
        elif self.calls % self.k == 0:
            if self.update:
                self.optimizer(tuple(total if self.no_mean else total / self.k for total in self.sums))
            if not self.no_reset:
                for total in self.sums:
                    ops.assign(total, ops.zeros_like(total))
        return loss


def _variant(**settings):
    def init(self, network, optimizer, k):
        AccumulateReference.__init__(self, network, optimizer, k, **settings)
    return type("AccumulateStep", (AccumulateReference,), {"__init__": init})


def test_accumulate_oracle_equals_full_batch_training():
    """The oracle's update at the k-th call is the full-batch gradient step over those k micro-batches."""
    after, _ = nb07.acc_oracle()
    xs, ys = (a[:nb07._ACC_K * nb07._ACC_BATCH].astype(np.float64) for a in nb07._acc_data())
    r = xs @ nb07._ACC_W.T + nb07._ACC_B - ys
    w = nb07._ACC_W - nb07._ACC_LR * 2 * np.mean(r * xs, axis=0, keepdims=True)
    assert np.allclose(after[nb07._ACC_K - 1][0], w) and np.allclose(after[0][0], nb07._ACC_W)
    assert nb07._ACC_CALLS > 2 * nb07._ACC_K  # two updates, so that a missing reset shows


def test_accumulate_mistakes_differ_from_the_right_answer():
    right, _ = nb07.acc_oracle()
    for settings, _message in nb07.ACC_MISTAKES:
        wrong, _ = nb07.acc_oracle(**settings)
        assert not all(np.allclose(a[0], b[0]) and np.isclose(a[1], b[1]) for a, b in zip(right, wrong)), settings


def test_accumulate_accepts_the_reference_and_gives_the_mode_back():
    previous = ms.get_context("mode")
    verdict(nb07.accumulate, AccumulateReference, CORRECT)
    assert ms.get_context("mode") == previous


@pytest.mark.parametrize("answer, says", [
    (_variant(every_call=True), "should only add its gradients"),
    (_variant(no_mean=True), "3 times as far"),
    (_variant(no_reset=True), "still contains the gradients of the first k calls"),
    (_variant(update=False), "did not move"),
    (nn.TrainOneStepCell, "call 1: the weights are"),  # k lands in sens: it updates at every call
    (nn.WithLossCell, "subclass of nn.TrainOneStepCell"),
])
def test_accumulate_names_the_mistake(answer, says):
    assert says in verdict(nb07.accumulate, answer)


# ---- 07.5 the pinball loss via nn.LossBase --------------------------------------------------------
def _pinball(per_element, base=nn.LossBase):
    def init(self, tau=0.5, reduction="mean"):
        base.__init__(self, reduction)
        self.tau = tau
    return type("Pinball", (base,), {"__init__": init, "construct": per_element})


def test_pinball_accepts_correct_answers():
    def relu_form(self, logits, labels):
        e = labels - logits
        return self.get_loss(self.tau * ops.relu(e) + (1 - self.tau) * ops.relu(-e))
    for answer in (reference(nb07.pinball_loss)[0], _pinball(relu_form)):
        verdict(nb07.pinball_loss, answer, CORRECT)


def test_pinball_accepts_the_reference_in_graph_mode(graph_mode):
    verdict(nb07.pinball_loss, reference(nb07.pinball_loss)[0], CORRECT)
    assert ms.get_context("mode") == ms.GRAPH_MODE, "the check must give the mode back"


def test_pinball_at_one_half_is_half_the_absolute_error():
    """An independent anchor for the oracle: tau = 0.5 gives |e| / 2."""
    e = np.linspace(-2, 2, 9)
    assert np.allclose(nb07.pinball_np(np.zeros(9), e, 0.5), np.abs(e) / 2)


@pytest.mark.parametrize("answer, says", [
    (_pinball(lambda self, p, y: self.get_loss(ops.maximum(self.tau * (p - y), (self.tau - 1) * (p - y)))),
     "the one for 1 - tau"),
    (_pinball(lambda self, p, y: self.get_loss(ops.abs(y - p))), "expected"),
    (_pinball(lambda self, p, y: ops.reduce_mean(ops.maximum(self.tau * (y - p), (self.tau - 1) * (y - p)))),
     "is the reduction you were asked for the one applied"),
    (_pinball(lambda self, p, y: self.get_loss(ops.stop_gradient(ops.maximum(self.tau * (y - p),
                                                                              (self.tau - 1) * (y - p))))),
     "moved the bias"),
    (type("Pinball", (nn.Cell,), {"construct": lambda self, a, b: a}), "subclass of nn.LossBase"),
    (nn.L1Loss, "tau"),  # takes no tau: TypeError
])
def test_pinball_names_the_mistake(answer, says):
    assert says in verdict(nb07.pinball_loss, answer)


# ---- prediction 07.2 ----------------------------------------------------------------------------------------
def test_clip_direction_prediction_matches_mindspore():
    """The right option's numbers are what clip_by_global_norm gives; the wrong ones are other clips."""
    grads = (ms.Tensor(np.array([[3.0]], np.float32)), ms.Tensor(np.array([0.4], np.float32)))
    out = [float(g.asnumpy().ravel()[0]) for g in ops.clip_by_global_norm(grads, 1.0)]
    assert np.allclose(out, [0.991, 0.132], atol=5e-4) and np.hypot(*out) == pytest.approx(1.0, rel=1e-6)
    per_tensor = [float(ops.clip_by_norm(g, 1.0).asnumpy().ravel()[0]) for g in grads]
    assert np.allclose(per_tensor, [1.0, 0.4])
    assert "(0.991, 0.132)" in nb07.clip_direction.options["b"][0]
