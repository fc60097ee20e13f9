"""Exercises of notebook 00 (setup and how the course works)."""

import numbers

from course_utils._validate import shown
from course_utils.exercises import Exercise, FunctionExercise, Incorrect, Prediction, bind
from course_utils.messages import lazy, t


def _check_version(answer):
    import mindspore as ms

    if not isinstance(answer, str):
        raise Incorrect(t("expected a string such as '1.2.3', got {kind}; use ms.__version__",
                          kind=type(answer).__name__))
    if answer != ms.__version__:
        raise Incorrect(t("{answer!r} is not the installed version; print ms.__version__ to see it", answer=answer))


def _check_default_mode(answer):
    import mindspore as ms

    if isinstance(answer, bool) or not isinstance(answer, numbers.Integral):
        raise Incorrect(t("expected the mode as an int, the value of ms.GRAPH_MODE or ms.PYNATIVE_MODE, "
                          "got {answer}", answer=shown(answer)))
    if answer == ms.GRAPH_MODE:
        raise Incorrect(t("GRAPH_MODE (0) is what MindSpore 1.x and the source article say, but 2.10 starts in "
                          "PyNative: look at ms.get_context('mode') in a fresh kernel"))
    if answer != ms.PYNATIVE_MODE:
        raise Incorrect(t("expected ms.GRAPH_MODE or ms.PYNATIVE_MODE, got {answer}", answer=shown(answer)))


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
        raise Incorrect(t("mode_name() returned {result!r} in graph mode and in PyNative mode alike: read the "
                          "current mode with ms.get_context('mode') each time it is called, instead of returning "
                          "a fixed answer", result=got[0]))
    if got[:2] == ["pynative", "graph"]:
        raise Incorrect(t("the names are swapped: ms.GRAPH_MODE is 0 and ms.PYNATIVE_MODE is 1"))
    for mode, result in zip(modes, got):
        if result != want[mode]:
            raise Incorrect(t("in {mode} mode, mode_name() returned {bad!r}; expected {want!r} (lower case, no "
                              "spaces)", mode=want[mode], bad=result, want=want[mode]))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
glog_after_import = Prediction(
    lazy("A program imports mindspore FIRST and only then sets os.environ['GLOG_v'] = '3'. Then it calls a "
         "deprecated function, which makes MindSpore log a [WARNING] line. Is that warning printed?"),
    {"a": (lazy("No: the variable is set before the warning, so the warning is silenced"),
           lazy("tempting, because environment variables are usually read when they are needed. MindSpore reads "
                "GLOG_v once, while `import mindspore` runs, and configures its loggers then: changing the "
                "variable later changes nothing")),
     "b": (lazy("Yes: MindSpore read GLOG_v when it was imported, so setting it afterwards has no effect"),
           lazy("MindSpore configures its logging while it is imported. That is why every notebook sets GLOG_v "
                "in its first cell, before `import mindspore`, and why restarting the kernel is the only way to "
                "change it")),
     "c": (lazy("The program fails: GLOG_v may not be changed after the import"),
           lazy("nothing checks the variable after the import, so nothing can fail: MindSpore simply never "
                "reads it again, and the warning is printed as if GLOG_v had not been set"))},
    answer="b")
tensor_dtype = Prediction(
    lazy("Tensor(np.zeros(3)) wraps a numpy array of zeros. What dtype does the Tensor have?"),
    {"a": (lazy("float32, MindSpore's default"),
           lazy("float32 is what layers create their Parameters in, but a Tensor made from an array keeps the "
                "array's dtype")),
     "b": (lazy("float64"),
           lazy("np.zeros makes float64 by default and Tensor keeps the dtype; a float32 layer will refuse it "
                "(notebook 01), so convert with .astype(np.float32)")),
     "c": (lazy("int64, because the values are whole numbers"),
           lazy("the dtype comes from the array, not from its values: np.zeros gives float64 zeros"))},
    answer="b")
version = Exercise(_check_version, hints=[
    lazy("the package you imported as `ms` can tell you which version it is"),
    lazy("every Python package has a __version__ attribute"),
])
default_mode = Exercise(_check_default_mode, hints=[
    lazy("MindSpore keeps its settings in a context; there is a getter next to ms.set_context"),
    lazy("ms.get_context('mode') returns 0 for GRAPH_MODE and 1 for PYNATIVE_MODE"),
])
mode_name = FunctionExercise(_check_mode_name, signature="mode_name()", hints=[
    lazy("the function must ask MindSpore each time it is called: which getter reads the mode back from the "
         "context?"),
    lazy("compare ms.get_context('mode') with ms.GRAPH_MODE: `return 'graph' if ms.get_context('mode') == "
         "ms.GRAPH_MODE else ...`"),
])

bind(globals())
