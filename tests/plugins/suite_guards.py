"""The whole suite's guards: test markers, the longest-first schedule (tests/durations.json, `make durations`),
each notebook's execution time with the "checked nothing / ran too fast" guard, and the clean-tree check (a run
that writes files into the repository fails)."""

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from nbval.plugin import IPyNbCell
from two_pass import SolutionCell, StudentExerciseCell

DURATIONS = Path("tests") / "durations.json"  # under the rootdir; written by `make durations`
# A lesson imports MindSpore and trains something: none of them can run in less than this.
MIN_NOTEBOOK_SECONDS = float(os.environ.get("COURSE_MIN_NOTEBOOK_SECONDS", "1.0"))


MARKERS = [
    "notebook: a cell of a notebook executed by nbval (set by tests/plugins/suite_guards.py)",
    "browser: drives JupyterLab or Voila in headless Chromium (tests/test_browser.py)",
    "msrun: launches real msrun jobs (tests/test_launcher.py, the tests using no_leftovers)",
]


def pytest_configure(config):
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def _duration_key(config):
    """A test file's measured seconds (tests/durations.json), longest first; unknown files count as 30 s."""
    try:
        known = json.loads((config.rootpath / DURATIONS).read_text())
    except (OSError, ValueError):
        known = {}
    return lambda item: -known.get(item.nodeid.split("::", 1)[0], 30.0)


def pytest_collection_modifyitems(config, items):
    """Mark notebook cells, browser and msrun tests; put the longest files first.

    With ``-n 2 --dist loadfile`` each worker takes whole files in collection order, so the longest go
    first (longest-processing-time-first scheduling) and the short unit tests fill the gaps at the end.
    """
    for item in items:
        if isinstance(item, IPyNbCell):
            item.add_marker(pytest.mark.notebook)
            compared = (bool(item.options["check"]) and not item.options["skip"]
                        and item.cell.execution_count is not None)  # nbval compares no cell stored unexecuted
            checked = isinstance(item, (StudentExerciseCell, SolutionCell))
            item.user_properties.append(("compared", compared or checked))
        elif item.nodeid.startswith("tests/test_browser.py"):
            item.add_marker(pytest.mark.browser)
        elif "no_leftovers" in getattr(item, "fixturenames", ()):  # tests/test_launcher.py: real msrun jobs
            item.add_marker(pytest.mark.msrun)
    items.sort(key=_duration_key(config))  # stable: a file's items keep their order


# ---- per-notebook timing and the "ran in no time" guard (in the controller when run with xdist) --------------
_NB_SECONDS = defaultdict(float)  # the cells' execution time (kernel start-up not included)
_NB_RUN = defaultdict(int)  # cells whose output was checked (compared, or "not attempted" in an exercise)
_NB_ITEMS = defaultdict(int)
_FILE_SECONDS = defaultdict(float)


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] += report.duration
    if not path.endswith(".ipynb") or report.when != "call":
        return
    _NB_SECONDS[path] += report.duration
    _NB_ITEMS[path] += 1
    if report.outcome != "skipped" and dict(report.user_properties).get("compared"):
        _NB_RUN[path] += 1


def _suspicious_notebooks():
    return [f"{p}: {_NB_RUN[p]} of {_NB_ITEMS[p]} cells checked, in {_NB_SECONDS[p]:.2f} s"
            for p in sorted(_NB_ITEMS) if _NB_RUN[p] == 0 or _NB_SECONDS[p] < MIN_NOTEBOOK_SECONDS]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _NB_ITEMS:
        return
    tr = terminalreporter
    tr.section("notebook execution time (slowest first)")
    for path, seconds in sorted(_NB_SECONDS.items(), key=lambda kv: -kv[1]):
        tr.write_line(f"{seconds:7.1f} s  {_NB_RUN[path]:4d}/{_NB_ITEMS[path]:<4d} cells checked  {path}")
    tr.write_line(f"{sum(_NB_SECONDS.values()):7.1f} s  in all (summed over workers)")
    suspicious = _suspicious_notebooks()
    if suspicious:
        tr.write_line(f"ERROR: notebooks that checked no cell or ran in under {MIN_NOTEBOOK_SECONDS} s "
                      "(a notebook that runs in no time checks nothing):", red=True)
        for line in suspicious:
            tr.write_line(f"  {line}", red=True)


# ---- the repository stays clean ------------------------------------------------------------------------------
def _untracked(root):
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored=no"],
                         cwd=root, capture_output=True, text=True)
    if out.returncode != 0:  # not a git checkout (e.g. an unpacked archive): nothing to compare
        return None
    return {line[3:] for line in out.stdout.splitlines() if line.startswith("??")}


def _is_xdist_worker(config):
    return hasattr(config, "workerinput")


def pytest_sessionstart(session):
    if not _is_xdist_worker(session.config):
        session.config._untracked_before = _untracked(session.config.rootpath)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Fail the run if tests or notebooks wrote files into the repository, or a notebook checked nothing."""
    config = session.config
    if _is_xdist_worker(config):
        return
    config._course_session = session  # its exitstatus, final after this hook, decides `make durations`
    if _suspicious_notebooks():
        session.exitstatus = 1
    if os.environ.get("COURSE_SKIP_CLEAN_CHECK") == "1":  # several people testing in one checkout
        return
    before = getattr(config, "_untracked_before", None)
    after = _untracked(config.rootpath)
    if before is None or after is None:
        return
    new = sorted(after - before)
    if new:
        print("\nERROR: the test run wrote files into the repository (use a temporary directory):")
        for name in new:
            print(f"  {name}")
        session.exitstatus = 1


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """`make durations`: after a passing run, store each test file's seconds (the scheduling order)."""
    if os.environ.get("COURSE_WRITE_DURATIONS") == "1" and not _is_xdist_worker(config) and _FILE_SECONDS:
        session = getattr(config, "_course_session", None)
        if session is not None and session.exitstatus == 0:
            seconds = {k: round(v, 1) for k, v in sorted(_FILE_SECONDS.items())}
            (config.rootpath / DURATIONS).write_text(json.dumps(seconds, indent=1) + "\n")


# ---- a test gives MindSpore's execution mode back ------------------------------------------------------------
@pytest.fixture(autouse=True)
def _mode_given_back(request):
    """A test that switches MindSpore to graph mode must switch it back: the next test in the worker would
    otherwise compile what it meant to run eagerly (and fail for reasons of its neighbour's)."""
    yield
    ms = sys.modules.get("mindspore")
    if ms is not None and ms.get_context("mode") != ms.PYNATIVE_MODE:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        pytest.fail(f"{request.node.nodeid} left MindSpore in graph mode: restore the mode it found", pytrace=False)
