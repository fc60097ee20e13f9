"""Notebook 12's checks: their oracles, the named mistakes and regressions (the contract test covers the rest)."""

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn, ops
from mindspore.amp import FixedLossScaleManager, build_train_network
from mindspore.train import Model
from reference_solutions import reference

from course_utils.checks import nb12
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT


class MinimalNet(nn.Cell):  # the notebook's amp_nets.MinimalNet
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(1, 1, weight_init="normal", bias_init="zero")

    def construct(self, x):
        return self.dense(x)


def _notebook():
    x, y = make_linear_data()
    return {"MinimalNet": MinimalNet, "loss_fn": nn.MSELoss(), "TINY": nb12.TINY, "X": ms.Tensor(x),
            "Y": ms.Tensor(y), "build_train_network": build_train_network, "Model": Model,
            "FixedLossScaleManager": FixedLossScaleManager, "__name__": "notebook_12"}  # ms.grad wants a module


def _rejects(exercise, answer, text):
    result = exercise.evaluate(answer)
    assert result.status == INCORRECT and text in result.message, result.message


@pytest.mark.parametrize("key", ["smallest_update", "largest_scale", "fixed_scale_fix"])  # 12.5: _step_factory
def test_the_reference_solution_passes(key):
    assert reference(getattr(nb12, key), **_notebook())[1].startswith("[ok]")


# ---- 12.1, 12.4 powers of two ---------------------------------------------------------------------
def test_tiny_loss_gradients_match_a_finite_difference():
    x, y = (a.astype(np.float64).ravel() for a in make_linear_data())

    def loss(w, b):
        return nb12.TINY * np.mean((w * x + b - y) ** 2)

    h = 1e-6
    numeric = [(loss(h, 0) - loss(-h, 0)) / (2 * h), (loss(0, h) - loss(0, -h)) / (2 * h)]
    np.testing.assert_allclose(nb12._tiny_loss_gradients(), numeric, rtol=1e-6)


def test_largest_scale_has_a_margin_and_is_not_the_course_datas():
    x2, y2 = nb12.scale_data()
    assert x2.shape == y2.shape == (100, 1) and x2.dtype == y2.dtype == np.float32
    grads = nb12._tiny_loss_gradients(x2, y2)
    with np.errstate(over="ignore"):
        k = max(k for k in range(80) if np.all(np.isfinite((2.0 ** k * grads).astype(np.float16))))
    assert k == 35  # 2**35 gives about 35,100, 2**36 about 70,100 (above 65504)
    assert nb12.largest_scale.evaluate(2 ** k)  # an int is fine
    course = nb12._tiny_loss_gradients()
    with np.errstate(over="ignore"):
        k_course = max(k for k in range(80) if np.all(np.isfinite((2.0 ** k * course).astype(np.float16))))
    assert k_course == 39 != k  # what the dynamic scaler run of section 5 shows (2**44 less 5 halvings)


def test_the_kept_update_oracle_is_what_mindspore_float16_does():
    # the oracle is numpy; MindSpore's float16 addition must agree on every weight of the check
    for w in nb12.UPDATE_WEIGHTS:
        assert float(np.float16(w)) == w, f"{w} is not a float16 number"
        u = nb12.kept_update_oracle(w)
        weight = ms.Tensor(w, ms.float16)
        assert (weight + ms.Tensor(u, ms.float16)).asnumpy() != weight.asnumpy()
        assert (weight + ms.Tensor(u / 2, ms.float16)).asnumpy() == weight.asnumpy()


def test_the_weights_hold_both_kinds_of_tie():
    # an even last bit (half a gap is lost) and an odd one (half a gap rounds up): one rule alone fails
    odd = [nb12._odd_last_bit(w) for w in nb12.UPDATE_WEIGHTS]
    assert any(odd) and not all(odd)


def _spacing(w):
    return float(np.spacing(np.float16(w)))


@pytest.mark.parametrize("answer, text", [
    (lambda w: _spacing(w), "half of it already changes"),  # forgets that a tie can round up
    (lambda w: _spacing(w) / 2, "halfway to the next float16 number"),  # a tie always rounding up
    (lambda w: _spacing(w) / 4, "that update is lost"),
    (lambda w: 2.0 * _spacing(w), "a smaller power of two"),
    (lambda w: 2.0 ** -10, "still 3.0"),  # the spacing at 1, for every weight
    (lambda w: 0.001, "not a power of two"),
    (lambda w: -_spacing(w), "positive"),
    (lambda w: "2**-10", "(such as 2.0 ** -3)"),
])
def test_smallest_update_names_the_mistake(answer, text):
    _rejects(nb12.smallest_update, answer, text)


