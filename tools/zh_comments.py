"""Chinese comments for the code cells of the Chinese edition (tools/zh.py build applies them).

The code of a Chinese notebook is the English code; only its comments are Chinese. They are kept apart from
the markdown translations, in ``translations/zh/comments/NN_name.json``, keyed by cell id, with the SHA-256
fingerprint of the English comments they translate:

    {"notebook": "03_train_one_step.ipynb",
     "cells": {"52ba2e1c": {"en_sha256": "9c1e...", "zh": ["# 每一步：前向、反向、更新", "# 你的扫描写在这里"]}}}

``zh`` holds one Chinese comment per English comment of the cell, in the order they appear (inline comments
too); a comment with nothing to translate (``# noqa: F401``) is copied as it is. A cell whose English comments
changed since they were translated (a stale fingerprint) keeps its English comments until the entry is updated,
and tests/test_translations.py fails on it, as on a cell with English comments and no entry.

    python tools/zh_comments.py stale         # the cells whose comments have no or an out-of-date translation
    python tools/zh_comments.py show NN       # each English comment of notebook NN (or app) beside its Chinese
    python tools/zh_comments.py template NN   # add the missing cells of NN, with the English to translate
"""

import argparse
import hashlib
import io
import json
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "translations" / "zh" / "comments"
CJK = re.compile(r"[\u4e00-\u9fff]")
# Comments that are instructions to a tool, not text for a reader: never translated, never counted as English.
DIRECTIVE = re.compile(r"#\s*(noqa\b|type:|NBVAL_|fmt:|pragma\b|%%)")
# Code that is commented out (a scaffold's `# class Step(nn.Cell):`, `#     ...`): copied as it is.
COMMENTED_CODE = re.compile(r"#( {2,}| ?(class|def|answer =|import|from) )")


def _python_lines(source):
    """The cell's lines with IPython magics blanked (so tokenize reads the rest as Python); None if it is not
    Python (a cell magic other than %%writefile of a .py file)."""
    lines = source.split("\n")
    if lines and lines[0].startswith("%%"):
        if not re.fullmatch(r"%%writefile\s+\S+\.py\s*", lines[0]):
            return None
        lines = [""] + lines[1:]
    return ["" if line.lstrip().startswith(("%", "!")) else line for line in lines]


def comments(source):
    """``[(line index, column, text)]`` of every comment in a code cell's source, in order."""
    lines = _python_lines(source)
    if lines is None:
        return []
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0] - 1, token.start[1], token.string))
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        raise ValueError(f"cannot read the comments of this cell ({exc}):\n{source[:200]}") from None
    return found


def fingerprint(source):
    """The SHA-256 of a cell's English comments (their text, in order): what a translation was made from."""
    return hashlib.sha256("\n".join(text for _, _, text in comments(source)).encode("utf-8")).hexdigest()


def is_prose(text):
    """True for a comment a reader reads as English words (not a directive, not code, not a file name)."""
    if DIRECTIVE.match(text) or COMMENTED_CODE.match(text) or CJK.search(text):
        return False
    words = re.sub(r"`[^`]*`|\S*[_./()=\[\]]\S*", " ", text)  # names, paths and calls are not words
    return re.search(r"[A-Za-z]{2,}\s+[A-Za-z]{2,}", words) is not None


def needs_translation(source):
    """True when the cell has a comment a reader reads as English (not only directives, code or names)."""
    return any(is_prose(text) for _, _, text in comments(source))


def without_comments(source):
    """The code with its comments set aside (and the spaces before them): what must stay identical."""
    lines = source.split("\n")
    for row, col, _text in reversed(comments(source)):
        lines[row] = lines[row][:col].rstrip()
    return "\n".join(lines)


def with_comments(source, chinese):
    """``source`` with its comments replaced, in order, by ``chinese`` (a list as long as its comments)."""
    found = comments(source)
    if len(chinese) != len(found):
        raise ValueError(f"{len(found)} comment(s) in the cell, {len(chinese)} translation(s)")
    lines = source.split("\n")
    for (row, col, text), new in reversed(list(zip(found, chinese))):
        if not isinstance(new, str) or not new.startswith("#") or "\n" in new:
            raise ValueError(f"a translated comment must be one line starting with '#', got {new!r}")
        lines[row] = lines[row][:col] + new + lines[row][col + len(text):]
    return "\n".join(lines)


def path_of(notebook_name, folder=FOLDER):
    return Path(folder) / (Path(notebook_name).stem + ".json")


