"""Load test of the classroom server (make classroom): N simulated learners, on 127.0.0.1 only.

    .venv/bin/python benchmarks/classroom_load.py [--learners 5 10 20 30] [--moves 8] [--deadline 1500]

For each N, a fresh classroom server (app/classroom.py's Voila command: N places, N labs pre-heated) is
started on 127.0.0.1; once its pool is heated, N learners arrive at once. Each one, as the browser page
does over the same protocol: loads the page (GET with the room's token), connects to its kernel, asks for
the widgets' state (the lab is live when the slider, the optimizer buttons and the status line are there),
moves the learning-rate slider ``--moves`` times (``--think`` 1 to 3 s apart: a person looks at the figure
before the next move; every learner of the room at the same time), switches the optimizer to Momentum and
to Adam, and leaves (the page's unload call shuts its lab down).
A move is timed from the widget update sent to the kernel being idle again with the lab's new status and
figure sent back; a move that gets no new status line, or no answer in 60 s, is an error.

It reports, per N: the time to heat the pool, time to a live lab (p50/p95), slider-move latency (p50/p95),
optimizer-switch latency (the first use of an optimizer may compile it), errors, resident memory per
kernel and in total, the drop of the machine's available memory, and whether any kernel or other process
outlived the server after Ctrl-C (SIGINT). Then this machine's capacity: the largest N with 0 errors,
p95 time-to-lab <= 15 s and p95 move <= 300 ms. It stops on its own: every phase has a deadline, the
whole run ``--deadline`` seconds, an N is skipped when the machine lacks the memory for it, and every
process it started is stopped (and checked) before it exits.
"""

import argparse
import asyncio
import datetime
import importlib.util
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from course_utils import procs  # noqa: E402

TARGET_TIME_TO_LAB, TARGET_MOVE = 15.0, 0.300  # seconds: the capacity criteria (p95)
MOVE_TIMEOUT = 60.0
LAB_TIMEOUT = 120.0  # a learner who has no live lab after this long counts as an error
MOVE_LRS = (0.05, 0.3, 0.5, 0.75, 0.8, 0.82, 0.1, 0.6, 0.2, 0.7, 0.4, 0.65)  # distinct: each move retrains
OPTIMIZER_SWITCHES = ("Momentum", "Adam")


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


