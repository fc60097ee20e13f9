"""The classroom server (make classroom, app/classroom.py): settings checked, a small room served, faults survived.

The quick part checks the launcher's settings and command line without starting anything. The server part
(marked ``browser``: it starts Voila and lab kernels, so it runs in ``make test``, not in ``make test-quick``)
serves a room of 3 on 127.0.0.1 and drives it with benchmarks/classroom_load.py's simulated learners, over the
kernel websocket protocol a browser page speaks: three learners arrive at once and use the lab (the load test
at N = 3); then 50 more arrive at once and get the "lab is full" page while the room stays usable; a learner
closes the tab mid-run; a browser vanishes without a word (its lab is culled); a kernel is killed as the OS
would: each ends with a freed place that the next learner gets. Last, the launcher itself is stopped with
Ctrl-C while it pre-heats: it says so, exits, and leaves no process behind. The full load table is
benchmarks/classroom_load.py's job (a benchmark, not a test).
"""

import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import procs

ROOT = Path(__file__).resolve().parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


load = _load("course_classroom_load", "benchmarks/classroom_load.py")  # imports app/classroom.py too
classroom = load.classroom


# ---- the launcher's settings (quick) -----------------------------------------------------------------------
def test_defaults_serve_this_machine_only_with_a_token_pool_places_and_culling():
    argv, env, url = classroom.classroom_command()
    assert "--Voila.ip=127.0.0.1" in argv and sum(a.startswith("--Voila.ip=") for a in argv) == 1
    assert url.startswith("http://127.0.0.1:8866/?token=") and len(url.rsplit("=", 1)[1]) >= 16
    assert f"--Voila.token={url.rsplit('=', 1)[1]}" in argv
    for expected in ("--ClassroomKernelManager.max_kernels=20", "--VoilaConfiguration.preheat_kernel=True",
                     "--VoilaConfiguration.default_pool_size=20", "--MappingKernelManager.cull_idle_timeout=1200",
                     "--MappingKernelManager.cull_connected=False", "--KernelRestarter.restart_limit=0",
                     "--template=lab-offline"):
        assert expected in argv, expected
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT / "app")  # where Voila finds classroom_kernels
    assert (ROOT / "app/jupyter/voila/templates/lab-offline/503.html").is_file()


def test_room_pool_and_idle_time_reach_voila():
    argv, _, url = classroom.classroom_command(port=9001, room=7, pool=0, idle_minutes=0.5, token="Room2026abc")
    assert url == "http://127.0.0.1:9001/?token=Room2026abc"
    assert {"--ClassroomKernelManager.max_kernels=7", "--VoilaConfiguration.preheat_kernel=False",
            "--MappingKernelManager.cull_idle_timeout=30", "--MappingKernelManager.cull_interval=15"} <= set(argv)


@pytest.mark.parametrize("kwargs, words", [
    ({"ip": "0.0.0.0"}, "every network"), ({"ip": "example.org"}, "IPv4 address"), ({"ip": ""}, "IPv4"),
    ({"port": 80}, "1024..65535"), ({"port": "8866"}, "port"), ({"room": 0}, "1..200"), ({"room": True}, "room"),
    ({"room": 3, "pool": 4}, "0..room (3)"), ({"pool": -1}, "pool"), ({"idle_minutes": 0}, "0.1..1440"),
    ({"token": "short1"}, "at least 8"), ({"token": "has space!"}, "letters and digits"),
])
def test_bad_settings_say_what_to_change(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        classroom.check_settings(**kwargs)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(room=st.one_of(st.integers(-5, 300), st.floats(allow_nan=True), st.text(max_size=3), st.none()),
       pool=st.one_of(st.none(), st.integers(-5, 300), st.booleans()),
       idle=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 3000)))
def test_settings_are_valid_or_refused_with_a_value_error(room, pool, idle):
    try:
        ip, checked_pool, token = classroom.check_settings(room=room, pool=pool, idle_minutes=idle)
    except ValueError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert isinstance(room, int) and 1 <= room <= 200 and 0 <= checked_pool <= room
        assert 0.1 <= idle <= 1440 and ip == "127.0.0.1" and token.isalnum()


