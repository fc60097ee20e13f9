"""The course website (`make site`, tools/site.py) as a reader meets it, in headless Chromium.

The site is built once for the module, from the committed notebooks, into a temporary folder, and served on
127.0.0.1 by a server in this process. Then:

- every page of both languages loads with no console error, no failed request and no request that leaves
  127.0.0.1, and every image on it has loaded;
- a link checker over the built files: every internal link and anchor resolves, no page or style sheet loads
  anything from outside (external links are listed, not fetched);
- search finds an English term on the English site and a Chinese term on the Chinese site;
- the language switch of every page names the same page in the other language, and clicking it lands there;
- a lesson shows its download buttons (the notebook as committed, the student edition), its exercises as
  exercises without their verdict, predictions as questions, no hint; math and code are rendered;
- the lab page: the exported lab moves and redraws with no kernel (or, without the export, its picture);
- pages are readable 390 px wide (nothing wider than the screen).

Marked ``browser`` (the build and Chromium take a minute or two: not in `make test-quick`); the tests of the
command line at the end are not. Chromium is Debian's, as in tests/test_browser.py; without it (or
playwright) the browser tests are skipped, unless COURSE_REQUIRE_BROWSER=1 (CI).
"""

import html.parser
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")  # as tests/test_browser.py
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
REQUIRE = os.environ.get("COURSE_REQUIRE_BROWSER") == "1"
LANGS = ("en", "zh")
LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PAGES = ["index", "course-map", "install", "lab", "glossary", "corrections", "instructors"]


