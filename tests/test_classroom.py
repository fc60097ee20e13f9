"""The classroom server (make classroom, app/classroom.py): settings checked, a room served, faults survived.

The quick part checks the launcher's settings, the setting names a page may ask for and the manifest without
starting anything. The server part (marked ``browser``: it starts MindSpore and Chromium, so it runs in
``make test``, not in ``make test-quick``) starts one room for the module, with a fresh cache, and drives it with
benchmarks/classroom_load.py's simulated learners (HTTP, as the page fetches) and in Chromium: the token, bad
setting names, a payload checked against an independent numpy sweep, a closed tab and Reloads that keep the
room working (the old design's fault: a Reload took a second place and the next learner got 503), a full room,
the worker killed as the OS would, and Ctrl-C, SIGTERM and SIGKILL of the launcher leaving nothing running.
The full load table is benchmarks/classroom_load.py's job (a benchmark, not a test).
"""

import asyncio
import importlib.util
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.httpclient import HTTPClientError

from course_utils import procs
from course_utils.lab.payload import decode, setting_key, sweep_payload
from course_utils.lab.trainers import LR_GRID, OPTIMIZERS

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


load = _load("course_classroom_load", "benchmarks/classroom_load.py")  # imports app/classroom.py too
classroom = load.classroom


# ---- the launcher's settings and the page's setting names (quick) ---------------------------------------------------
def test_defaults_serve_this_machine_only_with_a_random_token():
    ip, token = classroom.check_settings()
    assert ip == "127.0.0.1" and len(token) == 16 and token.isalnum()
    assert classroom.check_settings(token=None)[1] != token
    assert classroom.check_settings("127.0.0.1", 9001, 7, "Room2026abc", "zh") == ("127.0.0.1", "Room2026abc")


@pytest.mark.parametrize("kwargs, words", [
    ({"ip": "0.0.0.0"}, "every network"), ({"ip": "example.org"}, "IPv4 address"), ({"ip": ""}, "IPv4"),
    ({"port": 80}, "1024..65535"), ({"port": "8866"}, "port"), ({"room": 0}, "1..500"), ({"room": True}, "room"),
    ({"room": 501}, "browsers that may open the lab"), ({"token": "short1"}, "at least 8"),
    ({"token": "has space!"}, "letters and digits"), ({"lang": "fr"}, "en, zh"),
])
def test_bad_settings_say_what_to_change(kwargs, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        classroom.check_settings(**kwargs)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(room=st.one_of(st.integers(-5, 900), st.floats(allow_nan=True), st.text(max_size=3), st.none(),
                      st.booleans()),
       port=st.one_of(st.integers(-1, 70000), st.text(max_size=5)),
       token=st.one_of(st.none(), st.text(max_size=12), st.integers()))
def test_settings_are_valid_or_refused_with_a_value_error(room, port, token):
    try:
        ip, checked = classroom.check_settings(port=port, room=room, token=token)
    except ValueError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert isinstance(room, int) and not isinstance(room, bool) and 1 <= room <= 500
        assert isinstance(port, int) and 1024 <= port < 65536 and ip == "127.0.0.1"
        assert checked.isalnum() and len(checked) >= 8 and (token is None or checked == token)


@pytest.mark.parametrize("key, want", [
    ("SGD-s100", ("SGD", 0.9, 100)), ("Adam-s10", ("Adam", 0.9, 10)), ("Momentum-b0.00-s500", ("Momentum", 0.0, 500)),
    ("Momentum-b0.99-s250", ("Momentum", 0.99, 250)),
])
def test_the_settings_a_page_can_ask_for(key, want):
    assert classroom.check_key(key) == want


@pytest.mark.parametrize("key, words", [
    ("SGD-s105", "multiple of 10 in 10..500"), ("SGD-s0", "multiple of 10"), ("Adam-s510", "10..500"),
    ("Momentum-b1.00-s100", "0.00..0.99"), ("Momentum-s100", "OPTIMIZER[-bBETA]-sSTEPS"),
    ("SGD-b0.90-s100", "e.g. SGD-s100"), ("../../etc/passwd", "a setting is named"), ("sgd-s100", "named"),
    ("Momentum-b0.9-s100", "named"), ("SGD-s100.bin", "named"), ("", "named"), ("SGD-s1e2", "named"),
])
def test_a_bad_setting_name_is_refused_with_the_accepted_form(key, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        classroom.check_key(key)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=24), st.from_regex(r"(SGD|Momentum|Adam|x)(-b-?\d\.\d{1,3})?-s-?\d{1,4}",
                                                       fullmatch=True)))
