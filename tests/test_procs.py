"""course_utils.procs against real processes: a child that starts a grandchild, both marked."""

import os
import subprocess
import sys
import time
import uuid

import pytest

from course_utils import procs

# The child starts a grandchild in a session of its own (as msrun and Jupyter kernels do), then both sleep.
TREE = ("import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)\n"
        "time.sleep(120)\n")


@pytest.fixture
def tree():
    mark = uuid.uuid4().hex
    child = subprocess.Popen([sys.executable, "-c", TREE], env={**os.environ, "COURSE_TEST_MARK": mark})
    try:
        deadline = time.monotonic() + 30
        while len(procs.marked("COURSE_TEST_MARK", mark)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        yield child, mark
    finally:
        procs.stop(set(procs.marked("COURSE_TEST_MARK", mark)) | {child.pid}, grace=1)
        child.wait(timeout=10)


def test_marked_descendants_and_stop(tree):
    child, mark = tree
    found = procs.marked("COURSE_TEST_MARK", mark)
    assert child.pid in found and len(found) == 2, found
    (grandchild,) = set(found) - {child.pid}
    assert procs.descendants(child.pid) == {grandchild}
    assert procs.descendants(os.getpid()) >= {child.pid, grandchild}
    assert procs.alive(child.pid) and procs.alive(grandchild) and procs.exists(grandchild)
    killed = procs.stop(found, grace=5)
    assert killed == set(), "sleeping Python processes end on SIGTERM, without SIGKILL"
    assert not procs.alive(grandchild) and procs.marked("COURSE_TEST_MARK", mark) == {}
    child.wait(timeout=10)
    assert not procs.alive(child.pid) and procs.descendants(child.pid) == set()


def test_stop_kills_what_ignores_sigterm():
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True)\n"
                                 "time.sleep(120)"], stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"
    started = time.monotonic()
    assert procs.stop([stubborn.pid], grace=0.5) == {stubborn.pid}
    assert not procs.alive(stubborn.pid) and time.monotonic() - started < 8
    stubborn.wait(timeout=10)  # psutil reaped it already (so Popen cannot read the signal any more)
    assert procs.stop([stubborn.pid]) == set()  # ended: nothing to do


def test_bad_arguments():
    for bad in (-1, 1.5, "1", None, True):
        with pytest.raises(TypeError, match="pid"):
            procs.alive(bad)
    with pytest.raises(ValueError, match="environment variable name"):
        procs.marked("A=B", "x")
    with pytest.raises(TypeError, match="value must be a string"):
        procs.marked("A", 1)
    for grace in (-1, float("nan"), float("inf"), "5", True):
        with pytest.raises(ValueError, match="grace"):
            procs.stop([], grace=grace)