# ---- the server -----------------------------------------------------------------------------------------------
class ClassroomServer:
    """The classroom's Voila on 127.0.0.1 in its own process group, marked so that every kernel is found."""

    def __init__(self, room, pool=None, idle_minutes=20, log_dir=None, extra_args=()):
        self.room, self.port, self.token = room, free_port(), uuid.uuid4().hex
        self.mark = uuid.uuid4().hex
        argv, env, self.url = classroom.classroom_command("127.0.0.1", self.port, room, pool, idle_minutes,
                                                          self.token)
        self.base = f"http://127.0.0.1:{self.port}"
        self.tmp = Path(tempfile.mkdtemp(prefix="classroom-load-", dir=log_dir))
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                         ("IPYTHONDIR", "ipython"), ("JUPYTER_DATA_DIR", "data"), ("MPLCONFIGDIR", "matplotlib")):
            (self.tmp / sub).mkdir()
            env[var] = str(self.tmp / sub)
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env[classroom.MARK] = self.mark
        self.log_path = self.tmp / "voila.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([*argv, *extra_args], env=env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=classroom.restore_sigint)

    def log(self):
        return self.log_path.read_text(errors="replace")

    def wait_until(self, what, predicate, timeout, interval=0.25):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode} while waiting for {what}:\n"
                                   f"{self.log()[-3000:]}")
            if predicate():
                return
            time.sleep(interval)
        raise TimeoutError(f"{what}: not within {timeout:.0f} s\n{self.log()[-3000:]}")

    def wait_listening(self, timeout=60):
        def listening():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        self.wait_until("the server to listen", listening, timeout)

    def wait_heated(self, count, timeout):
        """Until at least ``count`` labs have run the app notebook: Voila's pool was filled once and every
        kernel's CPU time stands still for 2 s (Voila logs "filled" when the kernels start, before they run it)."""
        pattern = re.compile(r"is filled with \d+ kernel")
        self.wait_until("the pool to fill", lambda: pattern.search(self.log()), timeout, interval=0.5)
        last = {}

        def settled():
            now = {}
            for proc in self.kernels():
                try:
                    now[proc.pid] = sum(proc.cpu_times()[:2])
                except psutil.Error:
                    continue
            calm = (len(now) >= count and set(now) == set(last)
                    and all(now[pid] - last[pid] < 0.05 for pid in now))
            last.clear()
            last.update(now)
            return calm
        self.wait_until(f"{count} labs to finish running the app notebook", settled, timeout, interval=2.0)

    def kernels(self):
        """psutil.Process of every lab kernel of this server."""
        found = []
        for pid in procs.marked(classroom.MARK, self.mark):
            try:
                proc = psutil.Process(pid)
                if "ipykernel" in " ".join(proc.cmdline()):
                    found.append(proc)
            except psutil.Error:
                continue
        return found

    def memory(self):
        """(resident MB of each kernel, unique MB of each kernel, resident MB of kernels and server together).

        Resident (RSS) counts the libraries that all kernels share (MindSpore's, numpy's) in each of them;
        unique (USS) is what one more kernel really adds."""
        rss, uss = [], []
        for proc in self.kernels():
            try:
                info = proc.memory_full_info()
                rss.append(info.rss / 2**20)
                uss.append(info.uss / 2**20)
            except psutil.Error:
                continue
        try:
            server = psutil.Process(self.proc.pid).memory_info().rss / 2**20
        except psutil.Error:
            server = 0.0
        return rss, uss, sum(rss) + server

    def server_cpu_seconds(self):
        """CPU seconds (user + system) of the Voila server process itself (not its kernels)."""
        try:
            return sum(psutil.Process(self.proc.pid).cpu_times()[:2])
        except psutil.Error:
            return 0.0

    def kernel_cpu_seconds(self):
        total = 0.0
        for proc in self.kernels():
            try:
                total += sum(proc.cpu_times()[:2])
            except psutil.Error:
                continue
        return total

    def stop(self, timeout=30):
        """Ctrl-C (SIGINT) as an instructor would; returns (seconds to exit, processes that outlived it).

        Whatever outlived it is then killed, so nothing is left behind either way."""
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        took = time.monotonic() - t0
        deadline = time.monotonic() + 5  # a kernel told to shut down may take a moment to exit
        left = set(procs.marked(classroom.MARK, self.mark))
        while left and time.monotonic() < deadline:
            time.sleep(0.25)
            left = set(procs.marked(classroom.MARK, self.mark))
        procs.stop(left, grace=5)
        self._log.close()
        return took, sorted(left)


# ---- one learner, over the browser's protocol ---------------------------------------------------------------
# Jupyter's kernel websocket protocol v1, as JupyterLab's and Voila's pages speak it: one binary frame of
# little-endian uint64 offsets, then the channel name, header, parent header, metadata, content, buffers.
# (Voila 0.5.13 hangs on the older unnamed protocol's binary frames, so a client must ask for this one.)
WS_PROTOCOL = "v1.kernel.websocket.jupyter.org"


def _v1_frame(channel, parts):
    chunks = [channel.encode(), *parts]
    offsets = [8 * (len(chunks) + 2)]
    for chunk in chunks:
        offsets.append(offsets[-1] + len(chunk))
    head = len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets)
    return head + b"".join(chunks)


def _v1_parts(frame):
    if isinstance(frame, str):
        frame = frame.encode()
    count = int.from_bytes(frame[:8], "little")
    if not 2 <= count <= 64:
        raise LabGone(f"not a v1 kernel message ({count} offsets)")
    offsets = [int.from_bytes(frame[8 * (i + 1):8 * (i + 2)], "little") for i in range(count)]
    chunks = [frame[offsets[i]:offsets[i + 1]] for i in range(count - 1)]
    return chunks[0].decode(), chunks[1:]


class LabGone(Exception):
    """The lab's kernel died or its connection closed."""


