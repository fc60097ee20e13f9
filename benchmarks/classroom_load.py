"""Load test of the classroom server (make classroom): N simulated learners, on 127.0.0.1 only.

    .venv/bin/python benchmarks/classroom_load.py [--learners 5 20 50 100] [--own 2] [--think 30 90]
                                                  [--moves 100] [--json FILE]

One classroom server (app/classroom.py, a fresh cache folder: nothing computed before) is started; for each N
in turn, N learners (HTTP clients, each with its own cookies, as a browser has) do what the page does, and
every response's status is checked (anything but the expected one is an error):

1. **arrive** all at once: the page with the room's token, then lab.js, host.js and lab.css, then the manifest,
   then the first setting's payload (what host.js fetches). Time to lab = page + manifest + first payload.
2. **together**: all N switch to the same setting nobody asked for before (the instructor says "now Momentum
   with beta 0.5"): one computation for the room.
3. **own**: each learner then asks ``--own`` settings of its own, ``--think`` seconds apart (uniform, one a
   minute by default; a person reads the figure and drags the slider in between, and drags never reach the
   server), picked as the page offers them: an optimizer; for Momentum a beta from its slider (0.00..0.99),
   mostly at the default 100 steps; else a step count from the list. A setting nobody in the room asked for
   before is "new": the worker computes it while the rest of the room goes on ("new setting, warm, with the
   room busy"); the others come from the cache.
4. a Reload (the page, the manifest and the first payload again: cached), and leave (nothing to send).

Per N: time to lab p50/p95, together p50/p95, own settings p50/p95 (and of them the new ones), reload p95,
errors, the server's resident memory (launcher + worker) and CPU seconds (launcher, worker) spent in the phase,
the load average. Then, in Chromium (Debian's chromium via playwright), one page: ``--moves`` slider moves
(drags; every tenth also released), the browser time per move and per release (measured in the page), the
requests the page sent and the server's CPU during the moves (0 requests by design: host.js answers them).
Last, the goals with their ratios, the load average, and whether any process outlived the server after Ctrl-C.
It stops on its own (``--deadline``).
"""

import argparse
import asyncio
import datetime
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from course_utils import procs  # noqa: E402
from course_utils.lab.payload import decode, setting_key  # noqa: E402

GOALS = {"time_to_lab_p95": 5.0, "own_p95": 2.0, "move_p95_ms": 16.0, "errors": 0}  # own_p95: of new settings
REQUEST_TIMEOUT = 300.0  # a response later than this counts as an error
FIRST_KEY = "SGD-s100"  # the manifest's first setting


