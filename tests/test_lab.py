"""The learning-rate lab, headless: loss-surface maths, trainers against an independent numpy oracle and
against MindSpore's own optimizers, the figure, and the widget app's logic (no browser, no front end)."""

import io
import warnings

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from course_utils.data import make_linear_data  # noqa: E402
from course_utils.lab import (  # noqa: E402
    CSS_PREFIX,
    LearningRateLab,
    describe_run,
    learning_rate_lab,
)
from course_utils.lab_figure import LOSS_LIMITS, LabFigure, loss_segment, path_segment, side_by_side  # noqa: E402
from course_utils.lab_trainers import MindSporeTrainer, NumpyTrainer, Run  # noqa: E402
from course_utils.landscape import LossSurface, steps_to_converge  # noqa: E402

X, Y = make_linear_data()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---- an independent oracle: float64 gradient descent written from the textbook formulas --------------
def oracle(optimizer, lr, steps, x=X, y=Y, start=(0.0, 0.0)):
    """Losses and (w, b) path of nn.SGD / nn.Momentum(0.9) / nn.Adam() on mean((w x + b - y)^2)."""
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    w, b = start
    mw = mb = vw = vb = 0.0
    losses, path = [], [(w, b)]
    with np.errstate(all="ignore"):
        for t in range(1, steps + 1):
            err = w * x + b - y
            losses.append(np.mean(err ** 2))
            gw, gb = 2 * np.mean(err * x), 2 * np.mean(err)
            if optimizer == "SGD":
                w, b = w - lr * gw, b - lr * gb
            elif optimizer == "Momentum":
                mw, mb = 0.9 * mw + gw, 0.9 * mb + gb
                w, b = w - lr * mw, b - lr * mb
            else:
                mw, mb = 0.9 * mw + 0.1 * gw, 0.9 * mb + 0.1 * gb
                vw, vb = 0.999 * vw + 0.001 * gw ** 2, 0.999 * vb + 0.001 * gb ** 2
                step = lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
                w, b = w - step * mw / (np.sqrt(vw) + 1e-8), b - step * mb / (np.sqrt(vb) + 1e-8)
            path.append((w, b))
    return np.array(losses), np.array(path)


@pytest.fixture(scope="module")
def ms_trainer():
    trainer = MindSporeTrainer(X, Y)
    for name in ("SGD", "Momentum", "Adam"):
        trainer.compile(name)
    return trainer


@pytest.fixture(scope="module")
def surface():
    return LossSurface(X, Y)


# ---- the loss surface ------------------------------------------------------------------------------------
def test_surface_matches_direct_loss_and_finite_differences(surface):
    rng = np.random.RandomState(1)
    x, y = X[:, 0].astype(np.float64), Y[:, 0].astype(np.float64)
    for w, b in rng.uniform(-3, 3, size=(5, 2)):
        assert surface.loss(w, b) == pytest.approx(np.mean((w * x + b - y) ** 2), rel=1e-10)
    h, w, b = 1e-3, 0.3, -0.2
    f = surface.loss
    fd = np.array([[(f(w + h, b) - 2 * f(w, b) + f(w - h, b)) / h ** 2,
                    (f(w + h, b + h) - f(w + h, b - h) - f(w - h, b + h) + f(w - h, b - h)) / (4 * h * h)],
                   [0.0, (f(w, b + h) - 2 * f(w, b) + f(w, b - h)) / h ** 2]])
    fd[1, 0] = fd[0, 1]
    np.testing.assert_allclose(surface.hessian, fd, rtol=1e-5)
    np.testing.assert_allclose(surface.optimum, np.polyfit(x, y, 1), rtol=1e-8)


def test_stability_bound_for_the_default_data(surface):
    # shared FACTS: eigenvalues 0.134 and 2.479, bound 0.807, best lr 0.765, Momentum(0.9) bound 1.53
    assert surface.lambda_min == pytest.approx(0.134, abs=1e-3)
    assert surface.lambda_max == pytest.approx(2.479, abs=1e-3)
    assert surface.stability_bound() == pytest.approx(0.807, abs=1e-3)
    assert surface.best_sgd_lr() == pytest.approx(0.765, abs=1e-3)
    assert surface.stability_bound(momentum=0.9) == pytest.approx(1.533, abs=1e-3)
    with pytest.raises(ValueError, match="momentum"):
        surface.stability_bound(momentum=1.0)
    assert "0.807" in repr(surface)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bound_separates_converging_from_diverging_runs(seed):
    x, y = make_linear_data(seed=seed)
    bound = LossSurface(x, y).stability_bound()
    below, _ = oracle("SGD", 0.97 * bound, 300, x, y)
    above, _ = oracle("SGD", 1.03 * bound, 300, x, y)
    assert below[-1] < 1e-3 * below[0] and above[-1] > 10 * above[0]


