"""Exercises of notebook 13 (graph mode and PyNative: compile cost, recompiles, what construct may hold)."""

import re

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
    number,
)
from course_utils.messages import lazy, t

# ---- 13.2 which mode finishes first, when every batch shape compiles -----------------------------
# (n_steps, n_shapes, compile_s, pynative_step_s, graph_step_s): typical of a laptop, and the edges that matter.
# Graph mode compiles once per batch shape it meets (the lesson's formula has one compile).
_MODE_CASES = [
    (10, 1, 0.4, 0.010, 0.0004),     # a short run: the compile is never paid back
    (1000, 1, 0.4, 0.010, 0.0004),   # a long run: graph mode wins by far
    (100, 3, 0.4, 0.010, 0.0004),    # three shapes: three compiles cost more than 100 PyNative steps
    (1000, 3, 0.4, 0.010, 0.0004),   # ... but a long run still pays them back
    (125, 3, 0.4, 0.010, 0.0004),    # just before the break-even point of three compiles
    (126, 3, 0.4, 0.010, 0.0004),    # just after it
    (4, 2, 0.5, 0.5, 0.25),          # an exact tie (exact in binary floating point): compiling gains nothing
    (0, 2, 0.4, 0.010, 0.0004),      # no steps at all
    (10**6, 1, 0.4, 0.001, 0.002),   # the compiled step is slower: graph mode never catches up
]


def _faster_oracle(n_steps, n_shapes, compile_s, pynative_step_s, graph_step_s):
    return "graph" if n_shapes * compile_s + n_steps * graph_step_s < n_steps * pynative_step_s else "pynative"


def _check_faster_mode(answer):
    for case in _MODE_CASES:
        got = faster_mode.call(answer, *case)
        if not (isinstance(got, str) and got in ("graph", "pynative")):
            raise Incorrect(t("faster_mode{case} returned {got}; return the string 'graph' or 'pynative'", case=case,
                              got=shown(got)))
        want = _faster_oracle(*case)
        if got != want:
            n, k, c, p, g = case
            if k > 1 and k * c + n * g != n * p and got == _faster_oracle(n, 1, c, p, g):
                raise Incorrect(t("faster_mode{case} gives {got!r}, expected {want!r}: with {k} batch shapes graph "
                                  "mode compiles {k} times, not once", case=case, got=got, want=want, k=k))
            raise Incorrect(t("faster_mode{case} gives {got!r}, expected {want!r}: {n} PyNative steps take "
                              "{pynative_s:.4f} s, the compiles and {n} graph steps take {graph_s:.4f} s (graph mode "
                              "must be strictly faster to be worth its compiles)", case=case, got=got, want=want, n=n,
                              pynative_s=n * p, graph_s=k * c + n * g))


# ---- 13.4 one compile, whatever the caller passes --------------------------------------------------
# The checker's calls of scale(x, factor): Python floats and ints, and Tensors of three dtypes, on x of two
# shapes of its own. Only the shape of x may cause a compile: 2 in all.
_SCALE_SHAPES = ((7, 3), (4, 3))


def _scale_factors():
    """(label, factor, a Python number?) for each factor of the checker's calls."""
    import mindspore as ms
    from mindspore import Tensor

    return [(lazy("the Python float 0.5"), 0.5, True), (lazy("the Python float -1.25"), -1.25, True),
            (lazy("the Python int 2"), 2, True), (lazy("a float32 Tensor 0.25"), Tensor(0.25, ms.float32), False),
            (lazy("an int32 Tensor 3"), Tensor(3, ms.int32), False),
            (lazy("a float64 Tensor 1.5"), Tensor(1.5, ms.float64), False)]


def _why_it_compiled(python_number):
    if python_number:
        return t("a Python number reaches the graph as a constant, so a new value compiles again; even through "
                 "ms.mutable an int and a float are different types. Hand the compiled function one kind of Tensor")
    return t("a Tensor's dtype is part of what a graph is compiled for: a new dtype compiles a new graph. Give the "
             "compiled function the same dtype every time")