def test_any_name_is_a_setting_the_page_offers_or_a_value_error(key):
    try:
        optimizer, beta, steps = classroom.check_key(key)
    except ValueError as err:
        assert "\n" not in str(err) and len(str(err)) < 300
    else:  # only names setting_key writes, for the page's optimizers, step counts and betas
        assert optimizer in OPTIMIZERS and steps in range(10, 501, 10) and 0 <= beta <= 0.99
        assert setting_key(optimizer, beta, steps) == key


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_manifest_lets_the_page_ask_for_any_setting_in_the_rooms_language(lang):
    manifest = classroom.manifest(lang)
    assert manifest["mode"] == "server" and "keys" not in manifest and "momentum_options" not in manifest
    assert manifest["steps_options"] == list(range(10, 501, 10))
    state = manifest["state"]
    assert setting_key(state["optimizer"], state["momentum"], state["steps"]) == load.FIRST_KEY
    assert LR_GRID[state["index"]] == pytest.approx(0.1)
    assert bool(CJK.search(manifest["labels"]["learning rate"])) == (lang == "zh")
    page = classroom.page(lang)
    assert 'import { hostModel } from "./host.js"' in page and "manifest.json" in page
    assert ('lang="zh-CN"' in page) == (lang == "zh")


def test_a_lan_address_comes_with_a_warning_and_the_link_as_a_qr_code():
    banner = classroom._banner("192.168.1.20", "http://192.168.1.20:8866/?token=abcdef0123456789", 20, True)
    assert "WARNING" in banner and "Share this link: http://192.168.1.20:8866/?token=" in banner
    assert "\u2588" in banner or "\u2580" in banner  # segno's block characters
    assert "http://192.168.1.20:8866/zh/?token=abcdef0123456789" in banner and "browser 21 gets" in banner
    local = classroom._banner("127.0.0.1", "http://127.0.0.1:8866/?token=x", 20, True)
    assert "WARNING" not in local and "IP=lan" in local


def test_command_line_errors_exit_2_with_one_line_and_old_options_are_noted(capsys, monkeypatch):
    with pytest.raises(SystemExit) as exit_info:
        classroom.main(["--room", "900"])
    assert exit_info.value.code == 2 and "room (the number of places" in capsys.readouterr().err
    ran = []
    monkeypatch.setattr(classroom, "run", lambda *args: ran.append(args) or 0)
    monkeypatch.setattr(classroom, "_check_port_free", lambda ip, port: None)
    assert classroom.main(["--pool", "5", "--idle-minutes", "20", "--zh", "--room", "30", "--no-qr"]) == 0
    err = capsys.readouterr().err
    assert "--pool is no longer used" in err and "--idle-minutes is no longer used" in err
    ip, port, places, token, lang, cache, qr = ran[0]
    assert (ip, port, places, lang, cache, qr) == ("127.0.0.1", 8866, 30, "zh", None, False) and len(token) == 16


def test_the_load_test_picks_settings_the_page_offers_and_prints_its_table():
    keys = load.own_settings(300, random.Random(0))
    assert all(classroom.check_key(key) for key in keys)
    assert {key.split("-")[0] for key in keys} == set(OPTIMIZERS) and 50 < len(set(keys)) < 300  # some repeat
    row = {"learners": 5, "time_to_lab_p50": 0.1, "time_to_lab_p95": 0.2, "together_p50": 1.0, "together_p95": 1.5,
           "own_p50": 0.5, "own_p95": 2.5, "own_count": 10, "own_new_p50": 1.1, "own_new_p95": 2.6,
           "own_new_count": 7, "reload_p95": 0.1, "errors": 0, "rss_mb": {"launcher": 70, "worker": 980},
           "cpu_s": {"launcher": 0.5, "worker": 9.0}, "worker_cpu_per_new_s": 1.12, "seconds": 200.0, "load": 1.5}
    assert "| 5 | 0.1 / 0.2 | 1 / 1.5 | 0.5 / 2.5 (10) | 1.1 / 2.6 (7) | 0.1 | 0 | 70 + 980 | 0.5 / 9.0 (1.12) |" \
        in load.table([row])


def test_percentile():
    assert load.percentile([], 50) is None
    assert load.percentile([3.0], 95) == 3.0
    assert load.percentile([1, 2, 3, 4, 5], 50) == 3 and load.percentile([0, 10], 95) == pytest.approx(9.5)


