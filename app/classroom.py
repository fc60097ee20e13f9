"""Serve the learning-rate lab to a whole room from this machine: a learner costs a page, not a kernel.

    make classroom                                   # 127.0.0.1 only: try it on this machine first
    make classroom IP=lan                            # the room: this machine's address on the local network
    .venv/bin/python app/classroom.py [--ip ADDRESS|lan] [--port 8866] [--room 100] [--token WORD] [--no-qr]
                                      [--lang en|zh] [--cache DIR]

One tornado Application on one port serves the lab's page (the page ``course_utils.lab.export`` writes for
the website, with a manifest made at start), its three files (lab.js, host.js, lab.css) and
``/payloads/<setting>.bin`` (also ``/payload/``): a setting's sweep of all 401 slider learning rates with what
the lab says about each, computed by MindSpore in ONE worker process the whole room shares. Requests queue to
it; each result is kept in memory and on disk (``--cache``, a temporary folder by default), so every later
learner, and the next start of the room, gets it as a file. The presets' settings (SGD, Momentum beta 0.9 and
Adam, 100 steps) are computed, and every optimizer compiled, before the link is printed (a restart on the same
cache prints it at once and compiles in the background). Slider moves, tries, presets, snap and the challenge
are answered in the page (host.js): they never reach this server.

A *place* is a browser that opened the lab (a cookie): its Reloads and extra tabs are the same place, a closed
tab keeps it (nothing to free; coming back is instant), and places are held until the server stops. Browser
``--room`` + 1 gets a page that says the room is full. A place costs no process, memory or CPU of its own: the
room's capacity is the worker's CPU for settings nobody asked for before (about a second each, one at a time).
The same page in the other language: ``/zh/`` or ``/en/`` after the link's address. Ctrl-C (or SIGTERM) stops
the server and the worker; nothing is left running, and the worker also ends by itself if this server dies.
"""

import argparse
import asyncio
import concurrent.futures
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

import psutil

APP_DIR = Path(__file__).resolve().parent
ROOT = APP_DIR.parent
sys.path.insert(0, str(ROOT))
from course_utils import procs  # noqa: E402
from course_utils.messages import lazy, t  # noqa: E402

MARK = "COURSE_CLASSROOM_RUN"  # given to the worker: found and stopped even if re-parented
LANGUAGES = ("en", "zh")
DEFAULT_ROOM, MAX_ROOM = 100, 500
STEPS_OPTIONS = tuple(range(10, 501, 10))  # the page's step counts
MAX_BETA = 0.99  # the page's momentum slider: 0 .. 0.99 in steps of 0.01
PRESET_KEYS = ("SGD-s100", "Momentum-b0.90-s100", "Adam-s100")  # what the page asks for first, and its buttons
MEMORY_CACHE_BYTES = 512 * 2**20  # payloads kept in memory (a 100-step setting is 0.56 MB, a 500-step one 2.5 MB)
DISK_CACHE_BYTES = 2 * 2**30  # and on disk: past this, new settings are computed again after a restart
LAB_FILES = {"lab.js": "text/javascript; charset=utf-8", "host.js": "text/javascript; charset=utf-8",
             "lab.css": "text/css; charset=utf-8"}
WEB = ROOT / "course_utils" / "lab" / "web"

FORBIDDEN = lazy("This page needs the room's link: open the link your instructor shared (it ends in ?token=...). "
                 "The token in this address is missing or wrong.")
FULL = lazy("The room is full: all {room} places are taken (a place is a browser that opened the lab). Share a "
            "neighbour's screen, or ask your instructor to restart the room with more places.")
NOT_FOUND = lazy("There is no such page here: open the room's link (the lab is at the link's address, / ).")
TITLE = lazy("Learning-rate lab")
WORKER_FAILED = lazy("the room's MindSpore worker could not compute {setting}: {error}")