def _check_make_scale(make_scale):
    import mindspore as ms
    from mindspore import Tensor

    compiles = []

    @ms.constexpr
    def on_compile():
        compiles.append(1)

    scale = scale_once.call(make_scale, on_compile)
    if not callable(scale):
        raise Incorrect(t("make_scale(on_compile) returned {scale}; return the function scale(x, factor)",
                          scale=shown(scale)))
    rng = np.random.default_rng(13)
    calls, factors = 0, _scale_factors()
    for shape in _SCALE_SHAPES:
        x = rng.normal(0.0, 1.0, shape).astype(np.float32)
        for text, factor, python_number in factors:
            label, before = t(text), len(compiles)
            out = scale_once.call(scale, Tensor(x), factor)
            calls += 1
            if not isinstance(out, Tensor):
                raise Incorrect(t("scale(x, {label}) returned {out}; return the Tensor MindSpore computed",
                                  label=label, out=shown(out)))
            if out.dtype != ms.float32:
                raise Incorrect(t("scale(x, {label}) returned a {dtype} Tensor; the result must be float32, like x",
                                  label=label, dtype=out.dtype))
            want = x.astype(np.float64) * float(factor.asnumpy() if isinstance(factor, Tensor) else factor)
            got = array(out, t("scale(x, {label})", label=label))
            if got.shape != want.shape or not close(got, want, rtol=1e-6, atol=1e-6):
                raise Incorrect(t("scale(x, {label}) is not x * factor: for x of shape {shape} the first row should "
                                  "be {want}, got {got}", label=label, shape=shape, want=np.round(want[0], 4).tolist(),
                                  got=np.round(got.reshape(-1)[:shape[1]], 4).tolist()))
            if calls == 1 and compiles:  # the same call again: a compiled function reuses its graph
                scale(Tensor(x), factor)
                if len(compiles) > before + 1:
                    raise Incorrect(t("on_compile() ran again for the very same call: the function that calls it "
                                      "runs eagerly, it is not compiled. Decorate it with @ms.jit"))
            new_shape = shape != _SCALE_SHAPES[0] and text is factors[0][0]
            if len(compiles) > before and before >= 1 and not new_shape:
                raise Incorrect(t("scale(x, {label}) compiled a new graph ({count} so far): {why}", label=label,
                                  count=len(compiles), why=_why_it_compiled(python_number)))
    if not compiles:
        raise Incorrect(t("on_compile() never ran: call it at the start of the body of your @ms.jit function, so "
                          "that the check can count the compiles"))
    if len(compiles) != len(_SCALE_SHAPES):
        raise Incorrect(t("{count} compiles for {calls} calls on x of {shapes} shapes; expected one per shape of x",
                          count=len(compiles), calls=calls, shapes=len(_SCALE_SHAPES)))


# ---- 13.5 a schedule with momentum that compiles once ----------------------------------------------
SCHEDULE = [0.4 * 0.7 ** k for k in range(6)]  # the checker's decaying learning rates (the lesson's: 0.5 * 0.8**k)
MOMENTUM = 0.9  # v <- MOMENTUM * v + g, p <- p - lr * v (the lesson's step has no momentum)
_traces = []


def _schedule_data():
    """The checker's own task: 2 features, 12 samples, and starting weights (not the lesson's y = 2x)."""
    rng = np.random.default_rng(10)
    x = rng.uniform(-1.0, 1.0, (12, 2)).astype(np.float32)
    y = (x @ np.array([[0.8], [-1.2]]) + 0.5 + rng.normal(0.0, 0.05, (12, 1))).astype(np.float32)
    w0 = rng.normal(0.0, 0.3, (1, 2)).astype(np.float32)
    return x, y, w0


def schedule_oracle(schedule=None, momentum=MOMENTUM):
    """Float64 gradient descent with momentum, one learning rate per step: (loss before each step, w, b).

    ``momentum=0`` is plain gradient descent (the mistake of dropping the velocity)."""
    x, y, w0 = _schedule_data()
    x, y, w, b = x.astype(np.float64), y.astype(np.float64), w0.astype(np.float64).T, 0.0
    vw, vb = np.zeros_like(w), 0.0
    losses = []
    for lr in SCHEDULE if schedule is None else schedule:
        err = x @ w + b - y
        losses.append(float(np.mean(err ** 2)))
        vw, vb = momentum * vw + 2 * x.T @ err / len(x), momentum * vb + 2 * float(np.mean(err))
        w, b = w - lr * vw, b - lr * vb
    return np.array(losses), w.ravel(), b


def _counting_loss():
    """An MSE Cell that counts how often Python traces it: once per compile inside @ms.jit, once per call
    when it runs eagerly (PyNative)."""
    import mindspore as ms
    from mindspore import nn, ops

    @ms.constexpr
    def traced():
        _traces.append(1)

    class CountingMSE(nn.Cell):
        def construct(self, pred, label):
            traced()
            return ops.mean((pred - label) ** 2)

    return CountingMSE()


