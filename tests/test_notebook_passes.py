"""conftest.py's two-pass notebook runs can fail: each pass compares, exercises must say "not attempted",
solutions are left out of the student pass, and a notebook that checks nothing fails the run.

Each case runs pytest (with the course's conftest.py) on a tiny notebook without MindSpore in a temporary
directory, so it costs one kernel start.
"""

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]


def _cell(source, text=None, tags=(), count=1):
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})
    cell.execution_count = count
    if text is not None:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    return cell


def _lesson(pytester, cells, name="01_tiny.ipynb"):
    """A course layout in pytester's directory: conftest.py and notebooks/NN_*.ipynb."""
    pytester.makeconftest((ROOT / "conftest.py").read_text())
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


@pytest.fixture(autouse=True)
def _no_time_floor(monkeypatch):
    monkeypatch.setenv("COURSE_MIN_NOTEBOOK_SECONDS", "0")


def _run(pytester, path, *args):
    return pytester.runpytest_subprocess("--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                                         "-o", "timeout=300", *args, str(path))


EXERCISE = ("def check(answer):\n"
            "    print('not attempted' if answer is ... else ('correct' if answer == 4 else 'incorrect'))\n")


def _good_cells():
    return [
        _cell(EXERCISE + "print('hello')", "hello\n"),
        _cell("answer = ...\ncheck(answer)", "not attempted\n", tags=["exercise"]),
        _cell("answer = 4\ncheck(answer)", "correct\n", tags=["solution"]),
        _cell("print(2 + 2)", "4\n"),
    ]


def test_a_good_lesson_passes_with_both_passes_compared(pytester):
    path = _lesson(pytester, _good_cells())
    result = _run(pytester, path, "-v")
    result.assert_outcomes(passed=7)  # 3 student cells (no solution) + 4 full cells
    result.stdout.fnmatch_lines(["*Cell 1 (student) PASSED*", "*Cell 2 PASSED*", "*7/7 * cells checked*"])
    assert "Cell 2 (student)" not in result.stdout.str()  # the solution is not in the student copy


def test_a_wrong_stored_output_fails_in_both_passes(pytester):
    cells = _good_cells()
    cells[3].outputs[0].text = "5\n"
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=5, failed=2)
    result.stdout.fnmatch_lines(["FAILED *Cell 3 (student)*", "FAILED *Cell 3 -*"])


def test_an_exercise_that_is_not_left_open_fails_the_student_pass(pytester):
    cells = _good_cells()
    cells[1].source = "answer = 4\ncheck(answer)"  # the "exercise" ships its answer
    cells[1].outputs[0].text = "correct\n"
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["FAILED *Cell 1 (student)*"])
    result.stdout.fnmatch_lines(["*the student copy's exercise cell should say 'not attempted'*"])


def test_a_later_cell_that_needs_the_solution_fails_the_student_pass(pytester):
    cells = _good_cells()
    cells[3] = _cell("print(answer + 0)", "4\n")  # depends on the hidden solution's `answer = 4`
    result = _run(pytester, _lesson(pytester, cells))
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["FAILED *Cell 3 (student)*"])


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
    pytester.makeconftest((ROOT / "conftest.py").read_text())
    nb = nbformat.v4.new_notebook()
    nb.cells = [_cell("print(1)", "1\n")]
    path = pytester.path / "app.ipynb"
    nbformat.write(nb, path)
    result = _run(pytester, path)
    result.assert_outcomes(passed=1)
