"""The course quotes the two source articles (../shared/seeds/) word for word, in both editions.

A quote is Chinese text inside quotation marks or a block quote in an English notebook, or in parentheses right
after a quoted English phrase (`"ideally, after enough epochs" (理想情况下，...)`). Each stands verbatim in an
article (when the articles are next to the repository, as on the course's development machine; a clean clone
has no copy of them), and the Chinese edition's cell quotes it with the same characters (no back-translation
from English).
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"
HAN = r"\u4e00-\u9fff"
QUOTED = re.compile(rf"[“\"]([^”\"\n]*[{HAN}][^”\"\n]*)[”\"]")
AFTER_ENGLISH_QUOTE = re.compile(rf"[”\"]\s*\(([^)\n]*[{HAN}][^)\n]*)\)")
BLOCK_QUOTE = re.compile(rf"^> *([^\n]*[{HAN}][^\n]*)$", re.MULTILINE)


def _quotes():
    """[(notebook name, cell id, quote)] from the English notebooks' markdown."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for pattern in (QUOTED, AFTER_ENGLISH_QUOTE, BLOCK_QUOTE):
                found += [(path.name, cell["id"], m.group(1).strip()) for m in pattern.finditer(text)]
    return found


QUOTES = _quotes()


def _bare(text):
    return re.sub(r"[\s：:]+", "", text)


def test_the_quotes_are_found():
    # 02, 03, 04, 09, 11, 12, 13 and 15 quote the articles (22 quotes on 2026-12-03): a pattern that found none
    # would pass the tests below for nothing
    assert len(QUOTES) >= 15, QUOTES
    assert {nb[:2] for nb, _, _ in QUOTES} >= {"02", "03", "04", "09", "11", "12", "13", "15"}


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the source articles are not next to this clone (../shared/seeds)")
def test_every_quote_stands_verbatim_in_an_article():
    articles = _bare("".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt"))))
    wrong = [(nb, cell, q) for nb, cell, q in QUOTES if _bare(q) not in articles]
    assert not wrong, f"quoted, but not the articles' words: {wrong}"


def test_the_chinese_edition_quotes_the_same_words():
    wrong = []
    for nb, cell_id, quote in QUOTES:
        cells = json.loads((ROOT / "zh" / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]
        text = "".join(next(c["source"] for c in cells if c["id"] == cell_id))
        if _bare(quote) not in _bare(text):
            wrong.append((nb, cell_id, quote))
    assert not wrong, f"the Chinese cell does not quote the article's words: {wrong}"
