"""Slides of each notebook's teaching part: one reveal.js deck per notebook, English or Chinese, offline.

    python tools/slides.py                   # every English deck in build/slides/en/, with index.html
    python tools/slides.py --lang zh 03 05   # the Chinese edition's decks of notebooks 03 and 05 (build/slides/zh/)
    python tools/slides.py --out /media/usb/slides

What goes on the slides is chosen on the English notebook, so that both languages show the same slides:
- the title cell (a slide), without its previous/next line;
- each `## ` heading of the core path (a slide) and each `### ` heading (a sub-slide), with the first
  paragraph under it; the rest of the heading cell and the section's other prose become speaker notes (key S);
- each lesson code cell (a sub-slide): not the setup cell, not an exercise or a prediction, not a
  `claim(...)` check, at most MAX_CODE_LINES lines; its figures (stored image outputs) follow on a sub-slide
  of their own, also when the code is too long to show; printed output is left out;
- the Key points (a slide), which end the teaching part.
"Going further" sections (up to the next heading of the same or a higher level) are left out.

The notebooks on disk are not changed. The folder holds the decks, index.html and a copy of the bundled
reveal.js (tools/vendor/reveal.js), so it works from a USB stick with no network: a deck requests nothing
from the internet (nbconvert's template would load require.js, jQuery, MathJax and mermaid from CDNs; the
template below leaves them out, so LaTeX in the speaker notes stays as typed).
"""

import argparse
import ast
import copy
import html
import re
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from jupyter_core.paths import jupyter_path
from nbconvert import SlidesExporter

ROOT = Path(__file__).resolve().parent.parent
REVEAL = ROOT / "tools" / "vendor" / "reveal.js"
REVEAL_VERSION = "6.0.2"  # npm's dist/ files; tools/vendor/reveal.js/README.md says where they come from
SOURCES = {"en": ROOT / "notebooks", "zh": ROOT / "zh" / "notebooks"}
INDEX_TITLE = {"en": "Slides · MindSpore training course", "zh": "幻灯片 · MindSpore 训练课程"}
INDEX_KEYS = {"en": "arrow keys to move, Esc for the overview, S for the speaker notes",
              "zh": "方向键翻页，Esc 显示全部幻灯片，S 打开讲者备注"}
MAX_CODE_LINES = 15
SKIPPED_TAGS = {"exercise", "prediction", "solution"}
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")
JUPYTER_CSS = ["lab/static/index.css", "lab/static/theme-light.css", "reveal/static/custom_reveal.css"]
HEADING = re.compile(r"^(#+)\s")
GOING_FURTHER = re.compile(r"^#+\s*Going further\b")
LABEL = re.compile(r"^\*\*(Exercise|Prediction)\b")  # the label of an exercise or a prediction
KEY_POINTS = re.compile(r"^(#+\s*|\*\*)(Key points|要点)", re.M)
NAVIGATION = re.compile(r"^(Previous|Next|上一节|下一节)\s*[:：]")
NOTEBOOK_LINK = re.compile(r"\]\((\d\d_[\w-]+)\.ipynb\)")

# nbconvert's reveal template without the CDN scripts, loading the bundled reveal.js with plain script tags.
TEMPLATE = """{%- extends 'reveal/index.html.j2' -%}
{% block html_head_js %}{% endblock html_head_js %}
{% block html_head_js_mathjax %}{% endblock html_head_js_mathjax %}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block notebook_css %}
{#- nbconvert's JupyterLab style sheets, once in the folder rather than 250 kB inlined into every deck #}
<link rel="stylesheet" href="{{ resources.reveal.url_prefix }}/jupyter/index.css">
<link rel="stylesheet" href="{{ resources.reveal.url_prefix }}/jupyter/theme-light.css">
<link rel="stylesheet" href="{{ resources.reveal.url_prefix }}/jupyter/custom_reveal.css">
<style>
a.anchor-link { display: none; }
.highlight { margin: 0.4em; }
.jp-Notebook { padding: 0; }
:root { --jp-ui-font-size1: 20px; --jp-content-font-size1: 20px; --jp-code-font-size: 19px; }
</style>
{% endblock notebook_css %}
{% block html_head_css %}
<style>
.reveal .slides section { height: 100%; overflow-y: auto; text-align: left; }
.reveal .slides .jp-RenderedImage img { height: 620px; max-width: 100%; object-fit: contain; }
.reveal .slides h1, .reveal .slides h2, .reveal .slides h3 { text-transform: none; }
.reveal .slides h1 { font-size: 1.6em; }
.reveal .slides h2 { font-size: 1.3em; }
.reveal .slides h3 { font-size: 1.1em; }
</style>
{% endblock html_head_css %}
{% block data_png scoped %}
<div class="jp-RenderedImage jp-OutputArea-output">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
     alt="{{ output.metadata.alt | escape_html }}">
</div>
{% endblock data_png %}
{% block footer_js %}
<script src="{{ resources.reveal.url_prefix }}/dist/reveal.js"></script>
<script src="{{ resources.reveal.url_prefix }}/dist/plugin/notes.js"></script>
<script>
Reveal.initialize({controls: true, progress: true, history: true, center: false, slideNumber: "c/t",
                   transition: "{{ resources.reveal.transition }}", plugins: [RevealNotes],
                   width: {{ resources.reveal.width }}, height: {{ resources.reveal.height }}});
</script>
{% endblock footer_js %}
"""


