"""Exercises of notebook 00 (setup and how the course works)."""

import numbers

from course_utils._validate import shown
from course_utils.exercises import Exercise


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


version = Exercise("00.1", _check_version, hint="every Python package has a __version__ attribute")
default_mode = Exercise("00.2", _check_default_mode,
                        hint="ms.get_context('mode') returns 0 for GRAPH_MODE and 1 for PYNATIVE_MODE")