def test_steps_to_converge():
    path = np.array([[0.0, 0.0], [1.9, 0.0], [2.0, 0.001], [2.05, 0.0], [2.001, 0.0], [2.0, 0.0]])
    assert steps_to_converge(path, (2.0, 0.0), tol=0.01) == 4
    assert steps_to_converge(path[:4], (2.0, 0.0), tol=0.01) is None
    assert steps_to_converge([[np.nan, np.nan]], (2.0, 0.0)) is None
    with pytest.raises(ValueError, match="shape"):
        steps_to_converge([1.0, 2.0], (2.0, 0.0))


def test_surface_rejects_bad_input(surface):
    with pytest.raises(ValueError, match="float32"):
        LossSurface(X.astype(np.float64), Y)
    with pytest.raises(ValueError, match="lo < hi"):
        surface.grid((1, 0), (0, 1))
    with pytest.raises(ValueError, match="same shape"):
        surface.loss(np.zeros(2), np.zeros(3))


# ---- trainers against the oracle and against MindSpore's optimizers ------------------------------------
@pytest.mark.parametrize("optimizer, lr", [("SGD", 0.01), ("SGD", 0.5), ("SGD", 0.79), ("Momentum", 0.05),
                                           ("Momentum", 1.0), ("Adam", 0.01), ("Adam", 0.5), ("Adam", 2.0)])
def test_trainers_match_the_oracle(ms_trainer, optimizer, lr):
    want_losses, want_path = oracle(optimizer, lr, 130, start=(0.3, -0.2))
    for trainer in (ms_trainer, NumpyTrainer(X, Y)):
        run = trainer.train(optimizer, lr, 130, start=(0.3, -0.2))  # 130: not a multiple of the chunk
        assert run.losses.shape == (130,) and run.path.shape == (131, 2)
        np.testing.assert_allclose(run.path, want_path, rtol=2e-4, atol=2e-5, err_msg=trainer.name)
        np.testing.assert_allclose(run.losses, want_losses, rtol=2e-3, atol=1e-6, err_msg=trainer.name)


