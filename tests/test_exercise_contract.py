"""The contract every exercise and prediction of the 17 notebooks keeps, tested once for all of them.

* Identity is typed once: a checks module defines its items in the order the notebook asks them and
  ``bind(globals())`` numbers them; the notebook asks them in that order, its labels ("**Exercise 03.2.**",
  "**练习 03.2**") run 1, 2, 3 down the page in both editions, and every "exercise NN.k" it mentions exists.
* One reference per exercise, none in a notebook: ``course_utils/solutions/nbNN.py`` holds exactly one
  section per exercise (predictions are generated from their answer), each checking its answer; a function
  exercise's scaffold, its solution and its ``signature`` define the same parameters.
* Verdicts, in English and in Chinese: the placeholder is "not attempted"; None and junk are refused with a
  message and never raise; every prediction explains every option and its generated solution passes.

That every reference solution passes its check in the notebook, in both languages, is proved by the suite's
second pass (tests/plugins/two_pass.py), which runs each after its exercise and asks its verdict in English too.
"""

import ast
import importlib
import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import pytest

from course_utils import solutions
from course_utils.exercises import (
    CORRECT,
    INCORRECT,
    NOT_ATTEMPTED,
    Exercise,
    FunctionExercise,
    Prediction,
)
from course_utils.messages import t
from course_utils.solutions import SOLUTION_TAG, asked_expression

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NUMBERS = [p.name[:2] for p in NOTEBOOKS]
LABEL = {"en": re.compile(r"(?:\*\*|^#+ )(Exercise|Prediction) (\d\d\.\d+)\b", re.M),
         "zh": re.compile(r"(?:\*\*|^#+ )(练习|预测) ?(\d\d\.\d+)", re.M)}
KIND = {"Exercise": "Exercise", "Prediction": "Prediction", "练习": "Exercise", "预测": "Prediction"}
MENTION = re.compile(r"\b(exercises?|predictions?|练习|预测)\s*((?:\d\d\.\d+(?:\s*(?:,|and|or|to|至|和|、)\s*)?)+)",
                     re.I)


def items(number):
    module = importlib.import_module(f"course_utils.checks.nb{number}")
    return [ex for key, ex in vars(module).items() if isinstance(ex, Exercise) and ex.key == key]


ALL = [ex for number in NUMBERS for ex in items(number)]


def _kind(ex):
    return "Prediction" if isinstance(ex, Prediction) else "Exercise"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NUMBERS)
def test_labels_run_in_page_order_in_both_editions(path):
    number, found = path.name[:2], items(path.name[:2])
    assert [ex.name for ex in found] == [f"{number}.{i}" for i in range(1, len(found) + 1)]
    for lang, nb_path in (("en", path), ("zh", ROOT / "zh" / "notebooks" / path.name)):
        nb = nbformat.read(nb_path, as_version=4)
        asked = [asked_expression(c) for c in nb.cells if asked_expression(c)]
        assert asked == [ex.expression for ex in found], (
            f"{nb_path.name} asks {asked}; course_utils/checks/nb{number}.py must define them in that order")
        labels = [(KIND[m.group(1)], m.group(2)) for c in nb.cells if c.cell_type == "markdown"
                  for m in LABEL[lang].finditer(c.source)]
        expected = [(_kind(ex), ex.name) for ex in found]
        assert labels == [item for item in expected if item in labels], f"{lang} labels out of order: {labels}"


def _all_names():
    return {ex.name: _kind(ex) for ex in ALL}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NUMBERS)
def test_every_mentioned_exercise_exists(path):
    names = _all_names()
    texts = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    for text in texts:
        for match in MENTION.finditer(text):
            word = match.group(1).lower()
            for name in re.findall(r"\d\d\.\d+", match.group(2)):
                assert name in names, f"{path.name} mentions {match.group(0)!r}: there is no {name}"
                kind = "Prediction" if word.startswith(("prediction", "预测")) else "Exercise"
                assert names[name] == kind, f"{path.name}: {match.group(0)!r} names a {names[name].lower()}"


@pytest.mark.parametrize("number", NUMBERS)
def test_one_reference_per_exercise_outside_the_notebook(number):
    nb = nbformat.read(ROOT / "notebooks" / f"{number}_{NOTEBOOKS[NUMBERS.index(number)].name[3:]}", as_version=4)
    assert not any(SOLUTION_TAG in c.metadata.get("tags", []) for c in nb.cells), "a solution cell is stored"
    found = items(number)
    assert sum(isinstance(ex, Prediction) for ex in found) >= 2, "a notebook asks at least two predictions"
    exercises = [ex for ex in found if not isinstance(ex, Prediction)]
    assert exercises, "a notebook has at least one exercise"
    sections = solutions.sections(number)
    assert list(sections) == [ex.key for ex in exercises], "one section per exercise, in page order"
    for ex in exercises:
        assert f"{ex.expression}.check(answer)" in sections[ex.key], f"{ex.key}: set and check `answer`"
        assert len(ex.hints) >= 2, f"{ex.expression} needs at least two hints, in steps"
    for cell in nb.cells:
        if asked_expression(cell):
            assert "..." in cell.source, f"{asked_expression(cell)}: the learner's part must be left as `...`"


