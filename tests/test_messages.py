"""The message catalogue (course_utils/messages) has a Chinese entry for every message and nothing else.

Every ``t("...")`` and ``lazy("...")`` in course_utils, capstone and app is a catalogue key. For each source
module the catalogue file ``course_utils/messages/zh/<module>.json`` must hold exactly that module's keys
(a message without its Chinese fails; an entry no code uses fails: its English changed or went away), every
entry must keep the English text's ``{fields}``, and ``t``'s argument must be a literal string (an f-string
cannot be looked up) or a stored text that was marked with ``lazy`` where it was written.
"""

import ast
import json
import re
import string
from pathlib import Path

import pytest

from course_utils import messages
from course_utils.messages import lazy, t

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("course_utils", "capstone", "app")
ZH = messages.CATALOGUE / "zh"
CJK = re.compile(r"[\u4e00-\u9fff]")


def catalogue_name(path):
    """course_utils/checks/nb03.py -> checks.nb03; capstone/train.py -> capstone.train; app/x.py -> app.x."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "course_utils":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1] or ["course_utils"]
    return ".".join(parts)


def _calls(tree):
    """(function name, first argument node, keyword names, line) of every t(...) / lazy(...) call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("t", "lazy"):
            if node.args:
                yield node.func.id, node.args[0], {k.arg for k in node.keywords}, node.lineno


def _uses_messages(tree):
    return any(isinstance(n, ast.ImportFrom) and n.module == "course_utils.messages" for n in ast.walk(tree))


