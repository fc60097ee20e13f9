"""The learning-rate lab drawn in the browser (course_utils/lab/web/lab.js and host.js), in headless Chromium.

The page is the kernel-free one of ``course_utils.lab.export`` (the website's and the classroom's), built once
here from NumpyTrainer sweeps (the page's code, not MindSpore's, is under test; tests/test_lab.py checks the
sweeps against MindSpore's optimizers and the payload against the kernel's lab). Each panel and control is
driven as a learner would, and what the page says is compared with what ``LearningRateLab`` says in a kernel
for the same actions. A drag sends the host nothing; a release sends one action.
"""

import http.server
import os
import re
import threading
from functools import partial

import pytest

from course_utils.data import make_linear_data
from course_utils.lab import LR_GRID, LearningRateLab, NumpyTrainer
from course_utils.lab.export import export

pytestmark = pytest.mark.browser
CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
CJK = re.compile(r"[\u4e00-\u9fff]")
X, Y = make_linear_data()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder):
    handler = partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The exported page in English and in Chinese, served on 127.0.0.1."""
    folders = {}
    for lang in ("en", "zh"):
        folders[lang] = tmp_path_factory.mktemp(f"lab-{lang}")
        old = os.environ.get("COURSE_LANG")
        os.environ["COURSE_LANG"] = lang
        try:
            export(folders[lang], steps=[50, 100], betas=[0.5, 0.9], trainer=NumpyTrainer(X, Y))
        finally:
            os.environ.pop("COURSE_LANG") if old is None else os.environ.__setitem__("COURSE_LANG", old)
    servers = {lang: _serve(folder) for lang, folder in folders.items()}
    yield {lang: f"http://127.0.0.1:{server.server_port}/index.html" for lang, server in servers.items()}
    for server in servers.values():
        server.shutdown()


@pytest.fixture(scope="module")
def chromium():
    if not os.access(CHROMIUM, os.X_OK):
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no Chromium at {CHROMIUM}: run make browser")
        pytest.skip(f"no Chromium at {CHROMIUM} (make browser)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as manager:
        browser = manager.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, site):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: page.problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(("http://127.0.0.1:", "data:", "blob:"))
            else page.problems.append(f"a request left the machine: {r.url}"))
    yield page
    problems = page.problems
    context.close()
    assert not problems, "\n".join(problems)


def _open(page, url):
    page.goto(url)
    page.wait_for_selector(".lr-lab-status:not(:empty)", timeout=60000)
    # a spy on what the page sends its host: a drag must send nothing, a release one action
    page.evaluate("""() => { const view = document.querySelector('.lr-lab').labView;
        const send = view.model.send.bind(view.model);
        window.sent = []; view.model.send = (msg) => { window.sent.push(msg); return send(msg); }; }""")


def _status(page):
    return page.inner_text(".lr-lab-status")


def _settle(page, before=None):
    page.wait_for_function("() => !document.querySelector('.lr-lab').classList.contains('lr-lab-busy')")
    if before is not None:
        page.wait_for_function("(s) => document.querySelector('.lr-lab-status').innerText !== s", arg=before)


PANELS_JS = """() => {
  const c = document.querySelector('.lr-lab-figure canvas'), ctx = c.getContext('2d'), w = c.width, h = c.height;
  const sum = (x, y) => { const d = ctx.getImageData(x, y, w / 2, h / 2).data; let s = 0;
    for (let i = 0; i < d.length; i += 4) s = (s * 31 + d[i] * 7 + d[i + 1] * 3 + d[i + 2]) % 1000000007; return s; };
  return [sum(0, 0), sum(w / 2, 0), sum(0, h / 2), sum(w / 2, h / 2)];
}"""


def test_a_drag_redraws_every_panel_and_sends_nothing_until_the_release(page, site):
    _open(page, site["en"])
    before = page.evaluate(PANELS_JS)
    page.evaluate("""() => { const s = document.querySelector('input.lr-lab-slider');
        for (const v of [150, 180, 210, 250]) { s.value = String(v); s.dispatchEvent(new Event('input')); } }""")
    after = page.evaluate(PANELS_JS)
    changed = [name for name, a, b in zip(("loss", "path", "sweep", "fitted line"), before, after) if a != b]
    assert changed == ["loss", "path", "sweep", "fitted line"], f"panels redrawn by the drag: {changed}"
    assert page.evaluate("window.sent") == [], "a drag sent actions before its release"
    lr = LR_GRID[250]
    assert _status(page).startswith(f"lr={lr:.4g} SGD, 100 steps: "), "the status follows the drag at once"
    page.evaluate("() => document.querySelector('input.lr-lab-slider').dispatchEvent(new Event('change'))")
    assert page.evaluate("window.sent") == [{"action": "slider", "index": 250}]
    page.wait_for_function("() => document.querySelectorAll('.lr-lab-try').length === 2")
    move = page.evaluate("""() => { const s = document.querySelector('input.lr-lab-slider'), out = [];
        for (let i = 0; i < 60; i++) { const t0 = performance.now(); s.value = String(100 + 3 * i);
          s.dispatchEvent(new Event('input')); out.push(performance.now() - t0); }
        out.sort((a, b) => a - b); return out[Math.floor(0.95 * out.length)]; }""")
    assert move < 100, f"a move takes {move:.1f} ms to draw (benchmarks/lab_update_speed.py measures it quietly)"


def _kernel_lab():
    return LearningRateLab(NumpyTrainer(X, Y), X, Y)


def test_the_page_says_what_the_kernel_says_for_the_same_actions(page, site):
    """host.js (the website, the classroom) and LearningRateLab (a notebook) answer each control alike."""
    _open(page, site["en"])
    lab = _kernel_lab()
    lab.retrain()
    assert _status(page) == lab.status_text
    steps = [({"action": "slider", "index": 290}, lambda: lab.slide(290)),
             ({"action": "preset", "name": "too small"}, lambda: lab.preset("too small")),
             ({"action": "preset", "name": "good"}, lambda: lab.preset("good")),
             ({"action": "preset", "name": "oscillating"}, lambda: lab.preset("oscillating")),
             ({"action": "preset", "name": "diverging"}, lambda: lab.preset("diverging")),
             ({"action": "snap"}, lambda: lab.snap()),
             ({"action": "set", "optimizer": "Momentum"}, lambda: lab.set(optimizer="Momentum")),
             ({"action": "preset", "name": "good"}, lambda: lab.preset("good")),
             ({"action": "set", "steps": 50}, lambda: lab.set(steps=50)),
             ({"action": "set", "optimizer": "Adam"}, lambda: lab.set(optimizer="Adam")),
             ({"action": "preset", "name": "diverging"}, lambda: lab.preset("diverging"))]
    for action, same in steps:
        before = _status(page)
        page.evaluate("(a) => document.querySelector('.lr-lab').labView.model.send(a)", action)
        same()
        if lab.status_text != before:
            _settle(page, before)
        _settle(page)
        assert _status(page) == lab.status_text, action
        assert page.inner_text(".lr-lab-message") == lab.message_text, action
        assert page.inner_text(".lr-lab-challenge").endswith(lab.widget.challenge["result"]), action
    rows = page.locator(".lr-lab-try").all_inner_texts()
    assert [row.lstrip("● ") for row in rows] == [row["row"] for row in lab.widget.tries][-len(rows):]


def test_each_control_does_what_it_says(page, site):
    _open(page, site["en"])
    page.click(".lr-lab-preset-diverging")
    page.wait_for_function("() => /DIVERG/.test(document.querySelector('.lr-lab-status').innerText)")
    assert page.eval_on_selector(".lr-lab-status", "e => getComputedStyle(e).color") == "rgb(220, 20, 60)"
    page.click(".lr-lab-snap")
    page.wait_for_function("() => /snapped/.test(document.querySelector('.lr-lab-message').innerText)")
    assert "converged" in _status(page)
    assert page.locator(".lr-lab-try").count() == 3
    page.click(".lr-lab-clear")
    page.wait_for_function("() => document.querySelectorAll('.lr-lab-try').length === 1")
    assert "cleared" in page.inner_text(".lr-lab-message")
    page.fill("input.lr-lab-lr-text", "0.0125")  # between positions 0.01230 and 0.01259
    page.press("input.lr-lab-lr-text", "Enter")
    page.wait_for_function("() => /between the slider/.test(document.querySelector('.lr-lab-message').innerText)")
    page.fill("input.lr-lab-lr-text", "-2")
    page.press("input.lr-lab-lr-text", "Enter")
    page.wait_for_function("() => /not a learning rate/.test(document.querySelector('.lr-lab-message').innerText)")
    assert page.is_disabled("input.lr-lab-momentum"), "β means nothing for SGD"
    page.click(".lr-lab-optimizer-momentum")
    page.wait_for_function("() => /Momentum β=0.90/.test(document.querySelector('.lr-lab-status').innerText)")
    assert not page.is_disabled("input.lr-lab-momentum")
    page.evaluate("""() => { const m = document.querySelector('input.lr-lab-momentum'); m.value = '0.6';
        m.dispatchEvent(new Event('input')); m.dispatchEvent(new Event('change')); }""")
    page.wait_for_function("() => /β=0.50/.test(document.querySelector('.lr-lab-status').innerText)")
    assert "sweeps for β = 0.50, 0.90 only" in page.inner_text(".lr-lab-message")
    page.select_option("select.lr-lab-steps", "50")
    page.wait_for_function("() => /, 50 steps:/.test(document.querySelector('.lr-lab-status').innerText)")
    assert page.locator("select.lr-lab-steps option").all_inner_texts() == ["50", "100"]
    banner = page.inner_text(".lr-lab-banner")
    assert "computed by MindSpore" in banner and "make lab" in banner


def test_the_chinese_page_speaks_chinese(page, site):
    _open(page, site["zh"])
    text = page.inner_text(".lr-lab")
    for word in ("学习率", "预设", "挑战"):
        assert word in text, word
    assert CJK.search(_status(page)), _status(page)
    assert CJK.search(page.get_attribute(".lr-lab-figure canvas", "aria-label"))


@pytest.mark.parametrize("width", [390, 900])
def test_nothing_is_cut_or_wider_than_the_screen(page, site, width):
    page.set_viewport_size({"width": width, "height": 900})
    _open(page, site["en"])
    page.click(".lr-lab-preset-diverging")  # a long status line, which must wrap, not be cut
    page.wait_for_function("() => /DIVERG/.test(document.querySelector('.lr-lab-status').innerText)")
    got = page.evaluate("""() => { const c = document.querySelector('.lr-lab-figure canvas');
        const r = c.getBoundingClientRect();
        const shown = '.lr-lab button, .lr-lab-status, .lr-lab-message, .lr-lab-challenge';
        const cut = Array.from(document.querySelectorAll(shown))
          .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.className);
        return {page: document.scrollingElement.scrollWidth, right: r.right, width: r.width, height: r.height,
                pixels: c.width / window.devicePixelRatio, cut}; }""")
    assert got["page"] <= width and got["right"] <= width, f"wider than a {width}-pixel screen: {got}"
    assert not got["cut"], got
    assert abs(got["pixels"] - got["width"]) <= 1, f"the canvas is stretched: {got}"
    if width < 560:
        assert got["height"] >= 900, "on a phone the four panels stack"


def test_the_page_formats_numbers_as_python_does(page, site):
    _open(page, site["en"])
    values = [0.0, 1.0, 0.1, 0.1234567, 12345.678, 1e-5, 3.2e-7, 2.5e16, 0.000123456, 987654321.0, 0.5, 10.0,
              1 / 3, 2 / 3, 123.456, 0.00999, 99999.5, -0.75, -12.5e-9]
    specs = [".4g", ".3g", ".2f", ".1e", ".3e", ".0%", "g"]
    got = page.evaluate("""async ([values, specs]) => { const { fmt } = await import('./lab.js');
        return values.map(v => specs.map(s => fmt(`{v:${s}}`, { v }))); }""", [values, specs])
    want = [[format(v, s) for s in specs] for v in values]
    assert got == want
