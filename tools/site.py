"""The course as a static website, in English and Chinese, from the committed notebooks and their stored outputs.

    python tools/site.py build              # both languages into build/site/ (en/, zh/, index.html)
    python tools/site.py build --lang zh    # one language (the other's pages stay as they were)
    python tools/site.py serve [--port 8000]   # serve build/site/ on 127.0.0.1

Nothing is executed and nothing is fetched. For each language this script stages a Sphinx source folder
(build/site-work/<lang>/src) and runs `sphinx-build -c site` on it (site/conf.py: myst-nb reads the
notebooks, sphinx-book-theme draws the pages):

- every lesson (notebooks/ or zh/notebooks/), with download buttons under its title: the notebook as committed
  and its student edition (tools/make_editions.py's student_notebook: outputs cleared). Exercise cells keep their
  scaffold and lose their "not attempted" verdict; a prediction shows its question and options; a cell that
  shows a hint keeps its code but not the hint: checks, hints and solutions are for the notebook;
- the course map (tools/course_map.py: titles, minutes, prerequisites; "what you learn" from the README's
  table), install and run, the glossary and the corrections (sections of README.md / README.zh-CN.md), the
  instructor guide (INSTRUCTORS.md / INSTRUCTORS.zh-CN.md), and the learning-rate lab's page;
- the lab: if `course_utils.lab.export` exists, `python -m course_utils.lab.export OUT --lang L` writes a
  self-contained folder (lab.js, its sweeps) that the lab page embeds (lab_embed: its `embed_html`), so a
  reader moves the slider with no kernel; otherwise the page shows the lab's stored picture from notebook 05
  and says that a live lab is one `make lab` away.

Both sites have the same page names, so the language switch in every page header (site/_templates/
lang-switch.html) goes to ../<other>/<same page>.html. tests/test_site.py builds the site once and checks it in
Chromium.
"""

import argparse
import base64
import html
import http.server
import os
import re
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"  # conf.py, _templates/, _static/
OUT = ROOT / "build" / "site"
WORK = ROOT / "build" / "site-work"
LANGS = ("en", "zh")
SOURCES = {"en": ROOT / "notebooks", "zh": ROOT / "zh" / "notebooks"}
READMES = {"en": ROOT / "README.md", "zh": ROOT / "README.zh-CN.md"}
GUIDES = {"en": ROOT / "INSTRUCTORS.md", "zh": ROOT / "INSTRUCTORS.zh-CN.md"}
LAB_NOTEBOOK = "05_learning_rate_lab"
LAB_CALL = re.compile(r"\blearning_rate_lab\(")
LAB_EXPORT = ROOT / "course_utils" / "lab" / "export.py"  # the lab as a static page (course_utils.lab.export)
HINT_CALL = re.compile(r"\.(hint|solution)\(")
NOT_ATTEMPTED = re.compile(r"^\[ \]")  # a check's "not attempted yet" verdict, in both languages
LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`]+)`")
# README sections (the heading after "## "), by language: which page each goes to.
SECTIONS = {
    "en": {"install": "Two commands", "map": "Course map", "corrections": "What the course corrects in its sources",
           "glossary": "Glossary (English · 中文)", "troubleshooting": "Troubleshooting",
           "versions": "Which MindSpore runs which lesson"},
    "zh": {"install": "两条命令", "map": "课程地图", "corrections": "本课程对原始资料的更正",
           "glossary": "术语表（English · 中文）", "troubleshooting": "常见问题",
           "versions": "哪个 MindSpore 版本能运行哪一课"},
}
# Where a README link with an anchor lands (the anchors MyST gives the README's headings).
README_ANCHORS = {"two-commands": "install", "course-map": "course-map", "troubleshooting": "install",
                  "what-the-course-corrects-in-its-sources": "corrections", "glossary-english--中文": "glossary",
                  "两条命令": "install", "课程地图": "course-map", "常见问题": "install",
                  "本课程对原始资料的更正": "corrections", "术语表english--中文": "glossary"}