def _check_schedule_train(answer):
    from mindspore import Tensor, nn

    x, y, w0 = _schedule_data()
    net = nn.Dense(2, 1, weight_init=Tensor(w0), bias_init="zeros")
    _traces.clear()
    losses = schedule_train.call(answer, net, _counting_loss(), Tensor(x), Tensor(y), list(SCHEDULE))
    traces = len(_traces)
    if isinstance(losses, np.ndarray):
        losses = losses.tolist()
    if not isinstance(losses, (list, tuple)) or len(losses) != len(SCHEDULE):
        raise Incorrect(t("train_with_schedule returned {losses}; return the list of the {n} losses, one per "
                          "learning rate", losses=shown(losses), n=len(SCHEDULE)))
    want_losses, want_w, want_b = schedule_oracle()
    values = [number(got, t("loss {k}", k=k)) for k, got in enumerate(losses)]
    if close(values, schedule_oracle(momentum=0.0)[0], rtol=1e-4, atol=1e-7):
        raise Incorrect(t("these are the losses of plain gradient descent: keep one velocity per parameter, "
                          "v = {momentum:g} * v + g, alive from one step to the next (a Parameter), and step "
                          "p - lr * v", momentum=MOMENTUM))
    for k, (value, want) in enumerate(zip(values, want_losses)):
        if not close(value, want, rtol=1e-4, atol=1e-7):
            raise Incorrect(t("with the learning rates {rates}, the loss before step {k} should be {want:.6f}, got "
                              "{value:.6f}: per learning rate one step, v = {momentum:g} * v + g, then p - lr * v",
                              rates=[round(lr, 4) for lr in SCHEDULE], k=k, want=want, value=value,
                              momentum=MOMENTUM))
    w, b = net.weight.asnumpy().astype(np.float64).ravel(), float(net.bias.asnumpy().item())
    if not close([w, b], [want_w, want_b], rtol=1e-4, atol=1e-6):
        raise Incorrect(t("after the schedule w = {w}, b = {b:.5f}; gradient descent with momentum gives "
                          "w = {want_w}, b = {want_b:.5f}: update the net's own parameters",
                          w=np.round(w, 5).tolist(), b=b, want_w=np.round(want_w, 5).tolist(), want_b=want_b))
    if traces == 0:
        raise Incorrect(t("the loss function you were given was never called: compute the loss with "
                          "loss_fn(net(x), y)"))
    if traces > 1:
        raise Incorrect(t("the loss was traced {traces} times for {steps} steps: the step runs eagerly (decorate it "
                          "with @ms.jit), or every new learning rate compiles again (a Python float is baked into the "
                          "graph as a constant), or a new jit function is made for every step (define "
                          "it once, before the loop)", traces=traces, steps=len(SCHEDULE)))


# ---- 13.6 a construct that compiles ----------------------------------------------------------------
def _first_sentence(text):
    """MindSpore's first sentence names what failed; the ones after it may spell out a rewrite (the answer)."""
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]


