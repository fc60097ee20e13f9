"""The learning-rate lab, headless: loss-surface maths, trainers against an independent numpy oracle and
against MindSpore's own optimizers, the figure, and the widget app's logic (no browser, no front end)."""

import base64
import io
import warnings

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from course_utils.data import make_linear_data  # noqa: E402
from course_utils.diagnostics import health_report  # noqa: E402
from course_utils.lab import (  # noqa: E402
    KINDS,
    LR_GRID,
    LearningRateLab,
    MindSporeTrainer,
    NumpyTrainer,
    Run,
    describe_run,
    learning_rate_lab,
)
from course_utils.lab.app import CHALLENGE_STEPS, COALESCE_SECONDS, PRESETS  # noqa: E402
from course_utils.lab.figure import LOSS_LIMITS, LabFigure, color_for, loss_segment, path_segment, side_by_side  # noqa: E402
from course_utils.lab.payload import decode as payload_decode  # noqa: E402
from course_utils.lab.verdicts import sweep_kinds  # noqa: E402
from course_utils.landscape import LossSurface, steps_to_converge  # noqa: E402
from course_utils.oracles import CONVERGED  # noqa: E402
from course_utils.oracles import steps_to_converge as oracle_steps_to_converge  # noqa: E402

X, Y = make_linear_data()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---- an independent oracle: float64 gradient descent written from the textbook formulas --------------
def oracle(optimizer, lr, steps, x=X, y=Y, start=(0.0, 0.0), beta=0.9):
    """Losses and (w, b) path of nn.SGD / nn.Momentum(beta) / nn.Adam() on mean((w x + b - y)^2)."""
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
                mw, mb = beta * mw + gw, beta * mb + gb
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
    return MindSporeTrainer(X, Y)  # each optimizer compiles on its first use


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
    assert CONVERGED == 0.01  # the course's one criterion (course_utils.oracles)
    path = np.array([[0.0, 0.0], [1.9, 0.0], [2.0, 0.001], [2.05, 0.0], [2.001, 0.0], [2.0, 0.0]])
    assert steps_to_converge(path, (2.0, 0.0), tol=0.01) == 4
    assert steps_to_converge(path[:4], (2.0, 0.0), tol=0.01) is None
    assert steps_to_converge([[np.nan, np.nan]], (2.0, 0.0)) is None
    assert oracle_steps_to_converge(path, (2.0, 0.0)) == 4 and oracle_steps_to_converge(path[:4], (2.0, 0.0)) is None
    with pytest.raises(ValueError, match="shape"):
        steps_to_converge([1.0, 2.0], (2.0, 0.0))


def test_surface_rejects_bad_input(surface):
    with pytest.raises(ValueError, match="float32"):
        LossSurface(X.astype(np.float64), Y)
    with pytest.raises(ValueError, match="lo < hi"):
        surface.grid((1, 0), (0, 1))
    with pytest.raises(ValueError, match="same shape"):
        surface.loss(np.zeros(2), np.zeros(3))


# ---- trainers: one batched run per setting, against the oracle and MindSpore's optimizers -----------------
SWEEP_LRS = [0.01, 0.3, 0.79, 0.85, 1.6, 3.0]  # converging, zig-zagging and diverging for SGD


