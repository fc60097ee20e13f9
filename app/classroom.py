"""Serve the learning-rate lab to a whole room from this machine: each learner's browser gets a live lab.

    make classroom                                   # 127.0.0.1 only: try it on this machine first
    make classroom IP=lan                            # the room: this machine's address on the local network
    .venv/bin/python app/classroom.py [--ip ADDRESS|lan] [--port 8866] [--room 20] [--pool N]
                                      [--idle-minutes 20] [--token WORD] [--no-qr]

It is Voila (app/serve.py, the same page as ``make app``) with the settings a room needs, all of them
Voila's or Jupyter Server's own: ``--room`` places (kernels; one more learner gets a "the lab is full" page
that retries by itself), ``--pool`` labs pre-heated before anyone arrives (MindSpore imported, the lab
built), idle labs of closed tabs culled after ``--idle-minutes``, a dead kernel removed instead of restarted
blank. It prints the link to share (with the room's token) and, when the room can reach it, a QR code.
Ctrl-C stops the server and every lab; nothing is left running, even if Voila itself hangs or dies.
"""

import argparse
import ipaddress
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

APP_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(APP_DIR))  # app/ is not a package: serve.py sits beside this file
import serve  # noqa: E402

ROOT = APP_DIR.parent
sys.path.insert(0, str(ROOT))
from course_utils import procs  # noqa: E402

MARK = "COURSE_CLASSROOM_RUN"  # given to Voila, so to every kernel: found and stopped even if re-parented
STOP_GRACE = 30  # seconds Voila gets to shut its kernels down after Ctrl-C before they are killed
DEFAULT_ROOM, DEFAULT_IDLE_MINUTES = 20, 20