PAGES = ("index", "course-map", "install", "lab", "glossary", "corrections", "instructors")
TEXT = {
    "en": {
        "course-map": "Course map", "install": "Install and run", "lab": "The learning-rate lab",
        "glossary": "Glossary (English · 中文)", "corrections": "What the course corrects in its sources",
        "start": "Start here", "lessons": "Lessons", "reference": "Reference",
        "download": "Download the notebook (.ipynb)", "student": "Student edition (.ipynb, no outputs)",
        "download_note": "A notebook runs in the course's environment: see <a href=\"install.html\">Install and "
                         "run</a>, then <code>make lab</code>.",
        "hint_note": "(Run this cell in the notebook to see the hint: hints and solutions are not printed here.)",
        "lab_link": "On the website: [the lab's page](lab.md). A live lab with any setting is one `make lab` away.",
        "map_intro": "The seventeen lessons in order, each with its minutes (teaching + exercises) and the lessons "
                     "to take before it. In all: {teach} min teaching + {ex} min exercises.",
        "map_head": "| # | lesson | what you learn | minutes | take after |",
        "map_none": "(first)",
        "lab_intro": "Gradient descent on y = 2x, one learning rate at a time: the loss per step, the path of "
                     "(w, b) over the loss contours, and the verdict (converged, slow, diverged), with the "
                     "stability bound 2/λmax drawn in. It is the lab of [lesson 05](05_learning_rate_lab.ipynb).",
        "lab_static": "**This is a picture of the lab** (as notebook 05 stores it). The live lab, with any "
                      "learning rate, optimizer and number of steps, is one command away: `make lab` opens the "
                      "course in JupyterLab (then lesson 05), `make app` the lab alone ([install and run]"
                      "(install.md)).",
        "lab_live": "The lab above runs in your browser from sweeps MindSpore computed when the site was built. "
                    "A live lab with any setting is one command away: `make lab` (then lesson 05) or `make app` "
                    "([install and run](install.md)).",
        "lab_title": "The learning-rate lab",
        "lab_alt": "The learning-rate lab: loss per step, the path over the loss contours, the verdict",
        "root_title": "MindSpore training course",
    },
    "zh": {
        "course-map": "课程地图", "install": "安装与运行", "lab": "学习率实验室",
        "glossary": "术语表（English · 中文）", "corrections": "本课程对原始资料的更正",
        "start": "从这里开始", "lessons": "课程", "reference": "参考",
        "download": "下载 notebook（.ipynb）", "student": "学员版（.ipynb，不含输出）",
        "download_note": "notebook 需要在课程的环境中运行：见<a href=\"install.html\">安装与运行</a>，然后运行 "
                         "<code>make lab-zh</code>。",
        "hint_note": "（在 notebook 中运行这个单元格即可看到提示：提示和答案不在网页上显示。）",
        "lab_link": "网站上的[实验室页面](lab.md)。想用任意设置实时操作实验室，只需一条命令：`make lab-zh`。",
        "map_intro": "按顺序排列的十七课，每课都标出分钟数（讲解 + 练习）以及学它之前要先学的课。合计：讲解 {teach} "
                     "分钟 + 练习 {ex} 分钟。",
        "map_head": "| # | 课 | 你将学到 | 分钟 | 前置课程 |",
        "map_none": "（第一课）",
        "lab_intro": "在 y = 2x 上做梯度下降，每次一个学习率：每一步的损失、(w, b) 在损失等高线上的路径，以及结论"
                     "（收敛、太慢、发散），图中画出了稳定性上界 2/λmax。它就是[第 05 课](05_learning_rate_lab.ipynb)"
                     "的实验室。",
        "lab_static": "**这是实验室的一张图片**（notebook 05 中保存的输出）。想用任意学习率、优化器和步数实时操作"
                      "实验室，只需一条命令：`make lab-zh` 在 JupyterLab 中打开中文版课程（然后打开第 05 课），"
                      "`make app-zh` 只打开实验室（[安装与运行](install.md)）。",
        "lab_live": "上面的实验室在你的浏览器中运行，用的是构建网站时由 MindSpore 计算好的扫描结果。想用任意设置"
                    "实时操作实验室，只需一条命令：`make lab-zh`（然后打开第 05 课）或 `make app-zh`"
                    "（[安装与运行](install.md)）。",
        "lab_title": "学习率实验室",
        "lab_alt": "学习率实验室：每一步的损失、损失等高线上的路径和结论",
        "root_title": "MindSpore 训练课程",
    },
}


