"""Exercises of notebook 13 (graph mode and PyNative: compile cost, recompiles, what construct may hold)."""

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
    number,
)
from course_utils.messages import lazy, t

# ---- 13.2 which mode finishes first ------------------------------------------------------------
# (n_steps, compile_s, pynative_step_s, graph_step_s): typical of a laptop, and the edges that matter.
_MODE_CASES = [
    (10, 0.4, 0.010, 0.0004),     # a short run: the compile is never paid back
    (1000, 0.4, 0.010, 0.0004),   # a long run: graph mode wins by far
    (41, 0.4, 0.010, 0.0004),     # just before the break-even point
    (42, 0.4, 0.010, 0.0004),     # just after it
    (4, 1.0, 0.5, 0.25),          # an exact tie (exact in binary floating point): compiling gains nothing
    (0, 0.4, 0.010, 0.0004),      # no steps at all
    (10**6, 0.4, 0.001, 0.002),   # the compiled step is slower: graph mode never catches up
]


def _faster_oracle(n_steps, compile_s, pynative_step_s, graph_step_s):
    return "graph" if compile_s + n_steps * graph_step_s < n_steps * pynative_step_s else "pynative"


def _check_faster_mode(answer):
    for case in _MODE_CASES:
        got = faster_mode.call(answer, *case)
        if not (isinstance(got, str) and got in ("graph", "pynative")):
            raise Incorrect(t("faster_mode{case} returned {got}; return the string 'graph' or 'pynative'", case=case,
                              got=shown(got)))
        want = _faster_oracle(*case)
        if got != want:
            n, c, p, g = case
            raise Incorrect(t("faster_mode{case} gives {got!r}, expected {want!r}: {n} PyNative steps take "
                              "{pynative_s:.4f} s, compiling and {n} graph steps take {graph_s:.4f} s (graph mode "
                              "must be strictly faster to be worth its compile)", case=case, got=got, want=want, n=n,
                              pynative_s=n * p, graph_s=c + n * g))


# ---- 13.4 how many compiles ---------------------------------------------------------------------
# The calls of the exercise: (shape of the data argument, the factor argument). A factor is either a
# Python float, or ("Tensor", value) for a float32 scalar Tensor.
CALLS = [((100, 1), 0.5), ((100, 1), 0.5), ((100, 1), 0.25),
         ((100, 1), ("Tensor", 0.5)), ((100, 1), ("Tensor", 0.25)), ((10, 1), ("Tensor", 0.5))]


def expected_compiles(calls=None):
    """How many graphs the calls compile (an independent model): a compiled graph is cached by its input shapes
    and dtypes and the value of each Python scalar; a Tensor's value is data, only its shape and dtype count."""
    return len({(shape, "float32 Tensor") if isinstance(factor, tuple) else (shape, "Python float", factor)
                for shape, factor in (CALLS if calls is None else calls)})


# the typical wrong counts of CALLS, each with the misunderstanding it comes from
_COMPILE_MISTAKES = {
    len(CALLS): lazy("not every call compiles: a call whose Python values, tensor shapes and dtypes were "
                     "all seen before reuses the compiled graph"),
    3: lazy("count the Tensor calls again: the first Tensor call compiles, and so does a Tensor "
            "with a new shape (X[:10] is (10, 1)); only the Tensor's value does not count"),
    5: lazy("Tensor(0.25) after Tensor(0.5) has the same shape and dtype: a Tensor's value does not "
            "trigger a compile"),
    2: lazy("a Python float is baked into the graph: each new float value compiles again"),
}


def _check_compiles(answer):
    if isinstance(answer, bool) or not isinstance(answer, (int, np.integer)):
        raise Incorrect(t("expected a whole number of compiles, got {answer}", answer=shown(answer)))
    if answer in _COMPILE_MISTAKES:
        raise Incorrect(t(_COMPILE_MISTAKES[answer]))
    if answer != expected_compiles():
        raise Incorrect(t("{answer} is not what MindSpore does; go through the calls one by one (the next cell "
                          "measures it)", answer=shown(answer, with_type=False)))


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
        raise Incorrect(t("the loss was traced {traces} times for {steps} steps: either the step runs eagerly "
                          "(decorate it with @ms.jit) or every new learning rate compiles again (a Python float is "
                          "baked into the graph: pass Tensor(lr, ms.float32))", traces=traces, steps=len(SCHEDULE)))


