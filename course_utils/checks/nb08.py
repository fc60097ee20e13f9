"""Exercises of notebook 08 (debugging training).

The runs to diagnose are simulated here with plain numpy gradient descent, in float32 like MindSpore, so
the checks share no code with the notebook. Fixes are checked against closed-form facts (2/λmax of the
loss Hessian) and numpy gradient descent. Two predictions: what a learning rate just above the limit does,
and what set_data does after the optimizer has stepped in PyNative mode.
"""

from functools import partial

import numpy as np

from course_utils import oracles
from course_utils._validate import shown
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    bind,
    brief_error,
    close,
    name_the_mistake,
    number,
)
from course_utils.messages import lazy, t

TOO_LARGE = "learning rate too large"
TOO_SMALL = "learning rate too small"
BADLY_SCALED = "inputs badly scaled"
WRONG_SHAPE = "targets of the wrong shape"
FROZEN = "parameters frozen by set_data"
HEALTHY = "healthy"
CAUSES = (TOO_LARGE, TOO_SMALL, BADLY_SCALED, WRONG_SHAPE, FROZEN, HEALTHY)

_STEPS = 100
_TRUTH = {"A": BADLY_SCALED, "B": FROZEN, "C": TOO_LARGE, "D": HEALTHY, "E": WRONG_SHAPE, "F": TOO_SMALL}
_CLUES = {  # translated with t() where shown
    TOO_LARGE: lazy("compare its lr with 2/λmax of its x"),
    TOO_SMALL: lazy("compare its lr with 2/λmax of its x, and look at the end of its loss curve"),
    BADLY_SCALED: lazy("look at the range of its x"),
    WRONG_SHAPE: lazy("compare its final loss with np.var(run['y'])"),
    FROZEN: lazy("look at its parameters after the loss jumps back up"),
    HEALTHY: lazy("read its health report"),
}


def _simulate(x, y, lr, wrong_shape=False, freeze_at=None, w0=0.01, b0=0.0):
    """Full-batch gradient descent on y = w*x + b in float32: one run of :func:`mystery_runs`."""
    f32 = np.float32
    xs, ys, step_size = x.astype(f32).ravel(), y.astype(f32).ravel(), f32(lr)
    target = np.full_like(ys, ys.mean()) if wrong_shape else ys  # (n,1) - (n,) broadcasts to the mean of y
    extra = f32(ys.var()) if wrong_shape else f32(0)
    w, b = f32(w0), f32(b0)
    losses, norms, params = [], [], [(w, b)]
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(_STEPS):
            err = w * xs + b - target
            gw, gb = f32(2) * np.mean(err * xs), f32(2) * np.mean(err)
            losses.append(np.mean(err * err) + extra)
            norms.append(np.sqrt(gw * gw + gb * gb))
            if freeze_at is None or step < freeze_at:
                w, b = w - step_size * gw, b - step_size * gb
            elif step == freeze_at:  # "start again" with set_data: the values reset, then never move
                w, b = f32(w0), f32(b0)
            params.append((w, b))
    return {"x": x.copy(), "y": y.copy(), "lr": float(lr), "loss": np.array(losses, f32),
            "grad_norm": np.array(norms, f32), "params": np.array(params, f32)}


def mystery_runs():
    """Six simulated runs, "A" to "F". Each is a dict with the data (x, y), the learning rate lr, and what
    was recorded at each step: loss, grad_norm (before any clipping) and params (rows of (w, b), the first
    row before the first step)."""
    rng = np.random.RandomState(6)
    x = rng.rand(100, 1).astype(np.float32)
    y = (2 * x + 1 + rng.normal(0, 0.01, (100, 1))).astype(np.float32)
    x_mm = (1000 * x).astype(np.float32)
    setups = {TOO_LARGE: (x, y, 1.2), TOO_SMALL: (x, y, 0.002),
              BADLY_SCALED: (x_mm, y, 0.9 * (2.0 / oracles.lambda_max(x_mm))),  # 90% of its 2/λmax
              WRONG_SHAPE: (x, y.ravel(), 0.5, True), FROZEN: (x, y, 0.5, False, 40), HEALTHY: (x, y, 0.5)}
    return {name: _simulate(*setups[cause]) for name, cause in _TRUTH.items()}


