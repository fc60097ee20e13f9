"""The run directory's guards: one run at a time (a lock file), files replaced atomically, and checksums that
a resumed run verifies.

* ``DIR/.lock`` holds the PID of the run that uses DIR; it is created exclusively and removed when the run
  ends. A lock whose process is gone (the run was killed) is taken over. On POSIX the holder also keeps an
  ``flock`` on it, so that two runs taking over the same stale lock at once cannot both win.
* Every file is written to ``DIR/.tmp.<name>``, flushed to disk and renamed over ``DIR/<name>``: a crash
  leaves the old file or the new one, never half of one.
* ``DIR/checksums.sha256`` (the format of ``sha256sum``, so ``sha256sum -c checksums.sha256`` checks it by
  hand) lists config.yaml, last.ckpt, best.ckpt and history.json. It is replaced after their new versions
  are complete under their temporary names and before they are renamed, so a crash in between leaves the
  temporary files that match it, and :func:`verify` finishes the renames.
"""

import errno
import hashlib
import os
import time
from pathlib import Path

from course_utils.messages import t

LOCK = ".lock"
MANIFEST = "checksums.sha256"
CHECKED = ("config.yaml", "last.ckpt", "best.ckpt", "history.json")  # what the manifest may list
TMP_PREFIX = ".tmp."

try:
    import fcntl
except ImportError:  # Windows: the lock is the PID alone
    fcntl = None


class CkptDirError(ValueError):
    """The run directory cannot be used (exit code 3)."""


class RunDirBusy(CkptDirError):
    """Another live run holds the directory's lock (exit code 5)."""


def tmp_path(path):
    """Where a new version of ``path`` is written before it replaces ``path``."""
    path = Path(path)
    return path.with_name(TMP_PREFIX + path.name)


# ---- one run at a time ----------------------------------------------------------------------------------
def _alive(pid):
    """Whether process ``pid`` runs (psutil: os.kill(pid, 0) would end the process on Windows)."""
    import psutil

    return pid > 0 and psutil.pid_exists(pid)


