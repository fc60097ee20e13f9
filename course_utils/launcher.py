"""Run a training script as several local worker processes with MindSpore's own launcher, msrun.

``launch("dp_train.py", num_workers=2)`` runs, in a new temporary working directory,

    python -m mindspore.parallel.cluster.run --worker_num=2 --local_worker_num=2 --master_addr=127.0.0.1
        --master_port=<a free port> --log_dir=<work_dir>/logs --join=True --cluster_time_out=30 dp_train.py

with the running interpreter and its environment, and returns each rank's log and what each rank wrote
to ``result_rank_<rank>.json`` in its working directory. msrun starts a scheduler and the workers with
the bare ``python`` on PATH, so this interpreter's bin directory goes first on PATH.

``launch(..., nodes=2)`` rehearses a job of several machines on this one: one msrun per node, each with
``--node_rank=k``, ``--local_worker_num=num_workers // nodes`` and the same ``--worker_num`` and scheduler
address (127.0.0.1), exactly the commands one would type on each machine. One thing differs on one
machine: every msrun would find 127.0.0.1 among its own addresses and start a scheduler, and the second
one would fail on the taken port. So the nodes after the first are run by msrun's own ``main`` told that
the scheduler's address is not theirs (:data:`NODE_SHIM`), which is what a second machine sees.
``node_ranks`` starts only some of the nodes (the others are machines that never came up).

A launch never hangs and leaves no process behind: when a rank fails, the cluster does not form (a node
never joins), the scheduler dies, or ``timeout`` passes, every process of the job is killed and
``LaunchError`` names the ranks (and nodes) concerned and quotes their logs.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from course_utils import procs
from course_utils._validate import require_int, require_number, shown

MAX_WORKERS = 32
MAX_SECONDS = 24 * 3600  # the longest timeout a launch accepts: a day
RESULT_FILE = "result_rank_{rank}.json"  # what a rank writes into its working directory for launch()
MS_LOG_LINE = re.compile(r"^\[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ")  # MindSpore's own log lines
_MS_ERROR = re.compile(r"^\[(ERROR|CRITICAL)\] [A-Z_]+\([^)]*\):\S+ \[[^\]]*\] (.*)$")
LAUNCH_TAG = "COURSE_LAUNCH_ID"  # every process of a launch inherits it: "<launching pid>-<random hex>"
_TRACEBACK = "Traceback (most recent call last)"
_NO_CLUSTER = "Failed to initialize distributed job cluster"
_WORKER_FAILED = "exit with exception"  # what msrun logs when it sees a worker fail
# msrun for a node that is not the scheduler's machine: its "is this address mine?" answers no.
NODE_SHIM = ("import sys; from mindspore.parallel.cluster.process_entity import _api; "
             "_api._is_local_ip = lambda address: False; from mindspore.parallel.cluster.run import main; "
             "sys.argv[0] = 'msrun'; main()")


class LaunchError(RuntimeError):
    """A launch failed or timed out. ``logs`` maps rank to log text; ``work_dir`` keeps every file."""

    def __init__(self, message, work_dir, logs):
        super().__init__(message)
        self.work_dir, self.logs = work_dir, logs


class LaunchResult:
    """A finished launch: ``results[rank]`` is the rank's JSON, ``logs[rank]`` its log text.

    ``command`` is the (first) node's msrun command, ``commands`` one per node.
    """

    def __init__(self, command, work_dir, results, logs, seconds, commands=None):
        self.command, self.work_dir, self.results, self.logs, self.seconds = command, work_dir, results, logs, seconds
        self.commands = [command] if commands is None else list(commands)

    def printed(self, rank):
        """The lines rank ``rank`` printed: its log without MindSpore's log lines (they hold PIDs, times)."""
        if rank not in self.logs:
            raise ValueError(f"no rank {rank}: this launch had ranks {sorted(self.logs)}")
        return [line for line in self.logs[rank].splitlines() if line.strip() and not MS_LOG_LINE.match(line)]

    def display_command(self):
        """The msrun command(s) as one would type them (one line per node), with placeholders for the port
        and the temporary path."""
        return "\n".join(_typed(command, self.work_dir) for command in self.commands)

    def __repr__(self):
        return f"LaunchResult(ranks={sorted(self.logs)}, results from ranks {sorted(self.results)})"


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_is_free(port):
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def msrun_command(script, num_workers, port, log_dir, cluster_time_out=30, script_args=(), *, nodes=1,
                  node_rank=0):
    """The msrun command line, run by this interpreter, for ``num_workers`` workers on ``nodes`` nodes
    (all on this machine); with ``nodes > 1``, the command of node ``node_rank``."""
    require_int("num_workers", num_workers, 1, MAX_WORKERS)
    require_int("port", port, 1, 65535)
    require_int("cluster_time_out", cluster_time_out, 1, MAX_SECONDS)
    nodes = _require_nodes(num_workers, nodes)
    require_int("node_rank", node_rank, 0, nodes - 1)
    if isinstance(script_args, (str, bytes)) or not all(isinstance(a, str) for a in script_args):
        raise TypeError(f"script_args must be a list of strings, got {shown(script_args)}")
    program = ["-m", "mindspore.parallel.cluster.run"] if node_rank == 0 else ["-c", NODE_SHIM]
    placement = [f"--node_rank={node_rank}"] if nodes > 1 else []
    return [sys.executable, *program, f"--worker_num={num_workers}",
            f"--local_worker_num={num_workers // nodes}", *placement, "--master_addr=127.0.0.1",
            f"--master_port={port}", f"--log_dir={log_dir}", "--join=True", f"--cluster_time_out={cluster_time_out}",
            str(script), *script_args]