# ---- settings ---------------------------------------------------------------------------------------------
def lan_address():
    """This machine's address on the local network (the interface of its default route; nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed, only selects the interface
            return probe.getsockname()[0]
        except OSError as err:
            raise ValueError("no network found to serve the room on: connect this machine to the room's "
                             "network (Wi-Fi or cable), or pass its address with --ip") from err


def check_settings(ip="127.0.0.1", port=8866, room=DEFAULT_ROOM, token=None, lang="en"):
    """The settings made valid, or a ValueError that says what to change. Returns (ip, token)."""
    if not isinstance(ip, str) or not ip:
        raise ValueError(f"ip must be an IPv4 address or 'lan', got {ip!r}")
    if ip == "lan":
        ip = lan_address()
    try:
        address = ipaddress.IPv4Address(ip)
    except ValueError:
        raise ValueError(f"ip must be an IPv4 address of this machine (e.g. 192.168.1.20) or 'lan', "
                         f"got {ip!r}") from None
    if address.is_unspecified:
        raise ValueError("ip 0.0.0.0 would serve every network this machine is on: name one address, "
                         "or 'lan' for the local network's")
    if isinstance(port, bool) or not isinstance(port, int) or not 1024 <= port < 65536:
        raise ValueError(f"port must be an int in 1024..65535, got {port!r}")
    if isinstance(room, bool) or not isinstance(room, int) or not 1 <= room <= MAX_ROOM:
        raise ValueError(f"room (the number of places: browsers that may open the lab) must be an int in "
                         f"1..{MAX_ROOM}, got {room!r}")
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    if token is None:
        token = secrets.token_hex(8)
    elif not isinstance(token, str) or not token.isascii() or not token.isalnum() or len(token) < 8:
        raise ValueError(f"token must be at least 8 letters and digits (it is the room's password), got {token!r}")
    return str(address), token


def check_key(key):
    """(optimizer, beta, steps) of a setting the page can ask for; a ValueError that says the form otherwise."""
    from course_utils.lab.payload import parse_key

    optimizer, beta, steps = parse_key(key)
    if steps not in STEPS_OPTIONS:
        raise ValueError(f"steps must be a multiple of 10 in 10..500, got {steps} in {key!r}")
    if not 0.0 <= beta <= MAX_BETA:
        raise ValueError(f"momentum beta must be in 0.00..{MAX_BETA:.2f}, got {beta:.2f} in {key!r}")
    return optimizer, beta, steps


@contextmanager
def language(lang):
    """t() in ``lang`` inside the block (the catalogue reads COURSE_LANG at every message)."""
    before = os.environ.get("COURSE_LANG")
    os.environ["COURSE_LANG"] = lang
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("COURSE_LANG", None)
        else:
            os.environ["COURSE_LANG"] = before


def say(lang, text, **fields):
    with language(lang):
        return t(text, **fields)


def cache_folder(base=None):
    """Where payloads are kept on disk: one sub-folder per version of the code that computes them."""
    digest = hashlib.sha256()
    code = ROOT / "course_utils"
    for path in sorted([*(code / "lab").glob("*.py"), code / "landscape.py", code / "data.py",
                        *(code / "messages" / "zh").glob("lab.*.json")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    base = Path(base) if base else Path(tempfile.gettempdir()) / "mindspore-course-classroom"
    return base / digest.hexdigest()[:16]


# ---- the worker: one process, MindSpore, every setting of the room ---------------------------------------------
WORKER_CODE = "import classroom; classroom.worker_main()"


def compute_payload(trainer, surface, key, lang, sweeps=None):
    """The payload of setting ``key`` in ``lang``, trained by ``trainer``; ``sweeps``: a dict kept between calls."""
    from course_utils.lab.payload import sweep_payload

    optimizer, beta, steps = check_key(key)
    sweeps = {} if sweeps is None else sweeps
    if key not in sweeps:
        sweeps[key] = trainer.sweep(optimizer, None, steps, (0.0, 0.0), beta)
        while len(sweeps) > 32:  # the texts of the other language come from the same sweep
            sweeps.pop(next(iter(sweeps)))
    with language(lang):
        return sweep_payload(sweeps[key], surface)


def worker_main():
    """The worker's loop: a line ``KEY LANG`` (or ``warm``) in, ``ok N``/``error N`` and N bytes out.

    Its answers go to a private copy of stdout; file descriptor 1 then points at stderr, so nothing MindSpore
    prints can get into an answer. It ends when its input closes (the server stopped, or died)."""
    os.environ.setdefault("GLOG_v", "3")
    requests, answers = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    parent = int(os.environ.get("COURSE_CLASSROOM_SERVER", os.getppid()))  # the server's PID, from the server
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    from course_utils.data import make_linear_data
    from course_utils.lab.trainers import OPTIMIZERS, MindSporeTrainer
    from course_utils.landscape import LossSurface

    x, y = make_linear_data()
    trainer, surface, sweeps = MindSporeTrainer(x, y), LossSurface(x, y), {}
    for line in requests:
        request = line.decode("utf-8", "replace").split()
        try:
            if request == ["warm"]:  # compile each optimizer: two chunks of steps, the first and one that continues
                for optimizer in OPTIMIZERS:
                    trainer.sweep(optimizer, None, 2 * trainer.chunk)
                blob = b""
            else:
                key, lang = request
                blob = compute_payload(trainer, surface, key, lang, sweeps)
            answer = b"ok %d\n" % len(blob) + blob
        except Exception as err:  # noqa: BLE001 - the server shows it; the worker goes on with the next setting
            message = f"{type(err).__name__}: {err}".encode()
            answer = b"error %d\n" % len(message) + message
        try:
            answers.write(answer)
            answers.flush()
        except BrokenPipeError:  # the server has gone
            break
    os._exit(0)  # at once: MindSpore's own teardown takes seconds and there is nothing to save


def _exit_with_parent(parent):
    """The worker's guard: if the server dies without a word (SIGKILL), end too, even in the middle of a compile."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(3)