@pytest.mark.parametrize("optimizer, lr", [("SGD", 0.9), ("SGD", 3.0), ("Momentum", 2.0)])
def test_diverging_runs_match_the_oracle_and_overflow_quietly(ms_trainer, optimizer, lr):
    want_losses, _ = oracle(optimizer, lr, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning (overflow, invalid value) may escape
        run = ms_trainer.train(optimizer, lr, 200)
        run_np = NumpyTrainer(X, Y).train(optimizer, lr, 200)
    for got in (run, run_np):
        np.testing.assert_allclose(got.losses[:20], want_losses[:20], rtol=1e-3)
        assert not np.isfinite(got.losses[-1]) or got.losses[-1] > 1e6 * got.losses[0]


def _mindspore_optimizer_run(optimizer, lr, steps):
    """The lesson's way: MinimalNet-like Dense(1, 1) from (0, 0), nn.<optimizer>, TrainOneStepCell."""
    import mindspore as ms
    from mindspore import nn

    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    params = net.trainable_params()
    opt = {"SGD": lambda: nn.SGD(params, learning_rate=lr),
           "Momentum": lambda: nn.Momentum(params, learning_rate=lr, momentum=0.9),
           "Adam": lambda: nn.Adam(params, learning_rate=lr)}[optimizer]()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    xt, yt = ms.Tensor(X), ms.Tensor(Y)
    losses = [float(train(xt, yt).asnumpy()) for _ in range(steps)]
    return np.array(losses), (float(net.weight.asnumpy()[0, 0]), float(net.bias.asnumpy()[0]))


@pytest.mark.parametrize("optimizer, lr", [("SGD", 0.5), ("Momentum", 0.1), ("Adam", 0.3)])
def test_the_lab_trains_what_mindspore_optimizers_do(ms_trainer, optimizer, lr):
    losses, final = _mindspore_optimizer_run(optimizer, lr, 25)
    run = ms_trainer.train(optimizer, lr, 25)
    np.testing.assert_allclose(run.losses, losses, rtol=1e-4)
    np.testing.assert_allclose(run.final, final, rtol=1e-4, atol=1e-6)


def _compiled_graphs():
    from mindspore.graph import api  # MindSpore's cache of compiled jit graphs (one entry per compile)

    return len(api.ms_compile_cache)


def test_a_new_learning_rate_does_not_recompile(ms_trainer):
    import mindspore as ms

    @ms.jit
    def scale(t, factor):
        return t * factor

    before = _compiled_graphs()
    for factor in (0.5, 0.25):  # the detector works: a Python float recompiles for every new value
        scale(ms.Tensor(np.ones(2, np.float32)), factor)
    assert _compiled_graphs() == before + 2
    before = _compiled_graphs()
    for optimizer in ("SGD", "Momentum", "Adam"):
        for lr in (0.123, 0.456, 7.89):
            ms_trainer.train(optimizer, lr, 130, start=(0.5, -0.5))
    assert _compiled_graphs() == before, "a new learning rate, start or step count must reuse the compiled graph"


def test_trainers_reject_bad_settings(ms_trainer):
    for bad, error in ((dict(optimizer="RMSProp"), ValueError), (dict(lr=0.0), ValueError),
                       (dict(lr=float("nan")), ValueError), (dict(lr="0.1"), TypeError),
                       (dict(steps=0), ValueError), (dict(steps=10**6), ValueError), (dict(steps=2.5), TypeError),
                       (dict(lr=10**400), ValueError), (dict(optimizer=None), ValueError)):
        kwargs = {"optimizer": "SGD", "lr": 0.1, "steps": 10, **bad}
        for trainer in (ms_trainer, NumpyTrainer(X, Y)):
            with pytest.raises(error):
                trainer.train(**kwargs)
    with pytest.raises(ValueError, match="chunk"):
        MindSporeTrainer(X, Y, chunk=0)
    with pytest.raises(ValueError, match="path must have shape"):
        Run("SGD", 0.1, [1.0, 2.0], [[0, 0], [1, 1]])


# ---- the figure ------------------------------------------------------------------------------------------
def test_segments_cut_divergence_at_the_panel_edge():
    steps, shown, off = loss_segment([1.0, 10.0, 1e6, np.inf, np.nan])
    assert off == 2 and list(steps) == [0, 1, 2] and shown[-1] == LOSS_LIMITS[1]
    steps, shown, off = loss_segment([1.0, 0.1, 0.01])
    assert off is None and len(shown) == 3
    path = np.array([[0, 0], [1, 1], [5, 5], [1e30, 1e30], [np.inf, np.nan]])
    points, left = path_segment(path)
    assert left == 2 and len(points) == 3 and np.all(np.isfinite(points))
    points, left = path_segment(np.array([[0, 0], [1, 1], [1e30, 2e30]]))
    assert left == 2 and np.abs(points).max() <= 1e4 + 1 and points[-1][1] == pytest.approx(2 * points[-1][0], rel=1e-3)
    points, left = path_segment(np.array([[0, 0], [9, 9], [2, 0]]))  # leaves the view and comes back
    assert left is None and len(points) == 3


def _png_size(data):
    data = bytes(data)
    assert data.startswith(PNG_MAGIC)
    return Image.open(io.BytesIO(data)).size


def test_lab_figure_renders_png_and_changes(surface):
    trainer = NumpyTrainer(X, Y)
    figure = LabFigure(surface)
    runs = [trainer.train("SGD", lr, 100) for lr in (0.1, 0.5, 1.5)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        images = [figure.render(runs[:i + 1]) for i in range(3)]
        after_clear = figure.render(runs[2:])
    assert len({*images, after_clear}) == 4
    assert {_png_size(png) for png in images} == {figure.canvas.get_width_height()}
    figure.set_steps(200)
    assert figure.render(runs) != images[-1]  # a new x range redraws the background
    with pytest.raises(ValueError, match="one color per run"):
        figure.render(runs, colors=["red"])


def test_side_by_side_has_one_path_panel_per_run(surface):
    import matplotlib.pyplot as plt

    trainer = NumpyTrainer(X, Y)
    runs = [trainer.train("SGD", lr, 100) for lr in (0.05, 0.75, 0.9)]
    fig = side_by_side(runs, surface)
    assert len(fig.axes) == 4 and "leaves the view" in fig.axes[3].get_title()
    with pytest.raises(ValueError):
        side_by_side([], surface)
    plt.close("all")


# ---- the verdicts ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("optimizer, lr, steps, kind", [
    ("SGD", 0.5, 100, "converged"), ("SGD", 0.01, 100, "learning"), ("SGD", 0.85, 100, "diverged"),
    ("SGD", 3.0, 100, "diverged"), ("SGD", 0.81, 100, "diverged"), ("Adam", 10.0, 10, "stuck"),
])
def test_describe_run(surface, optimizer, lr, steps, kind):
    losses, path = oracle(optimizer, lr, steps)
    with np.errstate(over="ignore"):  # float32, as the trainers return: lr=3 overflows to inf
        losses, path = losses.astype(np.float32), path.astype(np.float32)
    verdict = describe_run(Run(optimizer, lr, losses, path), surface)
    assert verdict.kind == kind, verdict
    if kind == "diverged":
        assert verdict.text.startswith("DIVERGED at step") and verdict.growth > 1
    if lr == 3.0:
        assert "overflows to inf" in verdict.text
    if kind == "converged":
        assert verdict.converged_at == steps_to_converge(path, surface.optimum)