@pytest.mark.parametrize("exercise, answer, text", [
    (nb12.largest_scale, 2.0 ** 36, "65504"),
    (nb12.largest_scale, 2.0 ** 60, "65504"),
    (nb12.largest_scale, 2.0 ** 30, "go larger"),
    (nb12.largest_scale, 2.0 ** 11, "plain MSE"),
    (nb12.largest_scale, 2.0 ** 39, "nb12.scale_data()"),
    (nb12.largest_scale, 3.0e11, "not a power of two"),
    (nb12.largest_scale, float("inf"), "finite"),
])
def test_the_value_checks_name_the_mistake(exercise, answer, text):
    _rejects(exercise, answer, text)


# ---- 12.5 a loss-scaled train step with gradient clipping ---------------------------------------------
def _step_factory(mistake=None):
    """A make_clipped_step written here (PyNative, no jit), with one typical mistake or none."""

    def make_clipped_step(net, loss_fn, optimizer, loss_scaler, max_norm):
        def forward(data, label):
            loss = loss_fn(net(data), label)
            return loss if mistake == "no scale" else loss_scaler.scale(loss)

        grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

        def train_step(data, label):
            loss, grads = grad_fn(data, label)
            finite = ms.amp.all_finite(grads)
            if finite or mistake == "no finite check":
                if mistake == "clip first":
                    grads = loss_scaler.unscale(ops.clip_by_global_norm(grads, max_norm))
                elif mistake == "no unscale":
                    grads = ops.clip_by_global_norm(grads, max_norm)
                else:
                    grads = loss_scaler.unscale(grads)
                    if mistake != "no clip":
                        grads = ops.clip_by_global_norm(grads, max_norm)
                if mistake != "no update":
                    optimizer(grads)
            if mistake != "no adjust":
                loss_scaler.adjust(finite)
            if mistake == "only loss":
                return loss
            return (loss if mistake == "scaled loss" else loss_scaler.unscale(loss)), finite

        return train_step

    return make_clipped_step


def test_scaled_step_oracle_is_clipped_gradient_descent():
    x, y, w0 = (a.astype(np.float64) for a in nb12._scaled_step_data())
    err = x @ w0.T - y
    gw, gb = 2 * (x.T @ err).ravel() / len(x), 2 * err.mean()
    norm = np.sqrt(np.sum(gw ** 2) + gb ** 2)
    assert norm > nb12.STEP_CLIP  # the first step is clipped
    losses, w, b = nb12.scaled_step_oracle(steps=1)
    assert np.isclose(losses[0], np.mean(err ** 2))
    np.testing.assert_allclose(w, w0.ravel() - 0.05 * gw * nb12.STEP_CLIP / norm, rtol=1e-12)
    np.testing.assert_allclose(nb12.scaled_step_oracle(steps=1, max_norm=None)[1], w0.ravel() - 0.05 * gw, rtol=1e-12)
    # the reference solution's @ms.jit step cannot compile from exec'd text (no source file): an eager copy
    assert nb12.scaled_step.evaluate(_step_factory()).status == CORRECT


@pytest.mark.parametrize("mistake, text", [
    ("no scale", "scale the loss with loss_scaler.scale"),
    ("no unscale", "still multiplied by the loss scale"),
    ("no finite check", "update (optimizer(grads)) only when the gradients are finite"),
    ("no adjust", "did not halve its scale after an overflow"),
    ("scaled loss", "the loss you return is still scaled"),
    ("only loss", "return the pair (loss, finite)"),
    ("no clip", "did not clip"),
    ("clip first", "still multiplied by the loss scale when it was computed"),
    ("no update", "never changed"),
])
def test_scaled_step_names_the_mistake(mistake, text):
    result = nb12.scaled_step.evaluate(_step_factory(mistake))
    assert result.status == INCORRECT and text in result.message, result.message
    # a correct step right after a mistake: MindSpore's jitted unscale once read a stale scale here (see below)
    assert nb12.scaled_step.evaluate(_step_factory()).status == CORRECT


