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
    """INSTRUCTORS.md's table has a row per notebook: its number and title, then its minutes."""
    rows = [line for line in (ROOT / "INSTRUCTORS.md").read_text().splitlines() if line.startswith("| ")]
    for name, title, teach, ex in read_map():
        heading = title.replace(" · ", " ", 1)  # "03 · TrainOneStepCell ..." is "| 03 TrainOneStepCell ..." there
        matching = [r for r in rows if r.startswith(f"| {heading} |")]
        assert matching, f"INSTRUCTORS.md has no table row starting '| {heading} |'"
        assert f"| {teach} min | {ex} min |" in matching[0], f"INSTRUCTORS.md row for {name}: {matching[0]}"