class WorkerFailed(Exception):
    """The worker answered with an error, or died."""


class Worker:
    """The server's end of the worker: ``ask`` is called from one thread at a time (the room's queue)."""

    def __init__(self, env, cwd, python=sys.executable, log=None):
        self.env, self.cwd, self.python, self.log = env, cwd, python, log
        self.proc, self.lock, self.restarts = None, threading.Lock(), 0
        self.life, self.closing = threading.Lock(), False  # no (re)start once stop() has begun

    def start(self):
        with self.life:
            if self.closing:
                raise WorkerFailed("the classroom server is stopping")
            # Its own session: Ctrl-C in the terminal reaches the server only, which then stops the worker.
            self.proc = subprocess.Popen([self.python, "-c", WORKER_CODE], env=self.env, cwd=self.cwd,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                         start_new_session=True)

    def ask(self, request):
        """Bytes of the answer to one request line; WorkerFailed if it answers with an error. A worker that died
        (killed, out of memory) is started again and asked once more."""
        with self.lock:
            for attempt in (1, 2):
                if self.proc is None or self.proc.poll() is not None:
                    if self.proc is not None:
                        self.restarts += 1
                    self.start()
                try:
                    self.proc.stdin.write(request.encode() + b"\n")
                    self.proc.stdin.flush()
                    status, size = self.proc.stdout.readline().split()
                    body = self.proc.stdout.read(int(size))
                    if len(body) != int(size):
                        raise ValueError("a short answer")
                    break
                except (OSError, ValueError) as err:
                    self.proc.kill()
                    code = self.proc.wait()
                    if attempt == 2:
                        raise WorkerFailed(f"it stopped twice (exit code {code}; {err or 'no answer'})") from None
        if status != b"ok":
            raise WorkerFailed(body.decode("utf-8", "replace"))
        return body

    def stop(self, grace=2.0, hurry=lambda: False):
        """Close its input (it exits once it is between settings), then end it (it holds nothing to save). Its
        output is left open: the queue's thread may be reading it, and reads end when the process does."""
        with self.life:
            self.closing = True
            proc = self.proc
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + grace
        while proc.poll() is None and time.monotonic() < deadline and not hurry():
            time.sleep(0.05)
        if proc.poll() is None:  # with what it started (MindSpore runs helpers while it imports)
            procs.stop([proc.pid, *procs.descendants(proc.pid)], grace=0 if hurry() else 2)
        proc.wait()