# ---- the pages from the READMEs and the instructor guides ----------------------------------------------------
def section(text, heading):
    """The body of the ``## heading`` section of a Markdown file (up to the next ``## `` heading)."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not match:
        raise ValueError(f"no '## {heading}' section found (the site's pages are built from it: tools/site.py)")
    return match.group(1).strip() + "\n"


def _target(path, anchor):
    """(language, page name, is a lesson) of a link inside the repository, or None for any other file."""
    lesson = re.fullmatch(r"(zh/)?notebooks/(\d\d_[\w-]+)\.ipynb", path) or re.fullmatch(r"()(\d\d_[\w-]+)\.ipynb",
                                                                                           path)
    if lesson:
        return ("zh" if lesson.group(1) else None), lesson.group(2), True
    readme = {"README.md": "en", "README.zh-CN.md": "zh"}.get(path)
    if readme:
        return readme, README_ANCHORS.get(anchor, "index"), False
    guide = {"INSTRUCTORS.md": "en", "INSTRUCTORS.zh-CN.md": "zh"}.get(path)
    if guide:
        return guide, "instructors", False
    if path.rstrip("/") == "zh/notebooks":
        return "zh", "index", False
    return None


def rewrite_links(text, lang):
    """Links between the repository's files become links between the site's pages (the other language's site
    for a file in the other language); links to other files of the repository become plain text."""
    def replace(match):
        label, target = match.groups()
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return match.group(0)
        path, _, anchor = target.partition("#")
        found = _target(path, anchor)
        if found is None:
            return label
        target_lang, page, lesson = found
        target_lang = target_lang or lang
        kept = lesson or page == "instructors" or anchor in ("two-commands", "troubleshooting", "两条命令", "常见问题")
        fragment = f"#{anchor}" if anchor and kept else ""  # a README section's own page needs no anchor
        if target_lang == lang:
            return f"[{label}]({page}{'.ipynb' if lesson else '.md'}{fragment})"
        label_html = CODE_SPAN.sub(lambda m: f"<code>{html.escape(m.group(1))}</code>", html.escape(label, quote=False))
        return f'<a href="../{target_lang}/{page}.html{fragment}">{label_html}</a>'
    return LINK.sub(replace, text)


def _readme_rows(readme_text, lang):
    """{lesson number: what you learn} from the README's course map table."""
    rows = {}
    for line in section(readme_text, SECTIONS[lang]["map"]).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"\d\d", cells[0]):
            rows[cells[0]] = cells[2]
    return rows


def course_map_page(lang):
    import course_map

    text = TEXT[lang]
    rows = course_map.read_map(ROOT / "notebooks")  # the minutes are stated in the English notebooks' headers
    needs = course_map.prerequisites(ROOT / "notebooks")
    learn = _readme_rows(READMES[lang].read_text(encoding="utf-8"), lang)
    titles = {path.stem: _title(path) for path in _lessons(lang)}
    missing = sorted(name[:2] for name, *_ in rows if name[:2] not in learn)
    if missing:
        raise ValueError(f"{READMES[lang].name}'s course map has no row for lesson(s) {', '.join(missing)}")
    lines = [f"# {text['course-map']}", "", text["map_intro"].format(teach=sum(r[2] for r in rows),
                                                                     ex=sum(r[3] for r in rows)), "",
             text["map_head"], "|---|---|---|---|---|"]
    stems = {name[:2]: Path(name).stem for name, *_ in rows}
    for name, _, teach, ex in rows:
        number, stem = name[:2], Path(name).stem
        after = ", ".join(f"[{n}]({stems[n]}.ipynb)" for n in needs[number]) or text["map_none"]
        title = titles[stem].split("·", 1)[-1].strip()
        minutes = f"{teach}\u00a0+\u00a0{ex}"  # no-break spaces: one line in a narrow column
        lines.append(f"| {number} | [{title}]({stem}.ipynb) | {learn[number]} | {minutes} | {after} |")
    return "\n".join(lines) + "\n"


