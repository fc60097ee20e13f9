"""Argument checks shared by course_utils and capstone.

Each ``require_*`` returns the value in its plain Python form or raises TypeError (wrong kind of value)
or ValueError (right kind, wrong value), with a message that names the argument, says what was expected
and shows what came. Numbers are always finite: NaN and inf are refused wherever a number is expected.
"""

import math
import numbers

import numpy as np

_SHOWN = 60  # characters of a value's repr shown in a message


def shown(value, with_type=True):
    """A short description of ``value`` for a message: its type and a repr cut to a readable length."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__, or an int too long for str() (Python 3.11 limits it)
        text = "<unprintable>"
    text = " ".join(text.split())  # one line: a numpy array's repr spans several
    if len(text) > _SHOWN:
        text = text[:_SHOWN - 3] + "..."
    return f"{type(value).__name__} {text}" if with_type else text


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _range_text(low, high):
    if low is not None and high is not None:
        return f"from {low} to {high}"
    return f">= {low}" if low is not None else f"<= {high}"


def require_int(name, value, low=None, high=None):
    """An int (Python or numpy, not bool) with ``low <= value <= high`` (either bound may be None)."""
    if not _is_int(value):
        raise TypeError(f"{name} must be an int, got {shown(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an int {_range_text(low, high)}, got {shown(value)}")
    return value


def require_number(name, value, low=None, high=None, *, low_open=False, high_open=False):
    """A finite real number (int, float or numpy scalar, not bool) within the bounds, as a float.

    ``low_open``/``high_open`` exclude the bound itself (``low_open=True, low=0`` means "> 0")."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {shown(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {shown(value)}")
    too_low = low is not None and (number <= low if low_open else number < low)
    too_high = high is not None and (number >= high if high_open else number > high)
    if too_low or too_high:
        lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f"{'<' if high_open else '<='} {high}"
        raise ValueError(f"{name} must be a number {' and '.join(filter(None, (lo, hi)))}, got {shown(value)}")
    return number


def require_choice(name, value, choices):
    """One of ``choices`` (compared only with values of the same type, so an array never reaches ``==``)."""
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {shown(value)}")
    return value


def require_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {shown(value)}")
    return bool(value)


def require_series(name, values, ndim=1, allow_empty=False):
    """A sequence (list, tuple, numpy array, Tensor) of real numbers as a float64 array with ``ndim``
    dimensions (any number if None). NaN and inf are kept: a training record may hold them, and saying so
    is the caller's job."""
    if values is None or isinstance(values, (str, bytes, dict, set, numbers.Number, np.generic)):
        raise TypeError(f"{name} must be a sequence of numbers, got {shown(values)}")
    if hasattr(values, "asnumpy"):
        values = values.asnumpy()
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):  # ragged nesting
        raise ValueError(f"{name} must be a regular sequence of numbers (all rows the same length), "
                         f"got {shown(values)}") from None
    if arr.dtype.kind not in "iuf":  # text, bool, complex, None or ints too large for a float (object)
        raise TypeError(f"{name} must be a sequence of numbers (real, each fitting a float), got {shown(values)}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    return arr.astype(np.float64)
