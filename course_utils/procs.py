"""Process trees, on psutil (Linux, macOS and Windows alike): find what a launch or a server started, and stop it.

A launcher or test marks every process it starts with an environment variable (``name=value``); children
inherit it, so :func:`marked` finds them even after they were re-parented, and :func:`stop` ends them all.
"""

import psutil


def _check_pid(pid):
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
        raise TypeError(f"pid must be a non-negative int, got {type(pid).__name__} {pid!r}")


def alive(pid):
    """True while ``pid`` runs; a zombie (ended, not yet reaped) does not count."""
    _check_pid(pid)
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def exists(pid):
    """True if a process ``pid`` exists at all (also a zombie, or another user's)."""
    _check_pid(pid)
    return psutil.pid_exists(pid)


def descendants(pid):
    """PIDs of every process below ``pid`` (children, grandchildren, ...); empty if ``pid`` has ended."""
    _check_pid(pid)
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


def marked(name, value):
    """{pid: environment} of the live processes of this user whose environment has ``name=value``."""
    if not isinstance(name, str) or not name or "=" in name:
        raise ValueError(f"name must be an environment variable name, got {name!r}")
    if not isinstance(value, str):
        raise TypeError(f"value must be a string, got {type(value).__name__}")
    found = {}
    for proc in psutil.process_iter():
        try:
            env = proc.environ()
            if env.get(name) == value and proc.status() != psutil.STATUS_ZOMBIE:
                found[proc.pid] = env
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue  # ended meanwhile, or another user's
    found.pop(psutil.Process().pid, None)
    return found


def stop(pids, grace=5.0):
    """SIGTERM each of ``pids``, wait up to ``grace`` seconds, then SIGKILL what still runs.

    Returns the PIDs that had to be killed. Ended or unknown PIDs are ignored.
    """
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0 <= grace < 3600:
        raise ValueError(f"grace must be a number of seconds in [0, 3600), got {grace!r}")
    procs = []
    for pid in set(pids):
        _check_pid(pid)
        try:
            proc = psutil.Process(pid)
            proc.terminate()
            procs.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    _, still = psutil.wait_procs(procs, timeout=grace)
    for proc in still:
        try:
            proc.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    psutil.wait_procs(still, timeout=5)
    return {proc.pid for proc in still}