def readme_pages(lang):
    """{page name: Markdown} of the pages taken from the README: index (its introduction), install, glossary,
    corrections."""
    text, readme = TEXT[lang], READMES[lang].read_text(encoding="utf-8")
    names = SECTIONS[lang]
    title = re.search(r"^# (.+)$", readme, re.M).group(1)
    intro = readme[readme.index(f"# {title}") + len(title) + 2:readme.index(f"## {names['install']}")].strip()
    lessons = "\n".join(path.stem for path in _lessons(lang))
    toctree = ("```{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n{entries}\n```\n")
    index = "\n".join([
        f"# {title}", "", rewrite_links(intro, lang), "",
        toctree.format(caption=text["start"], entries="course-map\ninstall\nlab"),
        toctree.format(caption=text["lessons"], entries=lessons),
        toctree.format(caption=text["reference"], entries="glossary\ncorrections\ninstructors"),
    ])
    install = "\n".join([f"# {text['install']}", "", f"## {names['install']}", "",
                         rewrite_links(section(readme, names["install"]), lang), "",
                         f"## {names['versions']}", "",
                         rewrite_links(section(readme, names["versions"]), lang), "",
                         f"## {names['troubleshooting']}", "",
                         rewrite_links(section(readme, names["troubleshooting"]), lang)])
    return {
        "index": index,
        "install": install,
        "glossary": f"# {text['glossary']}\n\n{rewrite_links(section(readme, names['glossary']), lang)}",
        "corrections": f"# {text['corrections']}\n\n{rewrite_links(section(readme, names['corrections']), lang)}",
        "course-map": course_map_page(lang),
    }


def instructors_page(lang):
    guide = GUIDES[lang].read_text(encoding="utf-8")
    guide = guide[guide.index("\n# "):].lstrip()  # without the language link above the title
    return rewrite_links(guide, lang)