def test_a_lan_address_comes_with_a_warning_and_the_link_as_a_qr_code():
    banner = classroom._banner("192.168.1.20", "http://192.168.1.20:8866/?token=abcdef0123456789", 20, 20, 20, True)
    assert "WARNING" in banner and "Share this link: http://192.168.1.20:8866/?token=" in banner
    assert "\u2588" in banner or "\u2580" in banner  # segno's block characters
    local = classroom._banner("127.0.0.1", "http://127.0.0.1:8866/?token=x", 20, 20, 20, True)
    assert "WARNING" not in local and "IP=lan" in local


def test_command_line_errors_exit_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        classroom.main(["--room", "500"])
    assert exit_info.value.code == 2 and "room (the number of places) must be" in capsys.readouterr().err


def test_percentile():
    assert load.percentile([], 50) is None
    assert load.percentile([3.0], 95) == 3.0
    assert load.percentile([1, 2, 3, 4, 5], 50) == 3 and load.percentile([0, 10], 95) == pytest.approx(9.5)


# ---- a served room and its faults (starts Voila and lab kernels) -------------------------------------------------
def _run(coro):
    return asyncio.run(coro)


async def _live(server):
    """A learner with a live lab (page, kernel connection, widgets); raises if there is none."""
    learner = load.Learner(server.base, server.token)
    code, html = await learner.load_page()
    assert code == 200, f"expected the lab, got HTTP {code}: {html[:300]}"
    await learner.connect()
    await learner.fetch_widgets()
    return learner


def _kernel_ids(server):
    ids = set()
    for proc in server.kernels():
        try:
            ids |= {arg.rsplit("kernel-", 1)[1][:-5] for arg in proc.cmdline() if "kernel-" in arg}
        except psutil.Error:
            continue
    return ids


def _wait(what, predicate, timeout=60, interval=0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout} s")


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    """A classroom of 3 places, all pre-heated; a lab without a page is culled after 12 idle seconds."""
    server = load.ClassroomServer(room=3, pool=3, idle_minutes=0.2, log_dir=tmp_path_factory.mktemp("classroom"))
    try:
        server.wait_listening()
        server.wait_heated(3, timeout=240)
        yield server
    finally:
        took, outlived = server.stop()
        assert not outlived, f"processes outlived the classroom server (killed now): {outlived}"
        assert took < 30, f"the server took {took:.0f} s to stop after Ctrl-C"


@pytest.mark.browser
def test_three_learners_at_once_then_fifty_more_find_the_room_full(room):
    async def scenario():
        load.AsyncHTTPClient.configure(None, max_clients=60)
        # leave=False: their browsers vanish without the page's unload call (a laptop lid closed)
        results = await asyncio.gather(*(load.one_learner(room.base, room.token, moves=2, seed=i, leave=False,
                                                          think=(0.2, 0.5))
                                         for i in range(3)))
        t0 = time.monotonic()
        late = await asyncio.gather(*(load.Learner(room.base, room.token).load_page(timeout=60) for _ in range(50)))
        return results, late, time.monotonic() - t0

    held = _kernel_ids(room)
    results, late, took = _run(scenario())
    errors = [r["error"] for r in results if r["error"]]
    assert not errors, errors
    assert all(len(r["moves"]) == 2 and len(r["switches"]) == 2 for r in results)
    assert {code for code, _ in late} == {503}, sorted({code for code, _ in late})
    assert all("classroom-full" in html and "tries again every 30 seconds" in html for _, html in late)
    assert took < 30, f"50 refused learners took {took:.0f} s"
    assert _kernel_ids(room) == held  # the three learners' labs, and no kernel started for anyone else
    ttl = sorted(r["time_to_lab"] for r in results)
    print(f"\nN=3: time to lab {ttl[0]:.2f}-{ttl[-1]:.2f} s, moves "
          f"{', '.join(f'{m * 1000:.0f}' for r in results for m in r['moves'])} ms; 50 refused in {took:.1f} s")
    # The vanished browsers' labs are culled after the idle time; their places are pre-heated again.
    _wait("the vanished learners' labs to be culled", lambda: not held & _kernel_ids(room), timeout=60)
    assert "Culling 'idle' kernel" in room.log()