class Learner:
    """One browser tab of the lab, spoken over the Jupyter kernel protocol the Voila page uses."""

    def __init__(self, base, token, name="learner"):
        self.base, self.token, self.name = base, token, name
        self.session = uuid.uuid4().hex
        self.kernel_id = self.ws = None
        self.models = {}  # model_id -> state
        self.ids = {}  # role -> model_id
        self.closed = False
        self.statuses = []  # execution states seen (e.g. "dead")

    # -- http ---------------------------------------------------------------------------------------
    async def load_page(self, timeout=LAB_TIMEOUT):
        """GET the page; returns (status, html). Raises nothing for HTTP errors (a 503 is a result)."""
        request = HTTPRequest(f"{self.base}/?token={self.token}", request_timeout=timeout, connect_timeout=timeout)
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
        except (HTTPClientError, OSError) as err:
            raise LabGone(f"page load failed: {err}") from err
        html = (response.body or b"").decode(errors="replace")
        match = re.search(r'"kernelId":\s*"([0-9a-f-]+)"', html)
        self.kernel_id = match.group(1) if match else None
        return response.code, html

    async def shutdown_like_page_unload(self):
        """What the Voila page does on `beforeunload`: ask the server to shut this lab down."""
        request = HTTPRequest(f"{self.base}/voila/api/shutdown/{self.kernel_id}", method="POST", body=b"",
                              headers={"Authorization": f"token {self.token}"}, request_timeout=30)
        response = await AsyncHTTPClient().fetch(request, raise_error=False)
        return response.code

    # -- kernel channels ------------------------------------------------------------------------------
    async def connect(self, timeout=LAB_TIMEOUT):
        url = (f"ws://127.0.0.1:{self.base.rsplit(':', 1)[1]}/api/kernels/{self.kernel_id}/channels"
               f"?session_id={self.session}&token={self.token}")
        self.ws = await asyncio.wait_for(websocket_connect(url, max_message_size=64 * 2**20,
                                                           subprotocols=[WS_PROTOCOL]), timeout)

    def _send(self, msg_type, content, channel="shell", metadata=None):
        msg_id = uuid.uuid4().hex
        now = datetime.datetime.now(datetime.timezone.utc).isoformat()
        header = {"msg_id": msg_id, "username": "learner", "session": self.session, "date": now,
                  "msg_type": msg_type, "version": "5.3"}
        parts = [json.dumps(part).encode() for part in (header, {}, metadata or {}, content)]
        self.ws.write_message(_v1_frame(channel, parts), binary=True)
        return msg_id

    async def _receive(self, timeout):
        raw = await asyncio.wait_for(self.ws.read_message(), timeout)
        if raw is None:
            self.closed = True
            raise LabGone("the connection to the lab closed")
        channel, parts = _v1_parts(raw)
        header, parent, _metadata, content = (json.loads(part) for part in parts[:4])
        msg = {"channel": channel, "header": header, "msg_type": header.get("msg_type"), "parent_header": parent,
               "content": content}
        if msg["msg_type"] == "status":
            state = content.get("execution_state")
            self.statuses.append(state)
            if state == "dead":
                raise LabGone("the lab's kernel died")
        return msg

    async def request(self, msg_type, content, timeout, on_message=None):
        """Send on the shell channel and read until the kernel is idle after it; returns the seconds taken."""
        t0 = time.perf_counter()
        msg_id = self._send(msg_type, content)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to {msg_type} within {timeout:.0f} s")
            msg = await self._receive(left)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if on_message:
                on_message(msg)
            if msg.get("msg_type") == "status" and msg["content"].get("execution_state") == "idle":
                return time.perf_counter() - t0

    async def fetch_widgets(self, timeout=LAB_TIMEOUT):
        """Open ipywidgets' control comm and ask for every widget's state, as the page's widget manager does."""
        comm_id = uuid.uuid4().hex
        states = {}

        def on_message(msg):
            data = msg.get("content", {}).get("data", {})
            if msg.get("msg_type") == "comm_msg" and data.get("method") == "update_states":
                states.update(data.get("states", {}))

        self._send("comm_open", {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}},
                   metadata={"version": "1.0.0"})  # ipywidgets' control protocol
        await self.request("comm_msg", {"comm_id": comm_id, "data": {"method": "request_states"}}, timeout,
                           on_message)
        self.models = {mid: s.get("state", {}) for mid, s in states.items()}
        names = {mid: s.get("model_name") for mid, s in states.items()}
        for role, kinds in (("slider", ("FloatLogSlider", "FloatSlider")), ("optimizer", ("ToggleButtonsModel",
                            "DropdownModel", "RadioButtonsModel")), ("status", ("HTMLModel",))):
            matches = [mid for mid, state in self.models.items()
                       if f"lr-lab-{role}" in state.get("_dom_classes", ()) and
                       any(names[mid].startswith(k.replace("Model", "")) for k in kinds)]
            if matches:
                self.ids[role] = matches[0]
        missing = {"slider", "optimizer", "status"} - set(self.ids)
        if missing:
            raise LabGone(f"the lab has no {', '.join(sorted(missing))} widget (is the app notebook broken?)")

    def status_text(self):
        return re.sub(r"<[^>]+>", "", self.models[self.ids["status"]].get("value", ""))

    async def change(self, role, state, timeout=MOVE_TIMEOUT):
        """Set a widget's state as the browser does; returns seconds until the kernel is idle with a new status."""
        updated = []

        def on_message(msg):
            content = msg.get("content", {})
            data = content.get("data", {})
            if msg.get("msg_type") == "comm_msg" and data.get("method") in ("update", "echo_update"):
                model = content.get("comm_id")
                if model in self.models:
                    self.models[model].update(data.get("state", {}))
                    if model == self.ids["status"] and "value" in data.get("state", {}):
                        updated.append(model)

        seconds = await self.request("comm_msg", {"comm_id": self.ids[role], "data": {
            "method": "update", "state": state, "buffer_paths": []}}, timeout, on_message)
        if not updated:
            raise LabGone(f"the lab did not answer the {role} change {state} (no new status line)")
        return seconds

    async def close(self):
        if self.ws is not None:
            self.ws.close()
            self.ws = None


