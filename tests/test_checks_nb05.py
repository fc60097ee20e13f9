"""The checkers of notebook 05 accept the reference solutions and reject typical wrong answers.

The reference values are computed here independently of the checkers: the Hessian by finite differences
of the loss, and MindSpore's own optimizers run just below and above the accepted answers."""

import numpy as np
import pytest
from reference_solutions import reference

from course_utils.checks import nb05
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT

X, Y = (v[:, 0].astype(np.float64) for v in make_linear_data())
BEST = np.polyfit(X, Y, 1)


def _finite_difference_eigenvalues(h=1e-3):
    def f(w, b):
        return np.mean((w * X + b - Y) ** 2)

    hww = (f(h, 0) - 2 * f(0, 0) + f(-h, 0)) / h ** 2
    hbb = (f(0, h) - 2 * f(0, 0) + f(0, -h)) / h ** 2
    hwb = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
    return np.linalg.eigvalsh(np.array([[hww, hwb], [hwb, hbb]]))


LAM_MIN, LAM_MAX = _finite_difference_eigenvalues()


# ---- 05.1, 05.5, 05.6: functions of the data for MinimalNet without its bias, on the checker's data -------
def _lam(x):  # the curvature of mean((w x - y)^2) in w, by a finite difference of the loss
    x = np.asarray(x, np.float64).ravel()
    y = 0.7 * x

    def f(w):
        return np.mean((w * x - y) ** 2)

    h = 1e-3
    return (f(0.7 + h) - 2 * f(0.7) + f(0.7 - h)) / h ** 2


def _with_bias_lams(x):
    x = np.asarray(x, np.float64).ravel()
    return np.linalg.eigvalsh(2 * np.array([[np.mean(x * x), np.mean(x)], [np.mean(x), 1.0]]))


@pytest.mark.parametrize("ex, wrong, message", [
    (nb05.divergence_threshold, lambda x: 1 / _lam(x), "still converges"),
    (nb05.divergence_threshold, lambda x: 4 / _lam(x), "every constant kept"),
    (nb05.divergence_threshold, lambda x: 2 / _with_bias_lams(x)[1], "WITH a bias"),
    (nb05.divergence_threshold, lambda x: 0.807, "too large"),  # the course data's bound, printed in 03 and 04
    (nb05.divergence_threshold, lambda x: 0.05, "too small"),
    (nb05.divergence_threshold, lambda x: None, "returned None"),
    (nb05.fastest_sgd_lr, lambda x: 2 / _lam(x), "edge of stability"),
    (nb05.fastest_sgd_lr, lambda x: 0.5 / _lam(x), "not in the fewest steps"),
    (nb05.fastest_sgd_lr, lambda x: 2 / sum(_with_bias_lams(x)), "WITH a bias"),
    (nb05.fastest_sgd_lr, lambda x: 0.75, "overshoots"),  # notebook 03's best rate for the course data
    (nb05.fastest_sgd_lr, lambda x: "fast", "must be a number"),
    (nb05.momentum_threshold, lambda x, beta: 2 / _lam(x), "plain SGD"),
    (nb05.momentum_threshold, lambda x, beta: 2 * (1 - beta) / _lam(x), "does not shrink"),
    (nb05.momentum_threshold, lambda x, beta: 2 * (1 + beta) / _with_bias_lams(x)[1], "WITH a bias"),
    (nb05.momentum_threshold, lambda x, beta: 2 * 1.9 / _lam(x), "too"),  # beta fixed at 0.9
    (nb05.momentum_threshold, lambda x, beta: 1.533, "too large"),  # the course data's bound with a bias
])
def test_one_weight_exercises_name_typical_mistakes(ex, wrong, message):
    result = ex.evaluate(wrong)
    assert result.status == INCORRECT and message in result.message, result.message


@pytest.mark.parametrize("ex", [nb05.divergence_threshold, nb05.fastest_sgd_lr, nb05.momentum_threshold])
def test_one_weight_exercises_accept_the_reference(ex):
    answer, printed = reference(ex)
    assert printed.startswith("[ok]") and ex.evaluate(answer).status == CORRECT