def _require_nodes(num_workers, nodes):
    nodes = require_int("nodes", nodes, 1, MAX_WORKERS)
    if num_workers % nodes:
        raise ValueError(f"num_workers ({num_workers}) must be a multiple of nodes ({nodes}): every node runs "
                         f"the same number of workers")
    return nodes


def _typed(command, work_dir):
    """An msrun command as one would type it: msrun, its options (port and temporary path as placeholders)."""
    script_at = next(i for i, a in enumerate(command) if i >= 3 and not a.startswith("--"))
    options = [a.replace(work_dir, "<work_dir>") for a in command[3:script_at]]
    options = ["--master_port=<port>" if a.startswith("--master_port=") else a for a in options]
    return " ".join(["msrun", *options, Path(command[script_at]).name, *command[script_at + 1:]])


def _check_args(script, num_workers, script_args, timeout, cluster_time_out, port, work_dir, nodes=1,
                node_ranks=None):
    if not isinstance(script, (str, os.PathLike)):
        raise TypeError(f"script must be the path of a .py file (str or Path), got {type(script).__name__}")
    path = Path(script).resolve()
    if path.suffix != ".py":
        raise ValueError(f"script must be a Python file ending in .py, got {str(script)!r}")
    if not path.is_file():
        raise FileNotFoundError(f"no script at {path}: write it first (for example with %%writefile)")
    require_int("num_workers", num_workers, 1, MAX_WORKERS)
    nodes = _require_nodes(num_workers, nodes)
    if node_ranks is not None:
        if isinstance(node_ranks, (str, bytes)) or not hasattr(node_ranks, "__iter__"):
            raise TypeError(f"node_ranks must be a list of node numbers or None, got {shown(node_ranks)}")
        node_ranks = [require_int("each of node_ranks", k, 0, nodes - 1) for k in node_ranks]
        if 0 not in node_ranks or len(set(node_ranks)) != len(node_ranks):
            raise ValueError(f"node_ranks must name different nodes and include node 0 (it runs the scheduler), "
                             f"got {node_ranks}")
    if isinstance(script_args, (str, bytes)) or not all(isinstance(a, str) for a in script_args):
        raise TypeError(f"script_args must be a list of strings, got {shown(script_args)}")
    # finite and bounded: a NaN or infinite timeout would switch off the guarantee that a launch never hangs
    require_number("timeout (a number of seconds)", timeout, 1, MAX_SECONDS)
    require_number("cluster_time_out (a number of seconds)", cluster_time_out, 5, MAX_SECONDS)
    if isinstance(cluster_time_out, float) and not cluster_time_out.is_integer():
        raise ValueError(f"cluster_time_out must be a whole number of seconds, got {cluster_time_out}")
    if port is not None:
        if isinstance(port, bool) or not isinstance(port, int):
            raise TypeError(f"port must be an int, or None to pick a free one; got {shown(port)}")
        if not 1024 <= port <= 65535:
            raise ValueError(f"port must be in 1024..65535, got {port}")
        if not _port_is_free(port):
            raise ValueError(f"port {port} on 127.0.0.1 is already in use: pass port=None to pick a free one")
    if work_dir is not None and (not isinstance(work_dir, (str, os.PathLike)) or not Path(work_dir).is_dir()):
        raise ValueError(f"work_dir must be an existing directory or None, got {str(work_dir)!r}")
    return path, nodes, sorted(range(nodes) if node_ranks is None else node_ranks)


def _environment(tag):
    """This interpreter's environment, its bin directory first on PATH, and the launch's tag."""
    env = dict(os.environ)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    found = shutil.which("python", path=env["PATH"])
    if found is None or os.path.realpath(found) != os.path.realpath(sys.executable):
        raise RuntimeError(f"msrun starts workers with the `python` on PATH, but {bin_dir} has no `python` "
                           f"that runs {sys.executable}: run the course from its virtual environment")
    env[LAUNCH_TAG] = tag
    return env