def test_the_checkers_scaler_scales_as_mindspores_does_and_follows_adjust():
    """Part 1 hands the learner a DynamicLossScaler with eager scale/unscale: MindSpore's own, a jitted function
    of scale_value, read the scale from before adjust's assignment in about 1 run in 70 (CI, 2026-12-02)."""
    scaler = nb12._eager_dynamic_scaler(2.0 ** 10, 2, 50)
    theirs = ms.amp.DynamicLossScaler(2.0 ** 10, 2, 50)
    assert isinstance(scaler, ms.amp.DynamicLossScaler)
    grads = (ms.Tensor([1.5, -3.0], ms.float32), ms.Tensor([[2.0]], ms.float16))
    for ours, reference_ in [(scaler.scale(grads), theirs.scale(grads)), (scaler.unscale(grads), theirs.unscale(grads)),
                             ((scaler.unscale(grads[0]),), (theirs.unscale(grads[0]),))]:
        assert [(g.dtype, g.shape) for g in ours] == [(g.dtype, g.shape) for g in reference_]
        for a, b in zip(ours, reference_):
            np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    for k in range(1, 21):  # every halving is seen by the next unscale
        scaler.adjust(ms.Tensor(False))
        want = 2.0 ** max(10 - k, 0)
        assert float(scaler.unscale(ms.Tensor(4.0)).asnumpy()) == 4.0 / want


@pytest.mark.parametrize("step, text", [
    (lambda data, label: (ms.Tensor(0.0), ms.Tensor(False)), "did not halve its scale after an overflow"),  # a constant
    (lambda data, label: (data, label), "finite should be what ms.amp.all_finite"),  # echoes its inputs
    (lambda data, label: None, "no `return`"),
    ("train_step", "return the train_step function"),
])
def test_scaled_step_is_not_fooled_by_constants_or_inputs(step, text):
    _rejects(nb12.scaled_step, lambda net, loss_fn, optimizer, loss_scaler, max_norm: step, text)


# ---- 12.6 Model with FixedLossScaleManager and the optimizer's loss_scale -----------------------------
def _maker(manager_scale=128.0, optimizer_scale=128.0, level="O2", lr_factor=1.0, own_net=False):
    def make_model(net, lr):
        if own_net:
            net = MinimalNet()
        optimizer = nn.SGD(net.trainable_params(), learning_rate=lr * lr_factor, loss_scale=optimizer_scale)
        manager = None if manager_scale is None else FixedLossScaleManager(manager_scale, drop_overflow_update=False)
        return Model(net, nn.MSELoss(), optimizer, amp_level=level, loss_scale_manager=manager)

    return make_model


def test_model_oracle_is_gradient_descent():
    x, y = (a.astype(np.float64).ravel() for a in nb12.model_data())
    w, b = nb12.MODEL_START
    for _ in range(nb12.MODEL_EPOCHS):
        err = w * x + b - y
        w, b = w - nb12.MODEL_LR * 2 * np.mean(err * x), b - nb12.MODEL_LR * 2 * np.mean(err)
    np.testing.assert_allclose(nb12.model_oracle(), (w, b), rtol=1e-12)


def test_fixed_scale_fix_accepts_o3():
    assert nb12.fixed_scale_fix.evaluate(_maker(level="O3"))


@pytest.mark.parametrize("make, text", [
    (_maker(optimizer_scale=1.0), "does not divide them by exactly that again"),  # the trap: the weights turn NaN
    (_maker(optimizer_scale=64.0), "unscale the gradients exactly once"),  # gradients 2x too large
    (_maker(manager_scale=None), "scales the loss by 1"),  # loss_scale_manager=None: not what the exercise asks
    (_maker(1024.0, 1024.0), "not 128"),
    (_maker(level="O0"), "amp_level"),
    (_maker(lr_factor=2.0), "learning_rate=lr"),
    (_maker(own_net=True), "net handed to make_model"),
    (lambda net, lr: nn.Dense(1, 1), "return a mindspore.train.Model"),
])
def test_fixed_scale_fix_names_the_mistake(make, text):
    _rejects(nb12.fixed_scale_fix, make, text)
