"""The exercise mechanism across the course: no solution in a notebook, one reference solution per
exercise and prediction (course_utils/solutions), hints in steps, and the two editions.

That both editions run (the stored notebook, then the instructor edition whose every solution prints
"[ok]") is proved by nbval itself: tests/plugins/two_pass.py runs them as the two passes over each notebook
(tests/test_notebook_passes.py tests that mechanism).
"""

import importlib
from pathlib import Path

import nbformat
import numpy as np
import pytest
from make_editions import ASKED, EDITION_LINE, SOLUTION_TAG, asked_expression, make_edition

from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED, Exercise, Prediction

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _asked(nb):
    return [asked_expression(c) for c in nb.cells if asked_expression(c)]


def _checks(number):
    module = importlib.import_module(f"course_utils.checks.nb{number}")
    return {name: obj for name, obj in vars(module).items() if isinstance(obj, Exercise)}


def test_student_edition(tmp_path):
    written = make_edition(tmp_path, "student")
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    for copy in written:
        nb = nbformat.read(copy, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.outputs == [] and c.execution_count is None for c in code)
        assert EDITION_LINE in code[0].source, f"{copy.name}: the setup cell does not switch the edition on"
        assert sum(EDITION_LINE in c.source for c in code) == 1
    with pytest.raises(ValueError, match="course's own notebooks"):
        make_edition(ROOT, "student")
    with pytest.raises(ValueError, match="kind"):
        make_edition(tmp_path, "teacher")


def test_instructor_edition(tmp_path):
    written = make_edition(tmp_path, "instructor")
    for original, copy in zip(NOTEBOOKS, written):
        full, teacher = nbformat.read(original, as_version=4), nbformat.read(copy, as_version=4)
        assert len(teacher.cells) == len(full.cells) + len(_asked(full))
        for i, cell in enumerate(teacher.cells):
            if asked_expression(cell):
                following = teacher.cells[i + 1]
                assert SOLUTION_TAG in following.metadata["tags"]
                assert f"{asked_expression(cell)}.check(" in following.source


def _exercise():
    return Exercise(lambda a: None if a == 3 else f"expected 3, got {a!r}", hints=["a nudge", "closer"], name="99.1")


def test_hints_come_in_steps_and_never_raise(capsys):
    ex = _exercise()
    ex.hint()
    ex.hint(2)
    for bad in (0, 3, "2", 1.0, None):
        ex.hint(bad)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Hint 1/2 for exercise 99.1: a nudge (more: .hint(2))"
    assert out[1].startswith("Hint 2/2 for exercise 99.1: closer (that was the last hint")
    assert all("has hints 1 to 2" in line for line in out[2:]) and len(out) == 7


def test_solution_on_request_and_in_the_student_edition(capsys, monkeypatch):
    ex = _checks("03")["least_squares"]
    monkeypatch.delenv("COURSE_EDITION", raising=False)
    ex.solution()
    out = capsys.readouterr().out
    assert "np.linalg.lstsq" in out and "nb03.least_squares.check(answer)" in out
    monkeypatch.setenv("COURSE_EDITION", "student")
    ex.solution()
    out = capsys.readouterr().out
    assert "with your instructor" in out and "lstsq" not in out
    monkeypatch.delenv("COURSE_EDITION")
    _exercise().solution()  # 99.1 belongs to no notebook: says so, does not raise
    assert "No reference solution found for 99.1" in capsys.readouterr().out


def test_bad_exercise_definitions():
    with pytest.raises(TypeError, match="hints"):
        Exercise(lambda a: None, hints="one string")
    with pytest.raises(TypeError, match="hints"):
        Exercise(lambda a: None, hints=[])
    with pytest.raises(ValueError, match="hint"):
        Exercise(lambda a: None, hints=["ok", " "])


def _prediction():
    return Prediction("What is 2 + 2?", {"a": ("3", "one short: count again"),
                                                   "b": ("4", "two pairs make four"),
                                                   "c": ("22", "that is string concatenation, not addition")},
                      answer="b", name="99.2")


def test_prediction_explains_every_choice(capsys):
    p = _prediction()
    assert p.evaluate(...).status == NOT_ATTEMPTED
    right = p.evaluate("b")
    assert right.status == CORRECT and "two pairs make four" in right.message
    assert p.evaluate(" B ").status == CORRECT
    for letter, why in (("a", "count again"), ("c", "string concatenation")):
        result = p.evaluate(letter)
        assert result.status == INCORRECT and why in result.message and f"({letter})" in result.message
    for junk in ("d", 2, None, float("nan"), ["b"], "", "bb"):
        result = p.evaluate(junk)
        assert result.status == INCORRECT and "one of the letters 'a', 'b', 'c'" in result.message, result.message
    p.ask()
    p.check("c")
    out = capsys.readouterr().out
    assert out.startswith("Prediction 99.2: What is 2 + 2?\n  (a) 3\n  (b) 4\n  (c) 22\n")
    assert "[x] Prediction 99.2: incorrect: (c) 22: that is string concatenation" in out