class Refused(Exception):
    """Bad input: the message says what was wrong and what to do."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage and error
        raise Refused(f"{message} (python tools/slides.py --help)")


def _markdown(source, slide_type):
    cell = nbformat.v4.new_markdown_cell(NOTEBOOK_LINK.sub(r"](\1.html)", source.strip()))
    cell.metadata["slideshow"] = {"slide_type": slide_type}
    return cell


def _without_navigation(source):
    return "\n\n".join(p for p in source.split("\n\n") if not NAVIGATION.match(p.strip()))


def _figures(cell):
    return [o for o in cell.get("outputs", []) if any(t in o.get("data", {}) for t in IMAGE_TYPES)]


def _code_lines(source):
    return len([line for line in source.splitlines() if line.strip()])


def _without_claims(source):
    """The code without its top-level `claim(...)` statements: checks of the prose, not lesson code."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (%magic, !shell): shown as it is
        return source
    lines = source.splitlines()
    for node in reversed(tree.body):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "claim"):
            del lines[node.lineno - 1:node.end_lineno]
    return "\n".join(lines).strip()


def slide_cells(english, local):
    """The cells of the deck: copies of ``local``'s cells (the same cells as ``english``, in its language),
    chosen and typed as slides by the rule of the module docstring, read on ``english``."""
    cells = [_markdown(_without_navigation(local.cells[0].source), "slide")]
    optional_level, seen_code, section = None, False, _title(local)
    for source_cell, cell in zip(english.cells[1:], local.cells[1:]):
        text = source_cell.source
        if source_cell.cell_type == "markdown":
            heading = HEADING.match(text)
            if heading and optional_level and len(heading.group(1)) <= optional_level:
                optional_level = None
            if heading and GOING_FURTHER.match(text):
                optional_level = len(heading.group(1))
            if optional_level:
                continue
            key_points = KEY_POINTS.search(cell.source)
            if KEY_POINTS.search(text) and key_points:
                before = cell.source[:key_points.start()].strip()
                if before:  # a section that ends with its Key points (notebook 09)
                    cells += _heading(before)
                cells.append(_markdown(_without_navigation(cell.source[key_points.start():]), "slide"))
                break  # the Key points end the teaching part
            if heading:
                section = cell.source.strip().splitlines()[0].lstrip("# ")
                cells += _heading(cell.source)
            elif not LABEL.match(text):
                cells.append(_markdown(cell.source, "notes"))
        elif source_cell.cell_type == "code":
            first_code, seen_code = not seen_code, True
            if optional_level or first_code or SKIPPED_TAGS & set(source_cell.metadata.get("tags", [])):
                continue
            code = _without_claims(cell.source)
            if code and _code_lines(code) <= MAX_CODE_LINES:
                shown = nbformat.v4.new_code_cell(code)
                shown.metadata["slideshow"] = {"slide_type": "subslide"}
                cells.append(shown)
            figures = copy.deepcopy(_figures(cell))
            if figures:
                for output in figures:  # the alternative text of the figure (TEMPLATE's data_png)
                    output.setdefault("metadata", {})["alt"] = section
                figure = nbformat.v4.new_code_cell("", outputs=figures)
                figure.metadata = {"slideshow": {"slide_type": "subslide"}, "transient": {"remove_source": True}}
                cells.append(figure)
    return cells


def _heading(source):
    """A heading cell as a slide (level 1 or 2) or sub-slide (level 3 and below) with the section's first
    paragraph (its idea in a few sentences); the rest of its prose becomes notes."""
    first, _, rest = source.strip().partition("\n")
    idea, _, rest = rest.strip().partition("\n\n")
    level = len(HEADING.match(first).group(1))
    cells = [_markdown(f"{first}\n\n{idea}", "slide" if level <= 2 else "subslide")]
    return cells + [_markdown(rest, "notes")] if rest.strip() else cells


