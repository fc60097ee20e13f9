"""The student edition runs with every exercise "not attempted", and the full notebook then runs again
in the same kernel (a learner's second "Run All") without new errors.

nbval proves each notebook runs once in a fresh kernel. Here one kernel runs the student copy (solution
cells removed) and then the full notebook: state a cell leaves behind (global modes, rebound names,
files) must not break a second run, and no later cell may depend on a hidden solution.
"""

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from make_student_edition import SOLUTION_TAG, make_edition, student_notebook  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _tags(cell):
    return cell.metadata.get("tags", [])


def _text(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_student_edition_has_no_solutions(tmp_path):
    written = make_edition(tmp_path)
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    for original, copy in zip(NOTEBOOKS, written):
        full = nbformat.read(original, as_version=4)
        student = nbformat.read(copy, as_version=4)
        solutions = [c.source for c in full.cells if SOLUTION_TAG in _tags(c)]
        assert solutions, f"{original.name} has no solution cells"
        assert not any(SOLUTION_TAG in _tags(c) for c in student.cells)
        sources = {c.source for c in student.cells}
        assert not any(s in sources for s in solutions), f"{copy.name} still contains a solution"
        for cell in student.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None
    with pytest.raises(ValueError, match="course's own notebooks"):
        make_edition(ROOT)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_student_copy_then_full_notebook_in_one_kernel(path):
    full = nbformat.read(path, as_version=4)
    student = student_notebook(full)
    student_code = [c for c in student.cells if c.cell_type == "code"]
    full_code = [c for c in full.cells if c.cell_type == "code"]
    run = nbformat.v4.new_notebook(metadata=full.metadata)
    run.cells = [nbformat.v4.new_code_cell(c.source, metadata=c.metadata) for c in student_code + full_code]
    client = NotebookClient(run, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError on an error in a cell not tagged raises-exception
    for i, cell in enumerate(run.cells):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        expected = "raises-exception" in _tags(cell)
        part = "student copy" if i < len(student_code) else "second run"
        assert bool(errors) == expected, f"{part}, cell {i}: {errors[0].evalue if errors else 'no error'}"
        if "exercise" in _tags(cell) and i < len(student_code):
            assert "not attempted" in _text(cell), f"student exercise cell {i} shows {_text(cell)!r}"
