"""Exercises of notebook 05 (the learning-rate lab).

The oracles here work from the data alone, in float64 numpy: the Hessian of the MSE loss in closed form
and a plain gradient-descent loop. They share no code with the notebook or with the lab.
"""

import math

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    array,
    bind,
    brief_error,
    close,
    name_the_mistake,
    number,
)
from course_utils.messages import lazy, t
from course_utils.oracles import CONVERGED

MOMENTUM = 0.9
TOL = CONVERGED  # the course's criterion: |w - w*| and |b - b*| below 0.01 for good


def _data():
    from course_utils.data import make_linear_data

    x, y = make_linear_data()
    return x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)


_X = _data()[0]
LAM_MIN, LAM_MAX = np.linalg.eigvalsh(2.0 * np.array([[np.mean(_X * _X), np.mean(_X)], [np.mean(_X), 1.0]]))


def _learning_rate(answer):
    """A positive, finite learning rate, else Incorrect."""
    value = number(answer, t("the learning rate"))
    if value <= 0:
        raise Incorrect(t("a learning rate must be > 0 (each step moves lr times the gradient downhill), got "
                          "{value:g}", value=value))
    return value


def _near(value, target, rel):
    return abs(value - target) <= rel * abs(target)


def _bound_check(bound, rel, mistakes, mistake_rel, above, below):
    """A checker of a stability bound: right within ``rel`` of ``bound``; ``mistakes`` lists (wrong rate, message)
    named within ``mistake_rel``; ``above`` or ``below`` says which side of the bound the rate is on."""
    def check(answer):
        value = _learning_rate(answer)
        if not _near(value, bound, rel):
            name_the_mistake(value, lambda lr: lr, [({"lr": lr}, why) for lr, why in mistakes],
                             same=lambda got, lr: _near(got, lr, mistake_rel), value=value)
            raise Incorrect(t(above, value=value) if value > bound else t(below, value=value))
    return check


def sgd_steps_to_converge(lr, steps=300):
    """Plain gradient descent from (0, 0): first step after which (w, b) stays within TOL of the
    least-squares fit, or None (diverged or too slow)."""
    x, y = _data()
    features = np.stack([x, np.ones_like(x)], axis=1)
    best = np.linalg.lstsq(features, y, rcond=None)[0]
    theta = np.zeros(2)
    last_outside = 0  # theta_0 = (0, 0) is always outside
    with np.errstate(all="ignore"):
        for k in range(1, steps + 1):
            theta = theta - lr * 2.0 * features.T @ (features @ theta - y) / len(y)
            if not np.all(np.abs(theta - best) < TOL):
                last_outside = k
    return None if last_outside == steps else last_outside + 1


_check_threshold = _bound_check(2.0 / LAM_MAX, 0.01, [
    (1.0 / LAM_MAX, lazy("{value:.3f} is 1 / lambda_max: above it the path zig-zags across the valley, but "
                         "it still converges. Divergence starts at twice that")),
    (4.0 / LAM_MAX, lazy("{value:.3f} is too large by a factor 2: nn.MSELoss is mean((pred - y)^2), so its "
                         "Hessian is 2 * mean of [[x^2, x], [x, 1]], with the factor 2")),
    (2.0 / LAM_MIN, lazy("that is 2 / lambda_min: the smallest eigenvalue sets how SLOWLY the flat "
                         "direction converges; stability is decided by the steepest direction, the largest "
                         "eigenvalue")),
    (0.01, lazy("0.01 is the source article's learning rate: it is stable, but far below the threshold")),
], 0.02, lazy("at lr={value:.4g} plain gradient descent diverges; compute the Hessian's eigenvalues from x "
              "(np.linalg.eigvalsh) and use 2 / lambda_max"),
   lazy("at lr={value:.4g} plain gradient descent still converges; compute the Hessian's eigenvalues from x "
        "(np.linalg.eigvalsh) and use 2 / lambda_max"))


