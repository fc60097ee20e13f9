"""Plumbing for the checkpoint notebook (11): damage a file on purpose.

``flip_bit`` and ``reseal_crc`` damage or re-seal a checkpoint file for the integrity demonstrations.
``expect_error`` and ``quiet_python_logs`` (the course's one style for an expected error) live in
``course_utils.errors`` and are importable from here too.
"""

import binascii
import os

from course_utils.errors import CaughtError, expect_error, quiet_python_logs  # noqa: F401

# A .ckpt saved with crc_check=True ends with b"crc_num" and the CRC32 of everything before it, as 10
# big-endian bytes (MindSpore 2.10, mindspore/train/serialization.py).
_CRC_TAG = b"crc_num"
_CRC_BYTES = 10


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