def test_bad_prediction_definitions():
    good = {"a": ("x", "why"), "b": ("y", "why")}
    with pytest.raises(ValueError, match="answer"):
        Prediction("q?", good, answer="c")
    with pytest.raises(TypeError, match="options"):
        Prediction("q?", {"a": ("x", "why")}, answer="a")
    with pytest.raises(ValueError, match="letters"):
        Prediction("q?", {"A": ("x", "why"), "b": ("y", "z")}, answer="b")
    with pytest.raises(TypeError, match="text, explanation"):
        Prediction("q?", {"a": "x", "b": ("y", "z")}, answer="b")
    assert set(ASKED) == {"exercise", "prediction"}


def test_both_languages_get_both_editions(tmp_path):
    from make_editions import make_editions

    for kind in ("student", "instructor"):
        written = make_editions(tmp_path / kind, kind)
        english = [p for p in written if p.parent == tmp_path / kind / "notebooks"]
        chinese = [p for p in written if p.parent == tmp_path / kind / "zh" / "notebooks"]
        assert [p.name for p in english] == [p.name for p in chinese] == [p.name for p in NOTEBOOKS]
        first = [c for c in nbformat.read(chinese[0], as_version=4).cells if c.cell_type == "code"][0]
        assert 'os.environ["COURSE_LANG"] = "zh"' in first.source
        if kind == "student":
            assert EDITION_LINE in first.source


def test_a_check_of_code_that_runs_for_ever_stops_with_a_verdict():
    import time

    ex = Exercise(lambda function: function(), hints=["a nudge", "closer"], name="99.3")
    ex.time_limit = 0.3

    def forever():
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # a learner's catch-all does not swallow the bound
                pass

    started = time.monotonic()
    result = ex.evaluate(forever)
    assert result.status == INCORRECT and "still running after 0.3 s" in result.message, result.message
    assert time.monotonic() - started < 5
    assert ex.evaluate(lambda: None).status == CORRECT  # the timer is off again: a quick answer is unaffected
    time.sleep(0.4)  # no alarm left behind


def test_only_the_scaffolds_own_placeholder_means_not_attempted():
    from course_utils.exercises import unfinished

    def indexing(scores):
        return scores[..., :1]

    def scaffold(scores):
        ...

    def placeholder_argument(net):
        return dict(metrics=...)

    def unfinished_tuple(x):
        return ..., x

    assert not unfinished(indexing)
    assert unfinished(scaffold) and unfinished(placeholder_argument) and unfinished(unfinished_tuple)


def test_a_learners_mindspore_error_is_shown_without_the_developer_sections():
    from mindspore import Tensor, nn

    def forward(net):
        return net(Tensor(np.ones((2, 3), np.float32)))  # a Dense(1, 1) fed 3 features

    ex = Exercise(lambda function: function(nn.Dense(1, 1)), hints=["a nudge", "closer"], name="99.4")
    message = ex.evaluate(forward).message
    assert message.startswith("your answer raised ") and "return net(Tensor(" in message, message
    for banner in ("C++ Call Stack", "analyze_fail.ir", "----", "\n"):
        assert banner not in message, message


def test_unfinished_looks_at_classes_and_functions_only():
    from course_utils.exercises import unfinished

    class Done:
        def method(self):
            return 1

    class Todo(Done):
        def other(self):
            ...

    assert not unfinished(Done) and unfinished(Todo) and not unfinished(type("Empty", (), {}))
    assert not unfinished(lambda g: None) and unfinished(lambda g: ...)
    assert not unfinished(print) and not unfinished(3)


def test_brief_error_keeps_the_message_under_a_leading_banner():
    from course_utils.exercises import brief_error

    banner = ("----------------------------------------------------\n- Framework Unexpected Exception Raised:\n"
              "----------------------------------------------------\nThe pointer is null.\n\n"
              "----------------------------------------------------\n- C++ Call Stack: (For framework developers)\n"
              "----------------------------------------------------\nmindspore/core/x.cc:12 Foo\n")
    assert brief_error(RuntimeError(banner)) == "The pointer is null."
    assert brief_error(ValueError("For 'MatMul', bad.\n(See file '/x/rank_0/om/analyze_fail.ir' for more)")) == \
        "For 'MatMul', bad."