@pytest.mark.browser
def test_a_tab_closed_mid_move_and_a_killed_kernel_free_their_place(room):
    _wait("three labs pre-heated", lambda: len(_kernel_ids(room)) == 3, timeout=120)
    room.wait_heated(3, timeout=120)

    async def closed_mid_move():
        learner = await _live(room)
        learner._send("comm_msg", {"comm_id": learner.ids["slider"], "data": {
            "method": "update", "state": {"value": 0.42}, "buffer_paths": []}})
        assert await learner.shutdown_like_page_unload() == 204  # the page's unload call, mid-move
        await learner.close()
        return learner.kernel_id

    closed = _run(closed_mid_move())
    _wait("the closed tab's lab to end", lambda: closed not in _kernel_ids(room), timeout=30)

    async def killed_by_the_os():
        learner = await _live(room)
        [proc] = [p for p in room.kernels() if any(learner.kernel_id in arg for arg in p.cmdline())]
        proc.kill()
        with pytest.raises(load.LabGone, match="died|closed"):
            await learner.change("slider", {"value": 0.3}, timeout=30)
        await learner.close()
        return learner.kernel_id

    killed = _run(killed_by_the_os())
    _wait("the killed kernel to be removed", lambda: "died, removing from map" in room.log(), timeout=30)
    assert killed not in _kernel_ids(room)

    # Both places come back: the pool refills, and a new learner gets a live lab that answers.
    _wait("the pool to refill", lambda: len(_kernel_ids(room) - {closed, killed}) == 3, timeout=120)

    async def next_learner():
        learner = await _live(room)
        await learner.change("slider", {"value": 0.5})
        await learner.close()
    _run(next_learner())


CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")


@pytest.mark.browser
@pytest.mark.xfail(strict=False, reason="issue 28: under a full suite the page sometimes says 'stopped' before "
                   "any kernel is killed (a pre-heated kernel's socket closes); fixed there, not here")
def test_in_chromium_the_page_says_when_its_lab_has_stopped(room):
    """The real page (Debian's chromium via playwright, as tests/test_browser.py): a live lab, then its kernel
    is killed; the page must say so instead of showing a lab that no longer answers."""
    if not os.access(CHROMIUM, os.X_OK) or importlib.util.find_spec("playwright") is None:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but no Chromium at {CHROMIUM} or no playwright")
        pytest.skip(f"no Chromium at {CHROMIUM} or no playwright package")
    from playwright.sync_api import sync_playwright

    room.wait_heated(1, timeout=120)
    errors = []
    with sync_playwright() as manager:
        browser = manager.chromium.launch(executable_path=CHROMIUM, env={**os.environ, classroom.MARK: room.mark},
                                          args=["--headless", "--no-sandbox", "--disable-gpu",
                                                "--disable-background-networking", "--no-first-run"])
        try:
            page = browser.new_page()
            page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
            before = _kernel_ids(room)
            page.goto(room.url, wait_until="domcontentloaded", timeout=120_000)
            try:
                page.locator(".lr-lab-status").wait_for(timeout=120_000)
            except Exception:
                raise AssertionError(f"no live lab in the page: {page.inner_text('body')[:1500]}") from None
            assert page.locator("#lab-stopped").count() == 0
            mine = page.evaluate("JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId")
            assert mine in before
            [proc] = [p for p in room.kernels() if any(mine in arg for arg in p.cmdline())]
            proc.kill()
            page.locator("#lab-stopped").wait_for(timeout=30_000)
            assert "This lab has stopped" in page.locator("#lab-stopped").inner_text()
        finally:
            browser.close()
    assert not errors, errors


@pytest.mark.browser
def test_ctrl_c_while_labs_are_heating_stops_everything_with_a_message(tmp_path):
    mark = uuid.uuid4().hex
    env = {**os.environ, classroom.MARK: mark, "GLOG_v": "3"}
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("IPYTHONDIR", "ipython"), ("JUPYTER_DATA_DIR", "data")):
        (tmp_path / sub).mkdir()
        env[var] = str(tmp_path / sub)
    port = load.free_port()
    launcher = subprocess.Popen([sys.executable, str(ROOT / "app/classroom.py"), "--port", str(port), "--room", "2",
                                 "--no-qr"], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, text=True)
    try:
        _wait("a lab kernel to start", lambda: len(procs.marked(classroom.MARK, mark)) >= 2, timeout=60)
        launcher.send_signal(signal.SIGINT)  # what Ctrl-C in the launcher's terminal sends
        out, _ = launcher.communicate(timeout=45)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        left = procs.marked(classroom.MARK, mark)
        procs.stop(left, grace=2)
    assert launcher.returncode == 0, out
    assert f"Open: http://127.0.0.1:{port}/?token=" in out
    assert "Stopping the classroom server" in out and "no lab is left running" in out
    assert "outlived the server" not in out, out  # Voila shut its kernels down itself
    assert not left, f"left running after Ctrl-C: {sorted(left)}"