def _check_fastest(answer):
    value, bound, best_lr = _learning_rate(answer), 2.0 / LAM_MAX, 2.0 / (LAM_MIN + LAM_MAX)
    best, mine = sgd_steps_to_converge(best_lr), sgd_steps_to_converge(value)
    if mine is None:  # diverged, or too slow: say which side of the bound it is on
        why = (lazy("lr={value:.4g} is far above the stability bound 2 / lambda_max, about {bound:.3f}: there SGD "
                    "diverges. Try one below the bound") if value > 2 * bound else
               lazy("lr={value:.4g} is above the stability bound 2 / lambda_max, about {bound:.3f}: there SGD "
                    "diverges. Try a smaller one") if value > 1.03 * bound else
               lazy("lr={value:.4g} is at, or too close to, the stability bound 2 / lambda_max: there SGD "
                    "converges very slowly or diverges. Try a smaller one") if value >= 0.97 * bound else
               lazy("lr={value:.4g} does not reach the best fit within 300 steps: try a larger learning rate"))
        raise Incorrect(t(why, value=value, bound=bound))
    if mine > math.ceil(1.15 * best):
        why = (lazy("lr={value:.4g} needs {steps} steps to get within {tol} of the best fit; the fastest learning "
                    "rate needs about {best}. Try a larger one") if value < best_lr else
               lazy("lr={value:.4g} needs {steps} steps to get within {tol} of the best fit; the fastest learning "
                    "rate needs about {best}. Try a slightly smaller one"))
        raise Incorrect(t(why, value=value, steps=mine, tol=TOL, best=best))


_check_momentum_threshold = _bound_check(2.0 * (1.0 + MOMENTUM) / LAM_MAX, 0.02, [
    (2.0 / LAM_MAX, lazy("that is plain SGD's bound. Momentum accumulates past gradients, and for this "
                         "quadratic that widens the stable range: try lr=1.2 with Momentum in the lab")),
    (2.0 * (1.0 - MOMENTUM) / LAM_MAX, lazy("momentum widens the stable range, it does not shrink it: the "
                                            "factor is (1 + momentum)")),
], 0.05, lazy("at lr={value:.4g} nn.Momentum(momentum=0.9) diverges on this data; the heavy-ball bound is 2 (1 + "
              "momentum) / lambda_max"),
   lazy("at lr={value:.4g} nn.Momentum(momentum=0.9) still converges on this data; the heavy-ball bound is 2 (1 + "
        "momentum) / lambda_max"))


# ---- 05.8: the lab's compiled Momentum step, state and learning rate passed in as Tensors ------------
STEP_X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(-1, 1)
STEP_Y = (0.5 - STEP_X + 0.1 * np.cos(3.0 * STEP_X)).astype(np.float32)
STEP_START = (0.5, -0.3)
STEP_LRS = (0.1, 0.3, 0.05, 0.3, 0.2)  # a different learning rate at almost every call


def _is_jit(fn):
    """True for a function wrapped by ms.jit (its wrapper lives in MindSpore's own code)."""
    code = getattr(fn, "__code__", None)
    return (hasattr(fn, "__wrapped__") and code is not None
            and "mindspore" in code.co_filename.replace("\\", "/").split("/"))


def heavy_ball(lrs=STEP_LRS, momentum=MOMENTUM, start=STEP_START):
    """nn.Momentum's rule (v = momentum * v + g; theta -= lr * v) on the MSE of the step data, in float64.
    Returns a list of (theta, velocity, loss before the step, loss after the step), one per step."""
    a = np.hstack([STEP_X, np.ones_like(STEP_X)]).astype(np.float64)
    y = STEP_Y.astype(np.float64)
    theta, velocity = np.array(start, dtype=np.float64).reshape(2, 1), np.zeros((2, 1))
    out = []
    for lr in lrs:
        err = a @ theta - y
        loss = np.mean(err ** 2)
        velocity = momentum * velocity + 2 * a.T @ err / len(y)
        theta = theta - lr * velocity
        out.append((theta, velocity, loss, np.mean((a @ theta - y) ** 2)))
    return out


def _pair(value, what, call):
    what = t("the {what} returned at call {call}", what=what, call=call)
    arr = array(value, what)
    if arr.size != 2:
        raise Incorrect(t("{what} should have shape (2, 1) like the one passed in, got {shape}", what=what,
                          shape=arr.shape))
    if not np.all(np.isfinite(arr)):
        raise Incorrect(t("{what} holds NaN or inf", what=what))
    return arr.reshape(2, 1)


