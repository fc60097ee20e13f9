"""Self-checking exercises in the spirit of Kaggle's learntools: ``check()``, ``hint()``, ``solution()``.

A learner writes ``answer = ...`` (Python's Ellipsis), replaces ``...`` with an answer and calls
``ex.check(answer)``. A check never raises at a learner; it prints one of three verdicts:

* not attempted yet: the answer is still ``...``;
* incorrect, and why: the checker found a problem, the learner's code raised, or the answer is None (what
  a function without ``return`` gives back);
* correct.

A check never accepts a non-finite number, a value of the wrong type or an array of the wrong shape.
``as_number`` and ``as_array`` turn what a learner's code produced into numbers, or say why they cannot.

Hints come in steps: ``ex.hint()`` is the first (one step short of the answer), ``ex.hint(2)`` the next.
``ex.solution()`` shows the reference solution, which lives in ``course_utils/solutions/nbNN.py`` (never in
a notebook); in the workshop hand-out (``make student`` sets ``COURSE_EDITION=student``) it says the
solution is with the instructor instead. A :class:`Prediction` is a multiple-choice question asked before a
surprising cell: every option, right or wrong, comes with its own explanation.
"""

import ast
import inspect
import numbers
import os
import textwrap
import traceback
import types

import numpy as np

from course_utils import solutions
from course_utils._validate import shown
from course_utils.messages import lazy, t

NOT_ATTEMPTED = "not attempted"
KINDS_IN_A_SENTENCE = (lazy("exercise"), lazy("prediction"))  # Exercise.kind.lower(), translated where shown
INCORRECT = "incorrect"
CORRECT = "correct"
NONE_HINT = lazy("If it is what a function of yours returned, that function has no `return` statement "
                 "(a Python function without one returns None)")


def as_array(value, what):
    """``(float64 array, None)`` for numbers, numpy arrays or Tensors; ``(None, problem)`` for anything else,
    such as None (a function that forgot ``return``), text, or arrays of non-numbers. ``what`` names the
    value in the message ("the loss", "your answer")."""
    if value is None:
        return None, t("{what} is None. {hint}", what=what, hint=t(NONE_HINT))
    if isinstance(value, (str, bytes)):
        return None, t("{what} must be a number, not text: got {value} (write the number without quotes)",
                        what=what, value=shown(value))
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, (list, tuple)):
        return None, t("{what} must be a number or an array, got {value}", what=what, value=shown(value))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
        return None, t("{what} must be a number, got {value}", what=what, value=shown(value))
    if isinstance(value, int) and not -2**63 <= value < 2**64:  # beyond int64: numpy keeps it as an object
        return None, t("{what} must be a finite number, got an int too large for a float: {value}", what=what,
                        value=shown(value))
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        kind = (t("numbers that fit a float64") if arr.dtype == object
                else t("real numbers, not {dtype}", dtype=arr.dtype))
        return None, t("{what} must hold {kind}, got {value}", what=what, kind=kind, value=shown(value))
    with np.errstate(over="ignore"):
        return arr.astype(np.float64), None


def as_number(value, what):
    """``(float, None)`` for one finite number (a Python or numpy number, or a Tensor or array holding
    exactly one); ``(None, problem)`` otherwise: text, None, bool, a list, several numbers, NaN or inf."""
    if isinstance(value, (list, tuple)):
        return None, t("{what} must be a single number, got {value}", what=what, value=shown(value))
    arr, problem = as_array(value, what)
    if problem:
        return None, problem
    if arr.size != 1:
        return None, t("{what} must be a single number, got an array of shape {shape}", what=what, shape=arr.shape)
    number = float(arr.reshape(()))
    if not np.isfinite(number):
        return None, t("{what} must be a finite number, got {number}", what=what, number=number)
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


def _show_code(source):
    """Highlighted code in Jupyter, plain text elsewhere."""
    try:
        from IPython import get_ipython
        from IPython.display import Code, display
    except ImportError:  # pragma: no cover - IPython comes with the course's pins
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(Code(source, language="python"))
    else:
        print(source)


def _student_edition():
    return os.environ.get("COURSE_EDITION") == "student"


