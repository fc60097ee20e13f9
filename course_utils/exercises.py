"""Self-checking exercises in the spirit of Kaggle's learntools: ``check()``, ``hint()``.

A learner writes ``answer = ...`` (Python's Ellipsis), replaces ``...`` with an answer and calls
``ex.check(answer)``. A check never raises at a learner; it prints one of three verdicts:

* not attempted yet: the answer is still ``...`` (or None);
* incorrect, and why: the checker found a problem (or the learner's code raised);
* correct.

Reference solutions live in the notebook, in a hidden cell tagged ``solution`` right after the exercise.
"""

import traceback

NOT_ATTEMPTED = "not attempted"
INCORRECT = "incorrect"
CORRECT = "correct"


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
        if answer is ... or answer is None:
            return CheckResult(NOT_ATTEMPTED, "not attempted yet: replace `...` with your answer, then run "
                                              "the cell again. For a hint, call .hint() on the exercise.")
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
