"""Wall-clock timing of training steps that counts asynchronous work, for the graph-mode notebook (13).

PyNative launches operations asynchronously: a call can return before its result exists. A timing that
does not wait measures only the launch, so ``time_calls`` fetches each result (``.asnumpy()``) inside
the timed interval.
"""

import time

import numpy as np

from course_utils._validate import require_int

MAX_REPEAT = 1_000_000


def _fetch(result):
    """Wait for a result: fetch a Tensor (anything with ``.asnumpy()``), or each one in a tuple/list."""
    if hasattr(result, "asnumpy"):
        result.asnumpy()
    elif isinstance(result, (tuple, list)):
        for item in result:
            _fetch(item)


def time_calls(fn, *args, repeat):
    """Call ``fn(*args)`` ``repeat`` times; return a float64 array of the seconds each call took.

    Each result is fetched inside its timing, so asynchronous PyNative work is counted. The first
    element includes any one-off cost (a graph compile); take the median of the rest as "per step".
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable (a train step, a jit function), got {type(fn).__name__}")
    repeat = require_int("repeat", repeat, 1, MAX_REPEAT)  # the number of calls
    seconds = np.empty(int(repeat), dtype=np.float64)
    for i in range(int(repeat)):
        start = time.perf_counter()
        _fetch(fn(*args))
        seconds[i] = time.perf_counter() - start
    return seconds
