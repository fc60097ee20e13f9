"""The course map from the notebooks themselves: title and minutes, optionally measured run time.

    python tools/course_map.py          # notebook, title, teaching + exercise minutes
    python tools/course_map.py --time   # also execute each notebook once and report its run time

The README's course map and the instructor guide's schedules use these numbers;
tests/test_course_map.py keeps the README in step with the notebooks' own headers.
"""

import argparse
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MINUTES = re.compile(r"Teaching:\s*(\d+)\s*min\s*·\s*Exercises:\s*(\d+)\s*min")


def read_map(notebooks_dir=ROOT / "notebooks"):
    """Return [(file name, title, teaching minutes, exercise minutes)] in course order."""
    rows = []
    for path in sorted(Path(notebooks_dir).glob("[0-9][0-9]_*.ipynb")):
        intro = nbformat.read(path, as_version=4).cells[0].source
        title = intro.splitlines()[0].lstrip("# ").strip()
        match = MINUTES.search(intro)
        if not match:
            raise ValueError(f"{path.name}: the first cell has no 'Teaching: N min · Exercises: M min'")
        rows.append((path.name, title, int(match.group(1)), int(match.group(2))))
    return rows


def run_seconds(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--time", action="store_true", help="execute each notebook and report its run time")
    args = parser.parse_args(argv)
    total_teach = total_ex = 0
    print("| notebook | title | teaching | exercises |" + (" run time |" if args.time else ""))
    print("|---|---|---|---|" + ("---|" if args.time else ""))
    for name, title, teach, ex in read_map():
        total_teach, total_ex = total_teach + teach, total_ex + ex
        extra = f" {run_seconds(ROOT / 'notebooks' / name):.0f} s |" if args.time else ""
        print(f"| {name} | {title} | {teach} min | {ex} min |{extra}", flush=True)
    print(f"\ntotal: {total_teach} min teaching + {total_ex} min exercises = {total_teach + total_ex} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
