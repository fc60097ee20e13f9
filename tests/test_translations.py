"""The Chinese edition cannot drift from the English one (tools/zh.py; translations/zh/; zh/notebooks/).

For every notebook that has a translation file: every markdown cell is translated from the English text it
has today, and so is every English code comment (translations/zh/comments/, tools/zh_comments.py), the generated
notebook is exactly what ``tools/zh.py build`` writes, its code cells are the English ones byte for byte, comments
set aside, but for the first cell's language line (its outputs are a Chinese run's, which the suite's
second pass compares: see tests/plugins/two_pass.py), it links only to Chinese notebooks, and the glossary's terms
are rendered as the README's glossary renders them.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
import zh_comments  # noqa: E402

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
    assert built.cells[1].source == SETUP.replace('"3"\n', '"3"\n' + zh.FIGURE_LINE + "\n\n" + zh.LANGUAGE_LINE + "\n")
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
                                                        zh.FIGURE_LINE, "", zh.LANGUAGE_LINE, "x = 1"]
    with pytest.raises(ValueError, match="GLOG_v"):
        zh.with_language_line("x = 1")


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_code_cells_are_the_english_ones_but_for_the_language_line(path):
    """The code is the English code byte for byte once comments are set aside (they are Chinese: next tests)."""
    english = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    built = nbformat.read(zh.OUTPUT / path.name, as_version=4)
    assert [c.cell_type for c in built.cells] == [c.cell_type for c in nbformat.read(path, as_version=4).cells]
    chinese = [zh_comments.without_comments(c.source) for c in built.cells if c.cell_type == "code"]
    expected = [zh.with_language_line(english[0])] + english[1:]
    assert chinese == [zh_comments.without_comments(c) for c in expected], f"zh/notebooks/{path.name}: run make zh"


EDITIONS = [(p, p.name) for p in TRANSLATED] + [(zh.APP, zh.APP_NAME)]


@pytest.mark.parametrize("path, name", EDITIONS, ids=[n for _, n in EDITIONS])
def test_every_code_comment_is_translated_from_todays_english(path, name):
    nb = nbformat.read(path, as_version=4)
    missing, stale = zh_comments.status(nb, zh_comments.load(name))
    assert not missing, (f"{name}: the English comments of code cells {missing} have no Chinese: run "
                         f"`python tools/zh_comments.py template {name[:2]}` and translate their 'zh'")
    assert not stale, (f"{name}: the English comments of code cells {stale} changed since they were translated "
                       f"(`python tools/zh_comments.py template {name[:2]}` keeps the old Chinese under 'old')")


@pytest.mark.parametrize("path, name", EDITIONS, ids=[n for _, n in EDITIONS])
def test_comment_entries_fit_their_cells(path, name):
    """One Chinese comment per English one, each a '#' line; prose in Chinese; no entry for a cell that is gone."""
    cells = {c.get("id"): c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"}
    for cell_id, entry in zh_comments.load(name).items():
        assert cell_id in cells, f"{name}: comments for cell {cell_id}, which the notebook no longer has"
        english = [text for _, _, text in zh_comments.comments(cells[cell_id].source)]
        assert len(entry["zh"]) == len(english), (
            f"{name}, cell {cell_id}: {len(english)} comments, {len(entry['zh'])} translations")
        for en, chinese in zip(english, entry["zh"]):
            assert chinese.startswith("#") and "\n" not in chinese, f"{name}, cell {cell_id}: {chinese!r}"
            if zh_comments.is_prose(en):
                assert zh_comments.CJK.search(chinese), f"{name}, cell {cell_id}: {en!r} is rendered {chinese!r}"
            if zh_comments.DIRECTIVE.match(en):  # a tool reads it: the directive itself stays
                assert chinese.startswith(en.split("(")[0].rstrip()), f"{name}, cell {cell_id}: {chinese!r}"


def test_comments_are_translated_apart_from_the_code(tmp_path):
    """build puts the Chinese comments in; an English comment edited later leaves that cell's comments English
    (and stale), a code edit drops the stored outputs, a comment edit keeps them."""
    source, folder, output = tmp_path / "en", tmp_path / "tr", tmp_path / "out"
    source.mkdir()
    code = SETUP + "  # the one\ny = 2  # the two\n# the three"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 01 · One", id="a"),
                                         nbformat.v4.new_code_cell(code, id="b")])
    nbformat.write(nb, source / "01_one.ipynb")
    zh.template("01", source=source, folder=folder)
    entry = {"en_sha256": zh_comments.fingerprint(code), "zh": ["# 一", "# 二", "# 三"]}
    (folder / "comments").mkdir()
    (folder / "comments" / "01_one.json").write_text(json.dumps({"notebook": "01_one.ipynb", "cells": {"b": entry}}))
    assert [t for _, _, t in zh_comments.comments(code)] == ["# the one", "# the two", "# the three"]
    assert zh_comments.without_comments(code) == SETUP + "\ny = 2\n"
    zh.build(source=source, folder=folder, output=output)
    built = nbformat.read(output / "01_one.ipynb", as_version=4)
    assert built.cells[1].source == zh.with_language_line(SETUP + "  # 一\ny = 2  # 二\n# 三")
    built.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    nbformat.write(built, output / "01_one.ipynb")
    nb.cells[1].source = code.replace("# the two", "# the two, edited")
    nbformat.write(nb, source / "01_one.ipynb")
    assert zh_comments.status(nb, zh_comments.load("01_one.ipynb", folder / "comments")) == ([], ["b"])
    zh.build(source=source, folder=folder, output=output)
    built = nbformat.read(output / "01_one.ipynb", as_version=4)
    assert "# the two, edited" in built.cells[1].source and "# 一" not in built.cells[1].source  # stale: English
    assert built.cells[1].outputs[0].text == "2\n"  # only a comment changed: the outputs stay
    nb.cells[1].source = nb.cells[1].source.replace("y = 2", "y = 3")
    nbformat.write(nb, source / "01_one.ipynb")
    zh.build(source=source, folder=folder, output=output)
    assert nbformat.read(output / "01_one.ipynb", as_version=4).cells[1].outputs == []  # the code changed
    with pytest.raises(ValueError, match="3 comment"):
        zh_comments.with_comments(code, ["# 一"])
    assert zh_comments.comments("%%writefile x.py\nimport os  # here") == [(1, 11, "# here")]
    assert zh_comments.is_prose("# the initial weight") and not zh_comments.is_prose("# capstone/data.py")
    assert not zh_comments.is_prose("# noqa: F401") and not zh_comments.is_prose("# class Step(nn.Cell):")


def test_every_lesson_has_its_chinese_edition():
    lessons = sorted(p.name for p in zh.SOURCE.glob("[0-9][0-9]_*.ipynb"))
    assert [p.name for p in TRANSLATED] == lessons, "a lesson without translations/zh/NN_name.json"


# ---- figure text: course_utils/figure_text.py, translations/zh/figures/ ---------------------------------------
import zh_figures  # noqa: E402


@pytest.mark.parametrize("path, name", EDITIONS, ids=[n for _, n in EDITIONS])
def test_every_figure_text_of_the_code_has_its_chinese(path, name):
    missing, stale = zh_figures.status(nbformat.read(path, as_version=4), zh_figures.load(name))
    assert not missing, (f"{name}: figure text with no Chinese in translations/zh/figures/ "
                         f"(`python tools/zh_figures.py template {name[:2]}`): {missing}")
    assert not stale, f"{name}: entries in translations/zh/figures/ that no string of the code makes any more: {stale}"


def test_figure_text_entries_are_chinese_with_the_same_values():
    seen = {}
    for path in sorted(zh_figures.FOLDER.glob("*.json")):
        for english, chinese in zh_figures.load(path.stem + ".ipynb").items():
            values = english.count("{}") - english.count("{{}}")
            shown = chinese.format(*[f"<{k}>" for k in range(values)])  # raises on a field the English has not
            assert all(f"<{k}>" in shown for k in range(values)), f"{path.name}: {chinese!r} drops a value"
            assert zh_comments.CJK.search(chinese), f"{path.name}: {english!r} is rendered {chinese!r}"
            first = seen.setdefault(english, (path.name, chinese))
            assert first[1] == chinese, f"{english!r}: {first[0]} says {first[1]!r}, {path.name} says {chinese!r}"


def test_figure_text_is_chinese_only_in_chinese(monkeypatch):
    """Under COURSE_LANG=zh (with a Chinese font) a notebook's typed text and a helper's text are Chinese, with
    the Chinese font after the default one; in English nothing about a Text changes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_utils import figure_text
    from course_utils.plots import plot_loss

    if figure_text.cjk_font() is None:
        pytest.skip("no Chinese font installed (fc-list :lang=zh is empty): the figures stay English")
    catalogue = ({"Loss per step": "每步的损失"}, [(re.compile(r"lr = (.+?)\Z"), "学习率 = {}")])
    monkeypatch.setattr(figure_text, "_notebook_catalogue", lambda: catalogue)
    for lang, expected in (("en", ["Loss per step", "step", "lr = 0.5"]), ("zh", ["每步的损失", "步", "学习率 = 0.5"])):
        monkeypatch.setenv("COURSE_LANG", lang)
        fig, ax = plt.subplots()
        plot_loss([1.0, 0.5, float("nan")], ax=ax, label="lr = 0.5")  # a helper's text, and a label typed in code
        ax.set_title("Loss per step")  # typed in a notebook
        shown = [ax.title.get_text(), ax.xaxis.label.get_text(), ax.get_legend().get_texts()[0].get_text()]
        families = ax.title.get_fontfamily()
        plt.close(fig)
        assert shown == expected, lang
        assert (families[-1] == figure_text.cjk_font()) == (lang == "zh"), families
    assert figure_text.translate("0.5") == "0.5" and figure_text.translate("lr = 1e-3") == "学习率 = 1e-3"


def test_the_capstone_config_is_commented_in_both_languages():
    """capstone/config.yaml, which the challenge asks a learner to copy and edit: each English comment that is
    prose has its Chinese on the next line (one file, so the two cannot differ in a value)."""
    lines = (ROOT / "capstone" / "config.yaml").read_text(encoding="utf-8").splitlines()
    comments = [line.split("#", 1)[1].strip() if "#" in line else None for line in lines]
    for k, text in enumerate(comments):
        if text and zh_comments.is_prose("# " + text):
            following = comments[k + 1] if k + 1 < len(comments) else None
            assert following and zh_comments.CJK.search(following) and lines[k + 1].lstrip().startswith("#"), (
                f"capstone/config.yaml, line {k + 1}: {text!r} has no Chinese comment on the next line")
