"""Make the student edition: the notebooks without reference solutions and with outputs cleared.

    python tools/make_student_edition.py [OUT_DIR]      (default: student/, ignored by git)

Cells tagged ``solution`` are removed; every other cell is kept with its outputs and execution count
cleared, so exercises show "not attempted" when the learner runs them. course_utils is not copied:
learners use the installed one (`make lab` sets it up).
"""

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTION_TAG = "solution"


def student_notebook(nb):
    """Return a copy of ``nb`` without solution cells and without outputs."""
    student = nbformat.v4.new_notebook(metadata=nb.metadata)
    for cell in nb.cells:
        if SOLUTION_TAG in cell.metadata.get("tags", []):
            continue
        copy = nbformat.from_dict(dict(cell))
        if copy.cell_type == "code":
            copy.outputs = []
            copy.execution_count = None
        student.cells.append(copy)
    return student


def make_edition(out_dir, notebooks_dir=ROOT / "notebooks"):
    out_dir = Path(out_dir)
    notebooks = sorted(Path(notebooks_dir).glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks found in {notebooks_dir}")
    target = out_dir / "notebooks"
    if target.resolve() == Path(notebooks_dir).resolve():
        raise ValueError(f"{target} is the course's own notebooks folder; choose another OUT_DIR")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in notebooks:
        nbformat.write(student_notebook(nbformat.read(path, as_version=4)), target / path.name)
    return sorted(target.glob("*.ipynb"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=str(ROOT / "student"))
    args = parser.parse_args(argv)
    written = make_edition(args.out_dir)
    print(f"student edition: {len(written)} notebooks in {Path(args.out_dir) / 'notebooks'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
