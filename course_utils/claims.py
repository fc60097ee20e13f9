"""One line per verified claim: lesson code and its checks look different.

    from course_utils.claims import claim
    claim("lr = 0.5 reaches (2, 0) within 100 steps", abs(w - 2) < 0.05 and abs(b) < 0.05, w=w, b=b)

prints ``✓ lr = 0.5 reaches (2, 0) within 100 steps`` when the condition holds and raises
``ClaimFailed`` with the measured values when it does not, so a notebook whose claim stopped being true
fails its Run All (and the test suite) with a message that says what was measured.

The sentence may name measured values in braces, filled in with ``str.format``:
``claim("seed {seed}: shuffling changes the path", a != b, seed=seed)``. It is written as a literal, not an
f-string, so that the Chinese edition can show it in Chinese: under ``COURSE_LANG=zh`` the sentence is looked
up in the message catalogue (``course_utils/messages/zh/lesson.NN.json``, one file per notebook; a sentence
without an entry is shown in English).
"""

import math
import numbers
import string

import numpy as np

from course_utils._validate import shown
from course_utils.messages import t


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
    sentence = _sentence(text, measured)
    if holds:
        print(f"✓ {sentence}")
        return None  # nothing for a notebook cell to echo after the ✓ line
    values = ", ".join(f"{name} = {_measured(value)}" for name, value in measured.items())
    raise ClaimFailed(f"✗ {sentence}" + (t("\n  measured: {values}", values=values) if values else ""))


def _sentence(text, measured):
    """``text`` in the current language, its ``{fields}`` filled in from ``measured``."""
    try:
        fields = {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text) if name}
    except ValueError as error:
        raise TypeError(f"claim({text!r}, ...): unbalanced braces in the sentence ({error}); write {{{{ and }}}}"
                        f" for a literal brace") from None
    if any(not name or name.isdigit() for _, name, _, _ in string.Formatter().parse(text) if name is not None):
        raise TypeError(f"claim({text!r}, ...): a field in the sentence has no name ({{}} or {{0}}); name it, as in"
                        f" claim('w is {{w:.3f}}', ..., w=w), or write {{{{ and }}}} for a literal brace")
    missing = sorted(fields - set(measured))
    if missing:
        raise TypeError(f"claim({text!r}, ...): the sentence names {{{missing[0]}}}: pass {missing[0]}=... too")
    translated = t(text)
    if "{" not in text and "}" not in text:
        return translated
    try:
        return translated.format(**measured)
    except Exception:  # a broken translation must never hide the claim
        pass
    try:
        return text.format(**measured)
    except Exception as error:  # a format spec that does not suit the value, {v[0]} of a number, ...
        raise TypeError(f"claim({text!r}, ...): the sentence cannot show the values passed"
                        f" ({type(error).__name__}: {error})") from None
