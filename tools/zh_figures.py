"""The Chinese of the figure text typed in the notebooks' code (course_utils/figure_text.py shows it).

A notebook's code stays English; what it writes into a figure (``ax.set_title("Loss per step")``,
``label=f"lr = {lr}"``) is shown in Chinese in the Chinese edition from ``translations/zh/figures/NN_name.json``:

    {"notebook": "03_train_one_step.ipynb", "text": {"Loss per step": "每步的损失", "lr = {}": "学习率 = {}"}}

An f-string's key has ``{}`` where its values go (the Chinese may write ``{0}``, ``{1}`` to reorder them).
``figure_texts`` finds the texts a notebook's code passes to matplotlib (titles, axis labels, ``label=``, legends,
``ax.text``, annotations, tick labels); tests/test_translations.py fails on one with English words and no entry,
and on an entry that no string of the notebook's code makes (its English changed). A text held in a variable
(``for name in ("SGD", "constant 0.5")``) is not found by the scan: give it an entry by hand; it is then checked
like the others.

    python tools/zh_figures.py stale          # the figure texts with no Chinese, per notebook
    python tools/zh_figures.py template NN    # add them to NN's file (English as the text to translate)
"""

import argparse
import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zh_comments  # noqa: E402  (reads a code cell as Python: magics set aside)

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "translations" / "zh" / "figures"
FIRST_ARGUMENT = {"set_title", "set_xlabel", "set_ylabel", "suptitle", "supxlabel", "supylabel", "title", "xlabel",
                  "ylabel", "annotate", "set_text", "set_label_text", "legend", "set_xticklabels", "set_yticklabels"}
KEYWORDS = {"label", "labels", "title", "xlabel", "ylabel", "text", "xticklabels", "yticklabels"}


def _texts(node):
    """The strings a node makes: a literal, an f-string (``{}`` for each value), both sides of ``a if c else b``,
    the items of a list or tuple, the sums of two of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        yield "".join(v.value.replace("{", "{{").replace("}", "}}") if isinstance(v, ast.Constant) else "{}"
                      for v in node.values)
    elif isinstance(node, ast.IfExp):
        yield from _texts(node.body)
        yield from _texts(node.orelse)
    elif isinstance(node, (ast.List, ast.Tuple)):
        for item in node.elts:
            yield from _texts(item)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # f"batch {b}" + (" (full)" if ... else "")
        right = list(_texts(node.right))
        yield from (left + end for left in _texts(node.left) for end in right)


def _tree(source):
    lines = zh_comments._python_lines(source)
    return None if lines is None else ast.parse("\n".join(lines))


def figure_texts(source):
    """The figure texts a code cell's source passes to matplotlib, in order (repeats removed)."""
    tree, found = _tree(source), []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name in FIRST_ARGUMENT and node.args:
            found += _texts(node.args[0])
        if name in ("text", "figtext") and len(node.args) >= 3:
            found += _texts(node.args[2])
        if name in ("set_xticks", "set_yticks") and len(node.args) >= 2:
            found += _texts(node.args[1])
        for keyword in node.keywords:
            if keyword.arg in KEYWORDS:
                found += _texts(keyword.value)
    return list(dict.fromkeys(found))


def all_texts(source):
    """Every string the code cell's source makes (for an entry given by hand: is its text still there?)."""
    tree = _tree(source)
    return {text for node in (ast.walk(tree) if tree is not None else ()) for text in _texts(node)}


def needs_translation(text):
    """True for a figure text with an English word (not only names, numbers and $math$)."""
    return re.search(r"\b[a-z]{3,}\b", re.sub(r"\$[^$]*\$|`[^`]*`", "", text)) is not None


def load(notebook_name, folder=FOLDER):
    """``{English: Chinese}`` of one notebook's figure text; {} without a file."""
    return zh_comments.read_notebook_file(notebook_name, folder, key="text")


def status(nb, entries):
    """``(missing, stale)``: figure texts of the code with English words and no Chinese, and entries no string of
    the code makes any more."""
    code = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    wanted = [text for source in code for text in figure_texts(source) if needs_translation(text)]
    made = set().union(*(all_texts(source) for source in code)) if code else set()
    missing = [text for text in dict.fromkeys(wanted) if not entries.get(text) or entries[text] == text]
    stale = [text for text in entries if text not in made]
    return missing, stale


def template(number, folder=FOLDER):
    import nbformat

    path, name = zh_comments._pick(number)
    entries = load(name, folder)
    missing, _ = status(nbformat.read(path, as_version=4), entries)
    entries.update({text: text for text in missing if text not in entries})
    target = zh_comments.path_of(name, folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"notebook": name, "text": entries}, ensure_ascii=False, indent=1) + "\n",
                      encoding="utf-8")
    return target


def main(argv=None):
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("stale")
    sub.add_parser("template").add_argument("number")
    args = parser.parse_args(argv)
    if args.command == "template":
        print(template(args.number).relative_to(ROOT))
        return 0
    for path, name in zh_comments._notebooks():
        missing, stale = status(nbformat.read(path, as_version=4), load(name))
        print(f"{name}: {len(missing)} figure text(s) without Chinese{': ' if missing else ''}"
              f"{'; '.join(missing)}" + (f"; stale entries: {'; '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