class Payloads:
    """Every setting's payload, once: from memory, from disk, or computed by the worker (one at a time, and one
    computation for many learners who ask for the same new setting at once)."""

    def __init__(self, worker, folder):
        self.worker, self.folder = worker, Path(folder)
        self.memory, self.memory_bytes, self.pending = OrderedDict(), 0, {}
        self.queue = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="classroom-worker")
        for lang in LANGUAGES:
            (self.folder / lang).mkdir(parents=True, exist_ok=True)
        self.disk_bytes = sum(p.stat().st_size for p in self.folder.glob("*/*.bin"))
        self.computed = 0

    def _remember(self, name, blob):
        self.memory[name] = blob
        self.memory_bytes += len(blob)
        while self.memory_bytes > MEMORY_CACHE_BYTES and len(self.memory) > 1:
            self.memory_bytes -= len(self.memory.popitem(last=False)[1])

    def _compute(self, key, lang):
        blob = self.worker.ask(f"{key} {lang}")
        if self.disk_bytes + len(blob) <= DISK_CACHE_BYTES:
            path = self.folder / lang / f"{key}.bin"
            part = path.with_suffix(f".{uuid.uuid4().hex}.part")
            part.write_bytes(blob)
            os.replace(part, path)  # a reader never sees half a file
            self.disk_bytes += len(blob)
        self.computed += 1
        return blob

    async def get(self, key, lang):
        """The payload's bytes; ValueError for a setting the page cannot ask for, WorkerFailed."""
        check_key(key)
        name = (lang, key)
        if name in self.memory:
            self.memory.move_to_end(name)
            return self.memory[name]
        path = self.folder / lang / f"{key}.bin"
        if path.is_file():
            blob = path.read_bytes()
            self._remember(name, blob)
            return blob
        if name not in self.pending:
            future = asyncio.get_running_loop().run_in_executor(self.queue, self._compute, key, lang)
            self.pending[name] = future
            future.add_done_callback(lambda f: self.pending.pop(name, None))
        blob = await asyncio.shield(self.pending[name])
        if name not in self.memory:
            self._remember(name, blob)
        return blob

    async def warm(self):
        """Compile every optimizer (and its second chunk of steps) in the worker."""
        await asyncio.get_running_loop().run_in_executor(self.queue, self.worker.ask, "warm")

    def close(self):
        self.queue.shutdown(wait=False, cancel_futures=True)


# ---- the pages --------------------------------------------------------------------------------------------
def manifest(lang):
    """What the page needs to start, in ``lang``: the bowl, the texts, the step counts, the first setting."""
    from course_utils.data import make_linear_data
    from course_utils.lab.app import labels
    from course_utils.lab.payload import surface_info
    from course_utils.lab.trainers import LR_GRID, MOMENTUM
    from course_utils.landscape import LossSurface

    with language(lang):
        return {"mode": "server", "steps_options": list(STEPS_OPTIONS), "labels": labels(), "live": "",
                "surface": surface_info(LossSurface(*make_linear_data())),
                "state": {"optimizer": "SGD", "momentum": MOMENTUM, "steps": 100,
                          "index": int(abs(LR_GRID - 0.1).argmin())}}


def page(lang):
    from course_utils.lab.export import PAGE, embed_html

    return PAGE.format(lang="zh-CN" if lang == "zh" else "en", title=say(lang, TITLE),
                       embed=embed_html("./"))


def notice_page(lang, text):
    return (f'<!DOCTYPE html><html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
            f'<title>{say(lang, TITLE)}</title></head><body style="font: 18px/1.5 system-ui, '
            f"'Noto Sans CJK SC', sans-serif; max-width: 40em; margin: 2em auto\">"
            f'<p class="classroom-notice">{text}</p></body></html>')


