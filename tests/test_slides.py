"""tools/slides.py: the decks of two notebooks (notebook 04 in English, 01 in Chinese) hold the title, the core
sections, the lesson code, the figures embedded and the Key points, and nothing of the Going further sections,
the exercises, the claim checks or the setup cell; they request nothing from the internet; bad input is
refused in one line with exit code 2. One test opens a deck from file:// in headless Chromium (marked
``browser``; skipped without Chromium unless COURSE_REQUIRE_BROWSER=1): reveal.js starts, the next slide
comes, and every request stays on the disk."""

import hashlib
import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
import slides  # tools/, on the path through pyproject's pythonpath

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
REQUIRE = os.environ.get("COURSE_REQUIRE_BROWSER") == "1"
EN, ZH = "04_data_and_minibatches", "01_minimal_net"


class Slides(HTMLParser):
    """The deck's slides: for each top-level <section>, its headings, text, code, images and notes."""

    def __init__(self):
        super().__init__()
        self.slides, self.depth, self.stack, self.heading = [], 0, [], None
        self.resources = []  # src= and <link href=>: what the browser loads

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img") and attrs.get("src"):
            self.resources.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.resources.append(attrs["href"])
        if tag == "section":
            self.depth += 1
            if self.depth == 1:
                self.slides.append({"headings": [], "text": "", "code": "", "images": [], "notes": "",
                                    "sub_slides": 0, "items": 0})
            else:
                self.slides[-1]["sub_slides"] += 1
        if not self.slides or not self.depth:
            return
        if tag == "img":
            self.slides[-1]["images"].append(attrs.get("src", ""))
        if tag == "li":
            self.slides[-1]["items"] += 1
        if tag in ("h1", "h2", "h3"):
            self.heading = ""
        css = attrs.get("class", "")
        self.stack.append((tag, "highlight" in css, tag == "aside" and "notes" in css))

    def handle_endtag(self, tag):
        if tag == "section":
            self.depth -= 1
            return
        if tag in ("h1", "h2", "h3") and self.heading is not None:
            self.slides[-1]["headings"].append(self.heading.replace("¶", "").strip())
            self.heading = None
        if self.stack and tag not in ("img", "br", "hr", "input", "meta", "link"):
            self.stack.pop()

    def handle_data(self, data):
        if not self.slides or not self.depth:
            return
        slide = self.slides[-1]
        if any(notes for _, _, notes in self.stack):
            slide["notes"] += data
        elif any(code for _, code, _ in self.stack):
            slide["code"] += data
        else:
            slide["text"] += data
            if self.heading is not None:
                self.heading += data


def _parse(path):
    parser = Slides()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _stored_images(nb):
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    return {"data:image/png;base64," + o["data"]["image/png"].replace("\n", "") for o in outputs
            if "image/png" in o.get("data", {})}


def _fingerprint():
    return {p: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in [ROOT / "notebooks" / f"{EN}.ipynb", ROOT / "zh" / "notebooks" / f"{ZH}.ipynb"]}


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    before = _fingerprint()
    out = tmp_path_factory.mktemp("slides")
    built = {"en": slides.build("en", out / "en", ["04"])[0], "zh": slides.build("zh", out / "zh", ["1"])[0]}
    assert _fingerprint() == before, "building the slides changed a notebook on disk"
    return built


def test_the_english_deck_has_title_sections_code_figures_and_key_points(decks):
    nb = nbformat.read(ROOT / "notebooks" / f"{EN}.ipynb", as_version=4)
    deck = _parse(decks["en"])
    first, last = deck.slides[0], deck.slides[-1]
    assert first["headings"][0].startswith("04 · Datasets, mini-batches and epochs"), first["headings"]
    assert "Previous:" not in first["text"], "the title slide keeps the previous/next line"
    headings = [h for s in deck.slides for h in s["headings"]]
    assert "1. A dataset from numpy arrays (7 min)" in headings, headings
    assert not [h for h in headings if h.startswith("Going further")], headings
    assert last["headings"] == ["Key points"], last["headings"]
    key_points = next(c.source for c in nb.cells if c.source.startswith("## Key points"))
    assert last["items"] == key_points.count("\n- "), "the Key points slide lost bullets"
    assert "Next:" not in last["text"], "the Key points slide keeps the previous/next line"
    code = " ".join(s["code"] for s in deck.slides)
    assert "ds.GeneratorDataset(" in code, "the lesson code is missing"
    for absent in ('os.environ["GLOG_v"]', "claim(", ".check(answer)"):
        assert absent not in code, f"{absent} is lesson code on the slides"
    images = [src for s in deck.slides for src in s["images"]]
    assert images and set(images) <= _stored_images(nb), "a figure is not the notebook's stored image, embedded"
    assert sum(s["sub_slides"] for s in deck.slides) > len(deck.slides), "no sub-slides"
    assert any(s["notes"].strip() for s in deck.slides), "no speaker notes"


