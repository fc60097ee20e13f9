"""Exercises of notebook 00 (setup and how the course works)."""

from course_utils._validate import shown
from course_utils.exercises import Exercise, FunctionExercise, Incorrect, Prediction, bind
from course_utils.messages import lazy, t

ONES_SHAPE = (2, 3)


def _check_ones(answer):
    import mindspore as ms
    import numpy as np

    if isinstance(answer, np.ndarray):
        raise Incorrect(t("that is a numpy array: the exercise asks for a MindSpore Tensor (section 2 made Tensors "
                          "from arrays)"))
    if not isinstance(answer, ms.Tensor):
        raise Incorrect(t("expected a MindSpore Tensor, got {answer}", answer=shown(answer)))
    if tuple(answer.shape) != ONES_SHAPE:
        raise Incorrect(t("its shape is {shape}; expected {want}: {rows} rows of {cols} numbers",
                          shape=tuple(answer.shape), want=ONES_SHAPE, rows=ONES_SHAPE[0], cols=ONES_SHAPE[1]))
    if answer.dtype != ms.float32:
        raise Incorrect(t("its dtype is {dtype}, not Float32: where did that dtype come from? (prediction 00.1)",
                          dtype=answer.dtype))
    values = answer.asnumpy()
    if not np.all(values == 1):
        raise Incorrect(t("its values should all be 1; got {values}", values=shown(values.tolist(), False)))


def _check_mode_name(answer):
    import mindspore as ms

    want = {ms.GRAPH_MODE: "graph", ms.PYNATIVE_MODE: "pynative"}
    modes, original, got = (ms.GRAPH_MODE, ms.PYNATIVE_MODE, ms.GRAPH_MODE), ms.get_context("mode"), []
    try:  # graph twice: not a first-call accident
        for mode in modes:
            ms.set_context(mode=mode)
            got.append(mode_name.call(answer))
    finally:
        ms.set_context(mode=original)  # the learner's notebook keeps its mode whatever happened
    for result in got:
        if isinstance(result, int) and not isinstance(result, bool):
            raise Incorrect(t("mode_name() should return the string 'graph' or 'pynative', got {result} (that is "
                              "the mode's number: turn it into the name)", result=shown(result)))
        if not isinstance(result, str):
            raise Incorrect(t("mode_name() should return the string 'graph' or 'pynative', got {result}",
                              result=shown(result)))
    if got[0] == got[1]:
        raise Incorrect(t("mode_name() returned {result!r} in graph mode and in PyNative mode alike: it must find "
                          "out the mode each time it is called", result=got[0]))
    if got[:2] == ["pynative", "graph"]:
        raise Incorrect(t("the names are swapped: mode_name() returned 'pynative' in graph mode and 'graph' in "
                          "PyNative mode"))
    for mode, result in zip(modes, got):
        if result != want[mode]:
            raise Incorrect(t("in {mode} mode, mode_name() returned {bad!r}; expected {want!r} (lower case, no "
                              "spaces)", mode=want[mode], bad=result, want=want[mode]))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
tensor_dtype = Prediction(
    lazy("Tensor(np.zeros(3)) wraps a numpy array of zeros. What dtype does the Tensor have?"),
    {"a": (lazy("float32, MindSpore's default"),
           lazy("float32 is what layers create their Parameters in, but a Tensor made from an array keeps the "
                "array's dtype")),
     "b": (lazy("float64"),
           lazy("np.zeros makes float64 by default and Tensor keeps the dtype; a float32 layer will refuse it "
                "(notebook 01), so the data must be converted first")),
     "c": (lazy("int64, because the values are whole numbers"),
           lazy("the dtype comes from the array, not from its values: np.zeros gives float64 zeros"))},
    answer="b")
ones = Exercise(_check_ones, hints=[
    lazy("section 2 made Tensors from numpy arrays: which numpy function makes an array of ones? Mind the dtype"),
    lazy("numpy chooses the dtype when it makes the array, from an argument of its own; the dtype the Tensor "
         "needs is in the exercise"),
])
default_mode = Prediction(
    lazy("MindSpore runs a network in PyNative mode (each operation as Python reaches it) or in graph mode "
         "(construct compiled first). Which one does MindSpore 2.10 start in, before any set_context call?"),
    {"a": (lazy("Graph mode: it is faster, so it is the default"),
           lazy("that was MindSpore 1.x's default, and the source article (written for 1.8) still says so. Since "
                "2.0, MindSpore starts in PyNative mode; graph mode is opt-in (set_context(mode=ms.GRAPH_MODE) or "
                "@ms.jit)")),
     "b": (lazy("PyNative mode"),
           lazy("since MindSpore 2.0 the default is PyNative, the mode that is easy to debug; graph mode is opt-in "
                "(set_context(mode=ms.GRAPH_MODE), or @ms.jit for one function)")),
     "c": (lazy("Neither: a program must choose with set_context(mode=...) before it runs a net"),
           lazy("MindSpore never asks: the context has a default mode, and ms.get_context('mode') reads it. In "
                "2.10 it is PyNative"))},
    answer="b")
mode_name = FunctionExercise(_check_mode_name, signature="mode_name()", hints=[
    lazy("the function must ask MindSpore each time it is called: which getter reads the mode back from the "
         "context?"),
    lazy("that getter returns a number, not a name: section 4 printed which number stands for which mode"),
])

bind(globals())
