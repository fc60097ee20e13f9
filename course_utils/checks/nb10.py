"""Exercises of notebook 10 (graph mode and PyNative: compile cost, recompiles, what construct may hold)."""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import NONE_HINT, Exercise, as_array

# ---- 10.1 which mode finishes first ------------------------------------------------------------
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
    if not callable(answer):
        return ("expected a function faster_mode(n_steps, compile_s, pynative_step_s, graph_step_s), "
                f"got {type(answer).__name__}")
    for case in _MODE_CASES:
        got = answer(*case)
        if not (isinstance(got, str) and got in ("graph", "pynative")):
            none = f". {NONE_HINT}" if got is None else ""
            return f"faster_mode{case} returned {shown(got)}; return the string 'graph' or 'pynative'{none}"
        want = _faster_oracle(*case)
        if got != want:
            n, c, p, g = case
            return (f"faster_mode{case} gives {got!r}, expected {want!r}: {n} PyNative steps take "
                    f"{n * p:.4f} s, compiling and {n} graph steps take {c + n * g:.4f} s "
                    "(graph mode must be strictly faster to be worth its compile)")
    return None


# ---- 10.2 how many compiles ---------------------------------------------------------------------
# The calls of the exercise: (shape of the data argument, the factor argument). A factor is either a
# Python float, or ("Tensor", value) for a float32 scalar Tensor.
CALLS = [
    ((100, 1), 0.5),
    ((100, 1), 0.5),
    ((100, 1), 0.25),
    ((100, 1), ("Tensor", 0.5)),
    ((100, 1), ("Tensor", 0.25)),
    ((10, 1), ("Tensor", 0.5)),
]


def _compile_key(shape, factor):
    """What a compiled graph is cached by: input shapes and dtypes, and the value of a Python scalar."""
    if isinstance(factor, tuple):
        return (shape, "float32 Tensor", ())  # a Tensor's value is data: only its shape and dtype count
    return (shape, "Python float", factor)


def expected_compiles(calls=None):
    """How many graphs the calls compile: the number of distinct cache keys (an independent model)."""
    calls = CALLS if calls is None else calls
    return len({_compile_key(shape, factor) for shape, factor in calls})


def _check_compiles(answer):
    if isinstance(answer, bool) or not isinstance(answer, (int, np.integer)):
        return f"expected a whole number of compiles, got {shown(answer)}"
    want = expected_compiles()
    if answer == want:
        return None
    if answer == len(CALLS):
        return ("not every call compiles: a call whose Python values, tensor shapes and dtypes were "
                "all seen before reuses the compiled graph")
    if answer == 3:
        return ("count the Tensor calls again: the first Tensor call compiles, and so does a Tensor "
                "with a new shape (X[:10] is (10, 1)); only the Tensor's value does not count")
    if answer == 5:
        return ("Tensor(0.25) after Tensor(0.5) has the same shape and dtype: a Tensor's value does not "
                "trigger a compile")
    if answer == 2:
        return "a Python float is baked into the graph: each new float value compiles again"
    return (f"{shown(answer, with_type=False)} is not what MindSpore does; go through the calls one by one "
            "(the next cell measures it)")


# ---- 10.3 a construct that compiles ----------------------------------------------------------------
def _check_graph_act(answer):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    if not (isinstance(answer, type) and issubclass(answer, nn.Cell)):
        return f"expected a Cell class (not an instance), such as WithAct, got {shown(answer)}"
    x = np.array([[-2.0], [-0.5], [0.5], [2.0]], dtype=np.float32)
    w, b = np.float32(1.5), np.float32(-0.25)
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)  # the point of the exercise; the learner's mode is restored below
    try:
        for use_relu in (False, True):
            net = answer(use_relu)
            dense = getattr(net, "dense", None)
            if not isinstance(dense, nn.Dense) or tuple(dense.weight.shape) != (1, 1):
                return "keep the layer as it was: self.dense = nn.Dense(1, 1)"
            ops.assign(dense.weight, Tensor([[w]]))
            ops.assign(dense.bias, Tensor([b]))
            try:
                out = net(Tensor(x))
            except Exception as exc:  # a graph compile error is the learner's problem to see, not to raise
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                return f"{answer.__name__}({use_relu}) fails in graph mode: {type(exc).__name__}: {first}"
            z = w * x + b
            want = np.maximum(z, 0) if use_relu else z
            got, problem = as_array(out, f"{answer.__name__}({use_relu})'s output")
            if problem:
                return problem
            if got.shape != want.shape or not np.allclose(got, want, atol=1e-6):
                kind = "ReLU(dense(x))" if use_relu else "dense(x) unchanged"
                return (f"{answer.__name__}({use_relu}) compiles, but returns {got.ravel().round(4).tolist()} "
                        f"for x = {x.ravel().tolist()}; expected {kind}: {want.ravel().round(4).tolist()}")
    finally:
        ms.set_context(mode=previous)
    return None


faster_mode = Exercise("10.1", _check_faster_mode, hints=[
    "compare the total time of both modes for n steps; graph mode pays its compile once",
    "compare n * pynative_step_s with compile_s + n * graph_step_s; a tie is no gain",
])
compiles = Exercise("10.2", _check_compiles, hints=[
    "a compiled graph is reused only when what it was compiled for is the same again",
    "a compiled graph is reused when every Python value and every tensor shape and dtype was seen before",
])
graph_act = Exercise("10.3", _check_graph_act, hints=[
    "read MindSpore's message: it names what graph mode cannot parse",
    "MindSpore's message says it: put the lambda on a line of its own (an if statement), or use def, or nn.Identity()",
])