@pytest.mark.parametrize("optimizer, beta", [("SGD", 0.9), ("Momentum", 0.9), ("Momentum", 0.4), ("Adam", 0.9)])
def test_batched_sweeps_match_the_oracle_column_by_column(ms_trainer, optimizer, beta):
    for trainer in (ms_trainer, NumpyTrainer(X, Y)):
        sweep = trainer.sweep(optimizer, SWEEP_LRS, 130, start=(0.3, -0.2), momentum=beta)  # 130: not a chunk multiple
        assert sweep.losses.shape == (130, len(SWEEP_LRS)) and sweep.paths.shape == (131, 2, len(SWEEP_LRS))
        for i, lr in enumerate(SWEEP_LRS):
            want_losses, want_path = oracle(optimizer, lr, 130, start=(0.3, -0.2), beta=beta)
            run = sweep.run(i)
            with np.errstate(invalid="ignore", over="ignore"):
                ok = np.all(np.isfinite(want_path), axis=1) & (np.abs(want_path).max(axis=1) < 1e3)
            np.testing.assert_allclose(run.path[ok], want_path[ok], rtol=2e-4, atol=2e-5,
                                       err_msg=f"{trainer.name} {optimizer} lr={lr}")
            n = int(ok[1:].sum())
            np.testing.assert_allclose(run.losses[:n], want_losses[:n], rtol=2e-3, atol=1e-6,
                                       err_msg=f"{trainer.name} {optimizer} lr={lr}")
            if not ok.all():  # a diverging column keeps diverging: huge, inf or NaN at the end
                assert not np.isfinite(run.losses[-1]) or run.losses[-1] > 1e6 * run.losses[0]


def test_the_default_sweep_is_the_slider_grid(ms_trainer):
    sweep = ms_trainer.sweep("SGD", None, 20)
    assert len(sweep.lrs) == len(LR_GRID) == 401 and sweep.lrs[0] == pytest.approx(1e-3)
    assert sweep.index(float(10 ** -0.5)) is not None and sweep.index(0.123456) is None
    lr = float(10 ** -0.3)  # a slider position (0.501)
    np.testing.assert_allclose(sweep.run(sweep.index(lr)).path, ms_trainer.train("SGD", lr, 20).path, rtol=1e-6)
    short = sweep.truncated(10)
    assert short.steps == 10 and np.array_equal(short.paths, sweep.paths[:11])


def _mindspore_optimizer_run(optimizer, lr, steps, beta=0.9):
    """The lesson's way: Dense(1, 1) from (0, 0), nn.<optimizer>, TrainOneStepCell."""
    import mindspore as ms
    from mindspore import nn

    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    params = net.trainable_params()
    opt = {"SGD": lambda: nn.SGD(params, learning_rate=lr),
           "Momentum": lambda: nn.Momentum(params, learning_rate=lr, momentum=beta),
           "Adam": lambda: nn.Adam(params, learning_rate=lr)}[optimizer]()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    xt, yt = ms.Tensor(X), ms.Tensor(Y)
    losses = [float(train(xt, yt).asnumpy()) for _ in range(steps)]
    return np.array(losses), (float(net.weight.asnumpy()[0, 0]), float(net.bias.asnumpy()[0]))


@pytest.mark.parametrize("optimizer, lrs, beta", [
    ("SGD", (0.05, 0.5, 0.9, 1.5), 0.9),  # 0.9 and 1.5 diverge
    ("Momentum", (0.05, 0.5, 1.7), 0.9),  # 1.7 diverges
    ("Momentum", (0.3, 1.0), 0.45),
    ("Adam", (0.01, 0.3, 3.0), 0.9),
])
def test_the_batched_sweep_trains_what_mindspore_optimizers_do(ms_trainer, optimizer, lrs, beta):
    sweep = ms_trainer.sweep(optimizer, lrs, 25, momentum=beta)
    for i, lr in enumerate(lrs):
        losses, final = _mindspore_optimizer_run(optimizer, lr, 25, beta)
        run = sweep.run(i)
        np.testing.assert_allclose(run.losses, losses, rtol=1e-4, err_msg=f"{optimizer} lr={lr}")
        np.testing.assert_allclose(run.final, final, rtol=1e-4, atol=1e-6, err_msg=f"{optimizer} lr={lr}")


def _compiled_graphs():
    from mindspore.graph import api  # MindSpore's cache of compiled jit graphs (one entry per compile)

    return len(api.ms_compile_cache)