def read_notebook_file(notebook_name, folder, key="cells"):
    """The ``key`` part of ``folder/<notebook stem>.json`` (``{"notebook": name, key: {...}}``), the shape of every
    translation file (markdown, comments, figure text); {} when the notebook has no file there."""
    path = path_of(notebook_name, folder)
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("notebook") != Path(notebook_name).name or not isinstance(data.get(key), dict):
        raise ValueError(f"{path}: expected {{'notebook': {Path(notebook_name).name!r}, {key!r}: {{...}}}}")
    return data[key]


def load(notebook_name, folder=FOLDER):
    """``{cell id: {"en_sha256": ..., "zh": [...]}}`` of one notebook; {} when it has no comments file."""
    return read_notebook_file(notebook_name, folder)


def translate(cell, entries):
    """A code cell's source with Chinese comments when its entry is fresh; the English source otherwise."""
    entry = entries.get(cell.get("id"))
    if not entry or entry.get("en_sha256") != fingerprint(cell.source):
        return cell.source
    return with_comments(cell.source, entry["zh"])


def status(nb, entries):
    """``(missing, stale)``: ids of code cells with English comments and no translation, or an out-of-date one."""
    missing, stale = [], []
    for cell in nb.cells:
        if cell.cell_type != "code" or not (needs_translation(cell.source) or cell.get("id") in entries):
            continue
        entry = entries.get(cell.get("id"))
        english = [text for _, _, text in comments(cell.source)]
        if not entry or not entry.get("zh"):
            missing.append(cell.get("id"))
        elif entry.get("en_sha256") != fingerprint(cell.source):
            stale.append(cell.get("id"))
        elif any(is_prose(en) and zh == en for en, zh in zip(english, entry["zh"])):
            missing.append(cell.get("id"))  # a template entry not translated yet: the English copied as it is
    return missing, stale


def _notebooks():
    import zh  # tools/zh.py: the notebooks that have a Chinese edition

    return [(p, p.name) for p in zh.translated_notebooks()] + [(zh.APP, zh.APP_NAME)]


def _pick(number):
    matches = [(p, n) for p, n in _notebooks() if n.startswith(f"{number}_")]
    if len(matches) != 1:
        raise SystemExit(f"no single notebook numbered {number!r} (give 00 to 16, or app)")
    return matches[0]


def template(number, folder=FOLDER):
    """Add an entry, with the English comments as its text to translate, for every cell of notebook ``number``
    that needs one and has none (or a stale one, whose old Chinese is kept under ``"old"``); drop the entries of
    cells the notebook no longer has."""
    import nbformat

    path, name = _pick(number)
    nb = nbformat.read(path, as_version=4)
    entries = load(name, folder)
    for cell in nb.cells:
        if cell.cell_type != "code" or not needs_translation(cell.source):
            continue
        entry = entries.get(cell.get("id"))
        if entry and entry.get("en_sha256") == fingerprint(cell.source):
            continue
        new = {"en_sha256": fingerprint(cell.source), "zh": [text for _, _, text in comments(cell.source)]}
        if entry:
            new["old"] = entry.get("zh")
        entries[cell.get("id")] = new
    order = [c.get("id") for c in nb.cells if c.cell_type == "code"]
    ordered = {k: entries[k] for k in order if k in entries}  # cells the English no longer has are dropped
    target = path_of(name, folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"notebook": name, "cells": ordered}, ensure_ascii=False, indent=1) + "\n",
                      encoding="utf-8")
    return target


def main(argv=None):
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("stale")
    for command in ("show", "template"):
        sub.add_parser(command).add_argument("number")
    args = parser.parse_args(argv)
    if args.command == "template":
        print(template(args.number).relative_to(ROOT))
        return 0
    if args.command == "show":
        path, name = _pick(args.number)
        entries = load(name)
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and comments(cell.source):
                chinese = (entries.get(cell.get("id")) or {}).get("zh") or []
                print(f"--- {cell.get('id')}")
                for k, (_, _, text) in enumerate(comments(cell.source)):
                    print(f"  {text}\n  {chinese[k] if k < len(chinese) else '(none)'}")
        return 0
    for path, name in _notebooks():
        missing, stale = status(nbformat.read(path, as_version=4), load(name))
        gaps = (f"; missing {', '.join(missing)}" if missing else "") + (f"; stale {', '.join(stale)}" if stale else "")
        print(f"{name}: comments {'translated' if not gaps else 'to do'}{gaps}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
