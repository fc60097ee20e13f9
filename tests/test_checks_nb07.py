"""The exercises of notebook 07 accept their reference solutions and reject typical wrong answers."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import nn, ops  # noqa: E402

from course_utils.checks import nb07  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED, unfinished  # noqa: E402


@pytest.fixture
def graph_mode():
    """Run one test in graph mode and give the process back its previous mode."""
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=previous)


# ---- 07.3 clipping by global norm, by hand -----------------------------------------------------------
def clip_reference(grads, max_norm=1.0):
    norm = ops.sqrt(ops.addn([ops.reduce_sum(ops.square(g)) for g in grads]))
    return tuple(g * ops.minimum(ops.ones_like(norm), max_norm / norm) for g in grads)


def clip_with_mindspore(grads, max_norm=1.0):
    return ops.clip_by_global_norm(grads, max_norm)


def clip_in_numpy(grads, max_norm=1.0):  # numpy arrays are accepted as well as Tensors
    arrays = [g.asnumpy().astype(np.float64) for g in grads]
    norm = np.sqrt(sum((a * a).sum() for a in arrays))
    return tuple(a * min(1.0, max_norm / norm) for a in arrays)


def clip_always(grads, max_norm=1.0):  # scales up gradients shorter than max_norm
    norm = ops.sqrt(ops.addn([ops.reduce_sum(g * g) for g in grads]))
    return tuple(g * max_norm / norm for g in grads)


def clip_per_tensor(grads, max_norm=1.0):
    return tuple(ops.clip_by_norm(g, max_norm) for g in grads)


def clip_without_sqrt(grads, max_norm=1.0):
    squares = ops.addn([ops.reduce_sum(g * g) for g in grads])
    return tuple(g * ops.minimum(ops.ones_like(squares), max_norm / squares) for g in grads)


def clip_returns_inputs(grads, max_norm=1.0):
    return grads


def clip_returns_norm(grads, max_norm=1.0):
    return ops.sqrt(ops.addn([ops.reduce_sum(g * g) for g in grads]))


def clip_values(grads, max_norm=1.0):  # clipping each number, not the length
    return tuple(ops.clamp(g, -max_norm, max_norm) for g in grads)


def clip_constant(grads, max_norm=1.0):
    return tuple(ops.ones_like(g) * 0.5 for g in grads)


def clip_forgot_return(grads, max_norm=1.0):
    tuple(g * 0.5 for g in grads)


def clip_stub(grads, max_norm=1.0):  # the notebook's scaffold
    norm = ...
    if norm > max_norm:
        grads = ...
    return grads


def clip_half_written(grads, max_norm=1.0):
    norm = ops.sqrt(ops.addn([ops.reduce_sum(g * g) for g in grads]))
    if norm > max_norm:
        grads = ...
    return grads


@pytest.mark.parametrize("answer", [clip_reference, clip_with_mindspore, clip_in_numpy])
def test_clip_by_hand_accepts_correct_answers(answer):
    assert nb07.global_norm.evaluate(answer).status == CORRECT


def test_clip_cases_cover_both_branches_and_the_default():
    cases = list(nb07.clip_cases())
    norms = [np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads)) for grads, _ in cases]
    limits = [1.0 if m is None else m for _, m in cases]
    assert any(n > m for n, m in zip(norms, limits)) and any(n < m for n, m in zip(norms, limits))
    assert cases[0][1] is None and any(len(grads) > 1 and n > m for (grads, _), n, m in zip(cases, norms, limits))


@pytest.mark.parametrize("answer, says", [
    (clip_always, "scaled them up"),
    (clip_per_tensor, "each tensor on its own"),
    (clip_without_sqrt, "should have global norm"),
    (clip_returns_inputs, "came back unchanged"),
    (clip_returns_norm, "expected a tuple"),
    (clip_values, "on its own"),  # on the first case (one number per tensor) that is per-tensor clipping
    (clip_constant, "should have global norm"),
    (clip_forgot_return, "no `return`"),
    (lambda grads: grads, "came back unchanged"),
    (1.0, "expected your function"),
])
def test_clip_by_hand_rejects_wrong_answers(answer, says):
    result = nb07.global_norm.evaluate(answer)
    assert result.status == INCORRECT and says in result.message, result


@pytest.mark.parametrize("answer", [clip_stub, clip_half_written, ...])
def test_an_unfinished_scaffold_is_not_attempted(answer):
    assert nb07.global_norm.evaluate(answer).status == NOT_ATTEMPTED


def test_unfinished_looks_at_classes_and_functions_only():
    class Done:
        def method(self):
            return 1

    class Todo(Done):
        def other(self):
            ...

    assert not unfinished(Done) and unfinished(Todo) and not unfinished(type("Empty", (), {}))
    assert not unfinished(lambda g: None) and unfinished(lambda g: ...)
    assert not unfinished(print) and not unfinished(3)


# ---- 07.4 a step that clips and returns (loss, norm) --------------------------------------------
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
    clipped = nb07.clip_schedule()
    assert any(clipped) and not all(clipped), clipped


@pytest.mark.parametrize("answer", [ClipReference, ClipWithSens])
def test_clip_step_accepts_correct_answers(answer):
    assert nb07.clip_step.evaluate(answer).status == CORRECT


def test_clip_step_accepts_the_reference_in_graph_mode(graph_mode):
    assert nb07.clip_step.evaluate(ClipReference).status == CORRECT


@pytest.mark.parametrize("answer, says", [
    (NoClipping, "after the update"),
    (NormAfterClipping, "before clipping"),
    (PerTensorClipping, "after the update"),
    (ForgetsTheOptimizer, "after the update"),
    (ReturnsOnlyTheLoss, "must return (loss, norm)"),
    ("ClipAndReturn", "subclass of nn.TrainOneStepCell"),
])
def test_clip_step_rejects_wrong_answers(answer, says):
    result = nb07.clip_step.evaluate(answer)
    assert result.status == INCORRECT and says in result.message, result


def test_clip_step_wants_the_class_not_an_instance():
    net = nn.Dense(1, 1)
    instance = ClipReference(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params()), 1.0)
    result = nb07.clip_step.evaluate(instance)
    assert result.status == INCORRECT and "the class itself" in result.message, result


# ---- 07.5 mean absolute error via nn.LossBase ----------------------------------------------------
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
    assert nb07.mae_loss.evaluate(answer).status == CORRECT


def test_mae_accepts_the_reference_in_graph_mode(graph_mode):
    assert nb07.mae_loss.evaluate(MAEReference).status == CORRECT
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
    result = nb07.mae_loss.evaluate(answer)
    assert result.status == INCORRECT and says in result.message, result


# ---- predictions 07.1, 07.2 ---------------------------------------------------------------------------------
def test_clip_direction_prediction_matches_mindspore():
    """The right option's numbers are what clip_by_global_norm gives; the wrong ones are other clips."""
    grads = (ms.Tensor(np.array([[3.0]], np.float32)), ms.Tensor(np.array([0.4], np.float32)))
    out = [float(g.asnumpy().ravel()[0]) for g in ops.clip_by_global_norm(grads, 1.0)]
    assert np.allclose(out, [0.991, 0.132], atol=5e-4) and np.hypot(*out) == pytest.approx(1.0, rel=1e-6)
    per_tensor = [float(ops.clip_by_norm(g, 1.0).asnumpy().ravel()[0]) for g in grads]
    assert np.allclose(per_tensor, [1.0, 0.4])
    assert "(0.991, 0.132)" in nb07.clip_direction.options["b"][0]


@pytest.mark.parametrize("prediction", [nb07.clip_direction, nb07.attribute_in_graph])
def test_predictions_explain_every_option(prediction):
    for letter, (_text, why) in prediction.options.items():
        result = prediction.evaluate(letter)
        assert (result.status == CORRECT) == (letter == prediction.answer) and why in result.message