def test_the_course_helpers_do_not_answer_them():
    """LossSurface (the lesson's helper) has a bias: its bounds are not those of the one-weight net."""
    from course_utils.landscape import LossSurface

    def surface(x):
        return LossSurface(np.asarray(x, np.float32), (0.7 * np.asarray(x)).astype(np.float32))

    assert nb05.divergence_threshold.evaluate(lambda x: surface(x).stability_bound()).status == INCORRECT
    assert nb05.fastest_sgd_lr.evaluate(lambda x: surface(x).best_sgd_lr()).status == INCORRECT
    assert nb05.momentum_threshold.evaluate(
        lambda x, beta: surface(x).stability_bound(momentum=beta)).status == INCORRECT


def _mindspore_run(x, lr, optimizer="SGD", beta=0.0, steps=200):
    """MindSpore's own nn.SGD / nn.Momentum on nn.Dense(1, 1, has_bias=False), full batch: final |w - w*|."""
    import mindspore as ms
    from mindspore import Tensor, nn

    x = np.asarray(x, np.float32)
    y = (0.7 * x + 0.05 * np.sin(7 * x)).astype(np.float32)
    ms.set_seed(0)
    net = nn.Dense(1, 1, weight_init="zeros", has_bias=False)
    opt = (nn.SGD(net.trainable_params(), learning_rate=lr) if optimizer == "SGD"
           else nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=beta))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    for _ in range(steps):
        step(Tensor(x), Tensor(y))
    best = float(np.sum(x.astype(np.float64) * y) / np.sum(x.astype(np.float64) ** 2))
    return abs(float(net.weight.asnumpy().item()) - best)


def test_the_oracles_are_what_mindspore_does():
    """Independent of the closed forms: MindSpore trains just below each accepted answer and diverges above it;
    at the fastest rate one step lands on the minimum."""
    x, beta = nb05.CHECK_XS[0], nb05.CHECK_BETAS[0]
    ns = {"np": np, "nb05": nb05}
    for ex in (nb05.divergence_threshold, nb05.fastest_sgd_lr, nb05.momentum_threshold):
        exec(solutions_code(ex), ns)
    bound = ns["threshold"](x)
    assert _mindspore_run(x, 0.97 * bound) < 1e-3 and not _mindspore_run(x, 1.03 * bound) < 1.0
    fastest = ns["fastest_lr"](x)
    assert _mindspore_run(x, fastest, steps=1) < 1e-4 < _mindspore_run(x, 0.9 * fastest, steps=1)
    m_bound = ns["momentum_threshold"](x, beta)
    assert _mindspore_run(x, 0.97 * m_bound, "Momentum", beta, steps=600) < 1e-3
    assert not _mindspore_run(x, 1.03 * m_bound, "Momentum", beta, steps=600) < 1.0


def solutions_code(ex):
    from course_utils import solutions

    return solutions.code(ex)


def _gd(lr, steps):
    """Plain gradient descent from (0, 0) in float64: (w, b) after each step."""
    w = b = 0.0
    path = []
    with np.errstate(all="ignore"):
        for _ in range(steps):
            err = w * X + b - Y
            w, b = w - lr * 2 * np.mean(err * X), b - lr * 2 * np.mean(err)
            path.append((w, b))
    return path


def _steps(lr, steps=300):
    """Brute force: the first step after which plain GD stays within 0.01 of the fit, or None."""
    inside = [abs(w - BEST[0]) < 0.01 and abs(b - BEST[1]) < 0.01 for w, b in _gd(lr, steps)]
    if not inside[-1]:
        return None
    return len(inside) - inside[::-1].index(False) + 1 if False in inside else 1


