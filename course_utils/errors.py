"""The course's one style for an expected error: ``Type: message``, short and free of this machine's paths.

    with expect_error(TypeError):
        net(Tensor(np.ones((4, 1)), ms.float64))

prints ``TypeError: For 'MatMul', the type of 'x2' ...`` and nothing else: no traceback frames, no
MindSpore ``[ERROR] ME(pid...)`` log line (it carries a PID and a time stamp), no C++ call stack or
graph position (they are for framework developers), absolute paths under a folder (default: the working
directory) shortened.
The cell does not fail, so the notebook goes on; if the block raises nothing, expect_error raises
AssertionError, so the claim "this fails" is still checked at every run.
"""

import contextlib
import logging
import os

from course_utils.messages import t

MAX_LINES = 6  # of the message; the rest is cut with a note (MindSpore's messages can run to 30 lines)
# Where MindSpore's messages turn from the learner to the framework developer: the C++ call stack, and the
# compiled graph's id and source position (a file path that changes with every run of a notebook cell).
DEVELOPER_PARTS = ("- C++ Call Stack:", "FunctionGraph ID :", "NodeInfo: In file", "The function call stack")


class CaughtError:
    """What ``expect_error`` caught: ``exception`` and the ``message`` it printed (paths shortened)."""

    def __init__(self):
        self.exception = None
        self.message = ""

    def __repr__(self):
        return f"CaughtError({type(self.exception).__name__ if self.exception else None})"


def _short(exc, folder):
    text = str(exc)
    for marker in DEVELOPER_PARTS:
        if marker in text:
            text = text[: text.index(marker)].rstrip("- \n")
    prefix = os.path.realpath(folder).rstrip(os.sep) + os.sep
    lines = [line.rstrip() for line in text.replace(prefix, "").strip().splitlines()]
    lines = [line for i, line in enumerate(lines) if line or (i and lines[i - 1])]  # no double blank lines
    if len(lines) > MAX_LINES:
        more = len(lines) - MAX_LINES
        lines = lines[:MAX_LINES] + [t("[... 1 more line]") if more == 1 else t("[... {count} more lines]", count=more)]
    return f"{type(exc).__name__}: " + "\n".join(lines)


@contextlib.contextmanager
def quiet_python_logs():
    """Hide Python log records (MindSpore's ``[ERROR] ME(pid...)`` lines) inside the block, then restore."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def expect_error(*types, folder=None):
    """Run the block, which must raise one of ``types``; print ``Type: message`` (and its cause).

    Paths under ``folder`` (default: the working directory) are printed relative to it. Raises
    AssertionError if the block raises nothing; an exception of another type propagates unchanged.
    """
    if not types or not all(isinstance(t, type) and issubclass(t, BaseException) for t in types):
        raise TypeError(f"give the expected exception classes, e.g. expect_error(ValueError), got {types!r}")
    folder = os.getcwd() if folder is None else folder
    if not os.path.isdir(folder):
        raise ValueError(f"folder must be an existing directory, got {folder!r}")
    caught = CaughtError()
    try:
        with quiet_python_logs():
            yield caught
    except types as exc:
        caught.exception = exc
        lines = [_short(exc, folder)]
        if exc.__cause__ is not None:
            lines.append(t("  caused by {error}", error=_short(exc.__cause__, folder)))
        caught.message = "\n".join(lines)
        print(caught.message)
    else:
        names = " or ".join(t.__name__ for t in types)
        raise AssertionError(f"expected {names}, but the block raised nothing")
