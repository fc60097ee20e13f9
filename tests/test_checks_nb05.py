"""The exercises of notebook 05 accept their reference solutions and reject typical wrong answers."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import pytest  # noqa: E402
from mindspore import nn, ops  # noqa: E402

from course_utils.checks import nb05  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402


@pytest.fixture
def graph_mode():
    """Run one test in graph mode and give the process back its previous mode."""
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=previous)


# ---- 05.1 global norm ------------------------------------------------------------------------------
def norm_reference(grads):
    return ops.sqrt(ops.addn([ops.reduce_sum(ops.square(g)) for g in grads]))


def norm_as_float(grads):
    return float(sum((g * g).sum() for g in grads).asnumpy()) ** 0.5


def norm_sum_of_norms(grads):
    return sum(ops.sqrt(ops.reduce_sum(g * g)) for g in grads)


def norm_without_sqrt(grads):
    return ops.addn([ops.reduce_sum(g * g) for g in grads])


def norm_first_only(grads):
    return ops.sqrt(ops.reduce_sum(grads[0] * grads[0]))


def norm_mean_of_squares(grads):
    return ops.sqrt(ops.addn([ops.reduce_mean(g * g) for g in grads]))


def norm_article(grads):
    return ops.norm(grads)  # article 000's line: raises on a tuple


def norm_per_tensor(grads):
    return tuple(ops.sqrt(ops.reduce_sum(g * g)) for g in grads)


@pytest.mark.parametrize("answer", [norm_reference, norm_as_float])
def test_global_norm_accepts_correct_answers(answer):
    assert nb05.global_norm.evaluate(answer).status == CORRECT


@pytest.mark.parametrize("answer, says", [
    (norm_sum_of_norms, "sum of the per-tensor norms"),
    (norm_without_sqrt, "square root"),
    (norm_first_only, "global norm is"),
    (norm_mean_of_squares, "global norm is"),
    (norm_article, "raised"),
    (norm_per_tensor, "one number"),
    (3.0, "expected a function"),
])
def test_global_norm_rejects_wrong_answers(answer, says):
    result = nb05.global_norm.evaluate(answer)
    assert result.status == INCORRECT and says in result.message, result


def test_not_attempted():
    for exercise in (nb05.global_norm, nb05.clip_step, nb05.mae_loss):
        assert exercise.evaluate(...).status == NOT_ATTEMPTED


# ---- 05.2 a step that clips and returns (loss, norm) --------------------------------------------
def _norm(grads):
    return ops.sqrt(ops.addn([ops.reduce_sum(ops.square(g)) for g in grads]))


class ClipReference(nn.TrainOneStepCell):
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
        sens = ops.fill(loss.dtype, loss.shape, 1.0)
        grads = self.grad(self.network, self.weights)(x, label, sens)
        norm = ops.sqrt(ops.addn([ops.square(ops.norm(g)) for g in grads]))
        grads = ops.clip_by_global_norm(grads, self.max_norm)
        loss = ops.depend(loss, self.optimizer(grads))
        return loss, norm


class NoClipping(ClipReference):
    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        return ops.depend(loss, self.optimizer(grads)), _norm(grads)


class NormAfterClipping(ClipReference):
    def construct(self, x, label):
        loss = self.network(x, label)
        grads = ops.clip_by_global_norm(self.grad_no_sens(self.network, self.weights)(x, label), self.max_norm)
        return ops.depend(loss, self.optimizer(grads)), _norm(grads)


class PerTensorClipping(ClipReference):
    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        norm = _norm(grads)
        grads = tuple(ops.clip_by_norm(g, self.max_norm) for g in grads)
        return ops.depend(loss, self.optimizer(grads)), norm


class ForgetsTheOptimizer(ClipReference):
    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        return loss, _norm(grads)


class ReturnsOnlyTheLoss(ClipReference):
    def construct(self, x, label):
        loss = self.network(x, label)
        grads = ops.clip_by_global_norm(self.grad_no_sens(self.network, self.weights)(x, label), self.max_norm)
        return ops.depend(loss, self.optimizer(grads))


def test_the_clip_check_sees_clipped_and_unclipped_steps():
    """The oracle's schedule must exercise both branches, or a no-clipping answer could pass."""
    clipped = nb05.clip_schedule()
    assert any(clipped) and not all(clipped), clipped


@pytest.mark.parametrize("answer", [ClipReference, ClipWithSens])
def test_clip_step_accepts_correct_answers(answer):
    assert nb05.clip_step.evaluate(answer).status == CORRECT


def test_clip_step_accepts_the_reference_in_graph_mode(graph_mode):
    assert nb05.clip_step.evaluate(ClipReference).status == CORRECT


@pytest.mark.parametrize("answer, says", [
    (NoClipping, "after the update"),
    (NormAfterClipping, "before clipping"),
    (PerTensorClipping, "after the update"),
    (ForgetsTheOptimizer, "after the update"),
    (ReturnsOnlyTheLoss, "must return (loss, norm)"),
    ("ClipAndReturn", "subclass of nn.TrainOneStepCell"),
])
def test_clip_step_rejects_wrong_answers(answer, says):
    result = nb05.clip_step.evaluate(answer)
    assert result.status == INCORRECT and says in result.message, result


def test_clip_step_wants_the_class_not_an_instance():
    net = nn.Dense(1, 1)
    instance = ClipReference(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params()), 1.0)
    result = nb05.clip_step.evaluate(instance)
    assert result.status == INCORRECT and "the class itself" in result.message, result


# ---- 05.3 mean absolute error via nn.LossBase ----------------------------------------------------
class MAEReference(nn.LossBase):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def construct(self, logits, labels):
        return self.get_loss(ops.abs(logits - labels))


class SquaredError(MAEReference):
    def construct(self, logits, labels):
        return self.get_loss(ops.square(logits - labels))


class SignedError(MAEReference):
    def construct(self, logits, labels):
        return self.get_loss(logits - labels)


class AlwaysMean(MAEReference):
    def construct(self, logits, labels):
        return ops.reduce_mean(ops.abs(logits - labels))


class NotALossBase(nn.Cell):
    def construct(self, logits, labels):
        return ops.reduce_mean(ops.abs(logits - labels))


@pytest.mark.parametrize("answer", [MAEReference, nn.L1Loss])
def test_mae_accepts_correct_answers(answer):
    """MindSpore's own L1Loss passing too shows that the oracle agrees with MindSpore."""
    assert nb05.mae_loss.evaluate(answer).status == CORRECT


def test_mae_accepts_the_reference_in_graph_mode(graph_mode):
    assert nb05.mae_loss.evaluate(MAEReference).status == CORRECT
    assert ms.get_context("mode") == ms.GRAPH_MODE, "the check must give the mode back"


@pytest.mark.parametrize("answer, says", [
    (SquaredError, "expected"),
    (SignedError, "expected"),
    (AlwaysMean, "self.get_loss"),
    (NotALossBase, "subclass of nn.LossBase"),
    (nn.MSELoss, "expected"),
    (MAEReference(), "the class itself"),
])
def test_mae_rejects_wrong_answers(answer, says):
    result = nb05.mae_loss.evaluate(answer)
    assert result.status == INCORRECT and says in result.message, result