def _heavy_ball(lr, steps):
    """nn.Momentum(0.9) written out over (w, b), from (0, 0): the final (w, b)."""
    w = b = vw = vb = 0.0
    with np.errstate(all="ignore"):
        for _ in range(steps):
            err = w * X + b - Y
            vw, vb = 0.9 * vw + 2 * np.mean(err * X), 0.9 * vb + 2 * np.mean(err)
            w, b = w - lr * vw, b - lr * vb
    return np.array([w, b])


# ---- predictions 05.2 and 05.7: the right answers, measured with numpy ---------------------------------
def _sgd_distance(lr, steps=100):
    return np.hypot(*(np.array(_gd(lr, steps)[-1]) - BEST))


def test_fastest_of_four_is_the_zig_zag_run():
    distances = {lr: _sgd_distance(lr) for lr in (0.05, 0.3, 0.6, 0.85)}
    assert min(distances, key=distances.get) == 0.6 and nb05.fastest_of_four.answer == "b"
    assert 1 / LAM_MAX < 0.6 < 2 / LAM_MAX < 0.85  # 0.6 zig-zags, 0.85 diverges


def _adam(lr, steps):
    """nn.Adam's rule written out over (w, b), from (0, 0): (w, b) after each step, and the loss before it."""
    theta, m, v, path, losses = np.zeros(2), np.zeros(2), np.zeros(2), [], []
    for k in range(1, steps + 1):
        err = theta[0] * X + theta[1] - Y
        g = np.array([2 * np.mean(err * X), 2 * np.mean(err)])
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        theta = theta - lr * np.sqrt(1 - 0.999 ** k) / (1 - 0.9 ** k) * m / (np.sqrt(v) + 1e-8)
        path.append(theta)
        losses.append(np.mean(err ** 2))
    return np.array(path), losses


def test_article_recipe_momentum_ends_closest():
    """lr = 0.01, 100 steps from (0, 0): heavy-ball momentum and Adam written out in numpy."""
    momentum = np.hypot(*(_heavy_ball(0.01, 100) - BEST))
    adam, sgd = np.hypot(*(_adam(0.01, 100)[0][-1] - BEST)), _sgd_distance(0.01)
    assert momentum < min(adam, sgd) and sgd > adam and nb05.article_recipe.answer == "b"


# ---- 05.8: the compiled Momentum step, state and learning rate passed in as Tensors ---------------------
def _momentum_step(mode="right"):
    """A reference written with ms.grad and an explicit design matrix product, and typical mistakes."""
    import mindspore as ms
    from mindspore import ops

    def loss_of(theta, a, y):
        residual = ops.matmul(a, theta) - y
        return ops.mean(residual * residual)

    final = nb05.heavy_ball()[-1]

    def step(theta, velocity, a, y, lr):
        if mode == "inputs":
            return theta, velocity, lr
        if mode == "constant":  # the last state of the oracle, whatever comes in
            return ms.Tensor(final[0], ms.float32), ms.Tensor(final[1], ms.float32), ms.Tensor(final[2], ms.float32)
        loss = loss_of(theta, a, y)
        grad = ms.grad(loss_of)(theta, a, y)
        if mode == "reshape":
            return theta - lr * grad.reshape(3), velocity, loss
        if mode == "sgd":
            return theta - lr * grad, velocity, loss
        if mode == "state dropped":  # the new velocity is used but the old one goes back to the caller
            new = 0.9 * velocity + grad
            return theta - lr * new, velocity, loss
        new = 0.9 * velocity + grad
        rate = {"fixed": 0.1, "uphill": -lr}.get(mode, lr)
        theta = theta - rate * new
        return theta, new, loss_of(theta, a, y) if mode == "loss after" else loss

    return step if mode == "not compiled" else ms.jit(step)


