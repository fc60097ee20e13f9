"""The Chinese edition cannot drift from the English one (tools/zh.py; translations/zh/; zh/notebooks/).

For every notebook that has a translation file: every markdown cell is translated from the English text it
has today, the generated notebook is exactly what ``tools/zh.py build`` writes, its code cells are the English
ones byte for byte but for the first cell's language line (its outputs are a Chinese run's, which the suite's
second pass compares: see tests/plugins/two_pass.py), it links only to Chinese notebooks, and the glossary's terms
are rendered as the README's glossary renders them.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
import zh  # noqa: E402

TRANSLATED = zh.translated_notebooks()


def _glossary():
    """[(English term, [accepted Chinese renderings])] from the README's glossary table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    terms = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or cells[0] in ("English", "") or set(cells[0]) <= {"-"}:
            continue
        english = re.sub(r"\s*\(.*?\)", "", cells[0]).strip()  # "Cell (a layer or network)" -> "Cell"
        chinese = [c.strip() for c in re.split(r"\s*/\s*|[()（）]", cells[1]) if c.strip()]
        for term in (t.strip() for t in english.split("/")):
            if term and re.search(r"[a-z]", term) and " " in term:  # multi-word terms: no false hits on "batch"
                terms.append((term, chinese))
    return terms


GLOSSARY = _glossary()


def test_the_glossary_is_read():
    assert len(GLOSSARY) >= 10 and all(zh_terms for _, zh_terms in GLOSSARY), GLOSSARY


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_every_markdown_cell_is_translated_from_todays_english(path):
    nb = nbformat.read(path, as_version=4)
    missing, stale = zh.status(nb, zh.load_translation(path.name))
    assert not missing, (f"{path.name}: markdown cells {missing} have no Chinese text: run "
                         f"`python tools/zh.py template {path.name[:2]}` and fill in their 'zh'")
    assert not stale, (f"{path.name}: the English of cells {stale} changed since they were translated: update "
                       f"their 'zh' and set 'en_sha256' to the new fingerprint (`python tools/zh.py stale` lists them)")


def test_the_generated_edition_is_what_build_writes():
    differ = zh.build(check=True)
    assert not differ, f"zh/notebooks is out of date for {differ}: run `python tools/zh.py build` and commit"


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_links_stay_in_the_chinese_edition(path):
    """Links between translated notebooks stay Chinese; a neighbour not translated yet is linked in English."""
    chinese = nbformat.read(zh.OUTPUT / path.name, as_version=4)
    names = {p.name for p in TRANSLATED}
    for k, cell in enumerate(chinese.cells):
        for target in re.findall(r"\]\(([^)\s]+)\)", cell.source if cell.cell_type == "markdown" else ""):
            english = re.search(r"/notebooks/(\d\d_[\w.-]+\.ipynb)", target)
            assert not (english and english.group(1) in names), (
                f"{path.name}, cell {k}: links to the English notebook {target}, which has a Chinese edition")
            if not re.match(r"^[a-z]+:", target) and not target.startswith("#"):
                assert (zh.OUTPUT / target.split("#")[0]).resolve().exists(), (
                    f"{path.name}, cell {k}: the link {target} leads nowhere from zh/notebooks/")


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_glossary_terms_are_rendered_as_the_glossary_says(path):
    nb = nbformat.read(path, as_version=4)
    cells = zh.load_translation(path.name)
    for cell in zh.markdown_cells(nb):
        english = re.sub(r"`[^`]*`", "", cell.source).lower()  # inline code is never translated
        chinese = cells.get(cell.get("id"), {}).get("zh", "")
        for term, renderings in GLOSSARY:
            if re.search(rf"\b{re.escape(term.lower())}\b", english):
                assert any(r in chinese for r in renderings), (
                    f"{path.name}, cell {cell.get('id')}: the English says {term!r}; the Chinese should say "
                    f"{' or '.join(renderings)} (README glossary)")