def test_zigzag_is_reported_above_one_over_lambda_max(surface):
    smooth = describe_run(Run("SGD", 0.3, *oracle("SGD", 0.3, 100)), surface)
    zigzag = describe_run(Run("SGD", 0.7, *oracle("SGD", 0.7, 100)), surface)
    assert not smooth.zigzag and zigzag.zigzag and "zig-zags" in zigzag.text


# ---- the app, headless --------------------------------------------------------------------------------------
@pytest.fixture
def lab(ms_trainer):
    return learning_rate_lab(ms_trainer, show=False)


def test_first_try_is_drawn_at_once(lab):
    assert len(lab.tries) == 1 and bytes(lab.image.value).startswith(PNG_MAGIC)
    assert lab.status_text.startswith("lr=0.1 SGD, 100 steps: still learning")
    assert lab.lr_slider.description == "learning rate" and lab.steps.description == "steps"


def test_moving_the_slider_retrains_and_redraws(lab):
    before = lab.image.value
    lab.lr_slider.value = 0.5
    assert len(lab.tries) == 2 and lab.tries[-1].lr == 0.5
    assert lab.image.value != before
    assert lab.status_text.startswith("lr=0.5 SGD, 100 steps: converged")
    want = oracle("SGD", 0.5, 100)[1][-1]
    np.testing.assert_allclose(lab.tries[-1].final, want, rtol=1e-4)
    assert set(lab.timings) == {"train", "draw", "total"}


def test_optimizer_and_steps_controls_retrain(lab):
    lab.optimizer.value = "Adam"
    assert lab.tries[-1].optimizer == "Adam" and "Adam" in lab.status_text
    lab.steps.value = 200
    assert lab.tries[-1].steps == 200 and "200 steps" in lab.status_text
    assert len(lab.tries) == 3


def test_divergence_is_shown_not_raised(lab):
    before = lab.image.value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lab.lr_slider.value = 1.2
    assert "DIVERGED at step" in lab.status_text and "overflows to inf" in lab.status_text
    assert lab.image.value != before and _png_size(lab.image.value)[0] > 300
    assert "crimson" in lab.status.value


def test_earlier_tries_stay_until_cleared(lab):
    for lr in (0.2, 0.3, 0.4):
        lab.lr_slider.value = lr
    assert [round(run.lr, 3) for run in lab.tries] == [0.1, 0.2, 0.3, 0.4]
    assert lab.tries_list.value.count("&#9679;") == 4
    lab.clear_button.click()
    assert len(lab.tries) == 1 and lab.tries[0].lr == 0.4 and "cleared" in lab.message.value
    assert lab.tries_list.value.count("&#9679;") == 1


def test_a_long_session_forgets_the_older_half_at_once():
    lab = LearningRateLab(NumpyTrainer(X, Y), X, Y, max_tries=6)
    lab.retrain()
    for lr in (0.2, 0.3, 0.4, 0.5, 0.6):
        lab.lr_slider.value = lr
    assert len(lab.tries) == 6 and lab.message.value == ""
    lab.lr_slider.value = 0.7
    assert [round(run.lr, 3) for run in lab.tries] == [0.4, 0.5, 0.6, 0.7]
    assert "forgot the 3 oldest" in lab.message.value
    assert len(lab.colors) == len(lab.verdicts) == 4


def test_every_try_is_drawn_over_the_earlier_ones(surface):
    """The incremental picture (cached earlier tries + the new one) equals drawing all tries afresh."""
    trainer = NumpyTrainer(X, Y)
    runs = [trainer.train("SGD", lr, 100) for lr in (0.1, 0.5, 0.9)]
    incremental = LabFigure(surface)
    for i in range(1, 4):
        png = incremental.render(runs[:i])
    fresh = LabFigure(surface).render(runs)
    a = np.asarray(Image.open(io.BytesIO(png)), dtype=float)
    b = np.asarray(Image.open(io.BytesIO(fresh)), dtype=float)
    assert np.abs(a - b).mean() < 1.0  # the same picture, up to anti-aliasing of re-drawn lines