def _load_classroom():
    """app/classroom.py (app/ is not a package)."""
    spec = importlib.util.spec_from_file_location("course_app_classroom", ROOT / "app" / "classroom.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


classroom = _load_classroom()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, q):
    """The q-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


# ---- the server -------------------------------------------------------------------------------------------
class ClassroomServer:
    """app/classroom.py on 127.0.0.1 in its own process group, marked so that its worker is found."""

    def __init__(self, room=20, lang="en", cache=None, log_dir=None):
        self.room, self.port, self.token, self.mark = room, free_port(), uuid.uuid4().hex, uuid.uuid4().hex
        self.tmp = Path(tempfile.mkdtemp(prefix="classroom-load-", dir=log_dir))
        self.cache = Path(cache) if cache else self.tmp / "cache"
        self.base, self.url = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{self.port}/?token={self.token}"
        self.log_path = self.tmp / "classroom.log"
        self._log = open(self.log_path, "wb")
        env = {**os.environ, classroom.MARK: self.mark, "GLOG_v": "3"}
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "app" / "classroom.py"), "--port", str(self.port), "--room", str(room),
             "--token", self.token, "--lang", lang, "--no-qr", "--cache", str(self.cache)],
            env=env, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.started = time.monotonic()

    def log(self):
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout=600):
        """Until the link is printed (the presets computed); the seconds that took."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the classroom server exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            if "Open: http" in self.log():
                return time.monotonic() - self.started
            time.sleep(0.25)
        raise TimeoutError(f"the classroom server was not ready within {timeout:.0f} s:\n{self.log()[-3000:]}")

    def processes(self):
        """The launcher and its worker (psutil.Process), found by the mark."""
        found = []
        for pid in {self.proc.pid, *procs.marked(classroom.MARK, self.mark)}:
            try:
                found.append(psutil.Process(pid))
            except psutil.NoSuchProcess:
                continue
        return found

    def worker(self):
        workers = [p for p in self.processes() if p.pid != self.proc.pid]
        return workers[0] if workers else None

    def usage(self):
        """{"launcher"/"worker": (cpu seconds, rss bytes)} now."""
        found = {}
        for proc in self.processes():
            try:
                cpu, rss = sum(proc.cpu_times()[:2]), proc.memory_info().rss
            except psutil.Error:
                continue
            found["launcher" if proc.pid == self.proc.pid else "worker"] = (cpu, rss)
        return found

    def stop(self, sig=signal.SIGINT, timeout=30):
        """Ctrl-C (or ``sig``); returns (seconds it took, PIDs that outlived it, killed now)."""
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        took = time.monotonic() - t0
        outlived = set(procs.marked(classroom.MARK, self.mark))
        procs.stop(outlived, grace=2)
        self._log.close()
        return took, outlived


# ---- a learner --------------------------------------------------------------------------------------------
class Failed(Exception):
    """A response that is not the one the page needs."""


class Learner:
    """A browser's HTTP side: its cookies, and what the page fetches."""

    def __init__(self, base, token, lang=None):
        self.base, self.token, self.cookies = base, token, {}
        self.prefix = f"/{lang}/" if lang else "/"
        self.client = AsyncHTTPClient()

    async def get(self, path, expect=200, timeout=REQUEST_TIMEOUT, query=None):
        """(status, body); Failed unless the status is ``expect``."""
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        url = self.base + path + (f"?{query}" if query else "")
        response = await self.client.fetch(HTTPRequest(url, headers=headers, request_timeout=timeout,
                                                       follow_redirects=False), raise_error=False)
        for header in response.headers.get_list("Set-Cookie"):
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        if response.code != expect:
            body = (response.body or b"")[:300].decode("utf-8", "replace")
            raise Failed(f"GET {path}: expected {expect}, got {response.code} {body or response.error}")
        return response.code, response.body

    async def arrive(self, expect=200):
        """The page, its files, the manifest and the first payload, as the page loads them; seconds it took."""
        t0 = time.monotonic()
        _, html = await self.get(self.prefix, expect, query=f"token={self.token}")
        if expect != 200:
            return html
        await asyncio.gather(*(self.get(self.prefix + name) for name in ("lab.js", "host.js", "lab.css")))
        _, manifest = await self.get(self.prefix + "manifest.json")
        state = json.loads(manifest)["state"]
        first = setting_key(state["optimizer"], state["momentum"], state["steps"])
        await self.setting(first)
        return time.monotonic() - t0

    async def setting(self, key):
        """A setting's payload (what a click on an optimizer, beta or steps fetches); seconds it took."""
        t0 = time.monotonic()
        _, blob = await self.get(f"{self.prefix}payloads/{key}.bin")
        header, paths, _ = decode(blob)
        if header["key"] != key or paths.shape[0] != 401:
            raise Failed(f"payload of {key}: got {header['key']} with {paths.shape[0]} learning rates")
        return time.monotonic() - t0


def own_settings(count, rng):
    """``count`` settings a learner picks on its own, as the page offers them: an optimizer; for Momentum a beta
    from the slider (0.00..0.99), mostly at the default 100 steps; else a step count from the list."""
    found = []
    for _ in range(count):
        optimizer = rng.choice(("SGD", "Momentum", "Adam"))
        steps = 100 if optimizer == "Momentum" and rng.random() < 0.7 else rng.randrange(1, 51) * 10
        found.append(setting_key(optimizer, rng.randrange(0, 100) / 100, steps))
    return found


