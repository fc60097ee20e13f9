"""Exercises of notebook 05 (the learning-rate lab).

The oracles here work from the data alone, in float64 numpy: the curvature of the MSE loss of a one-weight
net in closed form, and nn.Momentum's rule. They share no code with the notebook or with the lab.
"""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import (
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

MOMENTUM = 0.9


# ---- 05.1, 05.5, 05.6: MinimalNet without its bias (y ~ w x), on the checker's own data sets -----------
# One weight: the loss mean((w x - y)^2) has the single curvature lambda = 2 mean(x^2). The lesson derives the
# bounds for the net with a bias (a 2 x 2 Hessian) on the course data; these ask for the one-weight case, on
# data the notebook never shows. The oracles are closed forms in float64 (tests/test_checks_nb05.py runs
# MindSpore's nn.SGD and nn.Momentum at and around them).
CHECK_XS = tuple(np.asarray(v, dtype=np.float32).reshape(-1, 1) for v in (
    np.linspace(0.0, 3.0, 40),
    np.linspace(-1.0, 1.0, 25) + 0.3,
    2.0 + 3.0 * np.random.default_rng(5).random(60),
))
CHECK_BETAS = (0.5, 0.8, 0.3)


def _curvature(x):
    """lambda = 2 mean(x^2): the second derivative in w of mean((w x - y)^2)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    return 2.0 * float(np.mean(x * x))


def _with_bias_eigenvalues(x):
    x = np.asarray(x, dtype=np.float64).ravel()
    return np.linalg.eigvalsh(2.0 * np.array([[np.mean(x * x), np.mean(x)], [np.mean(x), 1.0]]))


def _one_weight(exercise, what, oracle, mistakes, above, below, settings):
    """A checker of the function asked for by the exercise named ``exercise``, of the data (and β), whose value
    must be ``oracle(x, *args)`` within 1 % on every (x, *args) of ``settings``. ``mistakes(x, *args)`` lists
    (wrong value, message) for one setting."""
    def check(fn):
        for k, (x, *args) in enumerate(settings, start=1):
            try:
                result = globals()[exercise].call(fn, x.copy(), *args)
            except Incorrect:
                raise
            except Exception as error:  # noqa: BLE001  (the learner's code: say what it raised, in one line)
                raise Incorrect(t("{what} raised {error} on data set {k}: {why}", what=what,
                                  error=type(error).__name__, k=k, why=brief_error(error))) from None
            got = number(result, t("the value of {what} on data set {k}", what=what, k=k))
            if got <= 0:
                raise Incorrect(t("{what} returned {value} on data set {k}: a learning rate must be > 0 (a rate of 0"
                                  " never moves, a negative one climbs the loss)", what=what, value=got, k=k))
            want = oracle(x, *args)
            if abs(got - want) <= 0.01 * want:
                continue
            for wrong, why in mistakes(x, *args):
                if abs(got - wrong) <= 0.01 * abs(wrong):
                    raise Incorrect(t(why, value=got, k=k))
            side = above if got > want else below
            raise Incorrect(t(side, value=got, k=k, lo=float(x.min()), hi=float(x.max()),
                              beta=args[0] if args else 0.0))
    return check


def _threshold_mistakes(x):
    lam = _curvature(x)
    return [(1.0 / lam, lazy("on data set {k}, {value:.4g} is 1 / lambda: there gradient descent still converges, "
                             "in one step. Look at the factor a step multiplies the distance by")),
            (4.0 / lam, lazy("on data set {k}, plain gradient descent diverges at lr={value:.4g}: differentiate "
                             "nn.MSELoss twice in w again, every constant kept")),
            (2.0 / _with_bias_eigenvalues(x)[1], lazy("on data set {k}, {value:.4g} is 2 / lambda_max of the net "
                                                      "WITH a bias (the 2 x 2 Hessian of section 1): this net has "
                                                      "one weight, and its Hessian is a single number"))]


def _fastest_mistakes(x):
    lam = _curvature(x)
    lam_min, lam_max = _with_bias_eigenvalues(x)
    return [(2.0 / lam, lazy("on data set {k}, at lr={value:.4g} every step flips the error's sign and never "
                             "shrinks it: that is the edge of stability, not the fastest rate")),
            (0.5 / lam, lazy("on data set {k}, {value:.4g} converges, but not in the fewest steps: a step "
                             "multiplies the distance by (1 - lr * lambda); make that factor as small as it can be")),
            (2.0 / (lam_min + lam_max), lazy("on data set {k}, {value:.4g} is 2 / (lambda_min + lambda_max) of the "
                                             "net WITH a bias: a compromise between two directions. This net has "
                                             "one direction, so no compromise is needed"))]


def _momentum_mistakes(x, beta):
    lam = _curvature(x)
    return [(2.0 / lam, lazy("on data set {k}, {value:.4g} is plain SGD's bound: Momentum carries part of the "
                             "previous step, and that moves the bound; it depends on beta")),
            (2.0 * (1.0 - beta) / lam, lazy("on data set {k}, momentum widens the stable range, it does not "
                                            "shrink it: check the sign of beta where z = -1 solves the equation")),
            (4.0 * (1.0 + beta) / lam, lazy("on data set {k}, nn.Momentum diverges at lr={value:.4g}: "
                                            "differentiate nn.MSELoss twice in w again, every constant kept")),
            (2.0 * (1.0 + beta) / _with_bias_eigenvalues(x)[1],
             lazy("on data set {k}, {value:.4g} uses lambda_max of the net WITH a bias: this net has one "
                  "weight, so a single curvature"))]


_check_threshold = _one_weight(
    "divergence_threshold", "threshold(x)", lambda x: 2.0 / _curvature(x), _threshold_mistakes,
    lazy("on data set {k} (x from {lo:.2f} to {hi:.2f}) plain gradient descent diverges at lr={value:.4g}: "
         "your threshold is too large"),
    lazy("on data set {k} (x from {lo:.2f} to {hi:.2f}) plain gradient descent still converges above "
         "lr={value:.4g}: your threshold is too small"),
    [(x,) for x in CHECK_XS])
_check_fastest = _one_weight(
    "fastest_sgd_lr", "fastest_lr(x)", lambda x: 1.0 / _curvature(x), _fastest_mistakes,
    lazy("on data set {k} (x from {lo:.2f} to {hi:.2f}) lr={value:.4g} overshoots: the distance to the "
         "minimum changes sign at every step. A smaller rate gets there in fewer steps"),
    lazy("on data set {k} (x from {lo:.2f} to {hi:.2f}) lr={value:.4g} converges, but a larger rate gets there "
         "in fewer steps"),
    [(x,) for x in CHECK_XS])
_check_momentum_threshold = _one_weight(
    "momentum_threshold", "momentum_threshold(x, beta)", lambda x, beta: 2.0 * (1.0 + beta) / _curvature(x),
    _momentum_mistakes,
    lazy("on data set {k} (x from {lo:.2f} to {hi:.2f}, beta = {beta}) nn.Momentum diverges at lr={value:.4g}: "
         "your bound is too large"),
    lazy("on data set {k} (x from {lo:.2f} to {hi:.2f}, beta = {beta}) nn.Momentum still converges above "
         "lr={value:.4g}: your bound is too small"),
    [(x, beta) for x, beta in zip(CHECK_XS, CHECK_BETAS)])


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
        raise Incorrect(t("momentum_step is not compiled: the exercise asks for a function compiled with @ms.jit "
                          "(the lab runs its steps as one compiled graph, reused for every learning rate)"))
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
            ({"momentum": 0.0}, lazy("your step is plain SGD: theta moves as if no velocity carried over from one "
                                     "call to the next")),
            ({"lrs": [STEP_LRS[0]] * len(STEP_LRS)}, lazy("every call moved theta as the first learning rate, "
                                                          "{first}, would, but the checker passed {lrs}")),
            ({"lrs": [-lr for lr in STEP_LRS]}, lazy("the step moved uphill, where the loss is larger")),
            ({"lrs": [0.0] * len(STEP_LRS)}, lazy("theta never changed: the theta you return is the one passed in")),
        ], same=same, first=STEP_LRS[0], lrs=", ".join(map(str, STEP_LRS)))
        k = int(np.argmax([not same(g, w) for g, w in zip(thetas, want_thetas)]))
        raise Incorrect(t("after call {call} (lr = {lr}) expected theta = {want}, got {got} (Momentum 0.9: velocity "
                          "= 0.9 * velocity + gradient of the MSE, theta = theta - lr * velocity)", call=k + 1,
                          lr=STEP_LRS[k], want=want_thetas[k].ravel().round(5).tolist(),
                          got=thetas[k].ravel().round(5).tolist()))
    if not same(velocities, want_velocities):
        raise Incorrect(t("theta is right, but the velocity you return is not the updated one"))
    for k, ((_, _, loss), (_, _, before, after)) in enumerate(zip(got, want), start=1):
        if np.isclose(loss, after, rtol=1e-4, atol=1e-7) and not np.isclose(loss, before, rtol=1e-4, atol=1e-7):
            raise Incorrect(t("theta and the velocity are right, but the loss is the one after the update, not the "
                              "one that came with the gradient"))
        if not np.isclose(loss, before, rtol=1e-4, atol=1e-7):
            raise Incorrect(t("theta and the velocity are right, but call {call} returned the loss {loss:.6f}; the "
                              "MSE before it is {before:.6f}", call=k, loss=loss, before=before))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
divergence_threshold = FunctionExercise(_check_threshold, hints=[
    lazy("with one weight the Hessian is a single number: the second derivative of mean((w x - y)^2) in w"),
    lazy("a step multiplies the distance to the minimum by (1 - lr * lambda), as section 1 says: for which "
         "learning rates does that factor still shrink the distance?"),
], signature="threshold(x)")
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
                "zig-zag for large ones (section 3 works out the best compromise)")),
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
fastest_sgd_lr = FunctionExercise(_check_fastest, hints=[
    lazy("with one weight there is one direction only: no compromise between a steep and a flat one"),
    lazy("a step multiplies the distance to the minimum by (1 - lr * lambda), with lambda from exercise 05.1: "
         "which learning rate makes that factor as small as it can be?"),
], signature="fastest_lr(x)")
momentum_threshold = FunctionExercise(_check_momentum_threshold, hints=[
    lazy("try e_k = z^k in the recurrence: z solves z^2 - (1 + beta - lr * lambda) z + beta = 0, and the run "
         "converges while both roots have |z| < 1"),
    lazy("as lr grows, a root leaves the unit circle through z = -1: which lr puts a root exactly there?"),
], signature="momentum_threshold(x, beta)")
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
    lazy("the order matters: the velocity is updated first, theta then moves with the NEW velocity, and the loss "
         "to return is the one that came with the gradient"),
], signature="momentum_step(theta, velocity, a, y, lr)")

bind(globals())