class Room:
    """What the handlers share: the token, the places, the manifests and pages, the payloads."""

    def __init__(self, token, room, lang, port, payloads):
        self.token, self.room, self.lang, self.payloads = token, room, lang, payloads
        self.token_cookie, self.learner_cookie = f"classroom_token_{port}", f"classroom_learner_{port}"
        self.places = set()
        self.manifests = {lang: json.dumps(manifest(lang), ensure_ascii=False).encode() for lang in LANGUAGES}
        self.pages = {lang: page(lang).encode() for lang in LANGUAGES}
        self.files = {name: (WEB / name).read_bytes() for name in LAB_FILES}
        self.requests = 0


def application(room):
    from tornado import web

    class Handler(web.RequestHandler):
        def lang(self):
            prefix = self.path_kwargs.get("lang")
            return prefix if prefix in LANGUAGES else room.lang

        def prepare(self):
            room.requests += 1
            query = self.get_query_argument("token", None)
            given = query if query is not None else self.get_cookie(room.token_cookie, "")
            if not hmac.compare_digest(given.encode(), room.token.encode()):
                self.refuse(403, say(self.lang(), FORBIDDEN), html=self.page_route)
            elif query is not None:
                self.set_cookie(room.token_cookie, room.token, path="/", httponly=True, samesite="Strict")

        page_route = False

        def refuse(self, code, text, html=True):
            self.set_status(code)
            self.set_header("Cache-Control", "no-store")
            if html:
                self.set_header("Content-Type", "text/html; charset=utf-8")
                self.finish(notice_page(self.lang(), text))
            else:
                self.set_header("Content-Type", "text/plain; charset=utf-8")
                self.finish(text)

        def send(self, body, content_type):
            self.set_header("Content-Type", content_type)
            self.set_header("Cache-Control", "private, no-cache")  # the browser asks again; a 304 if unchanged
            self.finish(body)

        def write_error(self, status_code, **kwargs):
            self.refuse(status_code, f"{status_code} {self._reason}", html=self.page_route)

    class Page(Handler):
        page_route = True

        def get(self, lang=None):
            learner = self.get_cookie(room.learner_cookie)
            if learner not in room.places:
                if len(room.places) >= room.room:
                    return self.refuse(503, say(self.lang(), FULL, room=room.room))
                learner = secrets.token_hex(8)
                room.places.add(learner)
                self.set_cookie(room.learner_cookie, learner, path="/", httponly=True, samesite="Strict",
                                expires_days=2)
            self.send(room.pages[self.lang()], "text/html; charset=utf-8")

    class Manifest(Handler):
        def get(self, lang=None):
            self.send(room.manifests[self.lang()], "application/json; charset=utf-8")

    class File(Handler):
        def get(self, name, lang=None):
            self.send(room.files[name], LAB_FILES[name])

    class Payload(Handler):
        async def get(self, key, lang=None):
            try:
                blob = await room.payloads.get(key, self.lang())
            except ValueError as err:
                return self.refuse(400, str(err), html=False)
            except WorkerFailed as err:
                return self.refuse(503, say(self.lang(), WORKER_FAILED, setting=key, error=err), html=False)
            self.send(blob, "application/octet-stream")

    class Missing(Handler):
        page_route = True

        def prepare(self):
            super().prepare()
            if not self._finished:
                self.refuse(404, say(self.lang(), NOT_FOUND))

    prefix = r"/(?:(?P<lang>en|zh)/)?"
    files = "|".join(name.replace(".", r"\.") for name in LAB_FILES)
    return web.Application([
        (prefix + r"(?:index\.html)?", Page),
        (prefix + r"manifest\.json", Manifest),
        (prefix + rf"(?P<name>{files})", File),
        (prefix + r"payloads?/(?P<key>[^/]+)\.bin", Payload),
        (r"/(?P<lang>en|zh)", web.RedirectHandler, {"url": "/{lang}/", "permanent": False}),
    ], default_handler_class=Missing, compress_response=False, xheaders=False)


