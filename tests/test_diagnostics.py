"""The training-health report, on runs with a known problem: numpy gradient descent (an oracle written
here, independent of the report) and real MindSpore runs, healthy and broken."""

import numpy as np
import pytest

from course_utils import diagnostics as dg
from course_utils import oracles
from course_utils.data import make_linear_data

X, Y = make_linear_data()


def gd(lr, steps=100, x=X, y=Y, w=0.0, b=0.0, freeze_at=None):
    """Plain float32 gradient descent on the mean squared error of y = w*x + b."""
    f32 = np.float32
    x, y, lr, w, b = x.ravel(), y.ravel(), f32(lr), f32(w), f32(b)
    losses, norms, params = [], [], [(w, b)]
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(steps):
            err = w * x + b - y
            gw, gb = 2 * np.mean(err * x), 2 * np.mean(err)
            losses.append(np.mean(err * err))
            norms.append(np.sqrt(gw * gw + gb * gb))
            if freeze_at is None or step < freeze_at:
                w, b = w - lr * gw, b - lr * gb
            params.append((w, b))
    return np.array(losses), np.array(norms), np.array(params)


def limit(x=X):
    return 2 / oracles.lambda_max(x)


# ---- numpy runs with a known problem -------------------------------------------------------------
def test_healthy_run():
    report = dg.health_report(*gd(0.5), baseline_loss=float(np.var(Y)))
    assert report.verdict == dg.HEALTHY and report.healthy and report.findings == []
    assert str(report).startswith("Training health: HEALTHY (100 steps)")


def test_converged_float32_run_is_not_called_frozen():
    # near the minimum, float32 updates can round to exactly zero while the gradient is tiny: convergence
    losses, norms, params = gd(0.5)
    losses = np.concatenate([losses, np.full(20, losses[-1])])
    norms = np.concatenate([norms, np.full(20, 1e-7)])
    params = np.concatenate([params, np.repeat(params[-1:], 20, axis=0)])
    assert dg.health_report(losses, norms, params).verdict == dg.HEALTHY


@pytest.mark.parametrize("factor", [1.1, 2.0, 3.0])
def test_above_the_stability_limit(factor):
    losses, norms, params = gd(factor * limit())
    report = dg.health_report(losses, norms, params)
    if np.isfinite(losses).all():
        assert report.verdict == dg.DIVERGING
        assert dg.EXPLODING in [v for v, _ in report.findings]
    else:
        step = int(np.argmax(~np.isfinite(losses)))
        assert report.verdict == dg.DIVERGED and f"at step {step}" in report.findings[0][1]


def test_below_the_stability_limit_is_healthy():
    assert dg.health_report(*gd(0.95 * limit())).healthy


def test_nan_in_params_only_is_found():
    losses, norms, params = gd(0.5, steps=10)
    params[4, 1] = np.nan
    report = dg.health_report(losses, norms, params)
    assert report.verdict == dg.DIVERGED and "parameter" in report.findings[0][1] and "step 3" in report.findings[0][1]


def test_frozen_parameters():
    losses, norms, params = gd(0.5, freeze_at=30)
    report = dg.health_report(losses, norms, params)
    assert report.verdict == dg.FROZEN and "since step 30" in report.findings[0][1]
    # recorded after each step only (n rows): the same step is named
    assert "since step 30" in dg.health_report(losses, norms, params[1:]).findings[0][1]
    # without gradient norms the report cannot tell frozen from converged, so it does not guess
    assert dg.FROZEN not in [v for v, _ in dg.health_report(losses, None, params).findings]


def test_learning_rate_too_small():
    report = dg.health_report(*gd(0.001))
    assert report.verdict == dg.NO_PROGRESS and "fell by only" in report.findings[0][1]


def test_no_better_than_the_mean():
    losses = _flat_target_losses()
    report = dg.health_report(losses, baseline_loss=float(np.var(Y)))
    assert report.verdict == dg.NO_PROGRESS and "100% of the baseline" in report.findings[0][1]
    assert dg.health_report(losses).healthy, "without the baseline the loss curve looks fine: that is the trap"


def test_one_parameter_and_lists_are_accepted():
    report = dg.health_report([1.0, 0.5, 0.1], [2.0, 1.0, 0.5], [0.0, 0.5, 0.7, 0.8])
    assert report.healthy and "HEALTHY" in str(report) and repr(report) == "HealthReport(verdict='healthy', findings=0)"


# ---- the advice: each failure the report names points the learner the right way -----------------------
def _advice(report):
    return " ".join(text for _, text in report.findings)


def test_advice_for_a_diverged_run():
    text = _advice(dg.health_report(*gd(2.5 * limit())))
    assert "Lower the learning rate" in text and "too small" not in text


def test_advice_for_a_diverging_run():
    report = dg.health_report(*gd(1.1 * limit()))
    assert report.verdict == dg.DIVERGING and dg.EXPLODING in [v for v, _ in report.findings]
    text = _advice(report)
    assert "too large" in text and "Clip it" in text and "too small" not in text


def test_advice_for_a_frozen_run():
    text = _advice(dg.health_report(*gd(0.5, freeze_at=30)))
    assert "ops.assign" in text and "set_data" in text


def test_advice_for_a_too_small_learning_rate():
    text = _advice(dg.health_report(*gd(0.001), baseline_loss=float(np.var(Y))))
    assert "too small" in text and "too large" not in text