def _pid_in(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)  # os.pread is POSIX-only
        text = os.read(fd, 32).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _flocked(fd):
    """Take the flock of ``fd`` without waiting; False if a live process holds it."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        return True  # a file system without flock: the PID alone decides
    return True


def _same_file(fd, path):
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


class RunLock:
    """The lock on a run directory, held until :meth:`release` (also a context manager)."""

    def __init__(self, run_dir, wait=2.0):
        self.path = Path(run_dir) / LOCK
        self.fd = None
        deadline = time.monotonic() + wait
        while self.fd is None:
            self._try(deadline)

    def _try(self, deadline):
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
        except FileExistsError:
            try:
                fd = os.open(self.path, os.O_RDWR)
            except FileNotFoundError:  # its run just ended: try again
                return
            except OSError as exc:
                raise CkptDirError(t("cannot lock {path}: {error}", path=self.path.parent, error=exc)) from None
            created = False
        except (OSError, ValueError) as exc:
            raise CkptDirError(t("cannot lock {path}: {error}", path=self.path.parent, error=exc)) from None
        if not _flocked(fd):  # a live run holds it
            pid = _pid_in(fd)
            os.close(fd)
            if pid is None and time.monotonic() < deadline:  # it has not written its PID yet
                time.sleep(0.02)
                return
            raise RunDirBusy(t("{path} is in use by another run (pid {pid})", path=self.path.parent,
                               pid="?" if pid is None else pid))
        if not _same_file(fd, self.path):  # we locked a lock file that its run has just removed
            os.close(fd)
            return
        if not created:
            pid = _pid_in(fd)
            if pid is not None and _alive(pid):  # a live run that holds no flock (a hand-made lock, Windows)
                os.close(fd)
                raise RunDirBusy(t("{path} is in use by another run (pid {pid})", path=self.path.parent, pid=pid))
            if pid is None and fcntl is None and time.monotonic() < deadline:
                os.close(fd)  # without flock, an empty lock may be one being written: wait for its PID
                time.sleep(0.02)
                return
            # otherwise stale: the run that wrote it is gone; take it over
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)  # os.pwrite is POSIX-only
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def release(self):
        if self.fd is None:
            return
        try:
            if _same_file(self.fd, self.path):
                self.path.unlink()
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


# ---- atomic files and checksums ----------------------------------------------------------------------------
def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fsync(path):
    """Flush a file (or a directory's entries) to disk; a file system that cannot is left as it is."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def stage_bytes(path, data):
    """Write ``data`` to ``path``'s temporary name (:func:`commit` flushes it to disk); return that name."""
    staged = tmp_path(path)
    with open(staged, "wb") as f:
        f.write(data)
    return staged


def commit(run_dir, staged, manifest=None):
    """Rename the staged files ``{name: temporary path}`` into ``run_dir``. With ``manifest`` (a dict
    {name: SHA-256}, updated here) the checksums are written first, then the files renamed."""
    run_dir = Path(run_dir)
    for path in staged.values():
        fsync(path)
    if manifest is not None:
        for name, path in staged.items():
            manifest[name] = sha256(path)
        text = "".join(f"{manifest[name]}  {name}\n" for name in CHECKED if name in manifest)
        checksums = stage_bytes(run_dir / MANIFEST, text.encode())
        fsync(checksums)
        os.replace(checksums, run_dir / MANIFEST)
    for name, path in staged.items():
        os.replace(path, run_dir / name)
    fsync(run_dir)


def write_atomic(path, data):
    """Replace ``path`` with ``data`` (bytes or text) all at once."""
    path = Path(path)
    commit(path.parent, {path.name: stage_bytes(path, data.encode() if isinstance(data, str) else data)})


def read_manifest(run_dir):
    """{name: SHA-256} from run_dir's checksums.sha256; CkptDirError if it is missing or not one."""
    path = Path(run_dir) / MANIFEST
    try:
        lines = path.read_bytes().decode("ascii").splitlines()
    except FileNotFoundError:
        raise CkptDirError(t("--resume {path}: it holds no {name}, so no run to resume (start one with "
                             "--ckpt-dir)", path=path.parent, name=MANIFEST)) from None
    except (OSError, UnicodeDecodeError):
        lines = None
    manifest = {}
    for line in lines or [None]:
        digest, _, name = (line or "").partition("  ")
        if name not in CHECKED or len(digest) != 64 or set(digest) - set("0123456789abcdef") or name in manifest:
            raise CkptDirError(t("--resume {path}: {name} is damaged: start a new run", path=path.parent,
                                 name=MANIFEST))
        manifest[name] = digest
    for name in ("config.yaml", "last.ckpt", "history.json"):
        if name not in manifest:
            raise CkptDirError(t("--resume {path}: {name} is damaged: start a new run", path=path.parent,
                                 name=MANIFEST))
    return manifest


def verify(run_dir):
    """Check every file the manifest lists against its checksum (finishing the renames of a run stopped
    between its checksums and its files); return the manifest. CkptDirError names a damaged file."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    for name, digest in manifest.items():
        path, staged = run_dir / name, tmp_path(run_dir / name)
        try:
            if sha256(path) == digest:
                continue
        except FileNotFoundError:
            if not staged.is_file():
                raise CkptDirError(t("--resume {path}: it holds no {name}, so no run to resume (start one with "
                                     "--ckpt-dir)", path=run_dir, name=name)) from None
        except OSError as exc:
            raise CkptDirError(t("--resume {path}: {name} cannot be read ({error})", path=run_dir, name=name,
                                 error=exc)) from None
        try:
            if staged.is_file() and sha256(staged) == digest:
                os.replace(staged, path)
                continue
        except OSError:
            pass
        raise CkptDirError(t("--resume {path}: {name} is damaged (checksum mismatch): start a new run",
                             path=run_dir, name=name))
    fsync(run_dir)
    return manifest