def source_modules():
    """{catalogue name: (path, {English text: field names passed, or None for lazy / no fields})}."""
    found = {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "messages" in path.relative_to(ROOT).parts[:2]:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if not _uses_messages(tree):
                continue
            keys = {}
            for _name, arg, fields, line in _calls(tree):
                if isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
                    continue  # t(text) of a text marked lazy(...) where it was stored
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    keys[f"<not a literal at {path.name}:{line}>"] = None
                    continue
                keys[arg.value] = fields or keys.get(arg.value)
            found[catalogue_name(path)] = (path, keys)
    return found


MODULES = source_modules()


def _fields(text):
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_catalogue_covers_the_course():
    assert {"exercises"} <= set(MODULES), "course_utils.exercises speaks through the catalogue"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_message_has_its_chinese_and_no_entry_is_stale(name):
    path, keys = MODULES[name]
    bad = [k for k in keys if k.startswith("<not a literal")]
    assert not bad, f"{path.relative_to(ROOT)}: t()/lazy() need a literal English text: {bad}"
    file = ZH / f"{name}.json"
    assert file.exists(), f"{path.relative_to(ROOT)} uses t()/lazy(): write {file.relative_to(ROOT)}"
    entries = json.loads(file.read_text(encoding="utf-8"))
    missing = [k for k in keys if not entries.get(k)]
    stale = [k for k in entries if k not in keys]
    assert not missing, f"{file.relative_to(ROOT)}: no Chinese for {len(missing)} message(s), e.g. {missing[:3]}"
    assert not stale, (f"{file.relative_to(ROOT)}: {len(stale)} entr(y/ies) no code uses (the English changed?), "
                       f"e.g. {stale[:3]}")
    for english, fields in keys.items():
        if fields:  # formatted: the same fields, and the Chinese formats without error
            assert _fields(entries[english]) == _fields(english), (
                f"{file.relative_to(ROOT)}: {english!r} has fields {sorted(_fields(english))}, its Chinese "
                f"{sorted(_fields(entries[english]))}")
        words = re.sub(r"\{[^{}]*\}", "", english)  # the fields' names are not words a learner reads
        assert CJK.search(entries[english]) or not re.search(r"[A-Za-z]{4,}", words), (
            f"{file.relative_to(ROOT)}: the entry for {english!r} is not Chinese")


def test_orphan_catalogue_files_fail():
    orphans = sorted(p.stem for p in ZH.glob("*.json") if p.stem not in MODULES and p.stem not in LESSONS)
    assert not orphans, f"catalogue files for modules that use no t()/lazy(): {orphans}"


def claim_sentences(path):
    """The first argument of every claim(...) call in a notebook's code cells (an ast node)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))  # magics: not Python
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "claim" and node.args:
                yield node.args[0]


# The claim sentences of notebook NN live in zh/lesson.NN.json (course_utils.claims shows them in Chinese).
LESSONS = {f"lesson.{path.name[:2]}": path for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_claim_sentence_has_its_chinese_and_no_entry_is_stale(name):
    notebook = LESSONS[name]
    sentences = list(claim_sentences(notebook))
    not_literal = [ast.unparse(node)[:60] for node in sentences if not isinstance(node, ast.Constant)]
    assert not not_literal, (f"{notebook.name}: a claim's sentence must be a literal string (name measured values as "
                             f"{{field}} and pass field=...), not {not_literal}")
    file = ZH / f"{name}.json"
    assert file.exists(), f"{notebook.name} makes claims: write {file.relative_to(ROOT)}"
    entries = json.loads(file.read_text(encoding="utf-8"))
    keys = {node.value for node in sentences}
    missing = [k for k in keys if not entries.get(k)]
    stale = [k for k in entries if k not in keys]
    assert not missing, f"{file.relative_to(ROOT)}: no Chinese for {len(missing)} claim(s), e.g. {missing[:3]}"
    assert not stale, f"{file.relative_to(ROOT)}: {len(stale)} entr(y/ies) no claim uses, e.g. {stale[:3]}"
    for english, chinese in entries.items():
        assert _fields(chinese) == _fields(english), f"{file.relative_to(ROOT)}: {english!r} and {chinese!r}"
        assert CJK.search(chinese), f"{file.relative_to(ROOT)}: the entry for {english!r} is not Chinese"


def test_language_follows_course_lang(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert messages.language() == "zh"
    assert CJK.search(t("correct!"))
    for other in ("", "en", "fr", "ZH-tw-x", "1"):
        monkeypatch.setenv("COURSE_LANG", other)
        assert messages.language() == "en"
        assert t("correct!") == "correct!"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert messages.language() == "zh"


def test_t_formats_and_never_fails(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert lazy("x {y}") == "x {y}"
    assert t("a text {not} in the catalogue") == "a text {not} in the catalogue"  # no fields: no formatting
    assert t("{what} must be a finite number, got {number}", what="w", number=float("nan")).count("nan") == 1
    monkeypatch.setattr(messages, "catalogue", lambda lang: {"x {a}": "坏的 {b}"})
    assert t("x {a}", a=1) == "x 1"  # a broken translation falls back to English, never raises


# ---- what a learner sees from every exercise, in the Chinese edition ------------------------------------------
def _exercises():
    import importlib

    from course_utils.exercises import Exercise
    modules = [importlib.import_module(f"course_utils.checks.{p.stem}")
               for p in sorted((ROOT / "course_utils" / "checks").glob("nb[0-9][0-9].py"))]
    return [v for m in modules for v in vars(m).values() if isinstance(v, Exercise)]


EXERCISES = _exercises()
WRONG = [..., None, "abc", [1, 2], float("nan"), object(), lambda *a, **k: None]


def _chinese(text):
    return bool(CJK.search(text)) or not re.search(r"[A-Za-z]{4,}", text)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_every_check_hint_and_prediction_speaks_chinese(exercise, monkeypatch, capsys):
    from course_utils.exercises import Prediction
    monkeypatch.setenv("COURSE_LANG", "zh")
    answers = list(WRONG)
    if isinstance(exercise, Prediction):
        answers += [letter for letter in exercise.options if letter != exercise.answer] + [exercise.answer]
    for answer in answers:
        message = exercise.evaluate(answer).message
        assert _chinese(message), f"{exercise.name}: for {answer!r:.40} the message is English: {message!r}"
    for step in range(1, len(exercise.hints) + 1):
        exercise.hint(step)
        assert _chinese(capsys.readouterr().out), f"{exercise.name}: hint {step} is English (mark it lazy())"
    if isinstance(exercise, Prediction):
        exercise.ask()
        for line in capsys.readouterr().out.splitlines():
            assert _chinese(line), f"{exercise.name}: the question or an option is English: {line!r}"


def test_no_english_text_has_two_translations():
    """The catalogue is one lookup across its files: a text translated two ways in two files would show one of
    them everywhere. One English text, one meaning, one Chinese (a text that needs two gets two English keys)."""
    seen = {}
    for path in sorted(ZH.glob("*.json")):
        for english, chinese in json.loads(path.read_text(encoding="utf-8")).items():
            first = seen.setdefault(english, (path.name, chinese))
            assert first[1] == chinese, f"{english!r}: {first[0]} says {first[1]!r}, {path.name} says {chinese!r}"
