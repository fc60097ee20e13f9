"""The Chinese edition (中文版), generated from the English notebooks and one translation file per notebook.

    python tools/zh.py build            # write zh/notebooks/NN_name.ipynb for every translated notebook
    python tools/zh.py build --check    # exit 1 if a generated notebook is missing or not what build writes
    python tools/zh.py stale            # for translators: the markdown cells with no or an out-of-date translation
    python tools/zh.py template NN      # add the missing cells of notebook NN to its translation file
    python tools/zh.py template app     # the same for the classroom app (app/learning_rate_lab.ipynb)

The English notebooks stay the source of truth. ``translations/zh/NN_name.json`` holds, for each markdown
cell (by cell id), the Chinese text and the SHA-256 fingerprint of the English text it translates:

    {"notebook": "03_train_one_step.ipynb",
     "cells": {"f9f52ef6": {"en_sha256": "3f2a...", "zh": "# 03 · TrainOneStepCell 与训练循环 ..."}}}

``build`` copies every code cell's code byte for byte (its comments in Chinese, from
``translations/zh/comments/``: tools/zh_comments.py) and replaces each markdown cell by its translation; the one
difference in code is a line added to the first code cell, right after ``GLOG_v``, that sets
``COURSE_LANG=zh`` so that the course's checks, hints, predictions and the lab speak Chinese
(course_utils/messages), and one before it that imports course_utils.figure_text (figures in Chinese).
Stored outputs are what a run of the Chinese edition printed: ``make execute`` runs the generated notebooks
after the English ones; ``build`` keeps a code cell's outputs from the existing Chinese notebook while the
cell's code (its comments set aside) is unchanged and takes the English outputs otherwise (until the next
``make execute``; the suite's second pass, which runs the Chinese edition, tells the difference); a cell
without a translation (or with a stale one) stays English and is listed by ``stale``, so a
half-translated notebook is usable and its gaps are visible. The generated notebooks live in zh/notebooks/,
one folder deeper than notebooks/, so relative links that leave notebooks/ get one more ``../``; links
between notebooks keep pointing at the neighbouring Chinese notebook. Run twice, build changes nothing.
tests/test_translations.py fails on drift: an untranslated or stale cell of a translated notebook, a code
cell that differs, a link from a Chinese notebook to an English one, a glossary term not rendered as the
README's glossary renders it.
"""

import argparse
import copy
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zh_comments  # noqa: E402  (the code cells' Chinese comments: translations/zh/comments/)

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "notebooks"
TRANSLATIONS = ROOT / "translations" / "zh"
OUTPUT = ROOT / "zh" / "notebooks"
APP = ROOT / "app" / "learning_rate_lab.ipynb"  # the classroom app (make app-zh, make classroom-zh)
APP_NAME = "app_learning_rate_lab.ipynb"  # its translation: translations/zh/app_learning_rate_lab.json
APP_OUTPUT = ROOT / "zh" / "app"
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
# A lesson's header states its minutes: "Teaching: 12 min · Exercises: 10 min" (tools/course_map.py reads the
# English one), and in the Chinese edition "讲解 12 分钟 · 练习 10 分钟", the same numbers, in Chinese only.
EN_MINUTES = re.compile(r"Teaching:\s*(\d+)\s*min\s*·\s*Exercises:\s*(\d+)\s*min")
ZH_MINUTES = re.compile(r"讲解\s*(\d+)\s*分钟\s*·\s*练习\s*(\d+)\s*分钟")


def check_header_minutes(english, chinese, where):
    """Raise ValueError unless the Chinese header gives the English header's minutes as 讲解 N 分钟 · 练习 M 分钟."""
    en = EN_MINUTES.search(english)
    if en is None:
        return
    zh = ZH_MINUTES.search(chinese)
    if zh is None or zh.groups() != en.groups():
        said = f"'{zh.group(0)}'" if zh else "no '讲解 N 分钟 · 练习 M 分钟'"
        raise ValueError(f"{where}: the English header says '{en.group(0)}', the Chinese one {said}: write "
                         f"'讲解 {en.group(1)} 分钟 · 练习 {en.group(2)} 分钟' in its translation")