def _check_diagnosis(answer):
    if not isinstance(answer, dict):
        raise Incorrect(t("expected a dict such as {{'A': '{healthy}', ...}}, got {kind}", healthy=HEALTHY,
                          kind=type(answer).__name__))
    extra = [shown(k) for k in answer if not (isinstance(k, str) and k in _TRUTH)]
    if extra:
        raise Incorrect(t("the runs are named {names}; there is no run {extra}", names=", ".join(sorted(_TRUTH)),
                          extra=", ".join(extra)))
    missing = sorted(set(_TRUTH) - set(answer))
    if missing:
        raise Incorrect(t("give a cause for every run; missing: {missing}", missing=", ".join(missing)))
    unknown = {k: shown(v) for k, v in answer.items() if not (isinstance(v, str) and v in CAUSES)}
    if unknown:
        raise Incorrect(t("use the names in nb08.CAUSES exactly; not one of them: {unknown}", unknown=unknown))
    wrong = [k for k in sorted(_TRUTH) if answer[k] != _TRUTH[k]]
    if wrong:
        clues = t("run {run}: {clue}", run=wrong[0], clue=t(_CLUES[_TRUTH[wrong[0]]]))  # one clue: not a key to all
        raise Incorrect(t("{wrong} of {total} causes are wrong. {clues}", wrong=len(wrong), total=len(_TRUTH),
                          clues=clues))


def broken_data():
    """The broken set-up of exercise 08.3: x_raw in millimetres (0 to 1000) and y_raw, float64, shape (100,)."""
    rng = np.random.RandomState(62)
    x_raw = 1000 * rng.rand(100)
    y_raw = 0.002 * x_raw + 1 + rng.normal(0, 0.01, 100)
    return x_raw, y_raw


def _check_fixed_setup(answer):
    if not isinstance(answer, (tuple, list)) or len(answer) != 3:
        raise Incorrect(t("expected a tuple (x_fixed, y_fixed, lr)"))
    x, y, lr = answer
    x_raw, y_raw = broken_data()
    for name, arr in (("x_fixed", x), ("y_fixed", y)):
        if not isinstance(arr, np.ndarray):
            raise Incorrect(t("{name} must be a numpy array, got {kind}", name=name, kind=type(arr).__name__))
        if arr.dtype != np.float32 or arr.shape != (100, 1):
            raise Incorrect(t("{name} must be float32 of shape (100, 1) like the net's weights and predictions, "
                              "got {dtype} {shape} (section 1)", name=name, dtype=arr.dtype, shape=arr.shape))
        if not np.all(np.isfinite(arr)):
            raise Incorrect(t("{name} contains NaN or inf: rescaling finite data gives finite numbers", name=name))
    if not close(y.ravel(), y_raw, rtol=1e-6, atol=1e-6):
        raise Incorrect(t("y_fixed must hold the same targets as y_raw, in the same order: fix the inputs, not the "
                          "targets"))
    design = np.stack([x_raw, np.ones_like(x_raw)], axis=1)
    coef = np.linalg.lstsq(design, x.ravel().astype(np.float64), rcond=None)[0]
    residual = x.ravel() - design @ coef
    if not (abs(coef[0]) >= 1e-12 and np.max(np.abs(residual)) <= 1e-4 * (np.std(x) + 1e-12)):
        raise Incorrect(t("x_fixed must be x_raw rescaled (a * x_raw + c), in the same order"))
    lr = number(lr, t("lr"))
    if lr <= 0:
        raise Incorrect(t("lr must be a positive number, got {lr:g}", lr=lr))
    limit = 2.0 / oracles.lambda_max(x)  # 2/λmax of the loss Hessian: gradient descent diverges above it
    if lr >= limit:
        raise Incorrect(t("lr = {lr:.4g} is above 2/λmax = {limit:.4g} for your x_fixed: gradient descent diverges",
                          lr=lr, limit=limit))
    ws, bs, _ = oracles.gradient_descent(x, y, lr, _STEPS)
    xs, ys = x.ravel().astype(np.float64), y.ravel().astype(np.float64)
    with np.errstate(all="ignore"):  # a rescaling to huge numbers overflows: the loss is then inf, rejected
        loss = np.mean((ws[-1] * xs + bs[-1] - ys) ** 2)
    if not loss <= 1e-3:
        raise Incorrect(t("stable, but after {steps} steps from w = b = 0 the loss is still {loss:.3g}: what does the "
                          "scale of your x_fixed do to the loss's valley (section 4)?", steps=_STEPS, loss=loss))


RESTORE_X = np.linspace(-1, 1, 24, dtype=np.float32).reshape(12, 2)
RESTORE_Y = (np.sin(3 * RESTORE_X[:, :1]) + RESTORE_X[:, 1:] ** 2).astype(np.float32)