async def one_learner(server, rng, together, own, think, arrive_at, asked):
    result = {"time_to_lab": None, "together": None, "own": [], "reload": None, "error": None}
    learner = Learner(server.base, server.token)
    try:
        result["time_to_lab"] = await learner.arrive()
        await asyncio.sleep(max(0.0, arrive_at - time.monotonic()))  # everyone switches when the instructor says
        result["together"] = await learner.setting(together)
        for key in own:
            await asyncio.sleep(rng.uniform(*think))
            new = key not in asked  # nobody in the room asked for it before: the worker computes it now
            asked.add(key)
            result["own"].append((await learner.setting(key), new))
        result["reload"] = await learner.arrive()
    except Exception as err:  # noqa: BLE001 - counted and shown: a benchmark reports, it does not stop
        result["error"] = f"{type(err).__name__}: {err}"
    return result


async def room_of(server, n, seed, own_count, think, asked):
    AsyncHTTPClient.configure(None, max_clients=max(10, 2 * n))
    rng = random.Random(seed)
    while (together := setting_key("Momentum", rng.randrange(0, 100) / 100, 100)) in asked:
        pass
    asked.add(together)
    owns = [own_settings(own_count, rng) for _ in range(n)]
    arrive_at = time.monotonic() + 5 + n * 0.05
    return together, await asyncio.gather(*(one_learner(server, random.Random(seed * 1000 + i), together, owns[i],
                                                        think, arrive_at, asked) for i in range(n)))


def measure_room(server, n, seed, own_count, think, asked):
    before = server.usage()
    t0 = time.monotonic()
    together, results = asyncio.run(room_of(server, n, seed, own_count, think, asked))
    took = time.monotonic() - t0
    after = server.usage()
    errors = [r["error"] for r in results if r["error"]]
    own = [took for r in results for took, _ in r["own"]]
    own_new = [took for r in results for took, new in r["own"] if new]

    def stat(values, q):
        value = percentile([v for v in values if v is not None], q)
        return None if value is None else round(value, 3)

    ttl = [r["time_to_lab"] for r in results]
    tog = [r["together"] for r in results]
    row = {
        "learners": n, "seconds": round(took, 1), "errors": len(errors), "error_examples": errors[:3],
        "time_to_lab_p50": stat(ttl, 50), "time_to_lab_p95": stat(ttl, 95),
        "together_key": together, "together_p50": stat(tog, 50), "together_p95": stat(tog, 95),
        "own_count": len(own), "own_p50": stat(own, 50), "own_p95": stat(own, 95),
        "own_new_count": len(own_new), "own_new_p50": stat(own_new, 50), "own_new_p95": stat(own_new, 95),
        "reload_p95": stat([r["reload"] for r in results], 95),
        "new_settings": 1 + len(own_new),  # the instructor's and the learners' new ones: what the worker computed
        "rss_mb": {k: round(v[1] / 2**20) for k, v in after.items()},
        "cpu_s": {k: round(after[k][0] - before.get(k, (0, 0))[0], 2) for k in after},
    }
    row["worker_cpu_per_new_s"] = round(row["cpu_s"].get("worker", 0) / row["new_settings"], 2)
    return row