THINK = (1.0, 3.0)  # seconds between two moves of one learner


async def one_learner(base, token, moves, seed, leave=True, think=THINK):
    """Arrive, wait for the live lab, move the slider, switch optimizers, leave. Returns a result dict."""
    rng = random.Random(seed)
    learner = Learner(base, token, name=f"learner {seed}")
    result = {"time_to_lab": None, "moves": [], "switches": [], "error": None, "room_full": False}
    t0 = time.perf_counter()
    try:
        code, html = await learner.load_page()
        if code == 503:
            result["room_full"] = "classroom-full" in html
            raise LabGone("the room is full (503)")
        if code != 200 or not learner.kernel_id:
            raise LabGone(f"the page answered HTTP {code} without a lab")
        await learner.connect()
        await learner.fetch_widgets()
        result["time_to_lab"] = time.perf_counter() - t0
        current = learner.models[learner.ids["slider"]].get("value")
        lrs = [lr for lr in MOVE_LRS if lr != current]  # a move to the current value retrains nothing
        rng.shuffle(lrs)
        for i in range(moves):
            await asyncio.sleep(rng.uniform(*think))
            result["moves"].append(await learner.change("slider", {"value": lrs[i % len(lrs)]}))
        labels = learner.models[learner.ids["optimizer"]].get("_options_labels", [])
        for name in OPTIMIZER_SWITCHES:
            if name in labels:
                await asyncio.sleep(rng.uniform(*think))
                result["switches"].append(await learner.change("optimizer", {"index": labels.index(name)}))
    except (LabGone, TimeoutError, asyncio.TimeoutError, OSError) as err:
        result["error"] = f"{type(err).__name__}: {err}"
    finally:
        try:
            if leave and learner.kernel_id:
                await learner.shutdown_like_page_unload()
        except Exception as err:  # noqa: BLE001 - the result says it; the server check finds leftovers
            result["error"] = result["error"] or f"leaving failed: {err}"
        await learner.close()
    return result


async def arrive_together(base, token, n, moves, think=THINK, seed=0):
    AsyncHTTPClient.configure(None, max_clients=max(10, 2 * n))
    return await asyncio.gather(*(one_learner(base, token, moves, seed * 1000 + i, think=think) for i in range(n)))


# ---- one room, and the whole table ------------------------------------------------------------------------
class KernelCPU:
    """CPU seconds of a server's kernels from now until ``stop()``, sampled every half second (a kernel that ends
    keeps its last sample); kernels started meanwhile count from 0 and are also reported apart."""

    def __init__(self, server):
        import threading

        self.server, self.first, self.last, self.new = server, {}, {}, set()
        for proc in server.kernels():
            self._sample(proc, at_start=True)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self, proc, at_start=False):
        try:
            seconds = sum(proc.cpu_times()[:2])
        except psutil.Error:
            return
        if proc.pid not in self.first:
            self.first[proc.pid] = seconds if at_start else 0.0
            if not at_start:
                self.new.add(proc.pid)
        self.last[proc.pid] = seconds

    def _run(self):
        while not self._done.wait(0.5):
            for proc in self.server.kernels():
                self._sample(proc)

    def stop(self):
        """(CPU s of all kernels, number started during the run, CPU s of those)."""
        self._done.set()
        self._thread.join()
        for proc in self.server.kernels():
            self._sample(proc)
        spent = {pid: self.last[pid] - self.first[pid] for pid in self.first}
        return sum(spent.values()), len(self.new), sum(spent[pid] for pid in self.new)


