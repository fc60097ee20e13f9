"""README.zh-CN.md and INSTRUCTORS.zh-CN.md give the figures of their English originals (README.md, INSTRUCTORS.md).

A figure is a measured or stated quantity with its unit: a duration ("12 min 13 s", "12 分 13 秒", "80 s",
"约 80 秒", "2 to 15 minutes", "2 到 15 分钟"), a size ("3 GB", "600 MB"), a count of tests ("3363 tests",
"3363 项"), a count of wheels, a date (2026-12-02) or a clock time (22:09). Every figure the Chinese text
states must be stated by the English text too: a Chinese page never gives other numbers (the English
is the source and was measured; a stale "7 分钟" where the English says 12 min 13 s fails), and every figure of
the English is in the Chinese (a section left untranslated fails too). Each lesson's
header gives its minutes in Chinese only, and the same minutes as the English header (tools/zh.py checks the
numbers when it builds; this test also keeps "Teaching: … Exercises: …" out of the Chinese headers).
"""

import json
import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
import zh  # noqa: E402  (tools/ is on the path: conftest.py)

PAIRS = [("README.md", "README.zh-CN.md"), ("INSTRUCTORS.md", "INSTRUCTORS.zh-CN.md")]
NUMBER = r"(\d+(?:[.,]\d+)?)"
# (unit in the text, its kind, the factor to the kind's base unit); the longest spellings first
UNITS = {
    "en": [("minutes", "s", 60), ("minute", "s", 60), ("min", "s", 60), ("seconds", "s", 1), ("second", "s", 1),
           ("ms", "s", 0.001), ("s", "s", 1), ("hours", "s", 3600), ("hour", "s", 3600), ("h", "s", 3600),
           ("GB", "MB", 1000), ("MB", "MB", 1), ("tests", "tests", 1), ("wheels", "wheels", 1)],
    "zh": [("分钟", "s", 60), ("min", "s", 60), ("毫秒", "s", 0.001), ("ms", "s", 0.001), ("秒", "s", 1),
           ("s", "s", 1), ("小时", "s", 3600), ("h", "s", 3600), ("GB", "MB", 1000), ("MB", "MB", 1),
           ("项", "tests", 1), ("个测试", "tests", 1), ("个 wheel", "wheels", 1)],
}
RANGE = {"en": r"\s*(?:to|-|–)\s*", "zh": r"\s*(?:到|至|-|–|~)\s*"}
COMPOUND = {"en": re.compile(r"(\d+) ?min (\d+) ?s\b"), "zh": re.compile(r"(\d+) ?分 ?(\d+) ?秒")}
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
CLOCK = re.compile(r"(?<![\d:])(\d{1,2}:\d\d)(?![\d:])")


def _plain(text):
    """The text without link targets, URLs and fenced code (their numbers are not figures)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return re.sub(r"https?://\S+", " ", text)


def figures(text, lang):
    """Counter of (kind, value) for every figure in the text; a range 'a to b unit' gives both ends."""
    text = _plain(text)
    found = Counter()
    for match in COMPOUND[lang].finditer(text):
        found[("s", int(match.group(1)) * 60 + int(match.group(2)))] += 1
    text = COMPOUND[lang].sub(" ", text)
    for unit, kind, factor in UNITS[lang]:
        tail = r"(?![A-Za-z])" if unit[-1].isascii() else ""
        head = r"(?<![\w.,])"
        joint = r"[\s-]?" if lang == "en" else r"\s?"  # "a 10-minute goal"
        pattern = re.compile(rf"{head}{NUMBER}(?:{RANGE[lang]}{NUMBER})?{joint}{re.escape(unit)}{tail}")
        for match in pattern.finditer(text):
            for value in match.groups():
                if value is not None:
                    found[(kind, round(float(value.replace(",", "")) * factor, 3))] += 1
        text = pattern.sub(" ", text)
    for date in DATE.findall(text):
        found[("date", date)] += 1
    for clock in CLOCK.findall(text):
        found[("clock", clock)] += 1
    return found


def _show(kind, value):
    if kind == "s":
        return f"{value:g} s" + (f" ({value / 60:g} min)" if value >= 60 else "")
    return f"{value} {kind}" if kind not in ("date", "clock") else str(value)


@pytest.mark.parametrize("english,chinese", PAIRS, ids=[c for _e, c in PAIRS])
def test_the_chinese_page_states_the_english_figures(english, chinese):
    en = figures((ROOT / english).read_text(encoding="utf-8"), "en")
    zh_figures = figures((ROOT / chinese).read_text(encoding="utf-8"), "zh")
    other = sorted((k, v) for (k, v) in zh_figures if (k, v) not in en)
    assert not other, (f"{chinese} states figures {english} does not: " + ", ".join(_show(k, v) for k, v in other)
                       + ". Take the English figure (the English is the measured source), or measure again and "
                         "change both")
    untold = sorted((k, v) for (k, v) in en if (k, v) not in zh_figures)
    assert not untold, (f"{english} states figures {chinese} does not: " + ", ".join(_show(k, v) for k, v in untold)
                        + f". Translate what the English says there into {chinese}")


def test_the_figures_are_found():
    """The extraction sees each kind of figure in both languages, as they are written in these pages."""
    en = figures("3363 tests in 12 min 13 s; about 80 s; 2 to 15 minutes; 3 GB; 600 MB; 2026-12-02 at 22:09; "
                 "235 wheels", "en")
    zh_ = figures("共 3363 项，约需 12 分 13 秒；约 80 秒；2 到 15 分钟；3 GB；600 MB；2026-12-02 22:09；"
                  "235 个 wheel", "zh")
    assert en == zh_, (en, zh_)
    assert ("s", 733) in en and ("s", 900) in en and ("MB", 3000) in en and ("tests", 3363) in en
    assert figures("约需 7 分钟", "zh") == Counter({("s", 420): 1}) and not figures("第 7 节", "zh")
    assert figures("the course's 10-minute goal", "en") == figures("课程定下的 10 分钟目标", "zh")
    assert not figures("[x](https://a.b/12_min.html) `12 s`?", "en") - Counter({("s", 12): 1})


TRANSLATED = zh.translated_notebooks()


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_the_chinese_header_gives_the_minutes_in_chinese(path):
    english = nbformat.read(path, as_version=4).cells[0]
    entry = json.loads(zh.translation_path(path.name).read_text(encoding="utf-8"))["cells"][english.get("id")]
    header = next((line for line in entry["zh"].splitlines() if "分钟" in line and "练习" in line), "")
    assert not re.search(r"Teaching|Exercises|\bmin\b", header), (
        f"{path.name}: the Chinese header still has the English minutes: {header!r}; write only "
        f"'讲解 N 分钟 · 练习 M 分钟' (tools/course_map.py reads the English notebook, not this one)")
    zh.check_header_minutes(english.source, entry["zh"], path.name)


def test_the_header_check_catches_other_minutes():
    english = "**Time:** Teaching: 12 min · Exercises: 10 min"
    zh.check_header_minutes(english, "**时间：** 讲解 12 分钟 · 练习 10 分钟", "x")
    for wrong in ("**时间：** 讲解 12 分钟 · 练习 9 分钟", "**时间：** Teaching: 12 min · Exercises: 10 min"):
        with pytest.raises(ValueError, match="讲解 12 分钟 · 练习 10 分钟"):
            zh.check_header_minutes(english, wrong, "x")