# ---- a served room (starts MindSpore's worker) ------------------------------------------------------------------
def _run(coro):
    return asyncio.run(coro)


def _wait(what, predicate, timeout=60, interval=0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout} s")


def _stop_cleanly(server, sig=signal.SIGINT):
    took, outlived = server.stop(sig)
    assert not outlived, f"processes outlived the classroom server (killed now): {outlived}"
    assert server.proc.returncode == 0, server.log()[-2000:]
    assert "nothing is left running" in server.log()
    return took


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    """One room of 20 for the module, its cache fresh (every setting but the presets computed when asked)."""
    server = load.ClassroomServer(room=20, log_dir=tmp_path_factory.mktemp("classroom"))
    try:
        server.wait_ready(timeout=600)
        yield server
    finally:
        took = _stop_cleanly(server, signal.SIGTERM)
        assert took < 20, f"the server took {took:.0f} s to stop after SIGTERM"


@pytest.mark.browser
def test_the_room_opens_with_the_presets_computed_and_one_worker(room):
    assert f"Open: {room.url}" in room.log() and "The same lab in Chinese" in room.log()
    cached = sorted(p.name for p in room.cache.glob("*/en/*.bin"))
    assert cached == sorted(f"{key}.bin" for key in classroom.PRESET_KEYS)
    assert room.worker() is not None and len(room.processes()) == 2  # the launcher and its one worker
    assert not list(Path(room.tmp).glob("rank_0")), "MindSpore wrote into the launcher's folder"


@pytest.mark.browser
def test_the_token_is_needed_and_kept_in_a_cookie(room):
    async def scenario():
        stranger = load.Learner(room.base, "wrongtoken123")
        _, page = await stranger.get("/", expect=403, query="token=wrongtoken123")
        assert b"open the link your instructor shared" in page
        _, page = await load.Learner(room.base, "").get("/zh/", expect=403)
        assert "请打开讲师分享的链接" in page.decode()
        _, text = await stranger.get("/payloads/SGD-s100.bin", expect=403)
        assert b"<html" not in text and b"token" in text
        learner = load.Learner(room.base, room.token)
        await learner.arrive()
        assert any(name.startswith("classroom_token_") for name in learner.cookies)  # the page's fetches use it
        await learner.get("/payloads/Adam-s100.bin")  # no token in the address: the cookie is enough
        learner.cookies = {k: ("x" * 32 if k.startswith("classroom_token_") else v) for k, v in learner.cookies.items()}
        await learner.get("/manifest.json", expect=403)
        _, page = await learner.get("/no/such/page", expect=403)  # a wrong token learns nothing, not even a 404
        await load.Learner(room.base, room.token).get("/nothing", expect=404, query=f"token={room.token}")
    _run(scenario())


@pytest.mark.browser
@pytest.mark.parametrize("name", ["SGD-s105", "Momentum-b1.00-s100", "Momentum-s100", "..%2F..%2Fetc%2Fpasswd",
                                  "SGD-s100%00", "x" * 2000, "%E4%B8%AD"])
def test_a_bad_setting_gets_400_with_the_accepted_form(room, name):
    async def ask():
        learner = load.Learner(room.base, room.token)
        return await learner.get(f"/payloads/{name}.bin", expect=400, query=f"token={room.token}")
    _, text = _run(ask())
    assert re.search(rb"a setting is named OPTIMIZER\[-bBETA\]-sSTEPS|multiple of 10 in 10\.\.500|0\.00\.\.0\.99",
                     text), text[:300]
    assert room.proc.poll() is None and room.worker() is not None