def test_momentum_step_reference_against_numpy():
    """The checker's oracle against an independent loop over (w, b) written out by hand."""
    x, y = nb05.STEP_X[:, 0].astype(np.float64), nb05.STEP_Y[:, 0].astype(np.float64)
    w, b = nb05.STEP_START
    vw = vb = 0.0
    for (theta, _, before, _), lr in zip(nb05.heavy_ball(), nb05.STEP_LRS):
        err = w * x + b - y
        assert np.isclose(before, np.mean(err ** 2))
        vw, vb = 0.9 * vw + 2 * np.mean(err * x), 0.9 * vb + 2 * np.mean(err)
        w, b = w - lr * vw, b - lr * vb
        assert np.allclose(theta.ravel(), [w, b])


@pytest.mark.parametrize("mode, message", [
    ("sgd", "plain SGD"),
    ("state dropped", "plain SGD"),  # v never carries over
    ("fixed", "first learning rate"),
    ("uphill", "uphill"),
    ("loss after", "after the update"),
    ("not compiled", "@ms.jit"),
    ("inputs", "never changed"),
    ("constant", "after call 1"),
    ("reshape", "For primitive[Reshape]"),  # regression: MindSpore's first line, without its C++ banner
])
def test_momentum_step_names_typical_mistakes(mode, message):
    result = nb05.momentum_step.evaluate(_momentum_step(mode))
    assert result.status == INCORRECT and message in result.message, result.message
    assert "C++" not in result.message and "----" not in result.message and "analyze_fail" not in result.message


def test_momentum_step_accepts_a_reference():  # reference() execs without a file: ms.jit cannot read its source
    assert nb05.momentum_step.evaluate(_momentum_step()).status == CORRECT


def test_jit_is_detected_by_mindspore_wrapper_only():
    import functools

    import mindspore as ms

    def plain(x):
        return x

    assert nb05._is_jit(ms.jit(plain)) and not nb05._is_jit(plain)
    assert not nb05._is_jit(functools.wraps(plain)(lambda x: x)) and not nb05._is_jit(print)


def test_larger_is_not_always_faster():
    steps = {lr: _steps(lr, 200) for lr in (0.3, 0.5, 0.74, 0.79)}
    assert steps[0.3] > steps[0.5] > steps[0.74] and steps[0.79] > 2 * steps[0.74], steps
    assert nb05.larger_is_faster.answer == "b" and 0.74 < 2 / (LAM_MIN + LAM_MAX) < 0.79


def test_adam_at_lr_10_ends_healthy_near_the_fit():
    """lr = 10, 100 steps from (0, 0): far out first, then back, no divergence."""
    path, losses = _adam(10, 100)
    final = np.mean((path[-1][0] * X + path[-1][1] - Y) ** 2)
    assert np.max(np.abs(path)) > 5 and np.all(np.isfinite(losses)) and final < 0.5 * losses[0] and final < 0.01
    assert nb05.adam_never_diverges.answer == "b"


def test_the_four_runs_give_the_same_verdicts_for_other_initial_weights():
    """Moved from the lesson's section 2: for initial weights of seeds 0-4, lr 0.05 and 0.3 are still learning,
    0.6 has converged, 0.85 diverges, and the path zig-zags exactly above 1 / lambda_max."""
    import mindspore as ms

    from course_utils.lab import MindSporeTrainer, describe_run
    from course_utils.landscape import LossSurface

    x, y = make_linear_data()
    surface, trainer = LossSurface(x, y), MindSporeTrainer(x, y)
    expected = {0.05: "still learning", 0.3: "still learning", 0.6: "converged", 0.85: "diverging"}
    for seed in range(5):
        ms.set_seed(seed)
        net = ms.nn.Dense(1, 1, weight_init="normal", bias_init="zero")
        start = (float(net.weight.asnumpy()[0, 0]), float(net.bias.asnumpy()[0]))
        runs = trainer.sweep("SGD", list(expected), 100, start=start)
        for i, (lr, kind) in enumerate(expected.items()):
            verdict = describe_run(runs.run(i), surface)
            said = ("converged" if verdict.converged
                    else "still learning" if verdict.kind == "healthy" else verdict.kind)
            assert said == kind, (seed, lr, said)
            assert kind == "diverging" or verdict.zigzag == (lr > 1 / LAM_MAX), (seed, lr)