def test_the_chinese_deck_shows_the_chinese_edition(decks):
    nb = nbformat.read(ROOT / "zh" / "notebooks" / f"{ZH}.ipynb", as_version=4)
    text = decks["zh"].read_text(encoding="utf-8")
    assert '<html lang="zh">' in text
    deck = _parse(decks["zh"])
    assert deck.slides[0]["headings"][0] == nb.cells[0].source.splitlines()[0].lstrip("# ")
    assert deck.slides[-1]["headings"] == ["要点"], deck.slides[-1]["headings"]
    zh_headings = [c.source.splitlines()[0].lstrip("# ") for c in nb.cells[1:]
                   if c.cell_type == "markdown" and c.source.startswith("## ")]
    assert [h for s in deck.slides[1:] for h in s["headings"]] == zh_headings
    images = [src for s in deck.slides for src in s["images"]]
    assert images and set(images) == _stored_images(nb)
    assert "Tensor(" in " ".join(s["code"] for s in deck.slides)
    index = (decks["zh"].parent / "index.html").read_text(encoding="utf-8")
    assert f'href="{ZH}.html"' in index and html.escape(deck.slides[0]["headings"][0]) in index


def test_a_deck_loads_only_the_bundled_reveal_js(decks):
    for deck_path in decks.values():
        resources = _parse(deck_path).resources
        assert any(r.endswith("dist/reveal.js") for r in resources), resources
        for src in resources:
            assert not re.match(r"(https?:)?//", src), f"{deck_path.name} loads {src}"
            if not src.startswith("data:"):
                assert (deck_path.parent / src).is_file(), f"{deck_path.name} loads {src}, which was not copied"
        assert not re.search(r"@import\s+url\(\s*['\"]?(https?:)?//", deck_path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("args, says", [
    (["42"], "no notebook '42'"), (["three"], "no notebook 'three'"), (["--lang", "fr"], "--lang 'fr'"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_input_is_refused_in_one_line(args, says, capsys):
    assert slides.main(args) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_an_out_folder_that_cannot_be_written_is_refused(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "slides.py"), "--out", str(blocker / "slides"), "04"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run
    assert run.stderr.startswith("slides.py: cannot write into") and "--out" in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


@pytest.mark.browser
def test_a_deck_runs_from_file_in_chromium_with_no_network(decks):
    if not (sys.platform.startswith("linux") and os.access(CHROMIUM, os.X_OK)):
        _unavailable(f"no Chromium at {CHROMIUM} (Debian: apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing (pip install -r requirements-dev.txt)")
    with sync_playwright() as manager:
        browser = manager.chromium.launch(executable_path=CHROMIUM, timeout=120_000, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-sync"])
        try:
            page = browser.new_page()
            requests, errors = [], []
            page.on("request", lambda request: requests.append(request.url))
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda message: message.type == "error" and errors.append(message.text))
            page.goto(decks["en"].as_uri(), timeout=60_000)
            page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=60_000)
            total = page.evaluate("() => Reveal.getTotalSlides()")
            assert total == page.locator(".reveal .slides section:not(.stack)").count() > 10, total
            assert page.evaluate("() => Reveal.getIndices()")["h"] == 0
            page.keyboard.press("ArrowRight")
            page.wait_for_function("() => Reveal.getIndices().h === 1", timeout=10_000)
            page.keyboard.press("ArrowDown")
            page.wait_for_function("() => Reveal.getIndices().v === 1", timeout=10_000)
        finally:
            browser.close()
    off_disk = [url for url in requests if not url.startswith(("file://", "data:"))]
    assert not off_disk, f"the deck requested {off_disk}"
    assert any(url.endswith("reveal.js/dist/reveal.js") for url in requests), requests
    assert not errors, errors


def _unavailable(reason):
    if REQUIRE:
        pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)