def _restore_values():
    """The values the check pulls towards: float64 arrays (as numpy makes them), one per parameter of a 2-4-1 ReLU
    net."""
    rng = np.random.RandomState(8)
    return {"hidden.weight": rng.normal(0, 0.8, (4, 2)), "hidden.bias": rng.normal(0, 0.3, (4,)),
            "out.weight": rng.normal(0, 0.8, (1, 4)), "out.bias": np.array([0.2])}


def _numpy_descent(values, lr, steps):
    """Gradient descent on the MSE of the 2-4-1 ReLU net, in float64: the oracle the check compares with."""
    w1, b1, w2, b2 = (np.array(values[k], np.float64) for k in ("hidden.weight", "hidden.bias", "out.weight",
                                                                  "out.bias"))
    x, y = RESTORE_X.astype(np.float64), RESTORE_Y.astype(np.float64)
    for _ in range(steps):
        z = x @ w1.T + b1
        h = np.maximum(z, 0)
        err = h @ w2.T + b2 - y
        g_out = 2 * err / err.size
        g_w2, g_b2 = g_out.T @ h, g_out.sum(axis=0)
        g_z = (g_out @ w2) * (z > 0)
        g_w1, g_b1 = g_z.T @ x, g_z.sum(axis=0)
        w1, b1, w2, b2 = w1 - lr * g_w1, b1 - lr * g_b1, w2 - lr * g_w2, b2 - lr * g_b2
    return {"hidden.weight": w1, "hidden.bias": b1, "out.weight": w2, "out.bias": b2}


PULL_ALPHA = 0.3  # 08.5: not 0.5, so that a share alpha and a share 1 - alpha differ


def pull_oracle(before, values, share=PULL_ALPHA):
    """Every parameter moved ``share`` of the way from its value ``before`` to ``values[name]``, in float64: the
    exercise's rule with share = alpha, or a typical mistake (1: all the way; 1 - alpha; 0: not at all)."""
    return {name: before[name] + share * (values[name] - before[name]) for name in values}


PULL_MISTAKES = (
    ({"share": 1.0}, lazy("after pull_towards(net, values, {alpha}), every Parameter holds values[its name]: it went "
                          "all the way")),
    ({"share": 1.0 - PULL_ALPHA}, lazy("after pull_towards(net, values, {alpha}), every Parameter moved {wrong:.0%} "
                                       "of the way from its value to values[its name]")),
    ({"share": 0.0}, lazy("after pull_towards(net, values, {alpha}), every Parameter still holds its trained value")),
)


def _check_pull(pull_towards):
    import mindspore as ms
    from mindspore import Tensor, nn

    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)  # the trap exists in PyNative, the course's default mode
    try:
        net = nn.Cell()  # a 2-4-1 ReLU net whose parameters are named hidden.weight ... out.bias
        net.hidden, net.relu = nn.Dense(2, 4), nn.ReLU()
        net.out = nn.Dense(4, 1)
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
        loss_fn = nn.MSELoss()
        grad_fn = ms.value_and_grad(lambda xb, yb: loss_fn(net.out(net.relu(net.hidden(xb))), yb), None,
                                    optimizer.parameters)

        def train_and_read(steps):
            for _ in range(steps):
                optimizer(grad_fn(Tensor(RESTORE_X), Tensor(RESTORE_Y))[1])
            return {p.name: p.asnumpy().astype(np.float64) for p in net.trainable_params()}

        before = train_and_read(3)  # the optimizer has stepped: the trap is armed
        values = _restore_values()
        want = pull_oracle(before, values)
        try:
            pull_towards(net, {name: value.copy() for name, value in values.items()}, PULL_ALPHA)
            got = train_and_read(0)
            same = partial(_same_values, got)
            if not same(want):
                name_the_mistake(got, partial(pull_oracle, before, values), PULL_MISTAKES, same=_same_values,
                                 alpha=PULL_ALPHA, wrong=1.0 - PULL_ALPHA)
                name = next(name for name in want if not same({name: want[name]}))
                raise Incorrect(t("after pull_towards(net, values, {alpha}), {name} is not {alpha} of the way from "
                                  "its value to values[{name!r}] (the check reads every Parameter of "
                                  "net.trainable_params() by its name)", alpha=PULL_ALPHA, name=name))
            after = train_and_read(3)
        except (RuntimeError, TypeError, ValueError) as error:
            if "C++ Call Stack" not in str(error):  # not MindSpore's: the verdict shows it with its line
                raise
            raise Incorrect(t("pull_towards(net, values, alpha) made MindSpore raise {error}: {message} (the values "
                              "are float64 numpy arrays; each Parameter here is float32)", error=type(error).__name__,
                              message=brief_error(error))) from None
    finally:
        ms.set_context(mode=mode)
    if all(np.array_equal(after[name], got[name]) for name in got):
        raise Incorrect(t("the new values are in place, but 3 steps of SGD then left them unchanged although the "
                          "gradient is not zero: the PyNative set_data trap of section 5"))
    expected = _numpy_descent(want, 0.1, 3)
    for name in expected:
        if not np.allclose(after[name], expected[name], rtol=1e-4, atol=1e-5):
            raise Incorrect(t("training after pull_towards went elsewhere than gradient descent from the new values: "
                              "{name} differs (did every Parameter get its value, and only its own?)", name=name))


