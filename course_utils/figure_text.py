"""Figures in the learner's language: a CJK font fallback and Chinese figure text, in the Chinese edition only.

Under ``COURSE_LANG=zh``, and when a Chinese font is installed (``fc-list :lang=zh``: WenQuanYi Micro Hei, Noto
Sans CJK, Microsoft YaHei, PingFang, ...), figure text is Chinese:

* the course's helpers (plots.py, callbacks.py, dp_figures.py, ckpt_demo.py) write theirs with
  ``text(lazy("English"), **fields)``: the message catalogue's Chinese (course_utils/messages/zh/<module>.json);
* text typed in a notebook's code (``ax.set_title("Loss per step")``, ``label=f"lr = {lr}"``) stays English
  code: once this module is imported (the Chinese edition's first cell does it), every matplotlib ``Text``
  is looked up as it is set in ``translations/zh/figures/NN_name.json`` (``{"Loss per step": "每步的损失"}``;
  an f-string's text is a key with ``{}`` where its values go: ``"lr = {}": "学习率 = {}"``, ``{0}``, ``{1}``
  may reorder them). tests/test_translations.py fails on a figure text of a notebook without its entry.

Latin text keeps DejaVu Sans, matplotlib's default, and only the glyphs it lacks come from the Chinese font.
Otherwise (English, or no Chinese font found) nothing changes: the English figures stay byte for byte as they
were, and a Chinese learner without a Chinese font gets English figures rather than empty boxes.
"""

import json
import re
import string
from functools import lru_cache
from pathlib import Path

from course_utils.messages import language, t

# Fonts with Chinese glyphs, in order of preference (Linux, then Windows, then macOS names).
CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "Microsoft YaHei", "SimHei", "PingFang SC", "Heiti SC", "STHeiti", "Arial Unicode MS")
FIGURES = Path(__file__).resolve().parent.parent / "translations" / "zh" / "figures"  # notebooks' figure text
CJK = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]")


@lru_cache(maxsize=None)
def cjk_font():
    """The first installed font of CJK_FONTS that matplotlib can use, or None. matplotlib lists the fonts once,
    in its cache, so a font installed later (``apt install fonts-wqy-microhei``) is looked for on disk too."""
    from matplotlib import font_manager

    def first():
        installed = {font.name for font in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in installed), None)

    if first() is None:
        hint = re.compile(r"wqy|cjk|notosanssc|sourcehan|msyh|simhei|pingfang|heiti|arialuni", re.IGNORECASE)
        for path in font_manager.findSystemFonts():
            if hint.search(Path(path).name.replace("-", "")):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read
                    continue
    return first()


def active():
    """True when figures are drawn in Chinese: ``COURSE_LANG=zh`` and a Chinese font is installed."""
    return language() == "zh" and cjk_font() is not None


def text(english, /, **fields):
    """A helper's figure text: ``t(english, **fields)`` when figures are Chinese, else the English, formatted."""
    if active():
        return t(english, **fields)
    return english.format(**fields) if fields else english


def _with_cjk_font(shown):
    """Give a Text with Chinese characters the Chinese font after its own (which still draws its Latin text)."""
    props = getattr(shown, "_fontproperties", None)  # None while Text.__init__ sets the text first
    if props is None or not CJK.search(shown.get_text()):
        return
    family = list(props.get_family())
    if cjk_font() not in family:
        props.set_family(family + [cjk_font()])


@lru_cache(maxsize=None)
def _notebook_catalogue(folder=FIGURES):
    """``(exact, patterns)`` from translations/zh/figures/*.json: ``{English: Chinese}`` and, for the keys with
    ``{}``, ``[(compiled regex, Chinese)]``."""
    exact, patterns = {}, []
    for path in sorted(Path(folder).glob("*.json")):
        for english, chinese in json.loads(path.read_text(encoding="utf-8")).get("text", {}).items():
            if not chinese:
                continue
            parts = list(string.Formatter().parse(english))
            if any(field is not None for _, field, _, _ in parts):
                regex = "".join(re.escape(lit) + ("(.+?)" if field is not None else "") for lit, field, _, _ in parts)
                patterns.append((re.compile(regex + r"\Z", re.DOTALL), chinese))
            else:
                exact.setdefault(english, chinese)
    patterns.sort(key=lambda pattern: -len(re.sub(r"\(\.\+\?\)|\\", "", pattern[0].pattern)))  # longest first
    return exact, patterns


def translate(shown):
    """The Chinese of a figure text typed in a notebook, or ``shown`` unchanged when it has no entry."""
    exact, patterns = _notebook_catalogue()
    if shown in exact:
        return exact[shown]
    if not re.search(r"[A-Za-z]{2}", shown):
        return shown  # numbers and tick labels
    for regex, chinese in patterns:
        match = regex.match(shown)
        if match:
            try:
                return chinese.format(*match.groups())
            except (IndexError, KeyError, ValueError):
                return shown
    return shown


def install():
    """While figures are Chinese, translate every matplotlib Text as it is set, and give Chinese text the Chinese
    font (again after its font is set: Text.__init__ sets the text before the font). Idempotent."""
    from matplotlib.text import Text

    if getattr(Text.set_text, "_course_figure_text", False):
        return
    set_text, set_fontproperties, set_fontfamily = Text.set_text, Text.set_fontproperties, Text.set_fontfamily

    def set_text_in_chinese(self, s):
        set_text(self, s)
        if active() and self._text:
            chinese = translate(self._text)
            if chinese != self._text:
                set_text(self, chinese)
            _with_cjk_font(self)

    def then_cjk(setter):
        def wrapper(self, value):
            result = setter(self, value)
            if active():
                _with_cjk_font(self)
            return result
        wrapper.__doc__, wrapper.__name__ = setter.__doc__, setter.__name__
        return wrapper

    set_text_in_chinese.__doc__, set_text_in_chinese._course_figure_text = set_text.__doc__, True
    Text.set_text = set_text_in_chinese
    Text.set_fontproperties, Text.set_fontfamily = then_cjk(set_fontproperties), then_cjk(set_fontfamily)


install()