def test_a_new_setting_never_recompiles():
    import mindspore as ms

    @ms.jit
    def scale(t, factor):
        return t * factor

    before = _compiled_graphs()
    for factor in (0.5, 0.25):  # the detector works: a Python float recompiles for every new value
        scale(ms.Tensor(np.ones(2, np.float32)), factor)
    assert _compiled_graphs() == before + 2
    trainer = MindSporeTrainer(X, Y)
    assert not any(trainer.is_compiled(name) for name in ("SGD", "Momentum", "Adam"))
    trainer.sweep("SGD", None, 50)
    assert trainer.is_compiled("SGD") and not trainer.is_compiled("Momentum"), "compiled on first use only"
    for name in ("Momentum", "Adam"):
        trainer.compile(name)
    before = _compiled_graphs()
    for optimizer in ("SGD", "Momentum", "Adam"):
        for lrs, beta, start, steps in ((None, 0.9, (0, 0), 100), ([0.123], 0.3, (0.5, -0.5), 130),
                                        ([0.456, 7.89], 0.7, (1.0, 1.0), 40)):
            trainer.sweep(optimizer, lrs, steps, start=start, momentum=beta)
        trainer.train(optimizer, 0.321, 60)
    assert _compiled_graphs() == before, "a new learning rate, beta, start or step count must reuse the compiled graph"


def test_trainers_reject_bad_settings(ms_trainer):
    for bad, error in ((dict(optimizer="RMSProp"), ValueError), (dict(lr=0.0), ValueError),
                       (dict(lr=float("nan")), ValueError), (dict(lr="0.1"), TypeError),
                       (dict(steps=0), ValueError), (dict(steps=10**6), ValueError), (dict(steps=2.5), TypeError),
                       (dict(lr=10**400), ValueError), (dict(optimizer=None), ValueError),
                       (dict(momentum=1.0), ValueError)):
        kwargs = {"optimizer": "SGD", "lr": 0.1, "steps": 10, **bad}
        for trainer in (ms_trainer, NumpyTrainer(X, Y)):
            with pytest.raises(error):
                trainer.train(**kwargs)
    with pytest.raises(ValueError, match="learning rates"):
        NumpyTrainer(X, Y).sweep("SGD", np.ones(500), 10)
    with pytest.raises(ValueError, match="chunk"):
        MindSporeTrainer(X, Y, chunk=0)
    with pytest.raises(ValueError, match="path must have shape"):
        Run("SGD", 0.1, [1.0, 2.0], [[0, 0], [1, 1]])


def test_sweep_steps_to_converge_is_the_oracle_per_column(surface):
    sweep = NumpyTrainer(X, Y).sweep("SGD", None, 150)
    needed = sweep.steps_to_converge(surface.optimum)
    for i in range(0, 401, 7):
        want = oracle_steps_to_converge(sweep.paths[:, :, i], surface.optimum)
        assert (np.isnan(needed[i]) and want is None) or needed[i] == want, sweep.lrs[i]
    assert np.nanmin(needed) == 49  # the best SGD on the course data: 49 steps (notebook 05)


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
        sweep = trainer.sweep("SGD", None, 100)
        figure.set_sweep(sweep, sweep_kinds(sweep))
        with_sweep = figure.render(runs)
    assert len({*images, after_clear, with_sweep}) == 5
    assert {_png_size(png) for png in images} == {figure.canvas.get_width_height()}
    width, height = figure.canvas.get_width_height()
    assert width <= 900 and 1.3 < width / height < 1.7, "fits a 900-pixel column beside nothing else"
    figure.set_steps(200)
    assert figure.render(runs) != images[-1]  # a new x range redraws the background
    with pytest.raises(ValueError, match="one color per run"):
        figure.render(runs, colors=["red"])


def test_colors_do_not_repeat_within_a_session():
    colors = [color_for(i) for i in range(200)]
    assert len(set(colors)) == 200


def test_side_by_side_has_one_path_panel_per_run(surface):
    import matplotlib.pyplot as plt

    trainer = NumpyTrainer(X, Y)
    runs = [trainer.train("SGD", lr, 100) for lr in (0.05, 0.75, 0.9)]
    fig = side_by_side(runs, surface)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 4 and "leaves the view" in visible[3].get_title()
    assert fig.get_size_inches()[0] <= 9.0
    with pytest.raises(ValueError):
        side_by_side([], surface)
    plt.close("all")


