"""The student edition holds no solution and no output.

That it runs (every exercise "not attempted", every other output as stored) and that a second Run All in
the same kernel shows the stored outputs again is proved by nbval itself: conftest.py runs each lesson as
the student copy followed by the full notebook, in one kernel (tests/test_notebook_passes.py tests that).
"""

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from make_student_edition import SOLUTION_TAG, make_edition  # noqa: E402

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
