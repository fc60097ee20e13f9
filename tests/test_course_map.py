"""The README's course map and the instructor guide agree with the notebooks' own headers."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def test_the_chinese_readme_and_guide_give_the_same_minutes():
    """README.zh-CN's course map and INSTRUCTORS.zh-CN's table say what the notebooks say, as the English do."""
    readme = [line for line in (ROOT / "README.zh-CN.md").read_text().splitlines() if line.startswith("| ")]
    guide = [line for line in (ROOT / "INSTRUCTORS.zh-CN.md").read_text().splitlines() if line.startswith("| ")]
    for name, _title, teach, ex in read_map():
        matching = [r for r in readme if f"(zh/notebooks/{name})" in r]
        assert matching, f"README.zh-CN's course map has no row linking zh/notebooks/{name}"
        assert f"| {teach} + {ex} |" in matching[0], f"README.zh-CN row for {name} should say {teach} + {ex}"
        matching = [r for r in guide if r.startswith(f"| {name[:2]} ") and " min | " in r]
        assert matching, f"INSTRUCTORS.zh-CN.md has no minutes row for {name[:2]}"
        assert f"| {teach} min | {ex} min |" in matching[0], f"INSTRUCTORS.zh-CN.md row for {name}: {matching[0]}"


def test_the_chinese_schedules_keep_the_english_times():
    times = re.compile(r"^\| (\d{1,2}:\d\d) \|", re.M)
    english = times.findall((ROOT / "INSTRUCTORS.md").read_text())
    assert len(english) > 20 and times.findall((ROOT / "INSTRUCTORS.zh-CN.md").read_text()) == english


def test_sync_writes_the_notebooks_minutes_into_the_four_tables(tmp_path):
    import shutil

    from course_map import sync_tables

    names = ["README.md", "README.zh-CN.md", "INSTRUCTORS.md", "INSTRUCTORS.zh-CN.md"]
    for name in names:
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    assert sync_tables(tmp_path) == []  # the committed tables already agree (the tests above say the same)
    name, title, teach, ex = read_map()[3]
    for file in names:
        text = (tmp_path / file).read_text(encoding="utf-8")
        text = text.replace(f"| {teach} + {ex} |", "| 99 + 98 |")
        text = text.replace(f"| {teach} min | {ex} min |", "| 99 min | 98 min |")
        (tmp_path / file).write_text(text, encoding="utf-8")
    assert sync_tables(tmp_path) == names
    for file in names:
        assert (tmp_path / file).read_text(encoding="utf-8") == (ROOT / file).read_text(encoding="utf-8")