# ---- the verdicts: the training-health report's names ---------------------------------------------------
@pytest.mark.parametrize("optimizer, lr, steps, kind", [
    ("SGD", 0.5, 100, "healthy"), ("SGD", 0.01, 100, "healthy"), ("SGD", 0.001, 100, "no progress"),
    ("SGD", 0.85, 100, "diverging"), ("SGD", 3.0, 100, "diverged"), ("SGD", 0.81, 100, "diverging"),
    ("Adam", 10.0, 10, "diverging"),
])
def test_describe_run(surface, optimizer, lr, steps, kind):
    losses, path = oracle(optimizer, lr, steps)
    with np.errstate(over="ignore"):  # float32, as the trainers return: lr=3 overflows to inf
        losses, path = losses.astype(np.float32), path.astype(np.float32)
    verdict = describe_run(Run(optimizer, lr, losses, path), surface)
    assert verdict.kind == kind == health_report(losses, params=path).verdict, verdict
    assert verdict.kind in KINDS
    if kind.startswith("diverg"):
        assert verdict.text.startswith(kind.upper()) and verdict.diverged_at is not None
    if lr == 3.0:
        assert "overflows to inf" in verdict.text
    if lr == 0.5:
        assert verdict.converged and verdict.converged_at == steps_to_converge(path, surface.optimum)
        assert "converged" in verdict.text
    if lr == 0.01:
        assert not verdict.converged and "still learning" in verdict.text


def test_sweep_kinds_agree_with_the_health_report():
    sweep = NumpyTrainer(X, Y).sweep("SGD", None, 100)
    kinds = sweep_kinds(sweep)
    for i in range(0, 401, 5):
        assert kinds[i] == health_report(sweep.losses[:, i], params=sweep.paths[:, :, i]).verdict, sweep.lrs[i]


def test_zigzag_is_reported_above_one_over_lambda_max(surface):
    smooth = describe_run(Run("SGD", 0.3, *oracle("SGD", 0.3, 100)), surface)
    zigzag = describe_run(Run("SGD", 0.7, *oracle("SGD", 0.7, 100)), surface)
    assert not smooth.zigzag and zigzag.zigzag and "zig-zags" in zigzag.text


# ---- the app, headless --------------------------------------------------------------------------------------
@pytest.fixture
def lab(ms_trainer):
    return learning_rate_lab(ms_trainer, show=False)


class _CountingTrainer(NumpyTrainer):
    def __init__(self, x, y):
        super().__init__(x, y)
        self.sweeps, self.trains = [], []

    def sweep(self, optimizer, lrs, steps, start=(0.0, 0.0), momentum=0.9):
        self.sweeps.append((optimizer, None if lrs is None else len(lrs), steps, momentum))
        return super().sweep(optimizer, lrs, steps, start, momentum)

    def train(self, *args, **kwargs):
        self.trains.append(args)
        return super().train(*args, **kwargs)


def position(lr):
    """The slider position nearest ``lr`` (what the browser sends on a release)."""
    return int(np.argmin(np.abs(np.log(LR_GRID) - np.log(lr))))


def test_first_try_is_sent_at_once(lab):
    assert len(lab.tries) == 1 and lab.widget.payload.startswith(b"LRLAB1") and lab.picture().startswith(PNG_MAGIC)
    assert lab.status_text.startswith("lr=0.1 SGD, 100 steps: healthy, still learning")
    assert lab.widget.labels["learning rate"] == "learning rate" and lab.widget.labels["steps"] == "steps"
    assert lab.widget.state == {"optimizer": "SGD", "momentum": 0.9, "steps": 100, "lr": 0.1, "index": position(0.1)}
    assert lab.widget.steps_options[0] == 10 and lab.widget.steps_options[-1] == 500