def test_relink_and_fingerprint(tmp_path):
    assert zh.relink("[04](04_data_and_minibatches.ipynb#top)") == "[04](04_data_and_minibatches.ipynb#top)"
    assert zh.relink("[04](04_x.ipynb)", translated={"05_y.ipynb"}) == "[04](../../notebooks/04_x.ipynb)"
    assert zh.relink("[map](../README.md)") == "[map](../../README.md)"
    assert zh.relink("[fig](figure.png)") == "[fig](../../notebooks/figure.png)"
    assert zh.relink("[docs](https://www.mindspore.cn/)") == "[docs](https://www.mindspore.cn/)"
    assert zh.fingerprint("a") != zh.fingerprint("a ") and len(zh.fingerprint("")) == 64


def test_build_marks_missing_and_stale_cells_and_is_idempotent(tmp_path):
    source, folder, output = tmp_path / "en", tmp_path / "tr", tmp_path / "out"
    source.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 01 · One", id="a"),
                                         nbformat.v4.new_code_cell(SETUP, id="b"),
                                         nbformat.v4.new_markdown_cell("Next: [02](02_two.ipynb)", id="c")])
    nbformat.write(nb, source / "01_one.ipynb")
    zh.template("01", source=source, folder=folder)
    data = json.loads((folder / "01_one.json").read_text(encoding="utf-8"))
    assert set(data["cells"]) == {"a", "c"} and data["cells"]["a"]["zh"] == ""
    assert zh.status(nb, data["cells"]) == (["a", "c"], [])
    data["cells"]["a"]["zh"] = "# 01 · 一"
    data["cells"]["c"] = {"en_sha256": zh.fingerprint("older English"), "zh": "下一节：[02](02_two.ipynb)"}
    (folder / "01_one.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert zh.status(nb, zh.load_translation("01_one.ipynb", folder)) == ([], ["c"])
    assert zh.build(source=source, folder=folder, output=output) == ["01_one.ipynb"]
    built = nbformat.read(output / "01_one.ipynb", as_version=4)
    assert built.cells[0].source == "# 01 · 一"
    # stale, so English; 02 has no Chinese edition, so the link leads to the English one
    assert built.cells[2].source == "Next: [02](../../notebooks/02_two.ipynb)"
    assert built.cells[1].source == SETUP.replace('"3"\n', '"3"\n' + zh.LANGUAGE_LINE + "\n")
    assert zh.build(source=source, folder=folder, output=output) == []  # run twice: nothing changes
    assert zh.build(check=True, source=source, folder=folder, output=output) == []
    # a Chinese run's outputs are kept while the cell's source stays, and replaced by the English when it changes
    built.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="正确！\n")]
    nbformat.write(built, output / "01_one.ipynb")
    assert zh.build(check=True, source=source, folder=folder, output=output) == []
    nb.cells[1].source += "\ny = 2"
    nbformat.write(nb, source / "01_one.ipynb")
    assert zh.build(source=source, folder=folder, output=output) == ["01_one.ipynb"]
    assert nbformat.read(output / "01_one.ipynb", as_version=4).cells[1].outputs == []


SETUP = 'import os\nos.environ["GLOG_v"] = "3"\nx = 1'


def test_the_language_line_goes_after_glog_and_nowhere_else():
    assert zh.with_language_line(SETUP).split("\n") == ["import os", 'os.environ["GLOG_v"] = "3"',
                                                        zh.LANGUAGE_LINE, "x = 1"]
    with pytest.raises(ValueError, match="GLOG_v"):
        zh.with_language_line("x = 1")


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_code_cells_are_the_english_ones_but_for_the_language_line(path):
    english = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    built = nbformat.read(zh.OUTPUT / path.name, as_version=4)
    assert [c.cell_type for c in built.cells] == [c.cell_type for c in nbformat.read(path, as_version=4).cells]
    chinese = [c.source for c in built.cells if c.cell_type == "code"]
    assert chinese == [zh.with_language_line(english[0])] + english[1:], f"zh/notebooks/{path.name}: run make zh"


def test_every_lesson_has_its_chinese_edition():
    lessons = sorted(p.name for p in zh.SOURCE.glob("[0-9][0-9]_*.ipynb"))
    assert [p.name for p in TRANSLATED] == lessons, "a lesson without translations/zh/NN_name.json"