def _job_processes(tag):
    """{pid: environment} of the live processes of the launch tagged ``tag`` (workers inherit the tag)."""
    return procs.marked(LAUNCH_TAG, tag)


def _kill(pids):
    """SIGKILL each process and its process group (msrun puts every worker in a group of its own)."""
    own_group = os.getpgid(0) if hasattr(os, "getpgid") else None
    for pid in pids:
        try:
            if own_group is not None:
                group = os.getpgid(pid)
                if group != own_group:
                    os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _stop_everything(runs, tag, seen):
    """Kill each msrun, its scheduler, the workers and their children; wait until none of them runs."""
    runs = list(runs)
    seen = {*(run.pid for run in runs), *seen, *_job_processes(tag)}
    _kill(seen)
    for run in runs:
        try:
            run.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        tagged = set(_job_processes(tag))
        seen |= tagged
        _kill(tagged)
        if not any(procs.alive(pid) for pid in seen):
            return
        time.sleep(0.1)


def _read(path):
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def log_excerpt(text, max_lines=15):
    """The part of a log worth quoting: its last Python traceback, else its last lines.

    MindSpore's INFO and WARNING lines and its C++ call stack are left out; its ERROR lines are kept,
    without the process id, the time and the source file.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a log as a string, got {shown(text)}")
    require_int("max_lines", max_lines, 3)
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    if starts:
        lines = lines[starts[-1]:]
        cut = [i for i, line in enumerate(lines) if "C++ Call Stack" in line]
        lines = lines[:cut[0]] if cut else lines
    kept = []
    for line in lines:
        error = _MS_ERROR.match(line)
        if error:
            kept.append(f"[{error.group(1)}] {error.group(2)}")
        elif line.strip() and not MS_LOG_LINE.match(line) and set(line.strip()) != {"-"}:
            kept.append(line)
    if len(kept) > max_lines:
        kept = kept[:2] + ["..."] + kept[3 - max_lines:]
    return "\n".join(kept) or "(nothing in the log)"


def _ranks(ranks):
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def _diagnose(reason, logs, scheduler_log, msrun_log, port, running, per_node=None, missing_nodes=()):
    """Say what went wrong and which ranks (and, with several nodes, which nodes) failed, quoting their logs."""
    crashed = [r for r, text in logs.items() if _TRACEBACK in text and _NO_CLUSTER not in text]
    waited = [r for r, text in logs.items() if _NO_CLUSTER in text]
    silent = [r for r, text in logs.items() if _TRACEBACK not in text]
    parts, quote = [reason], sorted(logs)
    if crashed:
        parts.append(f"{_ranks(crashed)} failed; msrun then stopped the other processes.")
        quote = crashed
    elif _TRACEBACK in scheduler_log and "TCP server" in scheduler_log:
        parts.append(f"The scheduler could not listen on 127.0.0.1:{port}: does another program use the port?")
        parts.append("--- scheduler.log ---\n" + _indent(log_excerpt(scheduler_log)))
        quote = []
    elif waited:
        never = f"{_ranks(silent)} never joined (did not reach init() in time); " if silent else ""
        if per_node and silent:
            nodes = sorted({rank // per_node for rank in silent})
            absent = [k for k in nodes if k in missing_nodes]
            how = "was never started" if absent == nodes else "did not join in time"
            never = (f"node{'s' if len(nodes) > 1 else ''} {', '.join(map(str, nodes))} ({_ranks(silent)}) never "
                     f"joined ({how}); ")
        parts.append(f"The cluster never formed: {never}{_ranks(waited)} gave up waiting.")
        quote = silent + waited
    elif running:
        parts.append(f"Still running when stopped: {_ranks(running)}.")
    for rank in quote:
        if per_node and rank // per_node in missing_nodes:
            continue  # a node that was never started has no log
        parts.append(f"--- rank {rank}: worker_{rank}.log ---\n" + _indent(log_excerpt(logs[rank])))
    if not any(logs.values()) and not scheduler_log:
        parts.append("--- msrun's own output ---\n" + _indent(log_excerpt(msrun_log)))
    return "\n".join(parts)


def _indent(text):
    return "\n".join("    " + line for line in text.splitlines())


def _doomed(scheduler_log, msrun_log):
    """Seconds to wait before stopping a job that cannot succeed any more, or None while it may.

    msrun notices some failures only after cluster_time_out (a scheduler without its port) or waits for the
    scheduler after a worker failed; a short grace lets the other processes write why they stopped.
    """
    if _TRACEBACK in scheduler_log and "TCP server" in scheduler_log:
        return 2  # the scheduler could not listen: the workers would wait for it until cluster_time_out
    if _WORKER_FAILED in msrun_log:
        return 2  # msrun saw a worker fail and killed the others; it only waits for the scheduler now
    if _TRACEBACK in scheduler_log:
        return 15  # the cluster failed; the workers report why when their own wait ends
    return None


def launch(script, num_workers=2, *, script_args=(), timeout=180, cluster_time_out=30, port=None, work_dir=None,
           nodes=1, node_ranks=None):
    """Run ``script`` with msrun as ``num_workers`` workers on this machine; return a LaunchResult.

    The workers run in ``work_dir`` (default: a new temporary directory, removed when Python exits) and
    msrun writes their logs to ``work_dir/logs``. ``nodes=2`` runs the job as two msrun invocations
    (``--node_rank`` 0 and 1), as two machines would; ``node_ranks`` starts only those nodes (node 0
    always). Raises LaunchError, naming the ranks concerned and quoting their logs, if a rank fails, the
    cluster does not form within ``cluster_time_out`` seconds (a node never joined), or the job takes longer
    than ``timeout`` seconds. No process of the job outlives the call.
    """
    path, nodes, started_nodes = _check_args(script, num_workers, script_args, timeout, cluster_time_out, port,
                                             work_dir, nodes, node_ranks)
    port = free_port() if port is None else port
    if work_dir is None:
        from course_utils.env import scratch_dir

        work_dir = scratch_dir(prefix="msrun-")
    work_dir = str(Path(work_dir).resolve())
    log_dir = os.path.join(work_dir, "logs")
    scheduler_log = os.path.join(log_dir, "scheduler.log")
    msrun_logs = {k: os.path.join(work_dir, "msrun.log" if nodes == 1 else f"msrun_node{k}.log") for k in range(nodes)}
    commands = {k: msrun_command(path, num_workers, port, log_dir, int(cluster_time_out), tuple(script_args),
                                 nodes=nodes, node_rank=k) for k in range(nodes)}
    tag = f"{os.getpid()}-{uuid.uuid4().hex}"  # who launched, and which launch
    env = _environment(tag)
    seen, reason, running, stop_at, runs = set(), None, [], float("inf"), {}
    started = time.monotonic()
    try:
        for k in started_nodes:
            with open(msrun_logs[k], "w", encoding="utf-8") as out:
                runs[k] = subprocess.Popen(commands[k], cwd=work_dir, env=env, stdout=out, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
        while any(run.poll() is None for run in runs.values()):
            for run in runs.values():
                seen |= procs.descendants(run.pid)  # also found by their tag later, even once re-parented
            if time.monotonic() - started > timeout:
                running = sorted({int(env["RANK_ID"]) for env in _job_processes(tag).values()
                                 if env.get("MS_ROLE") == "MS_WORKER" and env.get("RANK_ID", "").isdigit()})
                reason = f"The job did not finish within timeout={timeout} s and was stopped."
                break
            failed = [k for k, run in runs.items() if run.poll() not in (None, 0)]
            grace = 2 if failed else _doomed(_read(scheduler_log), "".join(_read(msrun_logs[k]) for k in runs))
            if grace is not None:
                stop_at = min(stop_at, time.monotonic() + grace)
            if time.monotonic() > stop_at:
                reason = "The msrun job failed and was stopped."
                break
            time.sleep(0.25)
    finally:
        _stop_everything(runs.values(), tag, seen)  # nothing is left after a success; after an error or Ctrl+C, none
    logs = {rank: _read(os.path.join(log_dir, f"worker_{rank}.log")) for rank in range(num_workers)}
    codes = {k: run.returncode for k, run in runs.items()}
    if reason is None and any(codes.values()):
        reason = ("The msrun job failed (msrun exit code "
                  + ", ".join(f"{code} on node {k}" if nodes > 1 else str(code) for k, code in codes.items() if code)
                  + ").")
    if reason is not None:
        missing = [k for k in range(nodes) if k not in runs]
        message = _diagnose(reason, logs, _read(scheduler_log), "".join(_read(msrun_logs[k]) for k in runs), port,
                            running, num_workers // nodes if nodes > 1 else None, missing)
        raise LaunchError(f"{message}\nAll files: {work_dir}", work_dir, logs)
    results = {}
    for rank in range(num_workers):
        result_file = os.path.join(work_dir, RESULT_FILE.format(rank=rank))
        if os.path.exists(result_file):
            with open(result_file, encoding="utf-8") as f:
                results[rank] = json.load(f)
    return LaunchResult(commands[0], work_dir, results, logs, time.monotonic() - started,
                        [commands[k] for k in range(nodes)])