def _same_values(got, want):
    """Every parameter of ``want`` has its shape and value in ``got`` (float32 against float64)."""
    return all(got[name].shape == np.shape(value) and np.allclose(got[name], value, rtol=1e-5, atol=1e-6)
               for name, value in want.items())


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
just_above_limit = Prediction(
    lazy("The largest stable learning rate here is 2/λmax = 0.807. What does the loss do in 100 steps at lr = 0.85, 5% "
         "above it?"),
    {"a": (lazy("it still falls, only more slowly or with some wobble: 5% is a small excess"),
           lazy("5% sounds harmless, but the limit is sharp. Along the steepest direction each step multiplies the "
                "error by 1 - lr·λmax = 1 - 0.85·2.48 = -1.11: the error grows 11% per step, the loss 23%, whatever "
                "happens in the other direction")),
     "b": (lazy("it grows at every step, past 1e8 after 100 steps, but stays finite: no inf, no NaN"),
           lazy("a factor of 1.11 per step on the error is about 1.23 on the loss: 1.23^100 is about 1e9. Divergence "
                "at the limit is slow; it takes a larger lr (1.1 here) to overflow float32 to inf within 100 steps, "
                "and NaN comes only after inf")),
     "c": (lazy("it becomes NaN within a few steps"),
           lazy("NaN is what people remember of divergence, but it is the last stage: the loss must first overflow "
                "float32 (inf, about 3e38), and only then does inf - inf give NaN. Just above the limit the growth is "
                "about 23% per step, far too slow for that in 100 steps"))},
    answer="b")
diagnosis = Exercise(_check_diagnosis, hints=[
    lazy("start from the symptom: the training-health report of section 2 names it from the run's curves"),
    lazy("section 2's report, given each run's own baseline, names the symptom; for the cause, set each run's lr "
         "beside its own 2/λmax (section 3), and look at the range of its x and the shape of its y"),
])
fixed_setup = Exercise(_check_fixed_setup, parts=3, hints=[
    lazy("three things are wrong with this setup: the arrays' dtype and shape, the scale of x, and the learning "
         "rate; fix them in that order"),
    lazy("sections 1 and 4 show the first two fixes; once x is rescaled, its own 2/λmax (stable_lr_limit) says which "
         "learning rates are stable"),
])
set_data_after_steps = Prediction(
    lazy("In PyNative mode, after 20 steps you put the initial weight and bias back with Parameter.set_data and train "
         "20 more steps with the same optimizer. What happens?"),
    {"a": (lazy("training starts again and repeats the first run's losses exactly"),
           lazy("that is what happens in graph mode with a TrainOneStepCell (the Going further section at the end "
                "shows it), and it is what set_data promises. In PyNative, once the optimizer has stepped, the new "
                "data is no longer what the optimizer updates")),
     "b": (lazy("the parameters take the initial values and then never move again: the loss stays at its first value"),
           lazy("set_data replaces the parameter's data, but in PyNative, once the optimizer has stepped, its updates "
                "no longer reach the values you read: they stay frozen, with no error and no warning, although the "
                "gradient is large. ops.assign writes into the existing parameter and keeps it trainable")),
     "c": (lazy("set_data raises an error, because the optimizer holds the parameters"),
           lazy("nothing is raised and nothing is logged: the values have the right shape and dtype, and MindSpore "
                "sees nothing wrong. That silence is what makes the trap hard to see")),
     "d": (lazy("the new values are ignored: the parameters keep their trained values and training goes on"),
           lazy("the values do change: reading the parameters after set_data gives exactly the initial values. What "
                "stops is the updating afterwards"))},
    answer="b")
pull_towards = FunctionExercise(_check_pull, signature="pull_towards(net, values, alpha)", hints=[
    lazy("set_data after the optimizer has stepped silently stops the updates (section 5): each new value must go "
         "into the Parameter the optimizer already holds"),
    lazy("for every Parameter of net.trainable_params(), the new value comes from its current value and "
         "values[its name], made float32 first; write it with the op of section 5's fix"),
])

bind(globals())
