"""Self-checking exercises in the spirit of Kaggle's learntools: ``check()``, ``hint()``.

A learner writes ``answer = ...`` (Python's Ellipsis), replaces ``...`` with an answer and calls
``ex.check(answer)``. A check never raises at a learner; it prints one of three verdicts:

* not attempted yet: the answer is still ``...``;
* incorrect, and why: the checker found a problem, the learner's code raised, or the answer is None (what
  a function without ``return`` gives back);
* correct.

A check never accepts a non-finite number, a value of the wrong type or an array of the wrong shape.
``as_number`` and ``as_array`` turn what a learner's code produced into numbers, or say why they cannot.

Reference solutions live in the notebook, in a hidden cell tagged ``solution`` right after the exercise.
"""

import numbers
import traceback

import numpy as np

from course_utils._validate import shown

NOT_ATTEMPTED = "not attempted"
INCORRECT = "incorrect"
CORRECT = "correct"
NONE_HINT = ("If it is what a function of yours returned, that function has no `return` statement "
             "(a Python function without one returns None)")


def as_array(value, what):
    """``(float64 array, None)`` for numbers, numpy arrays or Tensors; ``(None, problem)`` for anything else,
    such as None (a function that forgot ``return``), text, or arrays of non-numbers. ``what`` names the
    value in the message ("the loss", "your answer")."""
    if value is None:
        return None, f"{what} is None. {NONE_HINT}"
    if isinstance(value, (str, bytes)):
        return None, f"{what} must be a number, not text: got {shown(value)} (write the number without quotes)"
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, (list, tuple)):
        return None, f"{what} must be a number or an array, got {shown(value)}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
        return None, f"{what} must be a number, got {shown(value)}"
    if isinstance(value, int) and not -2**63 <= value < 2**64:  # beyond int64: numpy keeps it as an object
        return None, f"{what} must be a finite number, got an int too large for a float: {shown(value)}"
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        kind = "numbers that fit a float64" if arr.dtype == object else f"real numbers, not {arr.dtype}"
        return None, f"{what} must hold {kind}, got {shown(value)}"
    with np.errstate(over="ignore"):
        return arr.astype(np.float64), None


def as_number(value, what):
    """``(float, None)`` for one finite number (a Python or numpy number, or a Tensor or array holding
    exactly one); ``(None, problem)`` otherwise: text, None, bool, a list, several numbers, NaN or inf."""
    if isinstance(value, (list, tuple)):
        return None, f"{what} must be a single number, got {shown(value)}"
    arr, problem = as_array(value, what)
    if problem:
        return None, problem
    if arr.size != 1:
        return None, f"{what} must be a single number, got an array of shape {arr.shape}"
    number = float(arr.reshape(()))
    if not np.isfinite(number):
        return None, f"{what} must be a finite number, got {number}"
    return number, None


class CheckResult:
    """The verdict of one check: ``status`` is one of NOT_ATTEMPTED, INCORRECT, CORRECT."""

    def __init__(self, status, message):
        self.status = status
        self.message = message

    def __bool__(self):
        return self.status == CORRECT

    def __repr__(self):
        return f"CheckResult({self.status!r}, {self.message!r})"


class Exercise:
    """One exercise. ``checker(answer)`` returns None when correct, else a string saying what is wrong."""

    def __init__(self, name, checker, hint):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if not callable(checker):
            raise TypeError(f"checker must be callable, got {type(checker).__name__}")
        if not isinstance(hint, str) or not hint:
            raise ValueError("hint must be a non-empty string")
        self.name = name
        self._checker = checker
        self._hint = hint

    def evaluate(self, answer):
        """Return a CheckResult without printing; never raises."""
        if answer is ...:
            return CheckResult(NOT_ATTEMPTED, "not attempted yet: replace `...` with your answer, then run "
                                              "the cell again. For a hint, call .hint() on the exercise.")
        if answer is None:
            return CheckResult(INCORRECT, f"incorrect: your answer is None. {NONE_HINT}")
        try:
            problem = self._checker(answer)
        except Exception as exc:  # the learner's code failed inside the check: report it, don't raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            return CheckResult(INCORRECT, f"your answer raised {type(exc).__name__}: {exc} "
                                          f"(at line {where.lineno}: {where.line})")
        if problem is None:
            return CheckResult(CORRECT, "correct!")
        return CheckResult(INCORRECT, f"incorrect: {problem}")

    def check(self, answer):
        """Print the verdict for ``answer``; returns nothing so the cell shows only the message."""
        result = self.evaluate(answer)
        mark = {NOT_ATTEMPTED: "[ ]", INCORRECT: "[x]", CORRECT: "[ok]"}[result.status]
        print(f"{mark} Exercise {self.name}: {result.message}")

    def hint(self):
        print(f"Hint for exercise {self.name}: {self._hint}")

    def __repr__(self):
        return f"Exercise({self.name!r})"