def run_room(n, moves, heat_timeout, think=THINK, log_dir=None):
    """Serve a room of ``n`` (n places, n pre-heated), let n learners arrive at once; returns the figures."""
    available_before = psutil.virtual_memory().available / 2**20
    server = ClassroomServer(room=n, pool=n, log_dir=log_dir)
    row = {"n": n, "errors": None, "outlived": None}
    try:
        t0 = time.monotonic()
        server.wait_listening()
        server.wait_heated(n, heat_timeout)
        row["heat_s"] = time.monotonic() - t0
        rss, uss, total = server.memory()
        row.update(rss_per_kernel_mb=statistics.mean(rss) if rss else None, rss_total_mb=total, kernels=len(rss),
                   uss_per_kernel_mb=statistics.mean(uss) if uss else None,
                   heat_cpu_s_per_lab=server.kernel_cpu_seconds() / max(1, len(rss)))
        cpu = psutil.cpu_percent(interval=None)
        sampler = KernelCPU(server)
        spent = (server.server_cpu_seconds(), time.process_time(), time.monotonic())
        results = asyncio.run(arrive_together(server.base, server.token, n, moves, think))
        row["cpu_percent_during"] = psutil.cpu_percent(interval=None) if cpu is not None else None
        # Where the session's CPU went: the labs (kernels; those started during the session, when Voila refills
        # its pool, counted separately), the Voila server relaying messages, and this script playing the
        # learners' browsers (in a real room, on the learners' own machines).
        kernels_s, new_kernels, new_kernels_s = sampler.stop()
        row.update(session_s=time.monotonic() - spent[2], cpu_kernels_s=kernels_s, kernels_started=new_kernels,
                   cpu_new_kernels_s=new_kernels_s, cpu_server_s=server.server_cpu_seconds() - spent[0],
                   cpu_learners_s=time.process_time() - spent[1])
        row["available_drop_mb"] = available_before - psutil.virtual_memory().available / 2**20
        ttl = [r["time_to_lab"] for r in results if r["time_to_lab"] is not None]
        move = [m for r in results for m in r["moves"]]
        switch = [m for r in results for m in r["switches"]]
        errors = [r["error"] for r in results if r["error"]]
        row.update(ttl_p50=percentile(ttl, 50), ttl_p95=percentile(ttl, 95), move_p50=percentile(move, 50),
                   move_p95=percentile(move, 95), switch_p50=percentile(switch, 50),
                   switch_p95=percentile(switch, 95), moves=len(move), errors=len(errors),
                   error_samples=sorted(set(errors))[:3])
    except (TimeoutError, RuntimeError) as err:
        row["errors"] = n
        row["error_samples"] = [str(err).splitlines()[0]]
    finally:
        row["stop_s"], outlived = server.stop()
        row["outlived"] = len(outlived)
    return row


def meets_targets(row):
    return (row.get("errors") == 0 and row.get("outlived") == 0 and row.get("ttl_p95") is not None
            and row["ttl_p95"] <= TARGET_TIME_TO_LAB and row["move_p95"] is not None
            and row["move_p95"] <= TARGET_MOVE)


def _fmt(value, scale=1.0, digits=2):
    return "-" if value is None else f"{value * scale:.{digits}f}"