def _lab_picture(lang):
    """The PNG that notebook 05's lab cell stores (the lab as drawn when the notebook was executed)."""
    import nbformat

    nb = nbformat.read(SOURCES[lang] / f"{LAB_NOTEBOOK}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and LAB_CALL.search(cell.source):
            for output in cell.get("outputs", []):
                if "image/png" in output.get("data", {}):
                    return base64.b64decode(output["data"]["image/png"])
    raise ValueError(f"{LAB_NOTEBOOK}.ipynb ({lang}) stores no picture of the lab: run `make execute "
                     f"NB=notebooks/{LAB_NOTEBOOK}.ipynb`")


def start_lab_export(dests):
    """Start the lab's static export into ``dests`` ({lang: folder}; one process: MindSpore computes the sweeps
    once for both languages), or return None if the course has no export."""
    if not LAB_EXPORT.is_file():
        return None
    langs = list(dests)
    log = open(Path(dests[langs[0]]).parents[3] / "lab-export.log", "w", encoding="utf-8")  # work/, not the site
    proc = subprocess.Popen([sys.executable, "-m", "course_utils.lab.export", *map(str, dests.values()),
                             "--lang", *langs], cwd=ROOT, env={**os.environ, "GLOG_v": "3"},
                            stdout=log, stderr=subprocess.STDOUT)
    return proc, log, dests


def finish_lab_export(started):
    proc, log, dests = started
    proc.wait()
    log.close()
    missing = [str(Path(d) / "index.html") for d in dests.values() if not (Path(d) / "index.html").is_file()]
    if proc.returncode or missing:
        raise SystemExit(f"the lab's export failed (exit code {proc.returncode}, missing: {', '.join(missing)}):\n"
                         + Path(log.name).read_text(encoding="utf-8")[-4000:])


def lab_embed():
    """The tags that put the exported lab (extra/lab/ of the staged source, so lab/ of the site) on its page."""
    from course_utils.lab.export import embed_html

    return f'<link rel="stylesheet" href="lab/lab.css">\n{embed_html("./lab/")}'


def lab_page(lang, src, live):
    text = TEXT[lang]
    parts = [f"# {text['lab']}", "", text["lab_intro"], ""]
    if live:
        parts += [lab_embed(), "", f"```{{container}} course-lab-note\n{text['lab_live']}\n```"]
    else:
        (src / "lab.png").write_bytes(_lab_picture(lang))
        parts += [f"![{text['lab_alt']}](lab.png)", "", f"```{{container}} course-lab-note\n{text['lab_static']}\n```"]
    return "\n".join(parts) + "\n"


# ---- the lessons -------------------------------------------------------------------------------------------
def _lessons(lang):
    lessons = sorted(SOURCES[lang].glob("[0-9][0-9]_*.ipynb"))
    if not lessons:
        raise FileNotFoundError(f"no notebooks in {SOURCES[lang]} (the Chinese edition: `make zh`)")
    return lessons


def _title(path):
    import nbformat

    return nbformat.read(path, as_version=4).cells[0].source.splitlines()[0].lstrip("# ").strip()


def _markdown(source):
    import nbformat

    return nbformat.v4.new_markdown_cell(source)


def _add_tag(cell, tag):
    tags = cell.metadata.setdefault("tags", [])
    if tag not in tags:
        tags.append(tag)


def web_notebook(nb, lang, stem):
    """The notebook as the page shows it (a copy): download buttons under the title; exercises without their
    verdict; predictions as their question; no hints; a pointer to the lab's page after the lab."""
    import copy

    text = TEXT[lang]
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    cells = []
    for index, cell in enumerate(nb.cells):
        tags = set(cell.metadata.get("tags", []))
        if "solution" in tags:
            continue
        cells.append(cell)
        if index == 0:
            cells.append(_markdown(
                '<div class="course-downloads">\n'
                f'<a class="btn btn-sm course-download" href="downloads/{stem}.ipynb" download>{text["download"]}</a>\n'
                f'<a class="btn btn-sm course-download-student" href="downloads/student/{stem}.ipynb" download>'
                f'{text["student"]}</a>\n'
                f'<span class="course-note">{text["download_note"]}</span>\n</div>'))
        if cell.cell_type != "code":
            continue
        if "exercise" in tags:
            _add_tag(cell, "remove-output")
        elif "prediction" in tags:
            _add_tag(cell, "remove-input")
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream":
                    text_out = "".join(output["text"]) if isinstance(output["text"], list) else output["text"]
                    output["text"] = "".join(line for line in text_out.splitlines(keepends=True)
                                             if not NOT_ATTEMPTED.match(line))
        elif HINT_CALL.search(cell.source):
            _add_tag(cell, "remove-output")
            cells.append(_markdown(f'<p class="course-hint-note">{text["hint_note"]}</p>'))
        elif stem == LAB_NOTEBOOK and LAB_CALL.search(cell.source):
            cells.append(_markdown(text["lab_link"]))
    nb.cells = cells
    return nb


def stage(lang, src, live_lab=False):
    """Write the Sphinx source folder of one language (``live_lab``: the lab's export is in src/extra/lab)."""
    import nbformat
    from make_editions import student_notebook

    downloads = src / "extra" / "downloads"
    (downloads / "student").mkdir(parents=True)
    for path in _lessons(lang):
        nb = nbformat.read(path, as_version=4)
        nbformat.write(web_notebook(nb, lang, path.stem), src / path.name)
        shutil.copyfile(path, downloads / path.name)
        nbformat.write(student_notebook(nb), downloads / "student" / path.name)
    pages = {**readme_pages(lang), "instructors": instructors_page(lang), "lab": lab_page(lang, src, live_lab)}
    for name, markdown in pages.items():
        (src / f"{name}.md").write_text(markdown, encoding="utf-8")


# ---- building --------------------------------------------------------------------------------------------------
ROOT_INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{en} · {zh}</title>
<link rel="icon" href="en/_static/favicon.svg">
<style>
body {{ font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5; }}
a {{ display: block; font-size: 1.4rem; margin: 1rem 0; }}
</style>
</head>
<body>
<h1>{en}</h1>
<p lang="zh-CN">{zh}</p>
<a href="en/index.html" hreflang="en">English</a>
<a href="zh/index.html" hreflang="zh-CN" lang="zh-CN">中文</a>
</body>
</html>
"""


def _sphinx(lang, work):
    """Start sphinx-build for one language; returns the process (its output goes to work/sphinx.log)."""
    env = {**os.environ, "COURSE_SITE_LANG": lang, "COURSE_SITE_EXTRA": str(work / "src" / "extra"),
           "SOURCE_DATE_EPOCH": "0", "PYTHONHASHSEED": "0"}
    log = open(work / "sphinx.log", "w", encoding="utf-8")
    argv = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-E", "-c", str(SITE),
            "-d", str(work / "doctrees"), str(work / "src"), str(work / "html")]
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log


def build(langs=LANGS, out=OUT, work=WORK):
    """Stage and build each language, then move its pages into out/<lang>; returns {lang: number of pages}."""
    out, started = Path(out), time.monotonic()
    sources = {lang: Path(work) / lang / "src" for lang in langs}
    for lang in langs:
        if (Path(work) / lang).exists():
            shutil.rmtree(Path(work) / lang)
        (sources[lang] / "extra").mkdir(parents=True)
    # The lab's export (MindSpore computes its sweeps: the longest step) runs while the pages are staged.
    export = start_lab_export({lang: sources[lang] / "extra" / "lab" for lang in langs})
    for lang in langs:
        stage(lang, sources[lang], live_lab=export is not None)
    if export:
        finish_lab_export(export)
    running = {lang: _sphinx(lang, Path(work) / lang) for lang in langs}  # side by side (2 cores)
    failed = []
    for lang, (proc, log) in running.items():
        proc.wait()
        log.close()
        if proc.returncode:
            failed.append(f"--- {lang} (sphinx-build exited with {proc.returncode}):\n"
                          + (Path(work) / lang / "sphinx.log").read_text(encoding="utf-8")[-6000:])
    if failed:
        raise SystemExit("the site did not build:\n" + "\n".join(failed))
    counts = {}
    out.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        target = out / lang
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(Path(work) / lang / "html"), target)
        # Sphinx's rebuild bookkeeping, and the themes' Jinja macros that they ship inside their static folders
        for leftover in [target / ".buildinfo", target / ".buildinfo.bak", *target.glob("_static/*macros.html")]:
            leftover.unlink(missing_ok=True)
        counts[lang] = len(list(target.glob("*.html")))
    (out / "index.html").write_text(ROOT_INDEX.format(en=TEXT["en"]["root_title"], zh=TEXT["zh"]["root_title"]),
                                    encoding="utf-8")
    pages = ", ".join(f"{lang}: {n} pages" for lang, n in counts.items())
    print(f"site built in {time.monotonic() - started:.0f} s ({pages}) in {out}; open {out / 'index.html'} or "
          f"serve it: make site-serve")
    return counts


# ---- serving ---------------------------------------------------------------------------------------------------
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def serve(port=8000, directory=OUT, quiet=False):
    """Serve the built site on 127.0.0.1 until interrupted."""
    directory = Path(directory)
    if not (directory / "index.html").is_file():
        raise SystemExit(f"no site in {directory}: build it first with `make site` (python course.py site)")
    handler = partial(_QuietHandler if quiet else http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as error:
        raise SystemExit(f"cannot serve on 127.0.0.1:{port} ({error.strerror}): choose another port, "
                         f"e.g. `make site-serve SITE_PORT={port + 1}`") from None
    print(f"the course website: http://127.0.0.1:{server.server_address[1]}/ (Ctrl+C stops it)", flush=True)
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def _port(text):
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"--port must be a port number from 1 to 65535, not {text!r}")
    return int(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the website into build/site/")
    b.add_argument("--lang", choices=LANGS, action="append", help="one language only (default: both)")
    b.add_argument("--out", type=Path, default=OUT)
    s = sub.add_parser("serve", help="serve build/site/ on 127.0.0.1")
    s.add_argument("--port", type=_port, default=8000)
    s.add_argument("--dir", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "build":
        build(tuple(args.lang or LANGS), args.out)
    else:
        serve(args.port, args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