def lan_address():
    """This machine's address on the local network (the interface of its default route; nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed, only selects the interface
            return probe.getsockname()[0]
        except OSError as err:
            raise ValueError("no network found to serve the room on: connect this machine to the room's "
                             "network (Wi-Fi or cable), or pass its address with --ip") from err


def check_settings(ip="127.0.0.1", port=8866, room=DEFAULT_ROOM, pool=None, idle_minutes=DEFAULT_IDLE_MINUTES,
                   token=None):
    """The settings made valid, or a ValueError that says what to change. Returns (ip, pool, token)."""
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
    if isinstance(room, bool) or not isinstance(room, int) or not 1 <= room <= 200:
        raise ValueError(f"room (the number of places) must be an int in 1..200, got {room!r}")
    pool = room if pool is None else pool
    if isinstance(pool, bool) or not isinstance(pool, int) or not 0 <= pool <= room:
        raise ValueError(f"pool (labs pre-heated) must be an int in 0..room ({room}), got {pool!r}")
    number = isinstance(idle_minutes, (int, float)) and not isinstance(idle_minutes, bool)
    if not number or not 0.1 <= idle_minutes <= 24 * 60:
        raise ValueError(f"idle_minutes must be a number of minutes in 0.1..1440, got {idle_minutes!r}")
    if token is None:
        token = secrets.token_hex(8)
    elif not isinstance(token, str) or not token.isascii() or not token.isalnum() or len(token) < 8:
        raise ValueError(f"token must be at least 8 letters and digits (it is the room's password), got {token!r}")
    return str(address), pool, token


def classroom_command(ip="127.0.0.1", port=8866, room=DEFAULT_ROOM, pool=None, idle_minutes=DEFAULT_IDLE_MINUTES,
                      token=None, python=sys.executable, lang="en"):
    """(argv, env, url) of the Voila server for a room; ``url`` is the link to share (it carries the token).

    ``lang="zh"``: the Chinese edition of the app (its page and every lab in Chinese)."""
    ip, pool, token = check_settings(ip, port, room, pool, idle_minutes, token)
    argv, env = serve.voila_command(port, token=token, open_browser=False, python=python, lang=lang)
    argv = [arg for arg in argv if not arg.startswith("--Voila.ip=")] + [
        f"--Voila.ip={ip}",
        "--VoilaConfiguration.multi_kernel_manager_class=classroom_kernels.ClassroomKernelManager",
        f"--ClassroomKernelManager.max_kernels={room}",
        f"--VoilaConfiguration.preheat_kernel={pool > 0}",
        f"--VoilaConfiguration.default_pool_size={pool}",
        # Closed tabs: Voila shuts a lab down when its page unloads; the culler catches those it missed
        # (a laptop that went to sleep). A lab with an open page is never culled, however idle.
        f"--MappingKernelManager.cull_idle_timeout={round(idle_minutes * 60)}",
        f"--MappingKernelManager.cull_interval={max(1, min(60, round(idle_minutes * 30)))}",
        "--MappingKernelManager.cull_connected=False",
        "--KernelRestarter.restart_limit=0",  # a killed kernel is removed, not restarted without its lab
    ]
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(APP_DIR), str(ROOT), env.get("PYTHONPATH")) if p)
    # Pre-heated labs also compile and train the first sweep of every optimizer before learners arrive: a
    # learner's first switch to Momentum or Adam is then a look-up, not seconds of CPU during the session.
    env["COURSE_LAB_WARM_UP"] = "1"
    return argv, env, f"http://{ip}:{port}/?token={token}"


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


def _banner(ip, url, room, pool, idle_minutes, show_qr):
    lines = ["", "The learning-rate lab for a room, served from this machine (Voila; Ctrl-C stops it)."]
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
    preheat = (f"{pool} labs are being pre-heated now (about {max(1, round(pool * 3 / 60))} min on 2 cores); "
               if pool else "no labs pre-heated: each learner waits for one to start; ")
    lines += [f"  {room} places: {preheat}learner {room + 1} gets a 'the lab is full' page that retries by itself.",
              f"  A lab whose page was closed is shut down (at the latest after {idle_minutes:g} idle minutes).", ""]
    return "\n".join(lines)


def restore_sigint():
    """In a child: Ctrl-C's default action again. A launcher started in the background (by a script, an init
    system) inherits SIGINT ignored, and Voila would inherit that too and never stop on it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(argv, env, mark, grace=STOP_GRACE, out=sys.stdout):
    """Run Voila until it ends or Ctrl-C/SIGTERM; then stop it and every process it started. Returns its exit code."""
    env = {**env, MARK: mark}
    # Its own session: a Ctrl-C in the terminal reaches this launcher only, which then stops Voila in order.
    server = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                              preexec_fn=restore_sigint)
    stopping = []

    def on_signal(signum, frame):
        stopping.append(signum)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    code = None
    try:
        try:
            code = server.wait()
        except KeyboardInterrupt:
            print("\nStopping the classroom server: every lab is being shut down "
                  f"(at most {grace} s; Ctrl-C again to kill at once)...", file=out, flush=True)
            server.send_signal(signal.SIGINT)  # Voila: "Stopping...", then it shuts its kernels down
            try:
                code = server.wait(timeout=grace)
            except (subprocess.TimeoutExpired, KeyboardInterrupt):
                print("Voila did not stop in time: killing it.", file=out, flush=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server.poll() is None:
            procs.stop([server.pid], grace=2)
            code = server.wait()
        left = set(procs.marked(MARK, mark))
        deadline = time.monotonic() + 5  # a kernel whose start was cut short exits once it sees Voila gone
        while left and time.monotonic() < deadline:
            time.sleep(0.25)
            left = set(procs.marked(MARK, mark))
        if left:
            procs.stop(left, grace=5)
            print(f"Stopped {len(left)} lab process(es) that outlived the server.", file=out, flush=True)
    if stopping:
        print("The classroom server has stopped; no lab is left running.", file=out, flush=True)
        return 0
    print(f"The classroom server ended by itself (exit code {code}); no lab is left running.", file=out, flush=True)
    return code


def main(args=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ip", default="127.0.0.1",
                        help="address to serve on: 127.0.0.1 (default, this machine only), 'lan' (this machine's "
                             "address on the local network) or one of this machine's addresses")
    parser.add_argument("--port", type=int, default=8866, help="port (default 8866)")
    parser.add_argument("--room", type=int, default=DEFAULT_ROOM,
                        help=f"places: labs that may run at once (default {DEFAULT_ROOM}; sizes: INSTRUCTORS.md)")
    parser.add_argument("--pool", type=int, default=None,
                        help="labs pre-heated before learners arrive (default: --room)")
    parser.add_argument("--idle-minutes", type=float, default=DEFAULT_IDLE_MINUTES,
                        help="shut down a lab whose page is gone after this many idle minutes "
                             f"(default {DEFAULT_IDLE_MINUTES})")
    parser.add_argument("--token", default=None, help="the room's password in the link (default: a random one)")
    parser.add_argument("--no-qr", action="store_true", help="do not print the link as a QR code")
    parser.add_argument("--lang", choices=sorted(serve.NOTEBOOKS), default="en",
                        help="the app's language: en (default) or zh (中文版)")
    options = parser.parse_args(args)
    try:
        ip, pool, token = check_settings(options.ip, options.port, options.room, options.pool,
                                         options.idle_minutes, options.token)
        _check_port_free(ip, options.port)
        argv, env, url = classroom_command(ip, options.port, options.room, pool, options.idle_minutes, token,
                                           lang=options.lang)
    except ValueError as err:
        parser.exit(2, f"classroom: {err}\n")
    print(_banner(ip, url, options.room, pool, options.idle_minutes, not options.no_qr), flush=True)
    return run(argv, env, os.environ.get(MARK) or uuid.uuid4().hex)


if __name__ == "__main__":
    sys.exit(main())
