"""Sphinx configuration of the course website, one build per language (tools/site.py runs both).

tools/site.py stages the pages and notebooks of one language into a source folder and runs
``sphinx-build -c site`` on it with COURSE_SITE_LANG=en or zh; everything language-dependent is chosen here
from that variable. Nothing is executed (the notebooks' stored outputs are shown) and nothing is fetched:
the theme's assets come from its pinned package, MathJax from site/_static/vendor/mathjax, and myst-nb's
ipywidgets scripts (a CDN by default) are switched off: the stored outputs hold no widget state.
"""

import os
import re

import snowballstemmer
import sphinx.search
from sphinx.search import SearchLanguage
from sphinx.search.zh import SearchChinese

LANG = os.environ.get("COURSE_SITE_LANG", "en")
if LANG not in ("en", "zh"):
    raise ValueError(f"COURSE_SITE_LANG must be en or zh, not {LANG!r} (tools/site.py sets it)")
OTHER = {"en": "zh", "zh": "en"}[LANG]
MATHJAX_VERSION = "3.2.2"  # site/_static/vendor/mathjax/README.md says where it comes from

project = {"en": "MindSpore training course", "zh": "MindSpore 训练课程"}[LANG]
author = ""
copyright = ""
language = {"en": "en", "zh": "zh_CN"}[LANG]
html_search_language = LANG  # zh: CourseChinese below
html_title = project
master_doc = "index"

extensions = ["myst_nb"]
nb_execution_mode = "off"  # the committed outputs are the lesson; the site never re-runs a notebook
nb_ipywidgets_js = {}
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3  # GitHub-style anchors, so README and INSTRUCTORS links keep working
myst_dmath_double_inline = True

mathjax_path = "vendor/mathjax/tex-svg.js"  # relative to _static
mathjax3_config = {"options": {"enableMenu": False}, "svg": {"fontCache": "global"}}

templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_favicon = "_static/favicon.svg"  # also spares the browser a request for /favicon.ico
# The staged source folder's extra/ (tools/site.py): downloads/ (the notebooks) and lab/ (the exported lab).
html_extra_path = [os.environ["COURSE_SITE_EXTRA"]] if os.environ.get("COURSE_SITE_EXTRA") else []
exclude_patterns = ["extra", "jupyter_execute", ".doctrees"]
html_copy_source = False  # the notebooks are offered as downloads instead
html_show_sourcelink = False
html_show_sphinx = False
html_show_copyright = False
html_last_updated_fmt = None
html_permalinks_icon = "#"
html_context = {"default_mode": "light",  # the lessons' figures are drawn on white
                "course_lang": LANG, "course_other_lang": OTHER,
                "course_switch_label": {"en": "中文", "zh": "English"}[LANG],
                "course_switch_title": {"en": "这一页的中文版", "zh": "This page in English"}[LANG],
                "course_other_html_lang": {"en": "zh-CN", "zh": "en"}[LANG]}

html_theme = "sphinx_book_theme"
html_theme_options = {
    "use_download_button": False,  # each lesson has its own download buttons (the notebook, the student edition)
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    # The pages that are one table or one picture need no "Contents" column (it takes the table's room).
    "secondary_sidebar_items": {"**": ["page-toc.html"], "course-map": [], "glossary": [], "corrections": [],
                                "lab": [], "index": []},
    "navigation_with_keys": False,
    "logo": {"text": project},
    "extra_footer": {"en": "Built from the course's notebooks and their stored outputs. "
                           "To run a lesson: <code>make lab</code>.",
                     "zh": "由课程的 notebook 及其保存的输出生成。要运行一课：<code>make lab</code>。"}[LANG],
}
suppress_warnings = ["myst.header"]  # a lesson may go from ## to #### (a small numbered sub-step)


# ---- search in Chinese ---------------------------------------------------------------------------------------
# Chinese has no spaces between words. Sphinx's Chinese search indexes the words jieba finds, but the reader's
# query is split in the browser, where jieba is not: "学习率" stays one term while the index holds "学习" (jieba's
# split of it), so common compounds (学习率, 优化器, 梯度裁剪, 混合精度) found nothing. Instead, the index and the
# query are both cut into overlapping pairs of Han characters (bigrams, as Lucene's CJK analyzer does): 学习率 is
# 学习 + 习率, and a page matches when it holds every pair. Latin words are indexed as Sphinx's English search does.
HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
LATIN_WORD = re.compile(r"[a-zA-Z0-9_]+")
BIGRAM_SPLITTER = r"""
function splitQuery(query) {
  const terms = [];
  for (const part of query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)) {
    for (const piece of part.split(/([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)/u)) {
      if (!piece) continue;
      if (/^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+$/u.test(piece) && piece.length > 1) {
        for (let i = 0; i + 1 < piece.length; i++) terms.push(piece.slice(i, i + 2));
      } else {
        terms.push(piece);
      }
    }
  }
  return terms;
}
"""


class CourseChinese(SearchChinese):
    """Sphinx's Chinese search with Han bigrams instead of jieba's words, on both sides (index and query)."""

    js_splitter_code = BIGRAM_SPLITTER
    # Sphinx 9.0.4 names the browser's stemmer after language_name ("window.Stemmer = ChineseStemmer"), but the
    # Chinese search ships the English stemmer (for Latin words), so every Chinese page failed with "ChineseStemmer
    # is not defined".
    language_name = "English"

    def __init__(self, options):
        SearchLanguage.__init__(self, options)  # not SearchChinese's: it would load jieba's dictionary, if installed
        self.latin_terms = set()
        self.stemmer = snowballstemmer.stemmer("english")

    def split(self, input):  # noqa: A002 - Sphinx's parameter name
        bigrams = [run[i:i + 2] for run in HAN_RUN.findall(input) for i in range(len(run) - 1)]
        latin = LATIN_WORD.findall(input)
        self.latin_terms.update(latin)
        return bigrams + latin


sphinx.search.languages["zh"] = CourseChinese