def test_a_release_only_looks_up_and_judges():
    trainer = _CountingTrainer(X, Y)
    lab = learning_rate_lab(trainer, show=False)
    payload = lab.widget.payload
    for lr in (10 ** -0.3, 10 ** -0.05, 10 ** -1.7, 10 ** -0.3):  # slider positions (the browser sends these)
        lab.handle({"action": "slider", "index": position(lr)})
    assert len(trainer.sweeps) == 1 and trainer.sweeps[0][1] is None and not trainer.trains
    assert lab.widget.payload is payload, "a release sends no new sweep"
    assert lab.tries[-1].run.lr == pytest.approx(10 ** -0.3)
    want = oracle("SGD", 10 ** -0.3, 100)[1][-1]
    np.testing.assert_allclose(lab.tries[-1].run.final, want, rtol=1e-4)
    assert lab.widget.state["lr"] == pytest.approx(10 ** -0.3) and lab.widget.state["index"] == position(10 ** -0.3)
    lab.handle({"action": "set", "steps": 50})  # fewer steps: the same sweep, cut short
    lab.handle({"action": "set", "steps": 200})  # more steps: one new sweep
    lab.handle({"action": "set", "optimizer": "Momentum"})
    lab.handle({"action": "set", "momentum": 0.5})
    assert [s[0] for s in trainer.sweeps] == ["SGD", "SGD", "Momentum", "Momentum"] and trainer.sweeps[-1][3] == 0.5
    assert set(lab.timings) == {"sweep", "lookup", "judge", "send", "total"}
    header = payload_decode(lab.widget.payload)[0]
    assert header["key"] == "Momentum-b0.50-s200" and header["steps"] == 200


def test_a_typed_value_between_slider_positions_is_trained_on_its_own():
    trainer = _CountingTrainer(X, Y)
    lab = learning_rate_lab(trainer, show=False)
    lab.handle({"action": "text", "text": "0.4321"})
    assert trainer.trains and lab.tries[-1].run.lr == 0.4321 and lab.widget.state["index"] == position(0.4321)
    np.testing.assert_allclose(lab.tries[-1].run.final, oracle("SGD", 0.4321, 100)[1][-1], rtol=1e-4)
    sent = lab.widget.tries[-1]
    assert sent["index"] is None and "run" in sent, "a typed try carries its own run to the page"
    header, paths, _ = payload_decode(base64.b64decode(sent["run"]))
    np.testing.assert_allclose(paths[0, -1], lab.tries[-1].run.final, rtol=1e-5)


def test_enter_on_the_same_value_or_an_empty_box_says_so(lab):
    tries = len(lab.tries)
    assert "nothing changed" in lab.submit_text("0.1")  # Enter on the value the box already shows
    assert "box is empty" in lab.submit_text("  ")
    assert len(lab.tries) == tries
    lab.handle({"action": "text", "text": "0.1"})
    assert "nothing changed" in lab.message_text  # what the browser sends on Enter
    lab.handle({"action": "slider", "index": position(10 ** -0.3)})
    assert "nothing changed" in lab.submit_text("0.5012"), "the box shows a rounded lr"
    assert len(lab.tries) == tries + 1


def test_momentum_beta_snap_and_presets():
    lab = learning_rate_lab(NumpyTrainer(X, Y), show=False)
    lr = lab.snap()
    assert lab.tries[-1].verdict.converged_at == 49 and lr == pytest.approx(0.741, abs=0.01)
    lab.set(optimizer="Momentum", momentum=0.45)
    assert "β=0.45" in lab.status_text
    lab.snap()
    assert lab.tries[-1].verdict.converged_at <= 15, "tuned momentum converges in about 13-15 steps"
    assert "met by Momentum" in lab.challenge_text and lab.challenge_met is not None
    for name, kind in (("too small", "healthy"), ("oscillating", "healthy"), ("diverging", "diverging")):
        lab.preset(name)
        assert lab.verdict.kind == kind, (name, lab.status_text)
    lab.set(optimizer="SGD")
    lab.preset("diverging")
    assert lab.verdict.kind in ("diverged", "diverging") and lab.lr > lab.surface.stability_bound()
    assert "one of" in (lab.preset("wild") or lab.message_text)