@pytest.mark.browser
@pytest.mark.parametrize("key, lang", [("Momentum-b0.37-s60", "en"), ("SGD-s40", "zh")])
def test_a_served_payload_matches_an_independent_numpy_sweep(room, key, lang):
    """What MindSpore's worker computed, decoded, against NumpyTrainer (float32 numpy, no MindSpore)."""
    from course_utils.data import make_linear_data
    from course_utils.lab.trainers import NumpyTrainer
    from course_utils.landscape import LossSurface

    async def ask():
        learner = load.Learner(room.base, room.token, lang=lang)
        t0 = time.monotonic()
        _, first = await learner.get(f"/{lang}/payloads/{key}.bin", query=f"token={room.token}")
        computed = time.monotonic() - t0
        t0 = time.monotonic()
        _, again = await learner.get(f"/{lang}/payloads/{key}.bin")
        return first, again, computed, time.monotonic() - t0

    blob, again, computed, cached = _run(ask())
    assert again == blob and cached < computed  # the second learner's copy comes from memory
    assert list(room.cache.glob(f"*/{lang}/{key}.bin")), "computed once, kept on disk for the next start"
    header, paths, losses = decode(blob)
    optimizer, beta, steps = classroom.check_key(key)
    x, y = make_linear_data()
    surface = LossSurface(x, y)
    with classroom.language(lang):
        want_blob = sweep_payload(NumpyTrainer(x, y).sweep(optimizer, None, steps, (0.0, 0.0), beta), surface)
    want, want_paths, want_losses = decode(want_blob)
    assert paths.shape == (401, steps + 1, 2) and losses.shape == (401, steps)
    assert header["key"] == key and header["lrs"] == want["lrs"] and header["steps"] == steps
    assert header["optimizer"] == optimizer and header["bounds"] == want["bounds"]
    both = np.isfinite(losses) & np.isfinite(want_losses) & (np.abs(want_losses) < 1e6)
    assert both.mean() > 0.6, "most learning rates' losses are finite in both"
    np.testing.assert_allclose(losses[both], want_losses[both], rtol=2e-3, atol=1e-6)
    calm = np.isfinite(paths).all(axis=(1, 2)) & (np.abs(want_paths) < 1e3).all(axis=(1, 2))
    np.testing.assert_allclose(paths[calm], want_paths[calm], rtol=2e-3, atol=1e-5)
    agree = np.mean(np.array(header["kinds"]) == np.array(want["kinds"]))
    assert agree > 0.97, f"the verdicts' kinds agree for only {agree:.1%} of the learning rates"
    assert header["texts"][200] == want["texts"][200] and bool(CJK.search(header["texts"][200])) == (lang == "zh")


@pytest.mark.browser
def test_learners_asking_for_the_same_new_setting_at_once_get_it_from_one_computation(room):
    before = sum(1 for _ in room.cache.glob("*/en/*.bin"))

    async def scenario():
        learners = [load.Learner(room.base, room.token) for _ in range(8)]
        await asyncio.gather(*(learner.arrive() for learner in learners))
        return await asyncio.gather(*(learner.setting("Adam-s70") for learner in learners))

    took = _run(scenario())
    assert len(took) == 8 and sum(1 for _ in room.cache.glob("*/en/*.bin")) == before + 1


CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")


def _chromium():
    if not os.access(CHROMIUM, os.X_OK) or importlib.util.find_spec("playwright") is None:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but no Chromium at {CHROMIUM} or no playwright")
        pytest.skip(f"no Chromium at {CHROMIUM} or no playwright package")
    from playwright.sync_api import sync_playwright
    return sync_playwright


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_in_chromium_the_lab_draws_moves_in_the_page_and_fetches_new_settings_from_the_room(room, lang):
    sync_playwright = _chromium()
    requests, errors = [], []
    with sync_playwright() as manager:
        browser = manager.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(room.url.replace("/?", f"/{lang}/?"), timeout=60_000)
            page.wait_for_selector(".lr-lab-status:not(:empty)", timeout=60_000)
            status = page.inner_text(".lr-lab-status")
            assert ("步" in status) == (lang == "zh") and "SGD" in status, status
            loaded = len(requests)
            canvas = page.locator(".lr-lab-figure canvas")
            before = canvas.evaluate("c => c.toDataURL()")
            page.locator(".lr-lab-slider").evaluate(
                "(el) => { el.value = 330; el.dispatchEvent(new Event('input')); }")
            assert canvas.evaluate("c => c.toDataURL()") != before, "a drag did not redraw the figure"
            page.locator(".lr-lab-slider").evaluate("(el) => el.dispatchEvent(new Event('change'))")
            page.wait_for_function("s => document.querySelector('.lr-lab-status').textContent !== s", arg=status)
            assert len(requests) == loaded, f"a slider move reached the server: {requests[loaded:]}"
            steps = "130" if lang == "en" else "140"  # a setting no other test asked for: computed now
            page.select_option(".lr-lab-steps", steps)
            page.wait_for_function(f"() => document.querySelector('.lr-lab-status').textContent.includes('{steps}')",
                                   timeout=300_000)
            assert any(url.endswith(f"/{lang}/payloads/SGD-s{steps}.bin") for url in requests[loaded:])
            page.reload()  # the learner presses Reload: the same place, a working lab at once
            t0 = time.monotonic()
            page.wait_for_selector(".lr-lab-status:not(:empty)", timeout=30_000)
            assert time.monotonic() - t0 < 15
            assert "SGD" in page.inner_text(".lr-lab-status")
        finally:
            browser.close()
    assert not errors, errors
    off = [url for url in requests if not url.startswith(room.base + "/")]
    assert not off, f"the page fetched from elsewhere than the room's server: {off}"


