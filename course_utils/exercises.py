"""Self-checking exercises in the spirit of Kaggle's learntools: ``check()``, ``hint()``, ``solution()``.

A learner writes ``answer = ...`` (Python's Ellipsis), replaces ``...`` with an answer and calls
``ex.check(answer)``. A check never raises at a learner; it prints one of three verdicts: not attempted yet
(the answer, or a scaffold's code, still holds ``...``), incorrect and why, or correct.

Four kinds cover the course (``course_utils/checks/nbNN.py`` holds a notebook's):

* :class:`Exercise`: any answer; ``checker(answer)`` raises :class:`Incorrect` (or returns a message) when
  the answer is wrong and returns None when it is right.
* :class:`ValueExercise`: a number or an array, compared with an expected value (an oracle on the checker's
  own data) within a tolerance; known wrong values name their mistake.
* :class:`FunctionExercise`: a function or class the learner writes from a scaffold. It is "not attempted"
  while the scaffold's ``...`` lines are left; it refuses a value that is not a function (or not a class);
  :meth:`FunctionExercise.call` runs the learner's function and refuses a None it returns.
* :class:`Prediction`: a multiple-choice question asked before a surprising cell, each option with its own
  explanation; its reference solution is generated from its answer.

A checker reads top to bottom: ``number``, ``array`` and ``series`` turn what a learner's code produced into
numbers or raise :class:`Incorrect` saying why they cannot; :func:`name_the_mistake` compares an answer with
an oracle run under altered settings (a table of typical mistakes, each with its message).

Identity is typed once: a checks module defines its exercises and predictions in the order the notebook asks
them and ends with ``bind(globals())``, which numbers them 1, 2, 3 down the page (``"03.3"``) and keys each by
its attribute name (``train_loop``), the key of its section in ``course_utils/solutions/nbNN.py``.

Hints come in steps: ``ex.hint()`` is the first, ``ex.hint(2)`` the next. ``ex.solution()`` shows the
reference solution; in the workshop hand-out (``COURSE_EDITION=student``) it says the solution is with the
instructor.
"""

import ast
import inspect
import numbers
import os
import signal
import textwrap
import threading
import traceback
import types
from contextlib import contextmanager

import numpy as np

from course_utils._validate import shown
from course_utils.errors import DEVELOPER_PARTS
from course_utils.messages import lazy, t

NOT_ATTEMPTED = "not attempted"
INCORRECT = "incorrect"
CORRECT = "correct"
NONE_HINT = lazy("If it is what a function of yours returned, that function has no `return` statement "
                 "(a Python function without one returns None)")


class Incorrect(Exception):
    """Raised by a checker: the answer is wrong, and the message (in the course's words) says why."""


# ---- turning a learner's value into numbers ----------------------------------------------------------------
def array(value, what):
    """A float64 array from numbers, numpy arrays or Tensors; :class:`Incorrect` for anything else (None,
    text, a list, arrays of non-numbers). ``what`` names the value in the message ("the loss")."""
    if value is None:
        raise Incorrect(t("{what} is None. {hint}", what=what, hint=t(NONE_HINT)))
    if isinstance(value, (str, bytes)):
        raise Incorrect(t("{what} must be a number, not text: got {value} (write the number without quotes)",
                          what=what, value=shown(value)))
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, (list, tuple)):
        raise Incorrect(t("{what} must be a number or an array, got {value}", what=what, value=shown(value)))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
        raise Incorrect(t("{what} must be a number, got {value}", what=what, value=shown(value)))
    if isinstance(value, int) and not -2**63 <= value < 2**64:  # beyond int64: numpy keeps it as an object
        raise Incorrect(t("{what} must be a finite number, got an int too large for a float: {value}", what=what,
                          value=shown(value)))
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        kind = (t("numbers that fit a float64") if arr.dtype == object
                else t("real numbers, not {dtype}", dtype=arr.dtype))
        raise Incorrect(t("{what} must hold {kind}, got {value}", what=what, kind=kind, value=shown(value)))
    with np.errstate(over="ignore"):
        return arr.astype(np.float64)


