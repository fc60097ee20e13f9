"""Quiet logs, reproducible seeds, the device, and a scratch directory for what MindSpore writes."""

import atexit
import os
import re
import shutil
import sys
import tempfile

from course_utils import procs

_QUIET_LEVEL = "3"  # GLOG_v=3: errors only. 2 (the default) prints [WARNING] ME(pid:...) lines.


def quiet_logs():
    """Silence MindSpore's C++ log lines. Must run before ``import mindspore``: it reads GLOG_v once."""
    if "mindspore" in sys.modules and os.environ.get("GLOG_v") != _QUIET_LEVEL:
        raise RuntimeError(
            "mindspore is already imported, so GLOG_v can no longer take effect. "
            "Restart the kernel and call quiet_logs() (or set os.environ['GLOG_v'] = '3') before "
            "`import mindspore`."
        )
    os.environ["GLOG_v"] = _QUIET_LEVEL


def seed_everything(seed):
    """Seed MindSpore and NumPy (``ms.set_seed`` also seeds NumPy's global generator)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    import mindspore as ms
    import numpy as np

    ms.set_seed(seed)
    np.random.seed(seed)


def use_device(target="CPU"):
    """Select the device with the 2.10 API (``ms.set_device``), not the deprecated set_context."""
    if not isinstance(target, str):
        raise TypeError(f"target must be a string such as 'CPU', got {type(target).__name__}")
    target = target.upper()
    if target not in ("CPU", "GPU", "ASCEND"):
        raise ValueError(f"target must be 'CPU', 'GPU' or 'Ascend', got {target!r}")
    import mindspore as ms

    name = "Ascend" if target == "ASCEND" else target
    if ms.get_context("device_target") == name:
        return name  # already selected; setting it again after the first op would raise
    try:
        ms.set_device(name)
    except RuntimeError as exc:
        raise RuntimeError(f"cannot switch to {name} now: the device is fixed once MindSpore has run an "
                           f"operation. Restart the kernel and call use_device first. ({exc})") from None
    return ms.get_context("device_target")


def scratch_dir(prefix="ms-course-"):
    """Make a temporary directory for checkpoints, logs and graph dumps; tidy up after ended kernels.

    Call ``os.chdir(scratch_dir())`` at the top of a notebook so that files MindSpore writes into the
    working directory (``rank_0/``, ``*.meta``, ``rewritten_network/``) never land in the repository.
    The directory is removed when Python exits normally. A Jupyter kernel that is restarted or shut down
    is killed before that happens, so the directory's name carries the process id, and each call first
    removes the directories (of this prefix and this user) whose process no longer exists.
    """
    if not isinstance(prefix, str) or not prefix or os.sep in prefix:
        raise ValueError(f"prefix must be a plain, non-empty name without {os.sep!r}, got {prefix!r}")
    _remove_stale_scratch_dirs(prefix)
    path = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _remove_stale_scratch_dirs(prefix):
    """Remove this user's ``<prefix><pid>-*`` directories in the temporary folder whose process has ended.
    POSIX only: on Windows ``os.kill(pid, 0)`` would end the process, so nothing is removed there."""
    if os.name != "posix":
        return
    root = tempfile.gettempdir()
    pattern = re.compile(re.escape(prefix) + r"(\d+)-[^-]+$")
    for name in os.listdir(root):
        match = pattern.match(name)
        path = os.path.join(root, name)
        if not match or procs.exists(int(match.group(1))):
            continue
        try:
            if not os.path.isdir(path) or os.path.islink(path) or os.stat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
