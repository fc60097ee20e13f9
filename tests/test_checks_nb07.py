"""Notebook 07's checks: the named mistakes of clipping by hand, of the clipping step and of the MAE loss, and
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


# ---- 07.3 clipping by global norm, by hand -----------------------------------------------------------
def test_clip_cases_cover_both_branches_and_the_default():
    cases = list(nb07.clip_cases())
    norms = [np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)) for grads, _ in cases]
    limits = [1.0 if m is None else m for _, m in cases]
    assert any(n > m for n, m in zip(norms, limits)) and any(n < m for n, m in zip(norms, limits))
    assert cases[0][1] is None and any(len(grads) > 1 and n > m for (grads, _), n, m in zip(cases, norms, limits))


def clip_in_numpy(grads, max_norm=1.0):  # numpy arrays are accepted as well as Tensors
    arrays = [g.asnumpy().astype(np.float64) for g in grads]
    norm = np.sqrt(sum((a * a).sum() for a in arrays))
    return tuple(a * min(1.0, max_norm / norm) for a in arrays)


def test_clip_by_hand_accepts_correct_answers():
    for answer in (reference(nb07.global_norm)[0], clip_in_numpy, ops.clip_by_global_norm):
        verdict(nb07.global_norm, answer, CORRECT)


@pytest.mark.parametrize("answer, says", [
    (lambda grads, max_norm=1.0: tuple(g * max_norm / _norm(grads) for g in grads), "scaled them up"),
    (lambda grads, max_norm=1.0: tuple(ops.clip_by_norm(g, max_norm) for g in grads), "each tensor on its own"),
    (lambda grads, max_norm=1.0: tuple(g * ops.clamp(max_norm / _norm(grads) ** 2, max=1.0) for g in grads),
     "should have global norm"),  # no square root
    (lambda grads, max_norm=1.0: grads, "came back unchanged"),
    (lambda grads: grads, "came back unchanged"),  # the default max_norm=1.0 is used in the first case
    (lambda grads, max_norm=1.0: _norm(grads), "expected a tuple"),
    (lambda grads, max_norm=1.0: grads[:1], "2 gradients went in, 1 came out"),
    (lambda grads, max_norm=1.0: tuple(g.reshape(-1) for g in grads), "keep each shape"),
    # clipping each number, not the length: on the first case (one number per tensor) that is per-tensor clipping
    (lambda grads, max_norm=1.0: tuple(ops.clamp(g, -max_norm, max_norm) for g in grads), "on its own"),
    (lambda grads, max_norm=1.0: tuple(ops.ones_like(g) * 0.5 for g in grads), "should have global norm"),
])
def test_clip_by_hand_names_the_mistake(answer, says):
    assert says in verdict(nb07.global_norm, answer)


# ---- 07.4 a step that clips and returns (loss, norm) --------------------------------------------
class ClipReference(nn.TrainOneStepCell):  # the solution, here: MindSpore compiles no class defined by exec()
    def __init__(self, network, optimizer, max_norm):
        super().__init__(network, optimizer)
        self.max_norm = max_norm

    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        norm = _norm(grads)
        grads = ops.clip_by_global_norm(grads, self.max_norm)
        return ops.depend(loss, self.optimizer(grads)), norm


class ClipWithSens(ClipReference):
    """Also correct: the sens form of self.grad, and the norm written with ops.norm per tensor."""

    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad(self.network, self.weights)(x, label, ops.fill(loss.dtype, loss.shape, 1.0))
        norm = ops.sqrt(ops.addn([ops.square(ops.norm(g)) for g in grads]))
        return ops.depend(loss, self.optimizer(ops.clip_by_global_norm(grads, self.max_norm))), norm


def _step(clip=None, norm_after=False, update=True, returns_norm=True):
    """A ClipReference that clips with ``clip(grads, max_norm)`` (None: not at all), measures the norm after
    clipping, skips the optimizer, or returns the loss alone."""
    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        norm = _norm(grads)
        grads = clip(grads, self.max_norm) if clip else grads
        norm = _norm(grads) if norm_after else norm
        loss = ops.depend(loss, self.optimizer(grads)) if update else loss
        return (loss, norm) if returns_norm else loss
    return type("ClipAndReturn", (ClipReference,), {"construct": construct})


def test_the_clip_check_sees_clipped_and_unclipped_steps():
    """The oracle's schedule must exercise both branches, or a no-clipping answer could pass."""
    clipped = nb07.clip_schedule()
    assert any(clipped) and not all(clipped), clipped


