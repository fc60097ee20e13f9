"""conftest.py's two passes over a lesson can fail: each pass compares, exercises must say "not attempted",
every reference solution must pass its check, a cell that needs a solution fails, and a notebook that checks
nothing fails the run.

Each case runs pytest (with the course's conftest.py and tools/make_editions.py) on a tiny notebook without
MindSpore in a temporary directory, with its own solutions folder: one kernel start per case.
"""

import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]

SETUP = ("class _Verdict:\n"
         "    def __init__(self, status):\n"
         "        self.status = status\n"
         "\n\n"
         "class _Exercise:\n"
         "    def evaluate(self, answer):\n"
         "        return _Verdict('not attempted' if answer is ... else 'correct' if answer == 4 else 'incorrect')\n"
         "\n"
         "    def check(self, answer):\n"
         "        print('[ ] not attempted' if answer is ... else '[ok] correct' if answer == 4 else '[x] incorrect')\n"
         "\n\n"
         "class nb01:\n"
         "    tiny = _Exercise()\n")
SOLUTION = "# %% tiny\nanswer = 4\n\nnb01.tiny.check(answer)\n"


def _cell(source, text=None, tags=()):
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})
    cell.execution_count = 1
    if text is not None:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    return cell


def _good_cells():
    return [
        _cell(SETUP),
        _cell("answer = ...\nnb01.tiny.check(answer)", "[ ] not attempted\n", tags=["exercise"]),
        _cell("print(2 + 2)", "4\n"),
    ]


@pytest.fixture(autouse=True)
def _course(pytester, monkeypatch):
    """conftest.py and its plugins as in the course; a solutions folder of the test's own."""
    pytester.makeconftest((ROOT / "conftest.py").read_text())
    for plugin in (ROOT / "tests" / "plugins").glob("*.py"):
        shutil.copy(plugin, pytester.path)
    pytester.makeini("[pytest]\npythonpath = .\n")
    (pytester.path / "solutions").mkdir()
    (pytester.path / "solutions" / "nb01.py").write_text(SOLUTION)
    monkeypatch.setenv("COURSE_SOLUTIONS_DIR", str(pytester.path / "solutions"))
    monkeypatch.setenv("COURSE_MIN_NOTEBOOK_SECONDS", "0")


def _lesson(pytester, cells, name="01_tiny.ipynb"):
    (pytester.path / "notebooks").mkdir(exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(cells, 1):
        if cell.execution_count is not None:
            cell.execution_count = i
    nb.cells = cells
    path = pytester.path / "notebooks" / name
    nbformat.write(nb, path)
    return path


def _run(pytester, path, *args):
    return pytester.runpytest_subprocess("--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                                         "-o", "timeout=300", *args, str(path))


def test_a_good_lesson_passes_with_both_passes_compared(pytester):
    result = _run(pytester, _lesson(pytester, _good_cells()), "-v")
    result.assert_outcomes(passed=7)  # 3 cells as stored + 3 again + the solution
    result.stdout.fnmatch_lines(["*Cell 1 PASSED*", "*Cell 1 (instructor) PASSED*",
                                 "*Cell 1 solution (instructor) PASSED*", "*7/7 * cells checked*"])


def test_a_wrong_stored_output_fails_in_both_passes(pytester):
    cells = _good_cells()
    cells[2].outputs[0].text = "5\n"
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=5, failed=2)
    result.stdout.fnmatch_lines(["FAILED *Cell 2 -*", "FAILED *Cell 2 (instructor)*"])


def test_an_exercise_that_ships_its_answer_fails(pytester):
    cells = _good_cells()
    cells[1] = _cell("answer = 4\nnb01.tiny.check(answer)", "[ok] correct\n", tags=["exercise"])
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["*the student's exercise cell should say 'not attempted'*", "FAILED *Cell 1 -*"])


def test_a_solution_that_fails_its_check_fails(pytester):
    (pytester.path / "solutions" / "nb01.py").write_text(SOLUTION.replace("answer = 4", "answer = 5"))
    result = _run(pytester, _lesson(pytester, _good_cells()))
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["*the reference solution does not pass its check*",
                                 "FAILED *Cell 1 solution (instructor)*"])


def test_an_exercise_without_a_solution_is_an_error(pytester):
    (pytester.path / "solutions" / "nb01.py").write_text("")
    result = _run(pytester, _lesson(pytester, _good_cells()))
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*defines no exercise tiny*"])