def number(value, what):
    """One finite float (a Python or numpy number, or a Tensor or array holding exactly one), else
    :class:`Incorrect`: text, None, bool, a list, several numbers, NaN or inf."""
    if isinstance(value, (list, tuple)):
        raise Incorrect(t("{what} must be a single number, got {value}", what=what, value=shown(value)))
    arr = array(value, what)
    if arr.size != 1:
        raise Incorrect(t("{what} must be a single number, got an array of shape {shape}", what=what,
                          shape=arr.shape))
    value = float(arr.reshape(()))
    if not np.isfinite(value):
        raise Incorrect(t("{what} must be a finite number, got {number}", what=what, number=value))
    return value


def series(value, what, n):
    """A float64 array of ``n`` finite numbers from a list or tuple of numbers, an array or a Tensor (a column
    or a row counts), else :class:`Incorrect`."""
    if isinstance(value, (list, tuple)):
        arr = np.array([number(item, t("each entry of {what}", what=what)) for item in value], dtype=np.float64)
    else:
        arr = array(value, what)
        arr = arr.ravel() if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.shape != (n,):
        raise Incorrect(t("{what} should hold {n} numbers, got shape {shape}", what=what, n=n, shape=arr.shape))
    if not np.all(np.isfinite(arr)):
        raise Incorrect(t("{what} holds NaN or inf", what=what))
    return arr


def close(got, want, rtol=1e-4, atol=1e-5):
    """True when ``got`` equals ``want`` within the tolerances: two arrays, or two equal-length lists of arrays
    (a net's parameters), each pair of the same shape."""
    if isinstance(want, (list, tuple)):
        return (isinstance(got, (list, tuple)) and len(got) == len(want)
                and all(close(g, w, rtol, atol) for g, w in zip(got, want)))
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def name_the_mistake(got, /, oracle, mistakes, same=close, **fields):
    """Raise :class:`Incorrect` with the message of the first typical mistake that explains ``got``.

    ``mistakes`` is a list of ``(settings, message)``: ``oracle(**settings)`` computes what that mistake gives
    on the checker's data; the message is shown with ``t(message, **fields)``. Returns quietly when none fits."""
    for settings, why in mistakes:
        if same(got, oracle(**settings)):
            raise Incorrect(t(why, **fields))


# ---- what a learner's error says ----------------------------------------------------------------------------
# Where MindSpore's messages turn from the learner to the framework developer (the C++ call stack, the compiled
# graph's position, the analyze_fail.ir dump): a check's message stops there. expect_error's markers, and also the
# graph traceback, the analyze_fail.ir pointer and banner rules (a check's message is one line).
_DEVELOPER_PARTS = DEVELOPER_PARTS + ("- The Traceback of Net Construct Code", "(See file '",
                                      "------------------------")
_LIBRARIES = ("site-packages", "dist-packages", f"{os.sep}course_utils{os.sep}")


def brief_error(exc, limit=300):
    """The part of an exception's message a learner can act on: MindSpore's developer sections (C++ call
    stack, graph positions, the analyze_fail.ir path) cut, on one line, at most ``limit`` characters."""
    lines = str(exc).strip().splitlines()
    while lines and (not lines[0].strip() or set(lines[0].strip()) == {"-"}
                     or (lines[0].startswith("- ") and lines[0].rstrip().endswith(":"))):
        lines = lines[1:]  # a leading banner: "-----", "- Framework Unexpected Exception Raised:"
    text = "\n".join(lines)
    for marker in _DEVELOPER_PARTS:
        if marker in text:
            text = text[:text.index(marker)]
    text = " ".join(line.strip() for line in text.strip().strip("-").splitlines() if line.strip())
    text = text or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _learner_frame(exc):
    """The innermost frame of the traceback in the learner's own code (not MindSpore's, numpy's or the
    course's), or the innermost frame if there is none."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [frame for frame in frames if not any(part in frame.filename for part in _LIBRARIES)]
    return (own or frames)[-1]


# ---- a time bound on the learner's code ---------------------------------------------------------------------
TIME_LIMIT = 300.0  # seconds a check may run the learner's code; the slowest reference takes about 20 s


class _TimeUp(BaseException):
    """Raised into the learner's code when a check has run longer than its bound (not an Exception, so the
    learner's own ``except Exception`` cannot swallow it)."""