# ---- the launcher -----------------------------------------------------------------------------------------
def _check_port_free(ip, port):
    with socket.socket() as s:
        try:
            s.bind((ip, port))
        except OSError as err:
            raise ValueError(f"cannot listen on {ip}:{port} ({err.strerror}): is another server running there? "
                             f"Stop it, or pick another port with --port (make classroom PORT=8870)") from None


def _qr(url):
    try:
        import segno
    except ImportError:
        return "(no QR code: the segno package is missing; `make venv` installs it)"
    import io
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True)
    return out.getvalue()


def _banner(ip, url, room, show_qr, lang="en"):
    other = "zh" if lang == "en" else "en"
    lines = ["", "The learning-rate lab for a room, served from this machine (Ctrl-C stops it)."]
    if ipaddress.IPv4Address(ip).is_loopback:
        lines += ["  Only this machine can open it (127.0.0.1). For the room: make classroom IP=lan",
                  f"  Open: {url}"]
    else:
        lines += ["  WARNING: the lab is open to every device on this network that has the link below.",
                  "  Use a network you trust (the room's Wi-Fi, not a public one); the token in the link is the",
                  "  only password, so share it only with the room. Stop the server after the session.",
                  "", f"  Share this link: {url}"]
        if show_qr:
            lines.append(_qr(url))
    lines += [f"  The same lab in {'Chinese' if other == 'zh' else 'English'}: {url.replace('/?', f'/{other}/?')}",
              f"  {room} places: a place is a browser (its Reloads and tabs are the same place, a closed tab keeps "
              f"it);", f"  browser {room + 1} gets a 'the room is full' page. Slider moves never reach this server; "
              "a setting nobody asked for before", "  takes MindSpore about a second here, one at a time.", ""]
    return "\n".join(lines)