def _parameters(source, name):
    """The parameters of ``def name(...)``, or of ``class name``'s __init__ without self, in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.unparse(node.args)
        if isinstance(node, ast.ClassDef) and node.name == name:
            init = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
            if not init:
                return ""
            args = init[0].args
            args.args = args.args[1:]
            return ast.unparse(args)
    return None


FUNCTIONS = [ex for ex in ALL if isinstance(ex, FunctionExercise)]


@pytest.mark.parametrize("ex", FUNCTIONS, ids=[ex.name for ex in FUNCTIONS])
def test_a_scaffold_defines_what_its_solution_defines(ex):
    path = NOTEBOOKS[NUMBERS.index(ex.notebook)]
    cell = next(c for c in nbformat.read(path, as_version=4).cells if asked_expression(c) == ex.expression)
    name = ex.function_name
    declared = _parameters(f"def {ex.signature}: pass" if not ex.cls else
                           f"class {name}:\n    def __init__(self, {ex.signature.split('(', 1)[1]}: pass", name)
    scaffold, solution = _parameters(cell.source, name), _parameters(solutions.code(ex), name)
    assert solution == declared, f"the solution of {ex.name} defines {name}({solution}), not {ex.signature}"
    if scaffold is not None:  # a cell may ask for the whole function or class, with no scaffold to fill in
        assert scaffold == declared, f"the exercise cell of {ex.name} defines {name}({scaffold}), not {ex.signature}"


JUNK = ["not an answer", object(), float("nan"), [[]], True]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("ex", ALL, ids=[ex.name for ex in ALL])
def test_verdicts(ex, lang, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", lang)
    assert ex.evaluate(...).status == NOT_ATTEMPTED
    none = ex.evaluate(None)
    assert none.status == INCORRECT and none.message
    junk = JUNK + ([lambda *args, **kwargs: None] if isinstance(ex, FunctionExercise) else [])
    for value in junk:
        result = ex.evaluate(value)
        assert result.status != CORRECT and result.message, (value, result)
    out = io.StringIO()
    with redirect_stdout(out):
        ex.check(...)
        ex.hint()
    assert ex.name in out.getvalue()
    if isinstance(ex, Prediction):
        right = ex.evaluate(ex.answer)
        assert right.status == CORRECT
        for letter, (_text, why) in ex.options.items():
            if letter != ex.answer:
                wrong = ex.evaluate(letter)
                assert wrong.status == INCORRECT and t(why) in wrong.message, wrong.message
        module = importlib.import_module(f"course_utils.checks.nb{ex.notebook}")
        out = io.StringIO()
        with redirect_stdout(out):
            exec(solutions.code(ex), {f"nb{ex.notebook}": module})
        assert out.getvalue().startswith("[ok]"), out.getvalue()


def _line(text):
    return re.sub(r"\s+", " ", text.strip())


def _telling(line):
    """A solution line that says something: not blank, a comment, an import, the answer or its check."""
    return (len(line) > 12 and not line.startswith(("#", "import ", "from ", "answer = "))
            and ".check(" not in line)


VERBATIM_SHARE = 0.6  # of a solution's telling lines standing word for word in the lesson's own cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name[:2] for p in NOTEBOOKS])
def test_no_solution_is_a_lesson_cell_copied(path):
    """An exercise asks for a variation: its reference solution is not, nearly line for line, lesson code."""
    nb = nbformat.read(path, as_version=4)
    lesson = {_line(line) for cell in nb.cells if cell.cell_type == "code" and not asked_expression(cell)
              and SOLUTION_TAG not in cell.metadata.get("tags", []) for line in cell.source.splitlines()}
    for key, code in solutions.sections(path.name[:2]).items():
        lines = [line for line in map(_line, code.splitlines()) if _telling(line)]
        copied = [line for line in lines if line in lesson]
        assert len(lines) < 4 or len(copied) < VERBATIM_SHARE * len(lines), (
            f"{path.name}: {len(copied)} of the {len(lines)} lines of the solution to nb{path.name[:2]}.{key} stand"
            f" word for word in the lesson's cells, e.g. {copied[0]!r}: ask for a variation the lesson did not show")


@pytest.mark.parametrize("ex", FUNCTIONS, ids=[ex.name for ex in FUNCTIONS])
def test_the_course_code_is_no_answer(ex):
    """A function exercise refuses the course's own functions (its module's oracles, course_utils.oracles), also
    wrapped in functools.partial: the learner writes the function."""
    import functools

    from course_utils import oracles

    module = importlib.import_module(f"course_utils.checks.nb{ex.notebook}")
    own = [v for v in vars(module).values() if callable(v) and getattr(v, "__module__", "") == module.__name__]
    own += [v for v in vars(oracles).values() if callable(v) and getattr(v, "__module__", "") == oracles.__name__]
    assert len(own) > 3
    for value in own[:20] + [functools.partial(own[0])]:
        if isinstance(value, type) != ex.cls:
            continue
        result = ex.evaluate(value)
        assert result.status == INCORRECT and "course's own code" in result.message, (value, result.message)


def _bare(text):
    """Code or prose without spaces and trailing comments: `a*b` and `a * b` are the same line."""
    return re.sub(r"\s+", "", re.split(r"\s#\s", text)[0]).rstrip(":")


HINTED_SHARE = 0.3  # of a solution's telling lines that its hints may spell out


@pytest.mark.parametrize("ex", ALL, ids=[ex.name for ex in ALL])
def test_no_hint_is_the_solution(ex):
    """Hints come in steps, in words; together they do not spell the reference solution out line by line."""
    if isinstance(ex, Prediction):
        return
    hints = _bare(" ".join(t(hint) for hint in ex.hints))
    lines = [line for line in map(_line, solutions.code(ex).splitlines()) if _telling(line)]
    given = [line for line in lines if len(_bare(line)) > 8 and _bare(line) in hints]
    assert len(given) < max(2, HINTED_SHARE * len(lines)), (
        f"{ex.name}: {len(given)} of the {len(lines)} lines of its solution stand in its hints, e.g. {given[0]!r}")
