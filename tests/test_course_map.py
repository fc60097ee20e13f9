"""The README's course map and the instructor guide agree with the notebooks' own headers."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from course_map import read_map  # noqa: E402


def test_readme_course_map_matches_notebooks():
    readme = (ROOT / "README.md").read_text()
    rows = {line for line in readme.splitlines() if line.startswith("| ")}
    for name, _title, teach, ex in read_map():
        matching = [r for r in rows if f"(notebooks/{name})" in r]
        assert matching, f"README's course map has no row linking notebooks/{name}"
        assert f"| {teach} + {ex} |" in matching[0], f"README row for {name} should say {teach} + {ex} minutes"


def test_instructor_guide_covers_every_notebook():
    guide = (ROOT / "INSTRUCTORS.md").read_text()
    for name, _title, _teach, _ex in read_map():
        assert name[:2] + " " in guide or name in guide, f"INSTRUCTORS.md does not mention notebook {name[:2]}"