def worker_env(mark, lang):
    env = {**os.environ, MARK: mark, "GLOG_v": "3", "COURSE_LANG": lang, "COURSE_CLASSROOM_SERVER": str(os.getpid())}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(APP_DIR), str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def run(ip, port, room, token, lang="en", cache=None, show_qr=True, mark=None, out=sys.stdout):
    """Compute the presets, serve the room until Ctrl-C/SIGTERM, then stop the server and the worker. Returns 0."""
    mark = mark or os.environ.get(MARK) or uuid.uuid4().hex
    folder = cache_folder(cache)
    folder.mkdir(parents=True, exist_ok=True)
    worker = Worker(worker_env(mark, lang), cwd=folder)  # MindSpore writes rank_0/ and such into its cwd
    payloads = Payloads(worker, folder)
    signals = []
    previous = {sig: signal.signal(sig, lambda signum, frame: signals.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return asyncio.run(_serve(ip, port, room, token, lang, payloads, signals, show_qr, out))
    finally:
        # Signals stay caught until the worker has stopped: a second Ctrl-C cuts its grace short.
        payloads.close()
        worker.stop(hurry=lambda: len(signals) > 1)
        left = set(procs.marked(MARK, mark)) - {os.getpid()}
        if left:
            names = sorted({_name(pid) for pid in left})
            procs.stop(left, grace=2)
            print(f"Stopped {len(left)} process(es) that outlived the server: {', '.join(names)}.", file=out,
                  flush=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        print("The classroom server has stopped; nothing is left running.", file=out, flush=True)


def _name(pid):
    try:
        return " ".join(psutil.Process(pid).cmdline())[:80]
    except psutil.Error:
        return str(pid)


async def _serve(ip, port, room_size, token, lang, payloads, signals, show_qr, out):
    from tornado.httpserver import HTTPServer

    async def stopped():
        while not signals:
            await asyncio.sleep(0.1)

    t0 = time.monotonic()
    room = Room(token, room_size, lang, port, payloads)
    warm = asyncio.ensure_future(payloads.warm())  # first in the worker's queue: every setting waits for it
    warm.add_done_callback(lambda task: task.cancelled() or not task.exception() or print(
        f"MindSpore's worker could not compile the lab: {task.exception()}", file=sys.stderr, flush=True))
    if all((payloads.folder / lang / f"{key}.bin").is_file() for key in PRESET_KEYS):
        print("Starting: the presets' settings are in the cache (an earlier start computed them); MindSpore "
              "compiles in the background (a new setting waits for it).", file=out, flush=True)
    else:
        print("Starting: MindSpore compiles the lab's three optimizers and computes the presets' settings "
              "(seconds to minutes, with the machine's speed and load)...", file=out, flush=True)

    async def prepare():
        if not all((payloads.folder / lang / f"{key}.bin").is_file() for key in PRESET_KEYS):
            await warm
        for key in PRESET_KEYS:
            await payloads.get(key, lang)

    ready, stop = asyncio.ensure_future(prepare()), asyncio.ensure_future(stopped())
    await asyncio.wait([ready, stop], return_when=asyncio.FIRST_COMPLETED)
    if signals:
        ready.cancel()
        print("\nStopping: the room had not opened yet.", file=out, flush=True)
        return 0
    try:
        ready.result()
    except WorkerFailed as err:  # the worker cannot compute the presets: nothing to serve
        print(f"The room cannot open: MindSpore's worker could not compute the presets' settings: {err}",
              file=sys.stderr, flush=True)
        return 1
    server = HTTPServer(application(room), max_buffer_size=1 << 20)
    server.listen(port, address=ip)
    print(f"Ready in {time.monotonic() - t0:.0f} s.", file=out, flush=True)
    print(_banner(ip, f"http://{ip}:{port}/?token={token}", room_size, show_qr, lang), flush=True, file=out)
    await stop
    print(f"\nStopping the classroom server ({len(room.places)} places taken, {room.requests} requests answered, "
          f"{payloads.computed} settings computed)...", file=out, flush=True)
    server.stop()
    await server.close_all_connections()
    return 0


def main(args=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ip", default="127.0.0.1",
                        help="address to serve on: 127.0.0.1 (default, this machine only), 'lan' (this machine's "
                             "address on the local network) or one of this machine's addresses")
    parser.add_argument("--port", type=int, default=8866, help="port (default 8866)")
    parser.add_argument("--room", type=int, default=DEFAULT_ROOM,
                        help=f"places: browsers that may open the lab (default {DEFAULT_ROOM}; sizes: INSTRUCTORS.md)")
    parser.add_argument("--token", default=None, help="the room's password in the link (default: a random one)")
    parser.add_argument("--no-qr", action="store_true", help="do not print the link as a QR code")
    parser.add_argument("--lang", choices=LANGUAGES, default="en",
                        help="the room's language: en (default) or zh (中文版)")
    parser.add_argument("--zh", action="store_const", const="zh", dest="lang", help="the same as --lang zh")
    parser.add_argument("--cache", default=None, help="folder for computed settings (default: a temporary folder)")
    parser.add_argument("--pool", default=None, help="no longer used: there are no lab kernels to pre-heat")
    parser.add_argument("--idle-minutes", default=None, help="no longer used: a closed tab holds nothing to free")
    options = parser.parse_args(args)
    try:
        ip, token = check_settings(options.ip, options.port, options.room, options.token, options.lang)
        _check_port_free(ip, options.port)
    except ValueError as err:
        parser.exit(2, f"classroom: {err}\n")
    for flag, value, why in (("--pool", options.pool, "there are no lab kernels to pre-heat (the presets' settings "
                              "are computed at start)"),
                             ("--idle-minutes", options.idle_minutes, "a learner holds no kernel, so a closed tab "
                              "has nothing to free")):
        if value is not None:
            print(f"classroom: note: {flag} is no longer used and is ignored: {why}.", file=sys.stderr, flush=True)
    return run(ip, options.port, options.room, token, options.lang, options.cache, not options.no_qr)


if __name__ == "__main__":
    sys.exit(main())