def deck(english, local, lang):
    """The HTML of one deck; reveal.js is expected in ``reveal.js/`` next to it."""
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(local.metadata), cells=slide_cells(english, local))
    exporter = SlidesExporter(template_file="course_slides.html.j2",
                              extra_loaders=[DictLoader({"course_slides.html.j2": TEMPLATE})],
                              reveal_url_prefix="reveal.js", reveal_theme="white", reveal_transition="none",
                              reveal_width="1280", reveal_height="800", language_code=lang,
                              exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": _title(local)}})
    return body


def _template_file(name):
    """A file of nbconvert's installed templates (the first on Jupyter's data path, as nbconvert finds it)."""
    for base in jupyter_path("nbconvert", "templates"):
        if (Path(base) / name).is_file():
            return Path(base) / name
    raise Refused(f"nbconvert's template file {name} is missing: pip install -r requirements-dev.txt")


def _title(nb):
    return nb.cells[0].source.strip().splitlines()[0].lstrip("# ").strip()


def _notebooks(lang, numbers):
    available = {p.name[:2]: p for p in sorted(SOURCES[lang].glob("[0-9][0-9]_*.ipynb"))}
    chosen = []
    for number in numbers:
        if not re.fullmatch(r"\d{1,2}", number) or number.zfill(2) not in available:
            raise Refused(f"no notebook {number!r} in {SOURCES[lang].relative_to(ROOT)}/: give numbers from "
                          f"{min(available)} to {max(available)}, e.g. `python tools/slides.py 03 05`")
        chosen.append(available[number.zfill(2)])
    return chosen or list(available.values())


def _writable(out):
    try:
        out.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=out).close()
    except OSError as error:
        raise Refused(f"cannot write into {out} ({error.strerror}): give another folder with --out") from None


def build(lang, out, numbers=()):
    """Write the decks of ``numbers`` (all when empty), index.html and reveal.js into ``out``; return the decks."""
    paths = _notebooks(lang, numbers)
    out = Path(out)
    _writable(out)
    # npm's layout, which nbconvert's template links to (reveal.js/dist/reveal.css, .../dist/theme/white.css);
    # the repository keeps the files without the dist/ level, which .gitignore leaves out
    shutil.copytree(REVEAL, out / "reveal.js" / "dist", dirs_exist_ok=True, ignore=shutil.ignore_patterns("README.md"))
    (out / "reveal.js" / "jupyter").mkdir(exist_ok=True)
    for css in JUPYTER_CSS:
        shutil.copy(_template_file(css), out / "reveal.js" / "jupyter")
    decks = []
    for path in paths:
        english = nbformat.read(SOURCES["en"] / path.name, as_version=4)
        local = english if lang == "en" else nbformat.read(path, as_version=4)
        if [c.get("id") for c in local.cells] != [c.get("id") for c in english.cells]:
            raise Refused(f"{path.relative_to(ROOT)} does not have the English notebook's cells: run `make zh`")
        target = out / f"{path.stem}.html"
        target.write_text(deck(english, local, lang), encoding="utf-8")
        decks.append((target, _title(local)))
    links = "\n".join(f'<li><a href="{t.name}">{html.escape(title)}</a></li>' for t, title in decks)
    (out / "index.html").write_text(
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head><meta charset="utf-8"><title>{INDEX_TITLE[lang]}</title>'
        f'</head>\n<body>\n<h1>{INDEX_TITLE[lang]}</h1>\n<ul>\n{links}\n</ul>\n'
        f"<p>reveal.js {REVEAL_VERSION}: {INDEX_KEYS[lang]}</p>\n"
        "</body>\n</html>\n", encoding="utf-8")
    return [t for t, _ in decks]


def main(argv=None):
    parser = Parser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lang", default="en", help="en (notebooks/) or zh (zh/notebooks/); default en")
    parser.add_argument("--out", type=Path, help="folder for the decks (default build/slides/<lang>/)")
    parser.add_argument("numbers", nargs="*", metavar="NN", help="notebook numbers (default: all)")
    try:
        args = parser.parse_args(argv)
        if args.lang not in SOURCES:
            raise Refused(f"--lang {args.lang!r} is not a language of the course: give en or zh")
        decks = build(args.lang, args.out or ROOT / "build" / "slides" / args.lang, args.numbers)
    except Refused as refused:
        print(f"slides.py: {refused}", file=sys.stderr)
        return 2
    print(f"{len(decks)} decks in {decks[0].parent}: open {decks[0].parent / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