@pytest.mark.parametrize("kwargs, text", [
    (dict(lr=0), "must be &gt; 0"), (dict(lr=-1.0), "must be &gt; 0"), (dict(lr=float("nan")), "NaN"),
    (dict(lr="fast"), "not a number"), (dict(lr=[0.1]), "expected a number"),
    (dict(optimizer="RMSProp"), "one of SGD, Momentum, Adam"), (dict(steps=float("nan")), "NaN"),
    (dict(steps="many"), "not a number"),
])
def test_refused_values_leave_the_lab_as_it_was(lab, kwargs, text):
    tries = len(lab.tries)
    message = lab.set(**kwargs)
    assert text in message and len(lab.tries) == tries
    assert lab.lr_slider.value == 0.1 and lab.steps.value == 100 and lab.optimizer.value == "SGD"


@pytest.mark.parametrize("kwargs, attribute, value, text", [
    (dict(lr=1e9), "lr_slider", 10.0, "clamped to 10"), (dict(lr=float("inf")), "lr_slider", 10.0, "clamped"),
    (dict(lr=1e-9), "lr_slider", 1e-3, "clamped to 0.001"), (dict(steps=10**9), "steps", 500, "using 500"),
    (dict(steps=-5), "steps", 10, "using 10"), (dict(steps=float("inf")), "steps", 500, "using 500"),
    (dict(steps=123), "steps", 120, "using 120"), (dict(optimizer=" adam "), "optimizer", "Adam", ""),
    (dict(lr="0.25"), "lr_slider", 0.25, ""),
])
def test_extreme_values_are_clamped_with_a_message(lab, kwargs, attribute, value, text):
    message = lab.set(**kwargs)
    assert getattr(lab, attribute).value == pytest.approx(value) and text in message
    assert len(lab.tries) == 2


def test_nan_from_the_slider_and_text_box_is_refused(lab):
    lab.lr_slider.value = float("nan")
    assert lab.lr_slider.value == 0.1 and "NaN" in lab.message.value and len(lab.tries) == 1
    lab.lr_text.value = "abc"
    assert "not a number" in lab.message.value and len(lab.tries) == 1
    lab.lr_text.value = "0.7"
    assert lab.tries[-1].lr == 0.7 and lab.lr_slider.value == 0.7


class _SlowTrainer(NumpyTrainer):
    """Records what the status line said while it compiled."""

    def __init__(self, x, y):
        super().__init__(x, y)
        self.compiled, self.seen = set(), []

    def is_compiled(self, optimizer):
        return optimizer in self.compiled

    def compile(self, optimizer):
        self.seen.append(self.lab.status.value)
        self.compiled.add(optimizer)


def test_compiling_is_announced_once_per_optimizer():
    trainer = _SlowTrainer(X, Y)
    lab = LearningRateLab(trainer, X, Y)
    trainer.lab = lab
    lab.retrain()
    lab.lr_slider.value = 0.2
    lab.optimizer.value = "Momentum"
    assert len(trainer.seen) == 2 and all("compiling" in seen for seen in trainer.seen)
    assert "Momentum" in trainer.seen[1]


def test_a_failing_trainer_gives_a_message(lab):
    def broken(*args, **kwargs):
        raise RuntimeError("device lost")

    lab.trainer = type("Broken", (), {"launch": staticmethod(broken), "collect": broken, "compile": broken,
                                      "is_compiled": staticmethod(lambda name: True)})()
    lab.lr_slider.value = 0.3
    assert "training failed: RuntimeError: device lost" in lab.message.value and len(lab.tries) == 1


def test_app_has_dom_hooks_and_a_short_text_repr(lab):
    classes = {c for w in (lab.widget, lab.lr_slider, lab.status, lab.image, lab.clear_button)
               for c in w._dom_classes}
    assert {CSS_PREFIX, f"{CSS_PREFIX}-slider", f"{CSS_PREFIX}-status", f"{CSS_PREFIX}-figure",
            f"{CSS_PREFIX}-clear"} <= classes
    bundle = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "live only" in bundle["text/plain"]


def test_lab_rejects_bad_construction():
    with pytest.raises(TypeError, match="trainer"):
        LearningRateLab(object(), X, Y)
    with pytest.raises(ValueError):
        LearningRateLab(NumpyTrainer(X, Y), X, Y, lr=100.0)
    with pytest.raises(ValueError):
        LearningRateLab(NumpyTrainer(X, Y), X, Y, steps=15)
    with pytest.raises(ValueError, match="optimizer"):
        LearningRateLab(NumpyTrainer(X, Y), X, Y, optimizer="sgd")