def test_advice_for_a_clipped_run_above_the_limit_is_lower_the_learning_rate():
    # lr above 2/lambda_max with clipping stays finite and bounces across the valley: the lr is too LARGE
    from course_utils.training import train

    history = train(_net(0.0, 0.0), X, Y, lr=1.05 * limit(), steps=60, clip=1.0)
    report = dg.health_report(history["loss"], history["grad_norm"], history["params"], baseline_loss=float(np.var(Y)))
    assert report.verdict == dg.NO_PROGRESS, str(report)
    text = _advice(report)
    assert "too large" in text and "overshoots" in text and "too small" not in text, text
    # without the parameters the report reads the bounce from the loss alone
    assert "too large" in _advice(dg.health_report(history["loss"], baseline_loss=float(np.var(Y))))


def test_advice_for_badly_scaled_inputs():
    x_mm = 1000 * X
    losses, norms, params = gd(0.9 * limit(x_mm), x=x_mm, y=Y + 1)
    text = _advice(dg.health_report(losses, norms, params, baseline_loss=float(np.var(Y + 1))))
    assert "badly scaled" in text and "standardise" in text and "too large" not in text


def test_advice_for_flat_targets_names_the_shape():
    text = _advice(dg.health_report(_flat_target_losses(), baseline_loss=float(np.var(Y))))
    assert "differ in shape" in text and "too large" not in text


def _net(w, b):
    import mindspore as ms
    from mindspore import nn

    net = nn.Dense(1, 1)
    net.weight.set_data(ms.Tensor([[w]], ms.float32))
    net.bias.set_data(ms.Tensor([b], ms.float32))
    return net


def _flat_target_losses():
    """Targets of shape (n,) against predictions (n, 1): the model learns the mean of y (w -> 0)."""
    x, y = X.ravel(), Y.ravel()
    w, b, losses = 0.0, 0.0, []
    for _ in range(100):
        err = (w * x + b)[:, None] - y[None, :]
        losses.append(np.mean(err ** 2))
        w, b = w - 0.5 * 2 * np.mean(err * x[:, None]), b - 0.5 * 2 * np.mean(err)
    return losses


# ---- real MindSpore runs ---------------------------------------------------------------------------
def _mindspore_run(lr, steps, reset_with=None):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    ms.set_seed(0)
    net = nn.Dense(1, 1, weight_init="normal", bias_init="zero")
    loss_fn = nn.MSELoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=lr)

    def forward(xb, yb):
        return loss_fn(net(xb), yb)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    start = [p.asnumpy().copy() for p in net.trainable_params()]
    if reset_with is not None:  # take steps, then go back to the start values
        for _ in range(3):
            optimizer(grad_fn(Tensor(X), Tensor(Y))[1])
        for p, value in zip(net.trainable_params(), start):
            p.set_data(Tensor(value)) if reset_with == "set_data" else ops.assign(p, Tensor(value))
    record = {"loss": [], "grad_norm": [], "params": []}
    flat = lambda: np.concatenate([p.asnumpy().ravel() for p in net.trainable_params()])  # noqa: E731
    record["params"].append(flat())
    for _ in range(steps):
        loss, grads = grad_fn(Tensor(X), Tensor(Y))
        record["grad_norm"].append(np.sqrt(sum(float((g.asnumpy().astype(np.float64) ** 2).sum()) for g in grads)))
        optimizer(grads)
        record["loss"].append(float(loss.asnumpy()))
        record["params"].append(flat())
    return dg.health_report(record["loss"], record["grad_norm"], record["params"], baseline_loss=float(np.var(Y)))


@pytest.mark.parametrize("lr, steps, verdict",
                         [(0.5, 40, dg.HEALTHY), (2.0, 40, dg.DIVERGED), (0.001, 30, dg.NO_PROGRESS)])
def test_mindspore_runs(lr, steps, verdict):
    assert _mindspore_run(lr, steps).verdict == verdict


@pytest.mark.parametrize("reset_with, verdict", [("set_data", dg.FROZEN), ("assign", dg.HEALTHY)])
def test_mindspore_set_data_trap(reset_with, verdict):
    assert _mindspore_run(0.5, 20, reset_with=reset_with).verdict == verdict


# ---- arguments are checked -------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, text", [
    (dict(losses=None), TypeError, "sequence of numbers"),
    (dict(losses="1, 2"), TypeError, "sequence of numbers"),
    (dict(losses={"a": 1}), TypeError, "sequence of numbers"),
    (dict(losses=["a", "b"]), TypeError, "sequence of numbers"),
    (dict(losses=[1.0]), ValueError, "at least 2 steps"),
    (dict(losses=[[1.0, 2.0]]), ValueError, "1-D"),
    (dict(losses=[1.0, 0.5], grad_norms=[1.0]), ValueError, "one value per step"),
    (dict(losses=[1.0, 0.5], grad_norms=[1.0, -1.0]), ValueError, "negative"),
    (dict(losses=[1.0, 0.5], params=np.zeros((5, 2))), ValueError, "rows"),
    (dict(losses=[1.0, 0.5], params=np.zeros((3, 2, 1))), ValueError, "rows"),
    (dict(losses=[1.0, 0.5], min_improvement=1.5), ValueError, "min_improvement"),
    (dict(losses=[1.0, 0.5], min_improvement="a"), TypeError, "min_improvement"),
    (dict(losses=[1.0, 0.5], explode_factor=0.5), ValueError, "explode_factor"),
    (dict(losses=[1.0, 0.5], explode_factor=True), TypeError, "explode_factor"),
    (dict(losses=[1.0, 0.5], frozen_steps=0), ValueError, "frozen_steps"),
    (dict(losses=[1.0, 0.5], frozen_steps=2.5), TypeError, "frozen_steps"),
    (dict(losses=[1.0, 0.5], baseline_loss=-1.0), ValueError, "baseline_loss"),
    (dict(losses=[1.0, 0.5], baseline_loss=float("nan")), ValueError, "baseline_loss"),
])
def test_bad_arguments_are_explained(kwargs, error, text):
    with pytest.raises(error, match=text):
        dg.health_report(**kwargs)