@contextmanager
def _time_bound(seconds):
    """Interrupt the block after ``seconds`` (a SIGALRM timer; only in the main thread of a system that has it,
    as in a Jupyter kernel on Linux or macOS; elsewhere, no bound)."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and seconds and seconds > 0)
    if not usable:
        yield
        return

    def time_up(_signum, _frame):
        raise _TimeUp()

    previous = signal.signal(signal.SIGALRM, time_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---- the verdict ---------------------------------------------------------------------------------------------
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


def _hints(hints):
    if isinstance(hints, str) or not isinstance(hints, (list, tuple)) or not hints:
        raise TypeError(f"hints must be a non-empty list of strings (in steps), got {shown(hints)}")
    if not all(isinstance(h, str) and h.strip() for h in hints):
        raise ValueError("every hint must be a non-empty string")
    return tuple(hints)


class Exercise:
    """One exercise. ``checker(answer)`` raises :class:`Incorrect` (or returns a message) when the answer is
    wrong, and returns None when it is right. ``hints``: a list of hints in steps, from a nudge to nearly the
    answer. ``parts``: for an answer that is a tuple of that many parts, "not attempted" while any is ``...``.

    The name ("03.3") and key ("learning_rate") are set by :func:`bind`; ``name`` may be given for an exercise
    that belongs to no notebook."""

    kind = lazy("Exercise")
    kind_in_sentence = lazy("exercise")

    def __init__(self, checker, hints, parts=None, name="?"):
        if not callable(checker):
            raise TypeError(f"checker must be callable, got {type(checker).__name__}")
        self._checker = checker
        self.hints = _hints(hints)
        self.parts = parts
        self.time_limit = TIME_LIMIT
        self.name, self.key, self.notebook = name, None, None

    @property
    def expression(self):
        """What a notebook calls ``.check`` on: ``"nb03.train_loop"``."""
        return f"nb{self.notebook}.{self.key}"

    def not_attempted(self, answer):
        """True while the answer is still the placeholder (or a part of it is)."""
        if answer is ...:
            return True
        return bool(self.parts) and isinstance(answer, tuple) and any(part is ... for part in answer)

    def evaluate(self, answer):
        """Return a CheckResult without printing; never raises."""
        if self.not_attempted(answer):
            return CheckResult(NOT_ATTEMPTED, t("not attempted yet: replace `...` with your answer, then run "
                                                "the cell again. Stuck? .hint() gives a first hint."))
        if answer is None:
            return CheckResult(INCORRECT, t("incorrect: your answer is None. {hint}", hint=t(NONE_HINT)))
        try:
            with _time_bound(self.time_limit):
                problem = self._checker(answer)
        except Incorrect as wrong:
            problem = str(wrong)
        except _TimeUp:
            return CheckResult(INCORRECT, t("incorrect: your code was still running after {seconds:g} s, so the "
                                            "check stopped it. That usually means an endless loop (a `while` whose "
                                            "condition never changes) or a dataset iterated without end; run your "
                                            "code on a small case by itself first", seconds=self.time_limit))
        except KeyboardInterrupt:
            return CheckResult(INCORRECT, t("incorrect: the check was interrupted (Kernel > Interrupt) before it "
                                            "finished; if your code runs for ever, run it on a small case by itself"))
        except Exception as exc:  # the learner's code failed inside the check: report it, don't raise
            where = _learner_frame(exc)
            return CheckResult(INCORRECT, t("your answer raised {error}: {exc} (at line {lineno}: {line})",
                                            error=type(exc).__name__, exc=brief_error(exc), lineno=where.lineno,
                                            line=where.line))
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
        print(t("Hint {step}/{n} for {kind} {name}: {hint}{more}", step=step, n=n, kind=t(self.kind_in_sentence),
                name=self.name, hint=t(self.hints[step - 1]), more=more))

    def solution(self):
        """Show the reference solution (in the workshop hand-out: say who has it)."""
        if _student_edition():
            print(t("The reference solution of {kind} {name} is with your instructor in this workshop edition: "
                    "ask them, or compare with a neighbour.", kind=t(self.kind_in_sentence), name=self.name))
            return
        from course_utils import solutions

        try:
            source = solutions.source(self)
        except (LookupError, OSError) as exc:
            print(t("No reference solution found for {name}: {exc}", name=self.name, exc=exc))
            return
        _show_code(source)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class ValueExercise(Exercise):
    """An exercise answered by a number or an array: ``expected()`` computes the right value on the checker's
    data (an oracle); ``what`` names it in messages; ``mistakes`` is a list of ``(wrong value function,
    message)`` tried in turn, so a typical mistake is named; ``otherwise`` is what a wrong value that matches
    no mistake is told (never the expected value itself). Messages are shown with ``got`` and ``fields``."""

    def __init__(self, expected, hints, what, otherwise, rtol=1e-4, atol=1e-6, mistakes=(), fields=None, name="?"):
        self.expected, self.what, self.otherwise, self.rtol, self.atol = expected, what, otherwise, rtol, atol
        self.mistakes, self.fields = tuple(mistakes), dict(fields or {})
        super().__init__(self._check_value, hints, name=name)

    def _check_value(self, answer):
        want = np.asarray(self.expected(), dtype=np.float64)
        got = number(answer, t(self.what)) if want.ndim == 0 else array(answer, t(self.what))
        if want.ndim and got.shape != want.shape:
            raise Incorrect(t("{what} should have shape {want}, got {got}", what=t(self.what), want=want.shape,
                              got=got.shape))
        if close(got, want, self.rtol, self.atol):
            return None
        for wrong, why in self.mistakes:
            if close(got, wrong(), self.rtol, self.atol):
                raise Incorrect(t(why, got=got, **self.fields))
        raise Incorrect(t(self.otherwise, got=got, **self.fields))


def _has_ellipsis(function):
    """True if the source of ``function`` still holds a ``...`` placeholder (a scaffold line not yet written,
    ``metrics=...``, ``return ..., finite``); ``...`` inside an index (``scores[..., 0]``) is code, not a
    placeholder."""
    code = getattr(function, "__code__", None)
    if code is not None and code.co_name == "<lambda>":  # its source line may hold other code: ask the bytecode
        return Ellipsis in code.co_consts
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, IndentationError):  # no source: a lambda in an expression, a builtin
        return code is not None and Ellipsis in code.co_consts
    in_index = {id(node) for sub in ast.walk(tree) if isinstance(sub, ast.Subscript) for node in ast.walk(sub.slice)}
    return any(isinstance(node, ast.Constant) and node.value is Ellipsis and id(node) not in in_index
               for node in ast.walk(tree))


def unfinished(answer):
    """True for a scaffolded function, or a class with a method written by the learner, whose code still holds
    a ``...`` placeholder (methods of MindSpore's own classes are not looked at)."""
    if isinstance(answer, types.FunctionType):
        return _has_ellipsis(answer)
    if isinstance(answer, type):  # its own methods and those it inherits from the learner's classes
        own = [k for k in answer.__mro__ if k.__module__.split(".")[0] not in ("mindspore", "builtins")]
        methods = [getattr(m, "__func__", m) for k in own for m in vars(k).values()]
        return any(_has_ellipsis(m) for m in methods if isinstance(m, types.FunctionType))
    return False


COURSE_PACKAGES = ("course_utils", "capstone")  # an answer defined in these is the course's, not the learner's


def course_owner(answer):
    """``"module.name"`` when ``answer`` (a function, a class, a partial or bound method of one) is defined in the
    course's own packages, else None."""
    while True:  # functools.partial(f, ...) and bound methods carry the function they wrap
        inner = getattr(answer, "func", None) or getattr(answer, "__func__", None)
        if inner is None or inner is answer:
            break
        answer = inner
    module = getattr(answer, "__module__", None) or ""
    if module.split(".")[0] in COURSE_PACKAGES:
        return f"{module}.{getattr(answer, '__qualname__', getattr(answer, '__name__', '?'))}"
    return None


class FunctionExercise(Exercise):
    """An exercise whose answer is a function (or, with ``cls=True``, a class) the learner writes from a
    scaffold. ``signature`` is what the notebook's scaffold defines ("train_momentum(net, x, y, lr, steps)");
    while the scaffold's ``...`` lines are left the verdict is "not attempted"; anything but a function (a
    class) is refused with the signature. The checker receives the function; :meth:`call` runs it."""

    def __init__(self, checker, hints, signature, cls=False, parts=None, name="?"):
        if not isinstance(signature, str) or "(" not in signature:
            raise ValueError(f"signature must read like 'name(arg, ...)', got {signature!r}")
        self.signature, self.cls = signature, cls
        self._check_function = checker
        super().__init__(self._check_callable, hints, parts=parts, name=name)

    @property
    def function_name(self):
        return self.signature.split("(", 1)[0]

    def not_attempted(self, answer):
        return super().not_attempted(answer) or unfinished(answer)

    def _check_callable(self, answer):
        if self.cls and not isinstance(answer, type):
            raise Incorrect(t("expected your class {signature} (answer = {name}, the class itself, not an "
                              "instance), got {answer}", signature=self.signature, name=self.function_name,
                              answer=shown(answer)))
        if not self.cls and (not callable(answer) or isinstance(answer, type)):
            raise Incorrect(t("expected your function {signature} (answer = {name}, without calling it), got "
                              "{answer}", signature=self.signature, name=self.function_name, answer=shown(answer)))
        owner = course_owner(answer)
        if owner:
            raise Incorrect(t("{owner} is the course's own code, not yours: write {signature} yourself in the "
                              "scaffold", owner=owner, signature=self.signature))
        return self._check_function(answer)

    def call(self, function, *args, **kwargs):
        """``function(*args, **kwargs)``; :class:`Incorrect` if it returns None (a missing ``return``)."""
        result = function(*args, **kwargs)
        if result is None:
            raise Incorrect(t("{name}(...) returned None. {hint}", name=self.function_name, hint=t(NONE_HINT)))
        return result

    def evaluate(self, answer):
        if self.not_attempted(answer) and answer is not ...:
            return CheckResult(NOT_ATTEMPTED, t("not attempted yet: replace the `...` lines of the scaffold with "
                                                "your code, then run the cell again. Stuck? .hint() gives a first "
                                                "hint."))
        return super().evaluate(answer)


class Prediction(Exercise):
    """A multiple-choice question asked before a surprising cell. ``options`` maps a letter to
    ``(text, explanation)``; ``answer`` is the right letter. Every choice, right or wrong, prints its own
    explanation: a wrong option says why it is tempting and what actually happens."""

    kind = lazy("Prediction")
    kind_in_sentence = lazy("prediction")

    def __init__(self, question, options, answer, name="?"):
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
        super().__init__(self._check_choice, [lazy("Reason it through before you run the cell below; then run "
                                                   "it and compare.")], name=name)

    def _letter(self, choice):
        if not isinstance(choice, str) or choice.strip().lower() not in self.options:
            raise Incorrect(t("answer with one of the letters {letters}, got {choice}",
                              letters=", ".join(repr(k) for k in self.options), choice=shown(choice)))
        return choice.strip().lower()

    def _check_choice(self, choice):
        letter = self._letter(choice)
        if letter != self.answer:
            text, why = self.options[letter]
            raise Incorrect(t("({letter}) {text}: {why}", letter=letter, text=t(text), why=t(why)))

    def evaluate(self, answer):
        if answer is None:  # not a function's missing return here: the learner wrote None
            try:
                self._letter(None)
            except Incorrect as wrong:
                return CheckResult(INCORRECT, t("incorrect: {problem}", problem=str(wrong)))
        result = super().evaluate(answer)
        if result.status == CORRECT:
            result = CheckResult(CORRECT, t("correct! {why}", why=t(self.options[self.answer][1])))
        return result

    def solution_code(self):
        """The reference solution's cell: the right letter, checked."""
        return f'answer = "{self.answer}"\n\n{self.expression}.check(answer)\n'

    def ask(self):
        """Print the question and its options."""
        print(t("{kind} {name}: {question}", kind=t(self.kind), name=self.name, question=t(self.question)))
        for letter, (text, _why) in self.options.items():
            print(f"  ({letter}) {t(text)}")


def bind(namespace):
    """Number the exercises and predictions a checks module defines, in the order it defines them (the order
    the notebook asks them), and key each by its attribute name. Call it last: ``bind(globals())``.

    Returns them in that order. A module named ``course_utils.checks.nb03`` gives ``03.4``, ``03.3``, ..."""
    module = namespace["__name__"].rsplit(".", 1)[-1]
    if not (module.startswith("nb") and module[2:].isdigit() and len(module) == 4):
        raise ValueError(f"bind() numbers the exercises of a module named nbNN, not {module!r}")
    items = [(key, ex) for key, ex in namespace.items() if isinstance(ex, Exercise) and not key.startswith("_")]
    for position, (key, ex) in enumerate(items, 1):
        ex.name, ex.key, ex.notebook = f"{module[2:]}.{position}", key, module[2:]
    return [ex for _key, ex in items]