def test_a_later_cell_that_needs_the_solution_fails(pytester):
    cells = _good_cells()
    cells[2] = _cell("print(answer + 0)", "4\n")  # needs the hidden solution's `answer = 4`
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["FAILED *Cell 2 -*"])


def test_a_notebook_that_runs_in_no_time_fails_the_run(pytester, monkeypatch):
    monkeypatch.setenv("COURSE_MIN_NOTEBOOK_SECONDS", "30")
    result = _run(pytester, _lesson(pytester, [_cell("print(1)", "1\n")]))
    result.assert_outcomes(passed=2)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*ERROR: notebooks that checked no cell or ran in under 30.0 s*",
                                 "*01_tiny.ipynb: 2 of 2 cells checked*"])


def test_a_notebook_saved_unexecuted_fails_the_run(pytester):
    cell = _cell("print(1)")  # saved after "Clear All Outputs": nbval runs it but compares nothing
    cell.execution_count = None
    result = _run(pytester, _lesson(pytester, [cell]))
    result.assert_outcomes(passed=2)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*01_tiny.ipynb: 0 of 2 cells checked*"])


def test_other_notebooks_get_one_pass(pytester):
    nb = nbformat.v4.new_notebook()
    nb.cells = [_cell("print(1)", "1\n")]
    path = pytester.path / "app.ipynb"
    nbformat.write(nb, path)
    result = _run(pytester, path)
    result.assert_outcomes(passed=1)


def test_a_numeric_answer_printed_above_the_exercise_fails(pytester):
    (pytester.path / "solutions" / "nb01.py").write_text(SOLUTION.replace("answer = 4", "answer = 4.01"))
    cells = _good_cells()
    cells[0].source += "print('a good value is about 4.01')"
    cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="a good value is about 4.01\n")]
    cells[0].source = cells[0].source.replace("answer == 4", "abs(answer - 4.01) < 0.1")
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["*the answer (4.01) can be copied from above*", "FAILED *Cell 1 solution*"])
    # the same answer, not printed above: passes
    cells[0].source = cells[0].source.replace("print('a good value is about 4.01')", "print('no number')")
    cells[0].outputs[0].text = "no number\n"
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=7)


def _chinese_edition(pytester, cells, name="01_tiny.ipynb"):
    """A Chinese edition next to the lesson, as tools/zh.py makes it: same cells, its own stored outputs."""
    (pytester.path / "zh" / "notebooks").mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = cells
    nbformat.write(nb, pytester.path / "zh" / "notebooks" / name)


def test_the_second_pass_runs_the_chinese_edition_and_compares_its_outputs(pytester):
    lesson = _lesson(pytester, _good_cells())
    zh_cells = _good_cells()
    zh_cells[2] = _cell("print('二加二', 2 + 2)", "二加二 4\n")
    _chinese_edition(pytester, zh_cells)
    result = _run(pytester, lesson, "-v")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*Cell 2 PASSED*", "*Cell 1 solution (zh, instructor) PASSED*",
                                 "*Cell 2 (zh, instructor) PASSED*"])
    zh_cells[2].outputs[0].text = "二加二 5\n"  # a Chinese output that is not what the Chinese edition prints
    _chinese_edition(pytester, zh_cells)
    result = _run(pytester, lesson)
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["FAILED *Cell 2 (zh, instructor)*"])


def test_a_first_pass_only_cell_runs_once(pytester):
    cells = _good_cells()
    cells[2].metadata["tags"] = ["first-pass-only"]  # in a lesson: a cell that launches an msrun job
    result = _run(pytester, _lesson(pytester, cells), "-v")
    result.assert_outcomes(passed=6, skipped=1)
    result.stdout.fnmatch_lines(["*Cell 2 PASSED*", "*Cell 2 (instructor) SKIPPED*"])


def test_an_answer_is_found_where_a_learner_could_copy_it():
    from two_pass import _spoilers

    assert _spoilers(0.80734, "final loss 0.807 after 100 steps", precisions=(3,)) == ["0.807"]
    assert _spoilers(0.80734, "w = 0.8073, loss 10.807", precisions=(3,)) == []  # digits inside other numbers
    assert _spoilers(0.5004, "lr = 0.5", precisions=(2, 3)) == []  # one digit: any learning rate someone typed
    assert _spoilers(1.9497, "w ends at 1.95", precisions=(2, 3)) == ["1.95"]  # 1.9 is not in 1.95
    assert _spoilers(1.9497, "about 1.9 or so", precisions=(2, 3)) == ["1.9"]
    assert _spoilers(3.0, "3.0 everywhere") == []  # an integer answer cannot be told from chance