def test_the_presets_behave_differently_from_each_other():
    """Each preset is its own behaviour: too small (slow), good (converges, no zig-zag), oscillating (converges
    zig-zagging), diverging; for every optimizer whose bowl has a bound, and with the page's numbers."""
    for optimizer in ("SGD", "Momentum"):
        lab = learning_rate_lab(NumpyTrainer(X, Y), optimizer=optimizer, show=False)
        seen, where = {}, {}
        for name in PRESETS:
            lab.preset(name)
            seen[name], where[name] = lab.verdict, lab.widget.state["index"]
        assert not seen["too small"].converged and seen["too small"].kind == "healthy", optimizer
        assert seen["good"].converged and not seen["good"].zigzag, optimizer
        assert seen["oscillating"].zigzag, optimizer
        assert seen["diverging"].kind in ("diverged", "diverging"), optimizer
        header = payload_decode(lab.widget.payload)[0]
        assert header["presets"] == where, "the page (host.js) picks the positions the kernel picks"


def test_the_challenge_is_not_met_by_plain_sgd():
    lab = learning_rate_lab(NumpyTrainer(X, Y), show=False)
    lab.snap()
    assert lab.challenge_met is None and "Not yet" in lab.challenge_text
    assert f"at most {CHALLENGE_STEPS} steps" in lab.challenge_text


def test_divergence_is_shown_not_raised(lab):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lab.handle({"action": "slider", "index": position(1.2)})
    assert "DIVERGED at step" in lab.status_text and "overflows to inf" in lab.status_text
    assert _png_size(lab.picture())[0] > 300
    assert lab.widget.alarm, "the page shows a diverging try's status in red"


def test_earlier_tries_stay_until_cleared(lab):
    for lr in (0.2, 0.3, 0.4):
        lab.handle({"action": "slider", "index": position(lr)})
        lab.tries[-1].time -= 10  # releases a learner makes one by one, not a held arrow key
    assert [round(t.run.lr, 2) for t in lab.tries] == [0.1, 0.2, 0.3, 0.4]
    assert [row["color"] for row in lab.widget.tries] == [t.color for t in lab.tries]
    lab.handle({"action": "clear"})
    assert len(lab.tries) == 1 and lab.tries[0].run.lr == pytest.approx(0.4, rel=0.03) and "cleared" in lab.message_text
    assert len(lab.widget.tries) == 1


def test_a_held_arrow_key_makes_one_try():
    lab = learning_rate_lab(NumpyTrainer(X, Y), show=False)
    now = [100.0]
    lab._clock = lambda: now[0]
    for k in range(1, 6):  # five arrow presses, 0.1 s apart: five releases
        now[0] += 0.1
        lab.handle({"action": "slider", "index": position(0.1) + k})
    assert len(lab.tries) == 2 and lab.tries[-1].run.lr == pytest.approx(10 ** -0.95)
    now[0] += COALESCE_SECONDS + 0.1
    lab.handle({"action": "slider", "index": position(0.3)})
    assert len(lab.tries) == 3


def test_a_long_session_forgets_the_older_half_at_once():
    lab = LearningRateLab(NumpyTrainer(X, Y), X, Y, max_tries=6)
    lab.retrain()
    for lr in (0.2, 0.3, 0.4, 0.5, 0.6):
        lab.set(lr=lr)
    assert len(lab.tries) == 6 and lab.message_text == ""
    lab.set(lr=0.7)
    assert [round(t.run.lr, 3) for t in lab.tries] == [0.4, 0.5, 0.6, 0.7]
    assert "forgot the 3 oldest" in lab.message_text
    assert len({t.color for t in lab.tries}) == 4