def test_clip_step_accepts_correct_answers():
    for answer in (ClipReference, ClipWithSens, reference(nb07.clip_step)[0]):
        verdict(nb07.clip_step, answer, CORRECT)


def test_clip_step_accepts_the_reference_in_graph_mode(graph_mode):
    verdict(nb07.clip_step, ClipReference, CORRECT)


@pytest.mark.parametrize("answer, says", [
    (_step(), "after the update"),  # no clipping
    (_step(ops.clip_by_global_norm, norm_after=True), "before clipping"),
    (_step(lambda grads, m: tuple(ops.clip_by_norm(g, m) for g in grads)), "after the update"),  # per tensor
    (_step(ops.clip_by_global_norm, update=False), "after the update"),  # forgets the optimizer
    (_step(ops.clip_by_global_norm, returns_norm=False), "must return (loss, norm)"),
    ("ClipAndReturn", "expected your class ClipAndReturn(network, optimizer, max_norm)"),
    (nn.WithLossCell, "subclass of nn.TrainOneStepCell"),
    (ClipReference(nn.WithLossCell(nn.Dense(1, 1), nn.MSELoss()), nn.SGD(nn.Dense(1, 1).trainable_params()), 1.0),
     "the class itself"),
])
def test_clip_step_names_the_mistake(answer, says):
    assert says in verdict(nb07.clip_step, answer)


# ---- 07.5 mean absolute error via nn.LossBase ----------------------------------------------------
def _loss(errors):
    return type("MAE", (nn.L1Loss,), {"construct": lambda self, logits, labels: errors(self, logits - labels)})


def test_mae_accepts_correct_answers():
    """MindSpore's own L1Loss passing too shows that the oracle agrees with MindSpore."""
    for answer in (reference(nb07.mae_loss)[0], nn.L1Loss):
        verdict(nb07.mae_loss, answer, CORRECT)


def test_mae_accepts_the_reference_in_graph_mode(graph_mode):
    verdict(nb07.mae_loss, reference(nb07.mae_loss)[0], CORRECT)
    assert ms.get_context("mode") == ms.GRAPH_MODE, "the check must give the mode back"


@pytest.mark.parametrize("answer, says", [
    (_loss(lambda self, d: self.get_loss(ops.square(d))), "expected"),
    (_loss(lambda self, d: self.get_loss(d)), "expected"),  # signed error
    (_loss(lambda self, d: ops.reduce_mean(ops.abs(d))), "self.get_loss"),  # always the mean
    (type("MAE", (nn.Cell,), {"construct": lambda self, a, b: ops.reduce_mean(ops.abs(a - b))}),
     "subclass of nn.LossBase"),
    (nn.MSELoss, "expected"),
    (nn.L1Loss(), "the class itself"),
])
def test_mae_names_the_mistake(answer, says):
    assert says in verdict(nb07.mae_loss, answer)


# ---- prediction 07.2 ----------------------------------------------------------------------------------------
def test_clip_direction_prediction_matches_mindspore():
    """The right option's numbers are what clip_by_global_norm gives; the wrong ones are other clips."""
    grads = (ms.Tensor(np.array([[3.0]], np.float32)), ms.Tensor(np.array([0.4], np.float32)))
    out = [float(g.asnumpy().ravel()[0]) for g in ops.clip_by_global_norm(grads, 1.0)]
    assert np.allclose(out, [0.991, 0.132], atol=5e-4) and np.hypot(*out) == pytest.approx(1.0, rel=1e-6)
    per_tensor = [float(ops.clip_by_norm(g, 1.0).asnumpy().ravel()[0]) for g in grads]
    assert np.allclose(per_tensor, [1.0, 0.4])
    assert "(0.991, 0.132)" in nb07.clip_direction.options["b"][0]