def _check_power_sum(answer):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    if not issubclass(answer, nn.Cell):
        raise Incorrect(t("{answer} is not a Cell: subclass nn.Cell, as PowerSum does", answer=shown(answer)))
    x = np.array([[-1.5], [-0.5], [0.25], [1.0], [2.0]], dtype=np.float32)
    w, b = np.float32(0.75), np.float32(-0.25)
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)  # the point of the exercise; the learner's mode is restored below
    try:
        for power in (1, 3, 4):
            call = f"{answer.__name__}({power})"
            net = answer(power)
            dense = getattr(net, "dense", None)
            if not isinstance(dense, nn.Dense) or tuple(dense.weight.shape) != (1, 1):
                raise Incorrect(t("keep the layer as it was: self.dense = nn.Dense(1, 1)"))
            ops.assign(dense.weight, Tensor([[w]]))
            ops.assign(dense.bias, Tensor([b]))
            try:
                out = net(Tensor(x))
            except Exception as exc:  # a graph compile error is the learner's problem to see, not to raise
                raise Incorrect(t("{call} fails in graph mode: {error}: {first} Graph mode parses the source of "
                                  "construct and of everything it calls, the attributes set in __init__ included",
                                  call=call, error=type(exc).__name__,
                                  first=_first_sentence(brief_error(exc)))) from None
            z = (w * x + b).astype(np.float64)
            want = sum(z ** k for k in range(1, power + 1))
            got = array(out, t("{call}'s output", call=call))
            if not close(got, want, rtol=1e-5, atol=1e-6):
                raise Incorrect(t("{call} compiles, but returns {got} for x = {x}; expected y + y**2 + ... + "
                                  "y**{power} with y = dense(x): {want}", call=call,
                                  got=got.ravel().round(4).tolist(), x=x.ravel().tolist(), power=power,
                                  want=want.ravel().round(4).tolist()))
    finally:
        ms.set_context(mode=previous)


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
same_weights = Prediction(
    lazy("The same net, seed and data, trained 100 steps in PyNative and 100 steps in graph mode: how do "
         "the final weights compare?"),
    {"a": (lazy("identical, bit for bit"),
           lazy("on this net both modes compute the same float32 operations on the same numbers, and the next cell "
                "compares all 100 losses bit for bit; compiling changes when and how operations are launched, not "
                "the arithmetic")),
     "b": (lazy("within about 1e-6, but not bit for bit: the compiler reorders and fuses operations"),
           lazy("compilers for big networks may fuse or reorder operations, and then float32 rounding can differ; "
                "on this net and this CPU backend nothing is reordered: the next cell compares all 100 losses bit "
                "for bit")),
     "c": (lazy("graph mode is less accurate: it trades precision for speed"),
           lazy("graph mode is faster because it removes Python and launch overhead, not because it computes with "
                "fewer bits: both modes compute in float32"))},
    answer="a")
faster_mode = FunctionExercise(_check_faster_mode,
                             signature="faster_mode(n_steps, n_shapes, compile_s, pynative_step_s, graph_step_s)",
                             hints=[
    lazy("compare the total time each mode needs for all n steps"),
    lazy("graph mode pays two kinds of cost and PyNative one: which arguments belong to each, and how often is each "
         "paid?"),
    lazy("a tie is no gain: graph mode must be strictly faster"),
])
rebound_optimizer = Prediction(
    lazy("train_step was compiled with the global `optimizer` (lr 0.5). Now `optimizer = nn.SGD(..., "
         "learning_rate=0.0)` rebinds that name. What does the next train_step(X, Y) do?"),
    {"a": (lazy("nothing: the learning rate is now 0"),
           lazy("in Python the function would look the global name up again at each call; the compiled graph does "
                "not: it captured the optimizer object it was compiled with")),
     "b": (lazy("a step with lr 0.5, as before"),
           lazy("the compiled graph holds the optimizer object it saw when it compiled; rebinding a global name "
                "does not change that object and is not among the things that trigger a recompile (shapes, dtypes, "
                "Python argument values). Build a new step function after changing the optimizer")),
     "c": (lazy("it compiles again and steps with lr 0.0"),
           lazy("a recompile happens for a new argument shape, dtype or Python value; a global rebound between "
                "calls is not checked, so the old graph runs"))},
    answer="b")
scale_once = FunctionExercise(_check_make_scale, signature="make_scale(on_compile)", hints=[
    lazy("first find out what compiles: call scaled with each kind of factor and count with on_compile"),
    lazy("the compiled function should always receive the same kind of factor; turn whatever the caller passes into "
         "that kind before you call it"),
    lazy("a Tensor's value is data, its dtype is part of the graph's signature: what should every call hand scaled, "
         "whatever the caller passed?"),
])
schedule_train = FunctionExercise(_check_schedule_train, signature="train_with_schedule(net, loss_fn, x, y, schedule)",
                                  hints=[
    lazy("the velocities must survive from one compiled step to the next: where does a compiled step keep state?"),
    lazy("make one Parameter of zeros per parameter before the loop; in the step, assign the new velocity first, "
         "then step the parameter with it"),
    lazy("the step must be compiled (@ms.jit), and the argument that changes at every call must not be a Python "
         "float"),
])
power_sum = FunctionExercise(_check_power_sum, signature="PowerSum(power)", cls=True, hints=[
    lazy("run PowerSum in graph mode and read the first sentence of MindSpore's message: what can it not parse?"),
    lazy("graph mode parses what construct calls, the attributes made in __init__ included; keep only data there, "
         "the power, a Python int"),
    lazy("construct itself may hold the loop: a Python for over range of a Python int compiles (it is unrolled)"),
])

bind(globals())