class Exercise:
    """One exercise. ``checker(answer)`` returns None when correct, else a string saying what is wrong.

    ``hints`` is a list of hints in steps, from a nudge to nearly the answer (at least one).
    """

    kind = lazy("Exercise")

    def __init__(self, name, checker, hints):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if not callable(checker):
            raise TypeError(f"checker must be callable, got {type(checker).__name__}")
        if isinstance(hints, str) or not isinstance(hints, (list, tuple)) or not hints:
            raise TypeError(f"hints must be a non-empty list of strings (in steps), got {shown(hints)}")
        if not all(isinstance(h, str) and h.strip() for h in hints):
            raise ValueError("every hint must be a non-empty string")
        self.name = name
        self._checker = checker
        self.hints = tuple(hints)

    def evaluate(self, answer):
        """Return a CheckResult without printing; never raises."""
        if answer is ...:
            return CheckResult(NOT_ATTEMPTED, t("not attempted yet: replace `...` with your answer, then run "
                                                "the cell again. Stuck? .hint() gives a first hint."))
        if answer is None:
            return CheckResult(INCORRECT, t("incorrect: your answer is None. {hint}", hint=t(NONE_HINT)))
        try:
            problem = self._checker(answer)
        except Exception as exc:  # the learner's code failed inside the check: report it, don't raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            return CheckResult(INCORRECT, t("your answer raised {error}: {exc} (at line {lineno}: {line})",
                                            error=type(exc).__name__, exc=exc, lineno=where.lineno, line=where.line))
        if problem is None:
            return CheckResult(CORRECT, t("correct!"))
        return CheckResult(INCORRECT, t("incorrect: {problem}", problem=problem))

    def check(self, answer):
        """Print the verdict for ``answer``; returns nothing so the cell shows only the message."""
        result = self.evaluate(answer)
        mark = {NOT_ATTEMPTED: "[ ]", INCORRECT: "[x]", CORRECT: "[ok]"}[result.status]
        print(mark, t("{kind} {name}: {message}", kind=t(self.kind), name=self.name, message=result.message))

    def hint(self, step=1):
        """Print hint number ``step`` (1 = the first); never raises."""
        n = len(self.hints)
        if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= n:
            print(t("{kind} {name} has hints 1 to {n}: call .hint() or .hint(2), ... (got {step})",
                    kind=t(self.kind), name=self.name, n=n, step=shown(step)))
            return
        more = (t(" (more: .hint({next}))", next=step + 1) if step < n
                else t(" (that was the last hint; .solution() shows one)"))
        print(t("Hint {step}/{n} for {kind} {name}: {hint}{more}", step=step, n=n, kind=t(self.kind.lower()),
                name=self.name, hint=t(self.hints[step - 1]), more=more))

    def solution(self):
        """Show the reference solution (in the workshop hand-out: say who has it)."""
        if _student_edition():
            print(t("The reference solution of {kind} {name} is with your instructor in this workshop edition: "
                    "ask them, or compare with a neighbour.", kind=t(self.kind.lower()), name=self.name))
            return
        try:
            source = solutions.source(self.name)
        except (LookupError, OSError) as exc:
            print(t("No reference solution found for {name}: {exc}", name=self.name, exc=exc))
            return
        _show_code(source)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


def _has_ellipsis(function):
    """True if the source of ``function`` still holds a ``...`` (a scaffold line not yet written)."""
    code = getattr(function, "__code__", None)
    if code is None or code.co_name == "<lambda>":  # a lambda's source line is part of a larger statement
        return code is not None and Ellipsis in code.co_consts
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, IndentationError):  # no source (built in, a lambda in an expression)
        return Ellipsis in getattr(getattr(function, "__code__", None), "co_consts", ())
    return any(isinstance(node, ast.Constant) and node.value is Ellipsis for node in ast.walk(tree))


def unfinished(answer):
    """True for a scaffolded function, or a class with a method written by the learner, whose code still holds
    ``...`` (methods of MindSpore's own classes are not looked at)."""
    if isinstance(answer, types.FunctionType):
        return _has_ellipsis(answer)
    if isinstance(answer, type):  # its own methods and those it inherits from the learner's classes
        own = [k for k in answer.__mro__ if k.__module__.split(".")[0] not in ("mindspore", "builtins")]
        methods = [getattr(m, "__func__", m) for k in own for m in vars(k).values()]
        return any(_has_ellipsis(m) for m in methods if isinstance(m, types.FunctionType))
    return False


class ScaffoldExercise(Exercise):
    """An exercise whose answer is a scaffold (a function or class with ``...`` lines to replace): while a
    ``...`` is left, the verdict is "not attempted" (the stub returns None, which is no mistake yet)."""

    def evaluate(self, answer):
        if unfinished(answer):
            return CheckResult(NOT_ATTEMPTED, t("not attempted yet: replace the `...` lines of the scaffold with "
                                                "your code, then run the cell again. Stuck? .hint() gives a first "
                                                "hint."))
        return super().evaluate(answer)


class Prediction(Exercise):
    """A multiple-choice question asked before a surprising cell. ``options`` maps a letter to
    ``(text, explanation)``; ``answer`` is the right letter. Every choice, right or wrong, prints its own
    explanation: a wrong option says why it is tempting and what actually happens."""

    kind = lazy("Prediction")

    def __init__(self, name, question, options, answer):
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        if not isinstance(options, dict) or len(options) < 2:
            raise TypeError(f"options must be a dict of at least two letters, got {shown(options)}")
        for letter, pair in options.items():
            if not (isinstance(letter, str) and len(letter) == 1 and letter.islower()):
                raise ValueError(f"option keys are single lower-case letters, got {letter!r}")
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) and p for p in pair)):
                raise TypeError(f"option {letter!r} must be (text, explanation), got {shown(pair)}")
        if answer not in options:
            raise ValueError(f"answer must be one of {sorted(options)}, got {answer!r}")
        self.question, self.options, self.answer = question, dict(options), answer
        super().__init__(name, self._check_choice, [lazy("Reason it through before you run the cell below; "
                                                         "then run it and compare.")])

    def _check_choice(self, choice):
        if not isinstance(choice, str) or choice.strip().lower() not in self.options:
            return t("answer with one of the letters {letters}, got {choice}",
                     letters=", ".join(repr(k) for k in self.options), choice=shown(choice))
        letter = choice.strip().lower()
        text, why = self.options[letter]
        if letter != self.answer:
            return t("({letter}) {text}: {why}", letter=letter, text=t(text), why=t(why))
        self._last_explanation = why
        return None

    def evaluate(self, answer):
        if answer is None:  # not a function's missing return here: the learner wrote None
            return CheckResult(INCORRECT, t("incorrect: {problem}", problem=self._check_choice(None)))
        result = super().evaluate(answer)
        if result.status == CORRECT:
            result = CheckResult(CORRECT, t("correct! {why}", why=t(self._last_explanation)))
        return result

    def ask(self):
        """Print the question and its options."""
        print(t("{kind} {name}: {question}", kind=t(self.kind), name=self.name, question=t(self.question)))
        for letter, (text, _why) in self.options.items():
            print(f"  ({letter}) {t(text)}")