@pytest.fixture
def reopened(room, tmp_path):
    """A second room of 2 places on the first one's cache: the presets are there, so it opens at once."""
    server = load.ClassroomServer(room=2, cache=room.cache, log_dir=tmp_path)
    try:
        ready = server.wait_ready(timeout=120)
        yield server, ready
    finally:
        _stop_cleanly(server)


@pytest.mark.browser
def test_a_closed_tab_and_reloads_keep_the_learners_place_and_the_next_learner_gets_a_lab(reopened):
    """The old design's fault: a Reload (or a closed tab) took a second place and the next learner got 503."""
    server, ready = reopened
    assert "the presets' settings are in the cache" in server.log() and ready < 60

    async def scenario():
        first = load.Learner(server.base, server.token)
        await first.arrive()
        with pytest.raises((HTTPClientError, load.Failed)):  # the tab is closed while its payload downloads
            await first.get("/payloads/SGD-s100.bin", timeout=0.002)
        reloads = [await first.arrive() for _ in range(4)]  # and Reload, Reload, ...
        second = await load.Learner(server.base, server.token).arrive()  # the room's other place: free
        html = await load.Learner(server.base, server.token).arrive(expect=503)
        again = [await first.arrive(), await first.arrive()]
        return reloads, second, html, again

    reloads, second, html, again = _run(scenario())
    assert all(took < 10 for took in reloads + again), reloads + again
    assert second < 30
    assert b"The room is full: all 2 places are taken" in html


@pytest.mark.browser
def test_a_killed_worker_is_replaced_and_the_room_keeps_serving(room):
    old = room.worker()
    old.kill()  # as the OS would, out of memory
    _wait("the worker to die", lambda: not procs.alive(old.pid), timeout=10)

    async def scenario():
        learner = load.Learner(room.base, room.token)
        took = await learner.arrive()  # the presets: from memory, no worker needed
        new = await learner.setting("SGD-s20")  # computed by a new worker
        return took, new

    took, _ = _run(scenario())
    assert took < 10
    assert room.worker() is not None and room.worker().pid != old.pid


def _launch(tmp_path, cache, mark):
    port = load.free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app/classroom.py"), "--port", str(port), "--room", "2",
                             "--no-qr", "--cache", str(cache)], env={**os.environ, classroom.MARK: mark},
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True, text=True)
    return proc, port


@pytest.mark.browser
def test_ctrl_c_while_mindspore_compiles_stops_everything_with_a_message(tmp_path):
    mark = uuid.uuid4().hex
    launcher, port = _launch(tmp_path, tmp_path / "fresh-cache", mark)
    try:
        _wait("the worker to start", lambda: len(procs.marked(classroom.MARK, mark)) >= 2, timeout=60)
        time.sleep(1)
        launcher.send_signal(signal.SIGINT)  # what Ctrl-C in the launcher's terminal sends
        out, _ = launcher.communicate(timeout=30)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        left = procs.marked(classroom.MARK, mark)
        procs.stop(left, grace=2)
    assert launcher.returncode == 0, out
    assert "Starting: MindSpore compiles" in out and "the room had not opened yet" in out
    assert "nothing is left running" in out and "outlived the server" not in out, out
    assert not left, f"left running after Ctrl-C: {sorted(left)}"


@pytest.mark.browser
def test_a_worker_ends_by_itself_when_its_server_is_killed(tmp_path):
    mark = uuid.uuid4().hex
    launcher, _ = _launch(tmp_path, tmp_path / "fresh-cache", mark)
    try:
        _wait("the worker to start", lambda: len(procs.marked(classroom.MARK, mark)) >= 2, timeout=60)
        workers = [psutil.Process(pid) for pid in procs.marked(classroom.MARK, mark) if pid != launcher.pid]
        launcher.kill()  # SIGKILL: no cleanup of its own
        launcher.wait()
        gone, alive = psutil.wait_procs(workers, timeout=15)
    finally:
        procs.stop(procs.marked(classroom.MARK, mark), grace=2)
    assert not alive, f"the worker outlived its killed server: {alive}"