def _check_momentum_step(momentum_step_fn):
    import mindspore as ms

    if not _is_jit(momentum_step_fn):
        raise Incorrect(t("momentum_step is not compiled: decorate it with @ms.jit (the lab runs its steps as one "
                          "compiled graph, reused for every learning rate)"))
    a, y = ms.Tensor(np.hstack([STEP_X, np.ones_like(STEP_X)])), ms.Tensor(STEP_Y)
    theta = ms.Tensor(np.array(STEP_START, dtype=np.float32).reshape(2, 1))
    velocity = ms.Tensor(np.zeros((2, 1), np.float32))
    got = []
    for k, lr in enumerate(STEP_LRS, start=1):
        try:
            out = momentum_step.call(momentum_step_fn, theta, velocity, a, y, ms.Tensor(lr, ms.float32))
        except (RuntimeError, TypeError, ValueError, NameError, AttributeError, IndexError) as error:
            raise Incorrect(t("momentum_step raised {error} at call {call}: {why}", error=type(error).__name__,
                              call=k, why=brief_error(error))) from None
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            raise Incorrect(t("momentum_step should return three things, (theta, velocity, loss), got {got}",
                              got=shown(out)))
        got.append((_pair(out[0], "theta", k), _pair(out[1], "velocity", k),
                    number(out[2], t("the loss returned at call {call}", call=k))))
        theta, velocity = out[0], out[1]  # the state goes back in, as the lab passes it from step to step
    want = heavy_ball()
    thetas, velocities = np.array([g[0] for g in got]), np.array([g[1] for g in got])
    want_thetas, want_velocities = np.array([w[0] for w in want]), np.array([w[1] for w in want])

    def same(u, v):
        return close(u, v, rtol=1e-4, atol=1e-6)

    if not same(thetas, want_thetas):
        name_the_mistake(thetas, lambda **how: np.array([w[0] for w in heavy_ball(**how)]), [
            ({"momentum": 0.0}, lazy("your step is plain SGD: the velocity must carry over, velocity = 0.9 * velocity "
                                     "+ gradient, and theta moves by lr * velocity")),
            ({"lrs": [STEP_LRS[0]] * len(STEP_LRS)}, lazy("every call used the first learning rate, {first}: the "
                                                          "checker passes {lrs}; use the lr argument")),
            ({"lrs": [-lr for lr in STEP_LRS]}, lazy("the step moved uphill: theta - lr * velocity")),
            ({"lrs": [0.0] * len(STEP_LRS)}, lazy("theta never changed: return the new theta, theta - lr * velocity")),
        ], same=same, first=STEP_LRS[0], lrs=", ".join(map(str, STEP_LRS)))
        k = int(np.argmax([not same(g, w) for g, w in zip(thetas, want_thetas)]))
        raise Incorrect(t("after call {call} (lr = {lr}) expected theta = {want}, got {got} (Momentum 0.9: velocity "
                          "= 0.9 * velocity + gradient of the MSE, theta = theta - lr * velocity)", call=k + 1,
                          lr=STEP_LRS[k], want=want_thetas[k].ravel().round(5).tolist(),
                          got=thetas[k].ravel().round(5).tolist()))
    if not same(velocities, want_velocities):
        raise Incorrect(t("theta is right, but the velocity you return is not 0.9 * velocity + gradient: return the "
                          "new one"))
    for k, ((_, _, loss), (_, _, before, after)) in enumerate(zip(got, want), start=1):
        if np.isclose(loss, after, rtol=1e-4, atol=1e-7) and not np.isclose(loss, before, rtol=1e-4, atol=1e-7):
            raise Incorrect(t("theta and the velocity are right, but the loss is the one after the update; return "
                              "the loss that came with the gradient (before the update), as TrainOneStepCell does"))
        if not np.isclose(loss, before, rtol=1e-4, atol=1e-7):
            raise Incorrect(t("theta and the velocity are right, but call {call} returned the loss {loss:.6f}; the "
                              "MSE before it is {before:.6f}", call=k, loss=loss, before=before))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
divergence_threshold = Exercise(_check_threshold, hints=[
    lazy("the loss is quadratic in (w, b), so its curvature (the Hessian) is the same everywhere"),
    lazy("the loss is quadratic, so its Hessian is constant: H = 2 * [[mean(x^2), mean(x)], [mean(x), 1]]. "
         "Gradient descent is stable while lr < 2 / (largest eigenvalue of H)"),
])
fastest_of_four = Prediction(
    lazy("Four SGD runs of 100 steps from the same start: lr = 0.05, 0.3, 0.6 and 0.85 (the stability bound "
         "is about 0.81, and above 1 / lambda_max, about 0.40, the path zig-zags). Which run ends closest to "
         "the least-squares fit?"),
    {"a": (lazy("lr = 0.3: the largest learning rate whose path is smooth"),
           lazy("a smooth path looks efficient, but at 0.3 the flat direction of the valley shrinks by only 1 - 0.3 * "
                "lambda_min, about 0.96, per step: after 100 steps it is close, not there")),
     "b": (lazy("lr = 0.6, zig-zag and all"),
           lazy("the zig-zag happens along the steep direction, where |1 - lr * lambda_max| is still below 1, so it "
                "dies out; meanwhile the flat direction, which limits the speed, shrinks twice as fast as at 0.3")),
     "c": (lazy("lr = 0.85: the largest steps cover the most ground"),
           lazy("0.85 is above the bound 2 / lambda_max: every step overshoots further than the last along the steep "
                "direction, and the loss grows by a constant factor per step"))},
    answer="b")
