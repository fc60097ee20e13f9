"""One line per verified claim: lesson code and its checks look different.

    from course_utils.claims import claim
    claim("lr = 0.5 reaches (2, 0) within 100 steps", abs(w - 2) < 0.05 and abs(b) < 0.05, w=w, b=b)

prints ``✓ lr = 0.5 reaches (2, 0) within 100 steps`` when the condition holds and raises
``ClaimFailed`` with the measured values when it does not, so a notebook whose claim stopped being true
fails its Run All (and the test suite) with a message that says what was measured.
"""

import math
import numbers

import numpy as np

from course_utils._validate import shown


class ClaimFailed(AssertionError):
    """A sentence of the lesson is not true on this run: the message holds the measured values."""


def _measured(value):
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return repr(value) if not math.isfinite(value) else f"{value:.6g}"
    if isinstance(value, np.ndarray) and value.size <= 8 and value.dtype.kind in "fiu":
        return np.array2string(value.ravel(), precision=6, separator=", ")
    return shown(value, with_type=False)


def claim(text, holds, **measured):
    """Print ``✓ text`` if ``holds`` is true, else raise ClaimFailed naming the claim and the measured values.

    ``holds`` must be a bool (Python or numpy), not an array or a number: ``claim("...", x > 0)`` with an
    array x is ambiguous, so it is refused; use ``np.all(...)`` or ``np.any(...)`` to say which is meant.
    """
    if not isinstance(text, str) or not text.strip():
        raise TypeError(f"claim(text, holds): text must be a non-empty sentence, got {shown(text)}")
    if not isinstance(holds, (bool, np.bool_)):
        raise TypeError(f"claim({text!r}, holds): holds must be True or False (a comparison), got {shown(holds)};"
                        f" for an array use np.all(...) or np.any(...)")
    if holds:
        print(f"✓ {text}")
        return None  # nothing for a notebook cell to echo after the ✓ line
    values = ", ".join(f"{name} = {_measured(value)}" for name, value in measured.items())
    raise ClaimFailed(f"✗ {text}" + (f"\n  measured: {values}" if values else ""))
