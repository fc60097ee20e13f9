"""Make the two editions of the course from the stored notebooks (which hold no solution).

    python tools/make_editions.py student [OUT_DIR]      (default: student/, ignored by git)
    python tools/make_editions.py instructor [OUT_DIR]   (default: instructor/, ignored by git)

Each in both languages: OUT_DIR/notebooks/ (English) and OUT_DIR/zh/notebooks/ (the Chinese edition).

* student: the workshop hand-out. Outputs cleared; the setup cell sets ``COURSE_EDITION=student``, so
  ``.solution()`` says the solution is with the instructor (hints still work).
* instructor: after every exercise and prediction cell, its reference solution from
  ``course_utils/solutions/nbNN.py`` in a cell tagged ``solution``; outputs kept.

The test suite runs exactly the instructor edition's cells as its second pass over each notebook
(tests/plugins/two_pass.py), so every solution is proved to pass its check. course_utils is not copied: learners use the
installed one (`make lab` sets it up).
"""

import argparse
import copy
import sys
from pathlib import Path

import nbformat

from course_utils.solutions import ASKED, SOLUTION_TAG, asked_expression, solution_cells  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
EDITION_LINE = 'os.environ["COURSE_EDITION"] = "student"  # workshop hand-out: .solution() refers you to the instructor'


def student_notebook(nb):
    """A copy of ``nb`` with outputs cleared and the student edition switched on in its setup cell."""
    student = copy.deepcopy(nb)
    first = True
    for cell in student.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if first and "import os" in cell.source:
                cell.source = cell.source.replace("import os\n", f"import os\n\n{EDITION_LINE}\n", 1)
                first = False
    return student


def instructor_notebook(nb):
    """A copy of ``nb`` with each reference solution in a cell right after its exercise or prediction."""
    teacher = copy.deepcopy(nb)
    for index, cell in reversed(solution_cells(nb)):
        teacher.cells.insert(index + 1, cell)
    return teacher


ZH_NOTEBOOKS = ROOT / "zh" / "notebooks"  # the Chinese edition (tools/zh.py)


def make_editions(out_dir, kind):
    """Both languages: OUT_DIR/notebooks from notebooks/, OUT_DIR/zh/notebooks from zh/notebooks/."""
    written = make_edition(out_dir, kind)
    if ZH_NOTEBOOKS.is_dir():
        written += make_edition(Path(out_dir) / "zh", kind, ZH_NOTEBOOKS)
    return written


def make_edition(out_dir, kind, notebooks_dir=ROOT / "notebooks"):
    if kind not in ("student", "instructor"):
        raise ValueError(f"kind must be 'student' or 'instructor', got {kind!r}")
    out_dir = Path(out_dir)
    notebooks = sorted(Path(notebooks_dir).glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks found in {notebooks_dir}")
    target = out_dir / "notebooks"
    if target.resolve() == Path(notebooks_dir).resolve():
        raise ValueError(f"{target} is the course's own notebooks folder; choose another OUT_DIR")
    if target.exists():
        import shutil

        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        edition = student_notebook(nb) if kind == "student" else instructor_notebook(nb)
        nbformat.write(edition, target / path.name)
    return sorted(target.glob("*.ipynb"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["student", "instructor"])
    parser.add_argument("out_dir", nargs="?")
    args = parser.parse_args(argv)
    out_dir = args.out_dir or str(ROOT / args.kind)
    written = make_editions(out_dir, args.kind)
    print(f"{args.kind} edition: {len(written)} notebooks in {Path(out_dir) / 'notebooks'} and, in Chinese, "
          f"{Path(out_dir) / 'zh' / 'notebooks'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