# ---- 13.6 a construct that compiles ----------------------------------------------------------------
def _check_graph_act(answer):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    if not issubclass(answer, nn.Cell):
        raise Incorrect(t("{answer} is not a Cell: subclass nn.Cell, as WithAct does", answer=shown(answer)))
    x = np.array([[-2.0], [-0.5], [0.5], [2.0]], dtype=np.float32)
    w, b = np.float32(1.5), np.float32(-0.25)
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)  # the point of the exercise; the learner's mode is restored below
    try:
        for use_relu in (False, True):
            call = f"{answer.__name__}({use_relu})"
            net = answer(use_relu)
            dense = getattr(net, "dense", None)
            if not isinstance(dense, nn.Dense) or tuple(dense.weight.shape) != (1, 1):
                raise Incorrect(t("keep the layer as it was: self.dense = nn.Dense(1, 1)"))
            ops.assign(dense.weight, Tensor([[w]]))
            ops.assign(dense.bias, Tensor([b]))
            try:
                out = net(Tensor(x))
            except Exception as exc:  # a graph compile error is the learner's problem to see, not to raise
                raise Incorrect(t("{call} fails in graph mode: {error}: {first}", call=call,
                                  error=type(exc).__name__, first=brief_error(exc))) from None
            z = w * x + b
            want = np.maximum(z, 0) if use_relu else z
            got = array(out, t("{call}'s output", call=call))
            if not close(got, want, rtol=1e-5, atol=1e-6):
                kind = "ReLU(dense(x))" if use_relu else t("dense(x) unchanged")
                raise Incorrect(t("{call} compiles, but returns {got} for x = {x}; expected {kind}: {want}",
                                  call=call, got=got.ravel().round(4).tolist(), x=x.ravel().tolist(), kind=kind,
                                  want=want.ravel().round(4).tolist()))
    finally:
        ms.set_context(mode=previous)


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
same_weights = Prediction(
    lazy("The same net, seed and data, trained 100 steps in PyNative and 100 steps in graph mode: how do "
         "the final weights compare?"),
    {"a": (lazy("identical, bit for bit"),
           lazy("both modes run the same CPU kernels on the same numbers in the same order; compiling changes when "
                "and how operations are launched, not the arithmetic")),
     "b": (lazy("within about 1e-6, but not bit for bit: the compiler reorders and fuses operations"),
           lazy("compilers for big networks may fuse or reorder operations, and then float32 rounding can differ; "
                "on this net and this CPU backend nothing is reordered: the next cell compares all 100 losses bit "
                "for bit")),
     "c": (lazy("graph mode is less accurate: it trades precision for speed"),
           lazy("graph mode is faster because it removes Python and launch overhead, not because it computes with "
                "fewer bits: both modes compute in float32"))},
    answer="a")
faster_mode = FunctionExercise(_check_faster_mode,
                             signature="faster_mode(n_steps, compile_s, pynative_step_s, graph_step_s)", hints=[
    lazy("compare the total time each mode needs for all n steps"),
    lazy("graph mode pays compile_s once and then graph_step_s per step; PyNative pays pynative_step_s per step"),
    lazy("compare n * pynative_step_s with compile_s + n * graph_step_s; a tie is no gain"),
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
compiles = Exercise(_check_compiles, hints=[
    lazy("a compiled graph is reused only when what it was compiled for is the same again"),
    lazy("a compiled graph is reused when every Python value and every tensor shape and dtype was seen before"),
])
schedule_train = FunctionExercise(_check_schedule_train, signature="train_with_schedule(net, loss_fn, x, y, schedule)",
                                  hints=[
    lazy("the velocities must survive from one compiled step to the next: where does a compiled step keep state?"),
    lazy("make one Parameter of zeros per parameter before the loop; in the step, assign the new velocity first, "
         "then step the parameter with it"),
    lazy("the step must be compiled (@ms.jit), and the argument that changes at every call must not be a Python "
         "float"),
])
graph_act = FunctionExercise(_check_graph_act, signature="WithAct(use_relu)", cls=True, hints=[
    lazy("read MindSpore's message: it names what graph mode cannot parse"),
    lazy("MindSpore's message says it: put the lambda on a line of its own (an if statement), or use def, or "
         "nn.Identity()"),
])

bind(globals())