larger_is_faster = Prediction(
    lazy("Guiding question for the lab: with plain SGD and 100 steps, do larger learning rates always learn "
         "faster? Move the slider from 0.1 towards 0.8 and watch 'converged from step k'."),
    {"a": (lazy("yes, up to the stability bound 2 / lambda_max: a larger step covers more ground"),
           lazy("not up to the bound: close below it the steep direction's factor |1 - lr * lambda_max| approaches 1 "
                "again, and SGD needs far more steps there than somewhat lower down")),
     "b": (lazy("no: the fastest learning rate lies below the bound; beyond it the zig-zag along the steep direction "
                "dies out ever more slowly"),
           lazy("the slower of the two directions sets the pace: the flat one for small rates, the steep one's "
                "zig-zag for large ones (exercise 05.5 asks you to find the best compromise)")),
     "c": (lazy("no: above 1 / lambda_max, where the zig-zag starts, every larger rate is slower"),
           lazy("the zig-zag starts at about 0.40, but the flat direction still speeds up beyond it: the fastest rate "
                "zig-zags"))},
    answer="b")
adam_never_diverges = Prediction(
    lazy("Guiding question for the lab: switch to Adam and push the learning rate to its top, 10 (more than "
         "twelve times SGD's bound). What happens in 100 steps?"),
    {"a": (lazy("it diverges at once, like SGD above 2 / lambda_max"),
           lazy("Adam divides each gradient by its running size, so a step moves each coordinate by about lr whatever "
                "the curvature: nothing multiplies the error by more than 1 at every step")),
     "b": (lazy("it jumps far away at first, then comes back and ends healthy, near the fit"),
           lazy("each step is about lr long, so the first steps overshoot by several units; as the moving averages "
                "follow the sign changes the steps shrink, and the loss ends close to its minimum")),
     "c": (lazy("it stays where it starts: the step is clipped"),
           lazy("nothing is clipped: Adam's step is lr times the ratio of two moving averages, about 1 in size at the "
                "start, so at lr = 10 the first step moves w and b by about 10"))},
    answer="b")
fastest_sgd_lr = Exercise(_check_fastest, hints=[
    lazy("a learning rate has to suit both directions of the valley at once: the steep one and the flat one"),
    lazy("the steep direction wants a small lr, the flat one a large lr; the best compromise for plain gradient "
         "descent is lr = 2 / (lambda_min + lambda_max). Or search with the lab"),
])
momentum_threshold = Exercise(_check_momentum_threshold, hints=[
    lazy("momentum lets a step carry part of the previous one; on a quadratic that moves the stability bound"),
    lazy("for heavy-ball momentum (v = m v + g; p -= lr v) on a quadratic, the bound is 2 (1 + m) / lambda_max"),
])
article_recipe = Prediction(
    lazy("The article's recipe, lr = 0.01 for 100 steps, run with each optimizer from the same start. Which "
         "optimizer ends closest to the least-squares fit?"),
    {"a": (lazy("SGD, as article 000 says: for a network this small it performs best"),
           lazy("at lr = 0.01 SGD is the slowest of the three: each step moves 0.01 times a gradient that is small "
                "along the flat direction of the valley, and nothing builds up speed")),
     "b": (lazy("Momentum(0.9)"),
           lazy("on a smooth bowl the velocity builds up to about 1 / (1 - 0.9) = 10 times the gradient, so Momentum "
                "at 0.01 moves like SGD at about 0.1 once under way: it gets by far the closest")),
     "c": (lazy("Adam: adaptive learning rates fix a small lr"),
           lazy("Adam divides each gradient by its running size, so each step moves every coordinate by about lr, "
                "0.01, whatever the gradient: in 100 steps w cannot move much more than 1, and it needs about 2"))},
    answer="b")
momentum_step = FunctionExercise(_check_momentum_step, hints=[
    lazy("ms.value_and_grad(mse) gives a function returning the loss and its gradient with respect to mse's "
         "first argument, theta; the rest is two lines of arithmetic on Tensors"),
    lazy("loss, grad = ms.value_and_grad(mse)(theta, a, y); velocity = 0.9 * velocity + grad; return theta - lr * "
         "velocity, velocity, loss"),
], signature="momentum_step(theta, velocity, a, y, lr)")

bind(globals())
