"""Plumbing for the checkpoint notebook (11): damage a file on purpose.

``flip_bit`` and ``reseal_crc`` damage or re-seal a checkpoint file for the integrity demonstrations;
``plot_checkpoint_contents`` draws which entries each file holds.
``expect_error`` and ``quiet_python_logs`` (the course's one style for an expected error) live in
``course_utils.errors`` and are importable from here too.
"""

import binascii
import os

from course_utils.errors import CaughtError, expect_error, quiet_python_logs  # noqa: F401
from course_utils.messages import lazy

CONTENTS_TITLE = lazy("What a checkpoint file holds")

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


def plot_checkpoint_contents(files, never_saved, ax=None, title=CONTENTS_TITLE):
    """A grid: one row per entry, one column per file, a filled box where the file holds the entry.

    ``files`` maps a file name to the names of its entries (``list(ms.load_checkpoint(path))``);
    ``never_saved`` names state no checkpoint holds (drawn as empty rows at the bottom, in grey).
    """
    if not isinstance(files, dict) or not files or not all(isinstance(k, list) for k in files.values()):
        raise TypeError("files must map each file name to the list of its entry names")
    from matplotlib.patches import Rectangle

    from course_utils.figure_text import text

    rows = list(dict.fromkeys(name for names in files.values() for name in names)) + list(never_saved)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(4.5, 0.35 * len(rows) + 1))
    for col, names in enumerate(files.values()):
        for row, entry in enumerate(rows):
            held = entry in names
            ax.add_patch(Rectangle(
                (col - 0.4, row - 0.35), 0.8, 0.7, color="tab:green" if held else "0.92"))
            ax.text(col, row, text(lazy("saved")) if held else "-", ha="center", va="center", fontsize=10)
    ax.set_xlim(-0.5, len(files) - 0.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xticks(range(len(files)), list(files))
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(rows)), rows, fontsize=10)
    for label in ax.get_yticklabels()[len(rows) - len(never_saved):]:
        label.set_color("grey")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(text(title), fontsize=10, pad=22)
    return ax
