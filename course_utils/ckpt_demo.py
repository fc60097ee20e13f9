"""Plumbing for the checkpoint notebook (08): show an expected error readably, damage a file on purpose.

``expect_error`` runs a block that must fail and prints the error the way a learner should read it:
without MindSpore's own ``[ERROR] ME(pid...)`` log line (it carries a PID and a time stamp) and with
absolute paths shortened to names relative to a folder (the scratch directory changes at every run).
``quiet_python_logs`` hides those log lines around code that fails often (a loop over damaged files).
``flip_bit`` and ``reseal_crc`` damage or re-seal a checkpoint file for the integrity demonstrations.
"""

import binascii
import contextlib
import logging
import os

# A .ckpt saved with crc_check=True ends with b"crc_num" and the CRC32 of everything before it, as 10
# big-endian bytes (MindSpore 2.10, mindspore/train/serialization.py).
_CRC_TAG = b"crc_num"
_CRC_BYTES = 10


class CaughtError:
    """What ``expect_error`` caught: ``exception`` and the ``message`` it printed (paths shortened)."""

    def __init__(self):
        self.exception = None
        self.message = ""

    def __repr__(self):
        return f"CaughtError({type(self.exception).__name__ if self.exception else None})"


def _shorten(text, folder):
    prefix = os.path.realpath(folder).rstrip(os.sep) + os.sep
    return str(text).replace(prefix, "")


@contextlib.contextmanager
def quiet_python_logs():
    """Hide Python log records (MindSpore's ``[ERROR] ME(pid...)`` lines) inside the block, then restore."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def expect_error(*types, folder=None):
    """Run the block, which must raise one of ``types``; print ``Type: message`` (and its cause).

    Python log records (MindSpore logs an error line before raising) are hidden while the block runs.
    Paths under ``folder`` (default: the working directory) are printed relative to it. Raises
    AssertionError if the block raises nothing; an exception of another type propagates unchanged.
    """
    if not types or not all(isinstance(t, type) and issubclass(t, BaseException) for t in types):
        raise TypeError(f"give the expected exception classes, e.g. expect_error(ValueError), got {types!r}")
    folder = os.getcwd() if folder is None else folder
    if not os.path.isdir(folder):
        raise ValueError(f"folder must be an existing directory, got {folder!r}")
    caught = CaughtError()
    try:
        with quiet_python_logs():
            yield caught
    except types as exc:
        caught.exception = exc
        lines = [f"{type(exc).__name__}: {_shorten(exc, folder)}"]
        if exc.__cause__ is not None:
            lines.append(f"  caused by {type(exc.__cause__).__name__}: {_shorten(exc.__cause__, folder)}")
        caught.message = "\n".join(lines)
        print(caught.message)
    else:
        names = " or ".join(t.__name__ for t in types)
        raise AssertionError(f"expected {names}, but the block raised nothing")


def _check_file(path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    if not os.path.isfile(path):
        raise ValueError(f"no file at {os.fspath(path)!r}")


def flip_bit(path, offset, bit):
    """Flip one bit of the file in place: bit ``bit`` (0 = lowest) of byte ``offset``. Returns the new byte."""
    _check_file(path)
    for name, value in (("offset", offset), ("bit", bit)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    size = os.path.getsize(path)
    if not 0 <= offset < size:
        raise ValueError(f"offset must be in [0, {size}) for this {size}-byte file, got {offset}")
    if not 0 <= bit < 8:
        raise ValueError(f"bit must be in [0, 8), got {bit}")
    with open(path, "r+b") as f:
        f.seek(offset)
        new = f.read(1)[0] ^ (1 << bit)
        f.seek(offset)
        f.write(bytes([new]))
    return new


def reseal_crc(path):
    """Recompute the CRC32 trailer of an edited .ckpt (saved with crc_check=True), as anyone can do.

    This is why a CRC only detects accidents: it is no protection against someone editing the file.
    """
    _check_file(path)
    with open(path, "rb") as f:
        data = f.read()
    tail = len(_CRC_TAG) + _CRC_BYTES
    if len(data) < tail or data[-tail:-_CRC_BYTES] != _CRC_TAG:
        raise ValueError(f"{os.fspath(path)!r} has no CRC trailer: save it with crc_check=True")
    body = data[:-tail]
    with open(path, "wb") as f:
        f.write(body + _CRC_TAG + binascii.crc32(body).to_bytes(_CRC_BYTES, "big"))