@pytest.mark.parametrize("action, text", [
    ({"action": "slider", "index": -1}, "401 positions"), ({"action": "slider", "index": 401}, "401 positions"),
    ({"action": "slider", "index": "x"}, "401 positions"), ({"action": "slider"}, "401 positions"),
    ({"action": "slider", "index": float("nan")}, "401 positions"), ({"action": "preset", "name": 3}, "one of"),
    ({"action": "fly"}, "does not know"), ({}, "does not know"), ("junk", "does not know"),
    ({"action": "set", "optimizer": "RMSProp"}, "one of SGD, Momentum, Adam"),
    ({"action": "set", "steps": "many"}, "not a number"), ({"action": "text", "text": "fast"}, "not a number"),
])
def test_what_the_page_sends_is_never_an_error(lab, action, text):
    tries = len(lab.tries)
    lab.handle(action)
    assert text in lab.message_text and len(lab.tries) == tries
    assert lab.widget.state["lr"] == 0.1 and lab.widget.state["optimizer"] == "SGD"


def test_hello_is_answered_so_the_page_knows_the_kernel_is_alive(lab, monkeypatch):
    sent = []
    monkeypatch.setattr(lab.widget, "send", lambda content, buffers=None: sent.append(content))
    lab.handle({"action": "hello"})
    assert sent == [{"type": "alive"}]


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
    (dict(lr=0), "must be > 0"), (dict(lr=-1.0), "must be > 0"), (dict(lr=float("nan")), "NaN"),
    (dict(lr="fast"), "not a number"), (dict(lr=[0.1]), "expected a number"),
    (dict(optimizer="RMSProp"), "one of SGD, Momentum, Adam"), (dict(steps=float("nan")), "NaN"),
    (dict(steps="many"), "not a number"), (dict(momentum="x"), "not a number"),
])
def test_refused_values_leave_the_lab_as_it_was(lab, kwargs, text):
    tries = len(lab.tries)
    message = lab.set(**kwargs)
    assert text in message and len(lab.tries) == tries
    assert lab.lr == 0.1 and lab.steps == 100 and lab.optimizer == "SGD"


@pytest.mark.parametrize("kwargs, attribute, value, text", [
    (dict(lr=1e9), "lr", 10.0, "clamped to 10"), (dict(lr=float("inf")), "lr", 10.0, "clamped"),
    (dict(lr=1e-9), "lr", 1e-3, "clamped to 0.001"), (dict(steps=10**9), "steps", 500, "using 500"),
    (dict(steps=-5), "steps", 10, "using 10"), (dict(steps=float("inf")), "steps", 500, "using 500"),
    (dict(steps=123), "steps", 120, "using 120"), (dict(optimizer=" adam "), "optimizer", "Adam", ""),
    (dict(lr="0.25"), "lr", 0.25, ""),
    (dict(momentum=1.5, optimizer="Momentum"), "momentum", 0.99, "using 0.99"),
])
def test_extreme_values_are_clamped_with_a_message(lab, kwargs, attribute, value, text):
    message = lab.set(**kwargs)
    assert getattr(lab, attribute) == pytest.approx(value) and text in message
    assert len(lab.tries) == 2


def test_nan_from_the_text_box_is_refused(lab):
    lab.submit_text("nan")
    assert lab.lr == 0.1 and "NaN" in lab.message_text and len(lab.tries) == 1
    lab.submit_text("abc")
    assert "not a number" in lab.message_text and len(lab.tries) == 1 and lab.widget.state["lr"] == 0.1
    lab.submit_text("0.7")
    assert lab.tries[-1].run.lr == 0.7 and lab.widget.state["index"] == position(0.7)


class _SlowTrainer(NumpyTrainer):
    """Records what the status line said while it compiled."""

    def __init__(self, x, y):
        super().__init__(x, y)
        self.compiled, self.seen = set(), []

    def is_compiled(self, optimizer):
        return optimizer in self.compiled

    def sweep(self, optimizer, *args, **kwargs):
        if optimizer not in self.compiled:
            self.seen.append(self.lab.status_text)
            self.compiled.add(optimizer)
        return super().sweep(optimizer, *args, **kwargs)


def test_compiling_is_announced_once_per_optimizer():
    trainer = _SlowTrainer(X, Y)
    lab = LearningRateLab(trainer, X, Y)
    trainer.lab = lab
    lab.retrain()
    lab.set(lr=0.2)
    lab.set(optimizer="Momentum")
    lab.set(momentum=0.5)
    assert len(trainer.seen) == 2 and all("compiling" in seen for seen in trainer.seen)
    assert "Momentum" in trainer.seen[1]


