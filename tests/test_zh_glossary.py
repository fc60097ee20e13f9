"""One Chinese term per idea (translations/zh/glossary.json), and the articles quoted as they were written.

Read: the markdown of every Chinese notebook (translations/zh/*.json), the Chinese catalogue
(course_utils/messages/zh/*.json), README.zh-CN.md and INSTRUCTORS.zh-CN.md. In their prose (code, math, link
targets, URLs, HTML comments and {placeholders} left out) no term is rendered in a way the glossary forbids, a
term's English gloss stands only where the glossary puts it, and every quotation of a source article (“…” after
原文 in the same sentence) is the article's own wording, as the glossary's "quotations" record it. A recorded
quotation is exempt from the term rules: the articles wrote 前向计算 and epoch, and a quotation keeps them.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = json.loads((ROOT / "translations" / "zh" / "glossary.json").read_text(encoding="utf-8"))
TERMS = GLOSSARY["terms"]
QUOTATIONS = GLOSSARY["quotations"]
# Notebook 10 teaches a classifier's precision (精确率); 精度 there would be read as accuracy or as numeric precision.
CLASSIFIER_FILES = ("translations/zh/10_classification.json", "course_utils/messages/zh/checks.nb10.json",
                    "course_utils/messages/zh/lesson.10.json")
# The classroom app is a page of its own (a room sees only it, not notebook 05): it may gloss a term again.
STANDALONE = ("translations/zh/app_learning_rate_lab.json",)
# Quoted words that are not the articles' words: the course's own section names ("见关于原文 003 的“拓展”部分").
NOT_ARTICLE_WORDS = re.compile(r"^拓展(：.*)?$")

CODE = [re.compile(p, re.S) for p in (r"```.*?```", r"`[^`\n]*`", r"\$\$.*?\$\$", r"\$[^$\n]+\$", r"<!--.*?-->",
                                      r"\]\([^)\s]*\)", r"https?://[^\s)）]+", r"\{[A-Za-z_][\w.!:<>^]*\}")]
QUOTE = re.compile(r"“([^”]*)”")
GLOSSARY_TABLE = "## 术语表"  # README.zh-CN's glossary: its first column is the English, left out


def prose(text):
    """The text a reader reads as language: code, math, link targets, URLs, comments, placeholders removed."""
    for pattern in CODE:
        text = pattern.sub(" ", text)
    return text


def _squeeze(text):
    return re.sub(r"\s+", "", text)


ARTICLE = {q["article"]: [] for q in QUOTATIONS}
for q in QUOTATIONS:
    ARTICLE[q["article"]].append(_squeeze(q["text"]))


def is_article_wording(quoted):
    """A quotation (its parts between …… elisions) that occurs word for word in a recorded passage."""
    parts = [_squeeze(p) for p in re.split(r"…+", quoted) if _squeeze(p)]
    return bool(parts) and all(any(p in t for texts in ARTICLE.values() for t in texts) for p in parts)


def without_quotations(text):
    """The text with every recorded quotation of an article removed (they keep the article's own terms)."""
    return QUOTE.sub(lambda m: "“”" if is_article_wording(m.group(1)) else m.group(0), text)


def _strings(value):
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def documents(root=ROOT):
    """[(file relative to the root, where in it, Chinese text)] for everything the glossary governs."""
    docs = []
    for path in sorted((root / "translations" / "zh").glob("*.json")):
        if path.name == "glossary.json":
            continue
        for cell_id, entry in json.loads(path.read_text(encoding="utf-8"))["cells"].items():
            docs.append((f"translations/zh/{path.name}", f"cell {cell_id}", entry.get("zh", "")))
    for path in sorted((root / "course_utils" / "messages" / "zh").glob("*.json")):
        for english, chinese in json.loads(path.read_text(encoding="utf-8")).items():
            for text in _strings(chinese):
                docs.append((f"course_utils/messages/zh/{path.name}", f"entry {english[:50]!r}", text))
    for name in ("README.zh-CN.md", "INSTRUCTORS.zh-CN.md"):
        text = (root / name).read_text(encoding="utf-8")
        section = ""
        for number, line in enumerate(text.split("\n"), 1):
            section = line if line.startswith("## ") else section
            where = f"line {number}"
            if section.startswith(GLOSSARY_TABLE) and line.startswith("|"):
                line = "|".join(line.split("|")[2:])  # the table's English column names the English term,
                where = f"glossary {where}"  # and the table may show a term's gloss
            docs.append((name, where, line))
    return docs


def _fenced_lines(text):
    """The line numbers (1-based) inside ``` fences of a markdown file."""
    inside, lines = False, set()
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            inside = not inside
            lines.add(number)
        elif inside:
            lines.add(number)
    return lines


def readable(root=ROOT):
    """documents() reduced to prose, the fenced blocks of the two markdown files left out line by line."""
    fenced = {name: _fenced_lines((root / name).read_text(encoding="utf-8"))
              for name in ("README.zh-CN.md", "INSTRUCTORS.zh-CN.md")}
    out = []
    for name, where, text in documents(root):
        if name in fenced and int(where.split()[-1]) in fenced[name]:
            continue
        out.append((name, where, prose(text)))
    return out


def _gloss_home(term):
    home = term["gloss_in"]
    return home if not re.fullmatch(r"\d\d", home) else next(
        f"translations/zh/{p.name}" for p in (ROOT / "translations" / "zh").glob(f"{home}_*.json"))


def _glosses(term):
    gloss = term.get("gloss", [])
    return [gloss] if isinstance(gloss, str) else gloss


def violations(docs, terms=TERMS):
    """[(file, where, term id, what was found)] for every forbidden rendering and every gloss out of its place."""
    found = []
    for name, where, text in docs:
        for term in terms:
            for gloss in _glosses(term):
                if gloss in text:
                    if name != _gloss_home(term) and name not in STANDALONE and not where.startswith("glossary"):
                        found.append((name, where, term["id"],
                                      f"the gloss {gloss!r} belongs in {term['gloss_in']} only"))
                    text = text.replace(gloss, " ")
        text = without_quotations(text)
        for term in terms:
            for pattern in term["forbidden"]:
                for match in re.finditer(pattern, text):
                    found.append((name, where, term["id"], match.group(0)))
        if name in CLASSIFIER_FILES and "精度" in text:
            found.append((name, where, "precision-classification", "精度 (a classifier's precision is 精确率)"))
    return found


def test_the_glossary_is_well_formed():
    ids = [t["id"] for t in TERMS]
    assert len(ids) == len(set(ids)) >= 20, "glossary terms need unique ids"
    for term in TERMS:
        assert {"id", "en", "zh", "forbidden"} <= set(term), f"{term.get('id')}: needs id, en, zh, forbidden"
        for pattern in term["forbidden"]:
            re.compile(pattern)
        if "gloss" in term:
            assert term.get("gloss_in"), f"{term['id']}: a gloss needs gloss_in (a notebook number or a file)"
    for q in QUOTATIONS:
        assert {"article", "section", "text"} <= set(q) and re.search(r"[\u4e00-\u9fff]", q["text"]), q


@pytest.mark.parametrize("term", [t for t in TERMS if "gloss" in t], ids=lambda t: t["id"])
def test_each_gloss_stands_where_the_glossary_puts_it(term):
    home = _gloss_home(term)
    texts = [text for name, _w, text in readable() if name == home]
    for gloss in _glosses(term):
        assert any(gloss in t for t in texts), (
            f"{home} should gloss {term['zh']} once, as {gloss!r} (translations/zh/glossary.json)")


def test_no_term_is_rendered_as_the_glossary_forbids():
    found = violations(readable())
    report = "\n".join(f"{name}, {where}: {term}: {what!r}" for name, where, term, what in found[:60])
    assert not found, (f"{len(found)} renderings the glossary forbids (translations/zh/glossary.json says what to "
                       f"write instead):\n{report}")


def article_quotations(docs):
    """[(file, where, quoted text)]: every “…” in a sentence that names 原文 before it."""
    quotes = []
    for name, where, text in docs:
        for sentence in re.split(r"[。！？\n]", text):
            at = sentence.find("原文")
            if at < 0:
                continue
            for match in QUOTE.finditer(sentence[at:]):
                quoted = match.group(1)
                if not NOT_ARTICLE_WORDS.match(quoted):
                    quotes.append((name, where, quoted))
    return quotes


def test_the_articles_are_quoted_as_written():
    quotes = article_quotations(readable())
    wrong = [(n, w, q) for n, w, q in quotes if not is_article_wording(q)]
    report = "\n".join(f"{n}, {w}: “{q}”" for n, w, q in wrong)
    assert quotes and not wrong, (f"{len(wrong)} of {len(quotes)} quotations of the articles are not their wording "
                                  f"(quote the Chinese original, as glossary.json's 'quotations' record it, and put "
                                  f"the course's correction beside it):\n{report}")


def test_every_recorded_quotation_is_used():
    used = [_squeeze(p) for _n, _w, q in article_quotations(readable()) for p in re.split(r"…+", q) if _squeeze(p)]
    unused = [q["text"] for q in QUOTATIONS if not any(part in _squeeze(q["text"]) for part in used)]
    assert not unused, f"recorded quotations no text quotes any more (remove them from glossary.json): {unused}"


def test_the_rules_catch_what_the_review_found():
    """Each rule fires on the review's own examples and stays quiet on the right rendering."""
    bad = [("x", "1", "`nn.TrainOneStepCell(loss_net, optimizer)` 是一个单元。"), ("x", "2", "训练单元和训练 Cell"),
           ("x", "3", "每个 epoch 之后"), ("x", "4", "稳定性界限"), ("x", "5", "见第 05 节"), ("x", "6", "第 2 部分"),
           ("x", "7", "前向计算"), ("x", "8", "全归约"), ("x", "9", "悄无声息地"), ("x", "10", "**练习 00.1.** 写"),
           ("x", "11", "HEALTHY（健康）"), ("x", "12", "85 %"), ("x", "13", "准确率"),
           ("x", "14", "原文写道：“尝试更小的值，例如 0.001”（§5.1）")]
    hit = {where for _n, where, _t, _w in violations([(n, w, prose(t)) for n, w, t in bad])}
    assert hit == {w for _n, w, _t in bad}, f"rules that did not fire: {sorted({w for _n, w, _t in bad} - hit)}"
    good = [("x", "1", "`nn.TrainOneStepCell(loss_net, optimizer)` 本身也是一个 Cell，运行下一个单元格。"),
            ("x", "2", "训练网络；每个轮次之后；`num_epochs`；{epoch}；稳定性上界；见第 05 课的第 2 节"),
            ("x", "3", "正向计算；AllReduce；不报错；**练习 00.1** 写；健康（healthy）；85%；正确率；单元测试"),
            ("x", "4", "原文 000 写道：“尝试更小的值如0.001”"),
            ("x", "5", "静态图模式与动态图模式；原文“调用网络的前向计算”")]
    assert violations([(n, w, prose(t)) for n, w, t in good]) == []
    assert article_quotations([("x", "1", "原文写道：“尝试更小的值，例如 0.001”。另一句“不算”")]) == [
        ("x", "1", "尝试更小的值，例如 0.001")]
    assert is_article_wording("尝试更小的值如0.001") and not is_article_wording("尝试更小的值，例如 0.001")
    assert is_article_wording("接收网络输出和真实标签……调用网络的前向计算")


def test_notebook_10_keeps_precision_apart():
    assert violations([(CLASSIFIER_FILES[0], "cell x", "精度和召回率")])
    assert not violations([(CLASSIFIER_FILES[0], "cell x", "精确率和召回率")])
