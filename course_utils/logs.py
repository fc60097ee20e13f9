"""MindSpore's own warnings, caught as text: what a deprecated or ignored setting says, without the log noise.

    with mindspore_warnings() as said:
        ms.set_context(max_device_memory="1GB")
    print(said)   # ["For 'context.set_context', the parameter 'max_device_memory' will be deprecated ...", ...]

The course runs with ``GLOG_v=3`` (errors only) so that stored outputs carry no log lines, which hides the
warnings a lesson sometimes wants to show. Inside the block MindSpore's Python logger records warnings
into a list instead of printing them (its printed form carries a PID and a time stamp); afterwards its level
and handlers are as before.
"""

import contextlib
import logging


@contextlib.contextmanager
def mindspore_warnings():
    """Collect the messages MindSpore's Python logger emits at WARNING level or above inside the block."""
    from mindspore import log as ms_log

    logger = ms_log._get_logger()
    said = []

    class _Collect(logging.Handler):
        def emit(self, record):
            said.append(record.getMessage())

    collector = _Collect(level=logging.WARNING)
    previous_level, previous_handlers = logger.level, list(logger.handlers)
    for handler in previous_handlers:
        logger.removeHandler(handler)
    logger.addHandler(collector)
    logger.setLevel(logging.WARNING)
    try:
        yield said
    finally:
        logger.removeHandler(collector)
        for handler in previous_handlers:
            logger.addHandler(handler)
        logger.setLevel(previous_level)