def fingerprint(text):
    """The SHA-256 of an English cell's text: a translation records the one it was made from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def translation_path(notebook_name, folder=TRANSLATIONS):
    return Path(folder) / (Path(notebook_name).stem + ".json")


def load_translation(notebook_name, folder=TRANSLATIONS):
    """``{cell id: {"en_sha256": ..., "zh": ...}}`` of one notebook; {} when it has no translation file."""
    return zh_comments.read_notebook_file(notebook_name, folder)


def markdown_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "markdown"]


def status(nb, cells):
    """``(missing, stale)``: ids of markdown cells with no translation, and with one of older English text."""
    missing, stale = [], []
    for cell in markdown_cells(nb):
        entry = cells.get(cell.get("id"))
        if not entry or not entry.get("zh"):
            missing.append(cell.get("id"))
        elif entry.get("en_sha256") != fingerprint(cell.source):
            stale.append(cell.get("id"))
    return missing, stale


def relink(text, translated=None):
    """Rewrite relative links for a notebook one folder deeper (zh/notebooks/ instead of notebooks/).

    A link to a neighbouring notebook stays a link to its Chinese edition, unless ``translated`` (the names
    that have one) says it has none yet: then it leads to the English notebook."""
    def fix(match):
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)  # a URL, an anchor or an absolute path
        name = target.split("#")[0]
        if re.fullmatch(r"\d\d_[\w.-]+\.ipynb", name) and (translated is None or name in translated):
            return match.group(0)  # a neighbouring notebook: its Chinese edition sits next to this one
        if target.startswith("../"):
            return f"{match.group(1)}../{target}{match.group(3)}"
        return f"{match.group(1)}../../notebooks/{target}{match.group(3)}"
    return LINK.sub(fix, text)


GLOG_LINE = 'os.environ["GLOG_v"] = "3"'
LANGUAGE_LINE = 'os.environ["COURSE_LANG"] = "zh"  # 中文版：课程的检查、提示和消息用中文'
# Before the language line, so that it stays an import block of its own (ruff's import order): matplotlib's text
# in Chinese, with a Chinese font (course_utils/figure_text.py; it reads the language when a figure is drawn).
FIGURE_LINE = "import course_utils.figure_text  # noqa: F401 （中文版：图中的文字用中文，配中文字体）"


def with_language_line(source):
    """The first code cell's source with the Chinese edition's figure and language lines after the GLOG_v line."""
    lines = source.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(GLOG_LINE)), None)
    if at is None:
        raise ValueError(f"the first code cell has no line starting with {GLOG_LINE!r} to put the language after")
    return "\n".join(lines[:at + 1] + [FIGURE_LINE, "", LANGUAGE_LINE] + lines[at + 1:])  # ruff: a line after an import


def build_one(path, folder=TRANSLATIONS, translated=None, previous=None, name=None):
    """The Chinese edition of one English notebook, as a notebook object (nothing written).

    ``previous``: the Chinese notebook as it is now, whose outputs a code cell keeps while its source is the same.
    ``name``: the name its translation file is kept under (the notebook's own name by default)."""
    nb = nbformat.read(path, as_version=4)
    cells = load_translation(name or path.name, folder)
    out = copy.deepcopy(nb)
    code = [cell for cell in out.cells if cell.cell_type == "code"]
    comments = zh_comments.load(name or path.name, Path(folder) / "comments")
    for cell in code:  # Chinese comments, the code unchanged (a stale or missing entry leaves them English)
        cell.source = zh_comments.translate(cell, comments)
    if code:
        code[0].source = with_language_line(code[0].source)
    kept = {c.get("id"): c for c in (previous.cells if previous is not None else []) if c.cell_type == "code"}
    same_code = zh_comments.without_comments
    for cell in code:  # comments print nothing: outputs stay while the code without them is the same
        old = kept.get(cell.get("id"))
        if old is not None and same_code(old.source) == same_code(cell.source):
            cell.outputs, cell.execution_count = copy.deepcopy(old.outputs), old.execution_count
    for cell in out.cells:
        if cell.cell_type != "markdown":
            continue
        entry = cells.get(cell.get("id"))
        if entry and entry.get("zh") and entry.get("en_sha256") == fingerprint(cell.source):
            if cell is out.cells[0]:
                check_header_minutes(cell.source, entry["zh"], f"{name or path.name}, cell {cell.get('id')}")
            cell.source = entry["zh"]
        cell.source = relink(cell.source, translated)
    out.metadata["language_edition"] = "zh-CN"
    return out


def translated_notebooks(source=SOURCE, folder=TRANSLATIONS):
    """The English notebooks that have a translation file, in course order."""
    return [p for p in sorted(Path(source).glob("[0-9][0-9]_*.ipynb")) if translation_path(p.name, folder).exists()]


def _text(nb):
    return nbformat.writes(nb) + "\n"


def _previous(path):
    return nbformat.read(path, as_version=4) if path.exists() else None


def build_app(folder=TRANSLATIONS, output=APP_OUTPUT):
    """The classroom app's Chinese edition (zh/app/learning_rate_lab.ipynb), or None without its translation."""
    if not translation_path(APP_NAME, folder).exists():
        return None
    target = Path(output) / APP.name
    nb = build_one(APP, folder, translated=set(), previous=_previous(target), name=APP_NAME)
    return target, _text(nb)


def build(check=False, source=SOURCE, folder=TRANSLATIONS, output=OUTPUT, app_output=APP_OUTPUT, only=None):
    """Write (or with check=True, compare) every generated notebook; returns the names that differ.

    ``only``: notebook numbers ("06", "app") to build, leaving the others alone (for two people at work at once)."""
    output = Path(output)
    paths = translated_notebooks(source, folder)
    names = {p.name for p in paths}
    if only:
        unknown = sorted(set(only) - {p.name[:2] for p in paths} - {"app"})
        if unknown:
            raise SystemExit(f"no translated notebook numbered {', '.join(unknown)} (give numbers like 06, or app)")
        paths = [p for p in paths if p.name[:2] in only]
    wanted = {p.name: _text(build_one(p, folder, names, _previous(output / p.name))) for p in paths}
    differ = [name for name, text in wanted.items()
              if not (output / name).exists() or (output / name).read_text(encoding="utf-8") != text]
    orphans = (sorted(p.name for p in output.glob("*.ipynb") if p.name not in names)
               if output.exists() and not only else [])
    app = build_app(folder, app_output) if Path(source) == SOURCE and (not only or "app" in only) else None
    app_differs = app is not None and (not app[0].exists() or app[0].read_text(encoding="utf-8") != app[1])
    if not check:
        output.mkdir(parents=True, exist_ok=True)
        for name in differ:
            (output / name).write_text(wanted[name], encoding="utf-8")
        for name in orphans:
            (output / name).unlink()
        if app_differs:
            app[0].parent.mkdir(parents=True, exist_ok=True)
            app[0].write_text(app[1], encoding="utf-8")
    return differ + orphans + (["app/" + APP.name] if app_differs else [])


def template(number, source=SOURCE, folder=TRANSLATIONS):
    """Add an empty entry for each untranslated markdown cell of notebook ``number`` ("03"); returns the path."""
    matches = [APP] if number == "app" else sorted(Path(source).glob(f"{number}_*.ipynb"))
    if len(matches) != 1:
        raise SystemExit(f"no single notebook numbered {number!r} in {source}")
    path = matches[0]
    name = APP_NAME if number == "app" else path.name
    nb = nbformat.read(path, as_version=4)
    cells = load_translation(name, folder)
    for cell in markdown_cells(nb):
        cells.setdefault(cell.get("id"), {"en_sha256": fingerprint(cell.source), "zh": ""})
    target = translation_path(name, folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    order = [c.get("id") for c in markdown_cells(nb)]
    ordered = {k: cells[k] for k in order if k in cells}
    ordered.update({k: v for k, v in cells.items() if k not in ordered})  # cells the English no longer has
    target.write_text(json.dumps({"notebook": name, "cells": ordered}, ensure_ascii=False, indent=1) + "\n",
                      encoding="utf-8")
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--check", action="store_true")
    b.add_argument("numbers", nargs="*", help="only these notebooks (06 12 app); all by default")
    sub.add_parser("stale")
    t = sub.add_parser("template")
    t.add_argument("number")
    args = parser.parse_args(argv)
    if args.command == "build":
        differ = build(check=args.check, only=set(args.numbers))
        verb = "differ from what build writes" if args.check else "written"
        print(f"{len(differ)} generated notebook(s) {verb}" + (": " + ", ".join(differ) if differ else ""))
        return 1 if args.check and differ else 0
    if args.command == "template":
        print(template(args.number).relative_to(ROOT))
        return 0
    total = 0
    for path in sorted(SOURCE.glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        missing, stale = status(nb, load_translation(path.name))
        done = len(markdown_cells(nb)) - len(missing) - len(stale)
        total += len(missing) + len(stale)
        gaps = (f"; missing {', '.join(missing)}" if missing else "") + (f"; stale {', '.join(stale)}" if stale else "")
        print(f"{path.name}: {done}/{len(markdown_cells(nb))} translated{gaps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