def test_a_failing_trainer_gives_a_message(lab):
    def broken(*args, **kwargs):
        raise RuntimeError("device lost")

    lab.trainer = type("Broken", (), {"sweep": broken, "train": broken, "compile": broken,
                                      "is_compiled": staticmethod(lambda name: True)})()
    lab.set(optimizer="Adam")
    assert "training failed: RuntimeError: device lost" in lab.message_text and len(lab.tries) == 1
    lab.snap()
    assert "training failed" in lab.message_text


def test_a_stored_notebook_gets_a_picture_and_a_short_text(lab):
    data, _metadata = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data and "live only" in data["text/plain"]
    assert data["image/png"].startswith(PNG_MAGIC), "a stored notebook shows a picture of the lab"
    assert _png_size(data["image/png"])[0] >= 880, "the stored picture fills a 900-pixel column"


@pytest.mark.parametrize("optimizer", ["SGD", "Momentum", "Adam"])
def test_the_stored_pictures_labels_overlap_no_other_panels(lab, optimizer):
    # 2026-12-03: the fitted line's "y" stood on the sweep's right-hand "steps to converge" label
    lab.set(optimizer=optimizer)
    lab.picture()
    fig = lab.figure.fig
    renderer = fig.canvas.get_renderer()
    texts = []  # (panel, what, pixel box) of every label, title and tick label
    for ax in fig.axes:
        panel = ax.get_position().bounds[:2]  # a twin axis shares its panel
        parts = [ax.xaxis.label, ax.yaxis.label, ax.title]
        for axis, (lo, hi) in ((ax.xaxis, sorted(ax.get_xlim())), (ax.yaxis, sorted(ax.get_ylim()))):
            ticks = [t for t in axis.get_major_ticks() if lo <= t.get_loc() <= hi]  # the ones drawn
            parts += [label for t in ticks for label in (t.label1, t.label2)]
        shown = [t for t in parts if t.get_visible() and t.get_text()]
        texts += [(panel, t.get_text(), t.get_window_extent(renderer)) for t in shown]
    assert len(texts) > 40
    clashes = [(a, b) for i, (pa, a, ba) in enumerate(texts) for pb, b, bb in texts[i + 1:]
               if pa != pb and ba.overlaps(bb)]
    assert not clashes, clashes
    width, height = fig.canvas.get_width_height()
    outside = [t for _, t, box in texts if box.x0 < 0 or box.y0 < 0 or box.x1 > width or box.y1 > height]
    assert not outside, f"cut at the picture's edge: {outside}"


def test_lab_rejects_bad_construction():
    with pytest.raises(TypeError, match="trainer"):
        LearningRateLab(object(), X, Y)
    with pytest.raises(ValueError):
        LearningRateLab(NumpyTrainer(X, Y), X, Y, lr=100.0)
    with pytest.raises(ValueError):
        LearningRateLab(NumpyTrainer(X, Y), X, Y, steps=15)
    with pytest.raises(ValueError, match="optimizer"):
        LearningRateLab(NumpyTrainer(X, Y), X, Y, optimizer="sgd")


def test_warm_up_trains_every_optimizers_first_sweep_and_changes_nothing_shown():
    from course_utils.data import make_linear_data
    from course_utils.lab import LearningRateLab, NumpyTrainer

    x, y = make_linear_data()
    lab = LearningRateLab(NumpyTrainer(x, y), x, y)
    lab.retrain()
    shown = (lab.optimizer, lab.status_text, len(lab.tries), lab.widget.payload)
    lab.warm_up()
    assert {key[0] for key in lab._sweeps} == {"SGD", "Momentum", "Adam"}
    assert (lab.optimizer, lab.status_text, len(lab.tries), lab.widget.payload) == shown
    before = dict(lab._sweeps)
    lab.set(optimizer="Adam")  # the switch finds its sweep: nothing is trained again
    assert lab._sweeps == before and lab.tries[-1].run.optimizer == "Adam"