# ---- the browser: slider moves ------------------------------------------------------------------------------
CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
MOVES_JS = """async (n) => {
  const slider = document.querySelector('.lr-lab-slider'), canvas = document.querySelector('.lr-lab-figure canvas');
  const settle = () => new Promise((r) => {  // after every task and microtask the event queued (no timer clamp)
    const c = new MessageChannel(); c.port1.onmessage = r; c.port2.postMessage(0);
  });
  const drags = [], releases = [], start = Number(slider.value), max = Number(slider.max), first = canvas.toDataURL();
  let redrawn = 0;
  for (let i = 0; i < n; i++) {
    slider.value = String((start + 7 * (i + 1)) % (max + 1));
    let t0 = performance.now();
    slider.dispatchEvent(new Event('input'));       // a drag: drawn from the payload in the page
    await settle();
    drags.push(performance.now() - t0);
    if (i % 10 === 9) {                             // every tenth move is a release: a try, the status line
      t0 = performance.now();
      slider.dispatchEvent(new Event('change'));
      await settle();
      releases.push(performance.now() - t0);
      if (canvas.toDataURL() !== first) redrawn++;
    }
  }
  return { drags, releases, redrawn, status: document.querySelector('.lr-lab-status').textContent };
}"""


def browser_moves(server, moves=100, lang=None):
    """One page in Chromium: per-move times in the page, requests sent during the moves, server CPU then."""
    from playwright.sync_api import sync_playwright

    requests, errors = [], []
    with sync_playwright() as manager:
        browser = manager.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
            "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            t0 = time.monotonic()
            page.goto(server.url if not lang else server.url.replace("/?", f"/{lang}/?"))
            page.wait_for_selector(".lr-lab-status:not(:empty)", timeout=60_000)
            page_ready = time.monotonic() - t0
            status_before = page.inner_text(".lr-lab-status")
            loaded = len(requests)
            cpu_before = {k: v[0] for k, v in server.usage().items()}
            t1 = time.monotonic()
            out = page.evaluate(MOVES_JS, moves)
            wall = time.monotonic() - t1
            cpu_after = {k: v[0] for k, v in server.usage().items()}
        finally:
            browser.close()
    drags, releases = out["drags"], out["releases"]
    return {"moves": moves, "page_ready_s": round(page_ready, 2), "move_p50_ms": round(percentile(drags, 50), 2),
            "move_p95_ms": round(percentile(drags, 95), 2), "move_max_ms": round(max(drags), 2),
            "release_p95_ms": round(percentile(releases, 95), 2) if releases else None,
            "redrawn_releases": out["redrawn"], "releases": len(releases),
            "requests_during_moves": len(requests) - loaded,
            "requests_off_host": [u for u in requests if not u.startswith(server.base + "/")],
            "server_cpu_during_moves_s": {k: round(cpu_after[k] - cpu_before.get(k, 0), 3) for k in cpu_after},
            "wall_s": round(wall, 2), "status_changed": out["status"] != status_before, "errors": errors}


# ---- the report -------------------------------------------------------------------------------------------
def _fmt(value, unit=""):
    return "-" if value is None else f"{value:g}{unit}"


