"""Plumbing for the MindSpore training course.

One concern per module: ``env`` (quiet logs, seeds, device, a scratch directory), ``setup_check``,
``data`` (the y = 2x data set), ``plots`` and ``exercises`` (self-checks). The MindSpore code a lesson
teaches stays in the notebook; this package carries only what would distract from it.

Importing the package imports nothing heavy, so ``GLOG_v`` can still be set before MindSpore loads.
"""

__version__ = "0.1.0"