def _load_site_module():
    # tools/site.py would shadow the standard library's `site` as a plain import: load it under another name.
    spec = importlib.util.spec_from_file_location("course_site", ROOT / "tools" / "site.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "tools"))  # its course_map and make_editions imports
    spec.loader.exec_module(module)
    return module


course_site = _load_site_module()


def _unavailable(reason):
    if REQUIRE:
        pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


# ---- fixtures -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The site, built once into a temporary folder: (its folder, build seconds). COURSE_SITE_BUILT=build/site
    checks a site already built instead (the edit loop of the site's own code; never in CI)."""
    if os.environ.get("COURSE_SITE_BUILT"):
        return Path(os.environ["COURSE_SITE_BUILT"]).resolve(), 0.0
    tmp = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    counts = course_site.build(out=tmp / "site", work=tmp / "work")
    seconds = time.monotonic() - started
    print(f"\nsite build for the tests: {seconds:.0f} s, pages {counts}")
    return tmp / "site", seconds


@pytest.fixture(scope="module")
def server(built):
    """An HTTP server on 127.0.0.1 over the built site, in a thread of this process."""
    handler = partial(course_site._QuietHandler, directory=str(built[0]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no Chromium at {CHROMIUM} (Debian: apt-get install -y chromium, or `make browser`)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing (pip install -r requirements-dev.txt)")
    manager = sync_playwright().start()
    try:
        chromium = manager.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=120_000)
        try:
            yield chromium
        finally:
            chromium.close()
    finally:
        manager.stop()


class Watch:
    """What a page did wrong: console errors, uncaught exceptions, failed or outside requests."""

    def __init__(self, page, base):
        self.problems = []
        page.on("console", lambda msg: msg.type == "error" and self.problems.append(f"console: {msg.text}"))
        page.on("pageerror", lambda exc: self.problems.append(f"uncaught: {exc}"))
        page.on("request", lambda req: None if req.url.startswith((base, "data:", "blob:", "about:"))
                else self.problems.append(f"request leaving 127.0.0.1: {req.url}"))
        # net::ERR_ABORTED is a request the page itself dropped by leaving (a click while the favicon loads);
        # a file that is missing answers 404 (below), an unreachable one fails otherwise
        page.on("requestfailed", lambda req: None if "ERR_ABORTED" in (req.failure or "")
                else self.problems.append(f"failed: {req.url} ({req.failure})"))
        page.on("response", lambda res: res.status >= 400 and self.problems.append(f"HTTP {res.status}: {res.url}"))


@pytest.fixture
def page_at(browser, server):
    """page_at(width): a fresh page of that width (height 800) and its Watch."""
    contexts = []

    def make(width=1280):
        context = browser.new_context(viewport={"width": width, "height": 800})
        context.set_default_timeout(60_000)
        contexts.append(context)
        page = context.new_page()
        return page, Watch(page, server)
    yield make
    for context in contexts:
        context.close()


# ---- reading the built files ----------------------------------------------------------------------------------
class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.ids, self.assets = [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for name in ("href", "src"):
            if attrs.get(name):
                self.refs.append((tag, attrs[name]))
                if tag in ("script", "img", "iframe", "source") or (tag == "link" and name == "href"):
                    self.assets.append(attrs[name])


def _parse(path):
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _html_pages(site):
    return sorted(site.rglob("*.html"))


def _pages_of(site, lang):
    return sorted(p for p in (site / lang).glob("*.html"))


# ---- the build ------------------------------------------------------------------------------------------------
@pytest.mark.browser
def test_the_site_has_every_page_in_both_languages(built):
    site, seconds = built
    for lang in LANGS:
        names = {p.stem for p in _pages_of(site, lang)}
        missing = set(LESSONS + PAGES + ["search", "genindex"]) - names
        assert not missing, f"{lang}: pages missing: {sorted(missing)}"
        for lesson in LESSONS:
            assert (site / lang / "downloads" / f"{lesson}.ipynb").is_file()
            assert (site / lang / "downloads" / "student" / f"{lesson}.ipynb").is_file()
    assert (site / "index.html").is_file()
    assert not list(site.rglob(".buildinfo")), "Sphinx's rebuild bookkeeping was left in the site"


@pytest.mark.browser
def test_every_internal_link_and_anchor_resolves_and_nothing_loads_from_outside(built):
    site = built[0]
    parsed = {path: _parse(path) for path in _html_pages(site)}
    broken, outside, external = [], [], set()
    for path, links in parsed.items():
        for tag, ref in links.refs:
            parts = urlsplit(ref)
            if parts.scheme in ("http", "https", "mailto"):
                external.add(ref)
                if ref in links.assets:
                    outside.append(f"{path.relative_to(site)}: <{tag}> loads {ref}")
                continue
            if parts.scheme in ("data", "javascript") or ref.startswith("#") and not parts.fragment:
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or site.resolve() not in target.parents:
                broken.append(f"{path.relative_to(site)}: {ref} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(site)}: {ref} (no id {parts.fragment!r} there)")
    for css in site.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?(https?:[^)'\"]+)", css.read_text(encoding="utf-8", errors="replace")):
            outside.append(f"{css.relative_to(site)}: url({url})")
    print(f"\n{len(external)} external links (listed, not fetched):\n  " + "\n  ".join(sorted(external)))
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:40])
    assert not outside, "assets from outside the site:\n" + "\n".join(outside)
    assert sum(len(links.refs) for links in parsed.values()) > 2000  # the checker did read the pages' links


@pytest.mark.browser
def test_a_lesson_page_has_its_downloads_exercises_predictions_and_no_hint(built):
    site = built[0]
    for lang in LANGS:
        page = (site / lang / "03_train_one_step.html").read_text(encoding="utf-8")
        assert 'href="downloads/03_train_one_step.ipynb"' in page
        assert 'href="downloads/student/03_train_one_step.ipynb"' in page
        committed = (ROOT / course_site.SOURCES[lang].relative_to(ROOT) / "03_train_one_step.ipynb").read_bytes()
        assert (site / lang / "downloads" / "03_train_one_step.ipynb").read_bytes() == committed
        student = nbformat.read(site / lang / "downloads" / "student" / "03_train_one_step.ipynb", as_version=4)
        assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
        assert 'os.environ["COURSE_EDITION"] = "student"' in "".join(c.source for c in student.cells)
        tags = [set(c.metadata.get("tags", [])) for c in nbformat.read(ROOT / course_site.SOURCES[lang].relative_to(
            ROOT) / "03_train_one_step.ipynb", as_version=4).cells]
        exercises = re.findall(r'<div class="cell tag_exercise[^"]*"', page)
        assert len(exercises) == sum("exercise" in t for t in tags) > 0, exercises  # each with its scaffold
        assert ".check(answer)" in re.sub(r"<[^>]+>", "", page), "the exercises' scaffolds are not on the page"
        assert "not attempted" not in page and "尚未作答" not in page, "an exercise's verdict is on the page"
        predictions = re.findall(r'<div class="cell tag_prediction[^"]*"', page)
        assert len(predictions) == sum("prediction" in t for t in tags) > 0 and "(a)" in page and "(b)" in page
        assert ".ask()" not in page, "a prediction shows its code, not its question"
    setup = (site / "en" / "00_setup.html").read_text(encoding="utf-8")
    assert "nb00.ones.hint()" in setup and "Hint 1/2" not in setup, "the hint's text is printed on the page"
    assert "course-hint-note" in setup


@pytest.mark.browser
def test_the_course_map_page_has_every_lesson_with_minutes_and_prerequisites(built):
    import course_map

    site = built[0]
    rows = course_map.read_map(ROOT / "notebooks")
    needs = course_map.prerequisites(ROOT / "notebooks")
    for lang in LANGS:
        text = (site / lang / "course-map.html").read_text(encoding="utf-8")
        body = re.sub(r"<[^>]+>", " ", text)
        for name, _, teach, ex in rows:
            row = re.search(rf'<tr[^>]*>\s*<td[^>]*><p>{name[:2]}</p></td>(.*?)</tr>', text, re.S)
            assert row, f"{lang}: no row for lesson {name[:2]}"
            assert re.search(rf"\b{teach}\s\+\s{ex}\b", row.group(1)), (lang, name, teach, ex)  # \s: no-break spaces
            assert f'href="{Path(name).stem}.html"' in row.group(1)
            for before in needs[name[:2]]:
                assert re.search(rf'href="{before}_[\w-]+\.html"', row.group(1)), (lang, name, before)
        total = f"{sum(r[2] for r in rows)}"
        assert total in body


# ---- in the browser -------------------------------------------------------------------------------------------
@pytest.mark.browser
def test_every_page_of_both_languages_renders_with_no_error_and_no_outside_request(built, page_at, server):
    site = built[0]
    page, watch = page_at(1280)
    problems, images = [], 0
    for path in [site / "index.html"] + [p for lang in LANGS for p in _pages_of(site, lang)]:
        rel = path.relative_to(site).as_posix()
        watch.problems.clear()
        page.goto(f"{server}/{rel}", wait_until="load")  # images, scripts, styles: all in by the load event
        if path.name == "lab.html":  # the lab fetches its manifest and sweeps after load
            page.wait_for_load_state("networkidle")
        else:  # MathJax loads its parts after load (networkidle's 0.5 s of quiet per page was 26 s of the suite)
            page.evaluate("async () => { if (window.MathJax?.startup?.promise) await MathJax.startup.promise; }")
        broken_images = page.evaluate("""() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))
                                             .map(i => i.getAttribute('src'))""")
        images += page.evaluate("document.images.length")
        problems += [f"{rel}: {p}" for p in watch.problems] + [f"{rel}: image not loaded: {s}" for s in broken_images]
    assert not problems, "\n".join(problems)
    assert images > 60, f"only {images} images on the whole site"


@pytest.mark.browser
@pytest.mark.parametrize("lang, term, expected", [("en", "learning rate", "05_learning_rate_lab.html"),
                                                  ("zh", "学习率", "05_learning_rate_lab.html"),
                                                  ("zh", "梯度裁剪", "07_custom_train_steps.html")])
def test_search_finds_a_term_in_each_language(page_at, server, lang, term, expected):
    page, watch = page_at(1280)
    page.goto(f"{server}/{lang}/search.html?q={term}")
    page.wait_for_function("document.querySelectorAll('#search-results ul.search li').length > 0", timeout=60_000)
    found = page.evaluate("[...document.querySelectorAll('#search-results ul.search li a')].map(a => a.href)")
    assert any(href.split("?")[0].endswith(f"/{lang}/{expected}") for href in found), found
    assert all(f"/{lang}/" in href for href in found), f"results from the other language: {found}"
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_the_language_switch_of_every_page_names_the_same_page_in_the_other_language(built, page_at, server):
    site = built[0]
    for lang, other in (("en", "zh"), ("zh", "en")):
        for path in _pages_of(site, lang):
            switch = re.search(r'<a class="btn btn-sm course-lang-switch" href="([^"]+)"',
                               path.read_text(encoding="utf-8"))
            assert switch and switch.group(1) == f"../{other}/{path.name}", (path, switch and switch.group(1))
    page, watch = page_at(390)
    for start, lands, title in (("en/03_train_one_step.html", "zh/03_train_one_step.html", "03 · "),
                                ("zh/course-map.html", "en/course-map.html", "Course map")):
        page.goto(f"{server}/{start}")
        page.click("a.course-lang-switch")  # on a phone-width page too: the switch is in the header, not the menu
        page.wait_for_url(f"{server}/{lands}")
        assert page.inner_text("h1").startswith(title)
        assert page.evaluate("document.documentElement.lang") == ("zh-CN" if lands.startswith("zh") else "en")
    zh_title = nbformat.read(ROOT / "zh" / "notebooks" / "03_train_one_step.ipynb", as_version=4).cells[0].source
    page.goto(f"{server}/en/03_train_one_step.html")
    page.click("a.course-lang-switch")
    page.wait_for_url(f"{server}/zh/03_train_one_step.html")
    assert page.inner_text("h1").replace("#", "").strip() == zh_title.splitlines()[0].lstrip("# ").strip()
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_math_and_code_are_rendered_and_previous_next_link_the_lessons(page_at, server):
    page, watch = page_at(1280)
    page.goto(f"{server}/en/07_custom_train_steps.html")
    page.wait_for_function("document.querySelectorAll('mjx-container svg').length > 5", timeout=60_000)
    assert page.evaluate("document.querySelectorAll('div.highlight pre span').length") > 100  # highlighted code
    assert page.get_attribute("a.left-prev", "href") == "06_lr_schedules.html"
    assert page.get_attribute("a.right-next", "href") == "08_debugging.html"
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_the_lab_page_moves_and_redraws_with_no_kernel(built, page_at, server):
    site = built[0]
    page, watch = page_at(1280)
    if not (site / "en" / "lab" / "index.html").is_file():  # no course_utils.lab.export: the lab's picture
        page.goto(f"{server}/en/lab.html")
        assert page.evaluate("document.querySelector('.bd-article img').naturalWidth") > 300
        assert "make lab" in page.inner_text(".course-lab-note")
        return
    for lang, label in (("en", "learning rate"), ("zh", "学习率")):
        page.goto(f"{server}/{lang}/lab.html")
        page.wait_for_function("Number(document.querySelector('.lr-lab canvas')?.dataset.drawn) > 0", timeout=60_000)
        assert label in page.inner_text(".lr-lab")
        before = page.evaluate("[document.querySelector('.lr-lab canvas').dataset.drawn, "
                               "document.querySelector('.lr-lab-status').innerText]")
        slider = page.locator("input.lr-lab-slider")
        slider.focus()
        for _ in range(40):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(f"Number(document.querySelector('.lr-lab canvas').dataset.drawn) > {before[0]}")
        page.wait_for_function("(s) => document.querySelector('.lr-lab-status').innerText !== s", arg=before[1])
    assert not watch.problems, watch.problems


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_pages_are_readable_at_390_px(page_at, server, lang):
    page, watch = page_at(390)
    wide = []
    for name in ["index", "03_train_one_step", "05_learning_rate_lab", "course-map", "lab", "install", "instructors"]:
        page.goto(f"{server}/{lang}/{name}.html")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide.append(f"{name}: {width} px")
        assert page.is_visible("a.course-lang-switch")
    assert not wide, f"{lang} pages wider than a 390 px screen: {wide}"
    assert not watch.problems, watch.problems


# ---- the command line (no build, no browser) ------------------------------------------------------------------
def test_make_and_course_py_build_and_serve_the_site():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target, command in (("site", "site"), ("site-serve", "site-serve --port $(SITE_PORT)")):
        recipe = re.search(rf"^{re.escape(target)}:.*\n\t(.*)$", makefile, re.M)
        assert recipe and recipe.group(1) == f"$(COURSE) {command}", (target, recipe and recipe.group(1))
    sys.path.insert(0, str(ROOT))
    import course

    calls = []
    course_run, course_ensure = course.run, course.ensure_venv
    try:
        course.run, course.ensure_venv = calls.append, lambda dev=False: Path("/venv/python")
        course.main(["site"])
        course.main(["site-serve", "--port", "8123"])
    finally:
        course.run, course.ensure_venv = course_run, course_ensure
    assert calls[0] == [Path("/venv/python"), "tools/site.py", "build"]
    assert calls[-1] == [Path("/venv/python"), "tools/site.py", "serve", "--port", "8123"]


def test_serving_a_site_that_is_not_built_says_what_to_do(tmp_path):
    with pytest.raises(SystemExit, match=r"no site in .*: build it first with `make site`"):
        course_site.serve(8000, tmp_path)
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "site.py"), "serve", "--port", "http"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--port must be a port number from 1 to 65535, not 'http'" in result.stderr


def test_a_readme_without_a_section_the_site_needs_is_named():
    with pytest.raises(ValueError, match=r"no '## Course map' section found"):
        course_site.section("# Title\n\n## Other\ntext\n", "Course map")


def test_links_between_repository_files_become_links_between_pages():
    text = ("[03](notebooks/03_train_one_step.ipynb) [guide](INSTRUCTORS.md#schedules) [zh](README.zh-CN.md) "
            "[map](README.md#course-map) [file](capstone/train.py) [web](https://example.org/x) [top](#key-points)")
    assert course_site.rewrite_links(text, "en") == (
        "[03](03_train_one_step.ipynb) [guide](instructors.md#schedules) "
        '<a href="../zh/index.html">zh</a> [map](course-map.md) file [web](https://example.org/x) [top](#key-points)')
    assert course_site.rewrite_links("[英文版](INSTRUCTORS.md#operating-systems) [课](zh/notebooks/05_x.ipynb)",
                                     "zh") == ('<a href="../en/instructors.html#operating-systems">英文版</a> '
                                               "[课](05_x.ipynb)")


def test_a_web_lesson_hides_verdicts_and_hints_but_keeps_the_task():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 03 · Title"),
                nbformat.v4.new_code_cell("answer = ...\nnb03.x.check(answer)", metadata={"tags": ["exercise"]},
                                          outputs=[nbformat.v4.new_output("stream", text="[ ] not attempted\n")]),
                nbformat.v4.new_code_cell("nb03.p.ask()", metadata={"tags": ["prediction"]},
                                          outputs=[nbformat.v4.new_output("stream", text="Q?\n  (a) yes\n[ ] no\n")]),
                nbformat.v4.new_code_cell("nb03.x.hint()", outputs=[nbformat.v4.new_output("stream", text="Hint 1\n")]),
                nbformat.v4.new_code_cell("print(1)", metadata={"tags": ["solution"]})]
    web = course_site.web_notebook(nb, "en", "03_title")
    kinds = [(c.cell_type, c.metadata.get("tags", [])) for c in web.cells]
    assert kinds == [("markdown", []), ("markdown", []), ("code", ["exercise", "remove-output"]),
                     ("code", ["prediction", "remove-input"]), ("code", ["remove-output"]), ("markdown", [])]
    assert "downloads/student/03_title.ipynb" in web.cells[1].source
    assert web.cells[3].outputs[0]["text"] == "Q?\n  (a) yes\n"
    assert "course-hint-note" in web.cells[5].source
    assert nb.cells[2].outputs[0]["text"] == "Q?\n  (a) yes\n[ ] no\n"  # the notebook itself is not changed