def table(rows):
    lines = ["| learners | time to lab p50 / p95 s | together p50 / p95 s | own settings p50 / p95 s (n) | "
             "of them new p50 / p95 s (n) | reload p95 s | errors | RSS MB launcher + worker | "
             "CPU s launcher / worker (per new setting) | phase s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rss, cpu = r["rss_mb"], r["cpu_s"]
        lines.append(f"| {r['learners']} | {_fmt(r['time_to_lab_p50'])} / {_fmt(r['time_to_lab_p95'])} | "
                     f"{_fmt(r['together_p50'])} / {_fmt(r['together_p95'])} | {_fmt(r['own_p50'])} / "
                     f"{_fmt(r['own_p95'])} ({r['own_count']}) | {_fmt(r['own_new_p50'])} / "
                     f"{_fmt(r['own_new_p95'])} ({r['own_new_count']}) | {_fmt(r['reload_p95'])} | {r['errors']} | "
                     f"{rss.get('launcher', 0)} + {rss.get('worker', 0)} | {cpu.get('launcher', 0):.1f} / "
                     f"{cpu.get('worker', 0):.1f} ({r['worker_cpu_per_new_s']}) | {r['seconds']:.0f} | {r['load']} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, nargs="+", default=[5, 20, 50, 100])
    parser.add_argument("--own", type=int, default=2, help="own new settings per learner (default 2)")
    parser.add_argument("--think", type=float, nargs=2, default=[30.0, 90.0], metavar=("LOW", "HIGH"),
                        help="seconds between a learner's setting changes (default 30 90: one a minute)")
    parser.add_argument("--moves", type=int, default=100, help="slider moves in Chromium (default 100; 0: none)")
    parser.add_argument("--deadline", type=float, default=3600, help="stop the whole run after this many seconds")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if any(n < 1 or n > 400 for n in args.learners) or args.own < 0 or not 0 <= args.think[0] <= args.think[1]:
        parser.error("learners must be in 1..400, --own >= 0, --think LOW <= HIGH")
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("the run's --deadline passed")))
    signal.alarm(int(args.deadline))
    load_start = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"{started:%Y-%m-%d %H:%M} UTC, {psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GB, "
          f"load average {load_start[0]:.1f} at the start", flush=True)
    server = ClassroomServer(room=sum(args.learners) + 10)
    report = {"started": started.isoformat(timespec="minutes"), "load_start": load_start, "rooms": []}
    try:
        report["ready_s"] = round(server.wait_ready(), 1)
        print(f"server ready (MindSpore compiled, presets computed) in {report['ready_s']} s", flush=True)
        asked = set(classroom.PRESET_KEYS)
        for i, n in enumerate(args.learners):
            row = measure_room(server, n, seed=i + 1, own_count=args.own, think=args.think, asked=asked)
            row["load"] = round(os.getloadavg()[0], 1)
            report["rooms"].append(row)
            print(json.dumps(row), flush=True)
        if args.moves:
            report["browser"] = browser_moves(server, args.moves)
            print(json.dumps(report["browser"]), flush=True)
    finally:
        signal.alarm(0)
        took, outlived = server.stop()
        report["stop_s"], report["outlived"] = round(took, 1), sorted(outlived)
        report["load_end"] = os.getloadavg()
        shutil.rmtree(server.cache, ignore_errors=True)  # its computed settings; the server's log stays
        print(f"the server's log: {server.log_path}")
    rooms = report["rooms"]
    print("\n" + table(rooms))
    worst = {"time_to_lab_p95": max((r["time_to_lab_p95"] or 0) for r in rooms),
             "own_p95": max((r["own_new_p95"] or 0) for r in rooms), "errors": sum(r["errors"] for r in rooms)}
    if "browser" in report:
        b = report["browser"]
        worst["move_p95_ms"] = b["move_p95_ms"]
        cpu = sum(b["server_cpu_during_moves_s"].values())
        print(f"\nChromium, one page, {b['moves']} moves: browser time per move (a drag) p50 {b['move_p50_ms']} ms, "
              f"p95 {b['move_p95_ms']} ms (max {b['move_max_ms']}); per release (every tenth move: a try and the "
              f"status line) p95 {b['release_p95_ms']} ms; requests during the moves: "
              f"{b['requests_during_moves']}; server CPU during them: {cpu:.3f} s ({cpu / b['moves'] * 1000:.2f} ms "
              f"per move; launcher and worker idle); requests off 127.0.0.1: {len(b['requests_off_host'])}; "
              f"console errors: {len(b['errors'])}")
    print("\nGoals (measured / goal, the worst room):")
    for name, goal in GOALS.items():
        if name in worst:
            ratio = "" if not goal else f" = {worst[name] / goal:.2f}x"
            print(f"  {name}: {worst[name]} / {goal}{ratio}")
    print(f"Load average {report['load_start'][0]:.1f} at the start, {report['load_end'][0]:.1f} at the end "
          f"(1-minute); server ready in {report['ready_s']} s; stopped with Ctrl-C in {report['stop_s']} s; "
          f"processes that outlived it: {len(report['outlived'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    failed = worst["errors"] or report["outlived"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
