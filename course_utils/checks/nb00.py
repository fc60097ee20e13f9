"""Exercises of notebook 00 (setup and how the course works)."""

import numbers

from course_utils._validate import shown
from course_utils.exercises import Exercise, Prediction


def _check_version(answer):
    import mindspore as ms

    if not isinstance(answer, str):
        return f"expected a string such as '1.2.3', got {type(answer).__name__}; use ms.__version__"
    if answer != ms.__version__:
        return f"{answer!r} is not the installed version; print ms.__version__ to see it"
    return None


def _check_default_mode(answer):
    import mindspore as ms

    if isinstance(answer, bool) or not isinstance(answer, numbers.Integral):
        return (f"expected the mode as an int, the value of ms.GRAPH_MODE or ms.PYNATIVE_MODE, "
                f"got {shown(answer)}")
    if answer == ms.GRAPH_MODE:
        return ("GRAPH_MODE (0) is what MindSpore 1.x and the source article say, but 2.10 starts in "
                "PyNative: look at ms.get_context('mode') in a fresh kernel")
    if answer != ms.PYNATIVE_MODE:
        return f"expected ms.GRAPH_MODE or ms.PYNATIVE_MODE, got {shown(answer)}"
    return None


version = Exercise("00.1", _check_version, hints=[
    "the package you imported as `ms` can tell you which version it is",
    "every Python package has a __version__ attribute",
])
default_mode = Exercise("00.2", _check_default_mode, hints=[
    "MindSpore keeps its settings in a context; there is a getter next to ms.set_context",
    "ms.get_context('mode') returns 0 for GRAPH_MODE and 1 for PYNATIVE_MODE",
])
tensor_dtype = Prediction(
    "00.3", "Tensor(np.zeros(3)) wraps a numpy array of zeros. What dtype does the Tensor have?",
    {"a": ("float32, MindSpore's default", "float32 is what layers create their Parameters in, but a Tensor "
                                           "made from an array keeps the array's dtype"),
     "b": ("float64", "np.zeros makes float64 by default and Tensor keeps the dtype; a float32 layer will refuse "
                      "it (notebook 01), so convert with .astype(np.float32)"),
     "c": ("int64, because the values are whole numbers", "the dtype comes from the array, not from its values: "
                                                          "np.zeros gives float64 zeros")},
    answer="b")