def print_table(rows, out=sys.stdout):
    print("\n| learners | heat pool s (CPU s per lab) | time to lab p50 / p95 s | move p50 / p95 ms "
          "| switch p50 / p95 ms | errors | per kernel MB RSS / unique | total RSS MB | available memory drop MB "
          "| outlived the server | verdict |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|---|", file=out)
    for r in rows:
        if r.get("skipped"):
            print(f"| {r['n']} | skipped: {r['skipped']} |||||||||| - |", file=out)
            continue
        verdict = "OK" if meets_targets(r) else "over target"
        print(f"| {r['n']} | {_fmt(r.get('heat_s'), digits=0)} ({_fmt(r.get('heat_cpu_s_per_lab'), digits=1)}) "
              f"| {_fmt(r.get('ttl_p50'))} / {_fmt(r.get('ttl_p95'))} "
              f"| {_fmt(r.get('move_p50'), 1000, 0)} / {_fmt(r.get('move_p95'), 1000, 0)} "
              f"| {_fmt(r.get('switch_p50'), 1000, 0)} / {_fmt(r.get('switch_p95'), 1000, 0)} | {r.get('errors')} "
              f"| {_fmt(r.get('rss_per_kernel_mb'), digits=0)} / {_fmt(r.get('uss_per_kernel_mb'), digits=0)} "
              f"| {_fmt(r.get('rss_total_mb'), digits=0)} "
              f"| {_fmt(r.get('available_drop_mb'), digits=0)} | {r.get('outlived')} | {verdict} |", file=out)
    for r in rows:
        for sample in r.get("error_samples") or ():
            print(f"  N={r['n']} error: {sample}", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, nargs="+", default=[5, 10, 20, 30], help="room sizes to test")
    parser.add_argument("--moves", type=int, default=8, help="slider moves per learner (default 8)")
    parser.add_argument("--think", type=float, nargs=2, default=list(THINK), metavar=("LOW", "HIGH"),
                        help="seconds between a learner's moves, drawn uniformly (default 1 3)")
    parser.add_argument("--deadline", type=float, default=1500, help="seconds for the whole run (default 1500)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    for n in args.learners:
        if not 1 <= n <= 60:
            parser.error(f"--learners: each room size must be in 1..60, got {n}")
    if not 1 <= args.moves <= 50:
        parser.error(f"--moves must be in 1..50, got {args.moves}")
    if not 0 <= args.think[0] <= args.think[1] <= 60:
        parser.error(f"--think LOW HIGH must satisfy 0 <= LOW <= HIGH <= 60, got {args.think}")
    os.environ.setdefault("GLOG_v", "3")
    started = time.monotonic()
    cpus = os.cpu_count()
    print(f"classroom load test: {cpus} CPU(s), {psutil.virtual_memory().total / 2**30:.1f} GiB memory "
          f"({psutil.virtual_memory().available / 2**30:.1f} available), load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; learners {args.learners}, {args.moves} moves each, "
          f"{args.think[0]:g}-{args.think[1]:g} s apart")
    rows, per_kernel_mb = [], 400.0  # unique memory of one lab, updated from each room measured
    for n in args.learners:
        left = args.deadline - (time.monotonic() - started)
        need_mb = n * per_kernel_mb * 1.5 + 1024
        available_mb = psutil.virtual_memory().available / 2**20
        if left < 60:
            rows.append({"n": n, "skipped": f"the run's deadline ({args.deadline:.0f} s) is reached"})
            continue
        if need_mb > available_mb:
            rows.append({"n": n, "skipped": f"needs about {need_mb / 1024:.1f} GiB, {available_mb / 1024:.1f} "
                                            "available"})
            continue
        print(f"N={n}: heating {n} labs, then {n} learners arrive at once ...", flush=True)
        row = run_room(n, args.moves, heat_timeout=min(left - 30, 60 + 20 * n), think=tuple(args.think))
        rows.append(row)
        per_kernel_mb = max(per_kernel_mb, row.get("uss_per_kernel_mb") or 0)
        figures = {k: v for k, v in row.items() if k != "error_samples"}
        print(f"  done in {time.monotonic() - started:.0f} s: {json.dumps(figures, default=str)}", flush=True)
    print_table(rows)
    ok = [r["n"] for r in rows if not r.get("skipped") and meets_targets(r)]
    bad = [r["n"] for r in rows if not r.get("skipped") and not meets_targets(r)]
    largest_ok = max((n for n in ok if all(b > n for b in bad)), default=None)
    print(f"\ncapacity of this machine: {largest_ok if largest_ok else 'none of the tested rooms'} learners "
          f"(0 errors, p95 time to lab <= {TARGET_TIME_TO_LAB:.0f} s, p95 move <= {TARGET_MOVE * 1000:.0f} ms)")
    print("goal (a room of 20):", "MET" if largest_ok and largest_ok >= 20 else "NOT MET")
    outlived = sum(r.get("outlived") or 0 for r in rows)
    print(f"processes that outlived their server: {outlived}", "(OK)" if outlived == 0 else "(BUG: they were killed)")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"run took {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0 if outlived == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
