"""How pytest runs the course's notebooks, and what the whole suite reports at the end.

A lesson notebook (notebooks/NN_*.ipynb) holds no solution: it is what a learner gets, every exercise and
prediction stored "not attempted". nbval runs it in ONE fresh kernel, in two passes, both compared strictly
with the stored outputs:

1. the notebook as stored (the student's view, in a fresh kernel); an exercise or prediction cell must also
   say "not attempted" (the learner has not written anything yet). Items: ``Cell N``;
2. the instructor edition, in the same kernel (a second "Run All"): every cell again, and after each
   exercise or prediction its reference solution from course_utils/solutions/nbNN.py, which must print
   "[ok]". Items: ``Cell N (instructor)`` and ``Cell N solution (instructor)``. When the notebook has a
   Chinese edition (zh/notebooks/, tools/zh.py) this pass runs it: the same code but for the first cell's
   ``COURSE_LANG=zh`` line, compared with the Chinese edition's stored outputs (checks, hints and predictions
   in Chinese). Items: ``Cell N (zh, instructor)`` and ``Cell N solution (zh, instructor)``.

So one kernel proves that the student's notebook runs and shows its stored outputs, that every reference
solution passes its check (solutions cannot rot), that a second Run All works, and that the Chinese edition
runs and shows its stored outputs, at no extra run. N is nbval's code-cell index in the stored notebook. Other
notebooks (the classroom app) get nbval's usual single pass. With pytest-xdist use ``--dist loadfile``: a
notebook's cells share one kernel.

At the end the suite prints each notebook's execution time and fails when a notebook checked no cell (e.g. it
was saved unexecuted: nbval compares nothing then) or ran implausibly fast (COURSE_MIN_NOTEBOOK_SECONDS).
"""

import copy
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tools"))
from make_editions import ASKED, solution_cells  # noqa: E402

LESSONS = ROOT / "notebooks"
ZH_LESSONS = ROOT / "zh" / "notebooks"  # the Chinese edition, run by the second pass
# A cell that launches a real msrun job (notebook 15, about 20 s each) runs in the first pass only: the second
# pass skips it and its later cells use the job it made in the first pass. A second launch in one process is
# tested in tests/test_launcher.py; the job's output prints no course message, so nothing differs in Chinese.
FIRST_PASS_ONLY = "first-pass-only"
DURATIONS = ROOT / "tests" / "durations.json"  # written by `make durations`
NOT_ATTEMPTED = "not attempted"
# A lesson imports MindSpore and trains something: none of them can run in less than this.
MIN_NOTEBOOK_SECONDS = float(os.environ.get("COURSE_MIN_NOTEBOOK_SECONDS", "1.0"))


MARKERS = [
    "notebook: a cell of a notebook executed by nbval (set by conftest.py)",
    "browser: drives JupyterLab or Voila in headless Chromium (tests/test_browser.py)",
    "msrun: launches real msrun jobs (tests/test_launcher.py, the tests using no_leftovers)",
]


def pytest_configure(config):
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def _tags(cell):
    return cell.metadata.get("tags", [])


def _options(cell, compare):
    """nbval's per-cell options (from tags and comment markers), as nbval's own collector computes them."""
    options = defaultdict(bool, find_metadata_tags(cell.metadata))
    options.update(dict(find_comment_markers(cell.source)))
    options.setdefault("check", compare)
    return options


def _printed(item):
    return "".join(o.get("text", "") for o in item.test_outputs or [] if o.get("output_type") == "stream")


class StudentExerciseCell(IPyNbCell):
    """An exercise or prediction in the student's pass: compared as usual, and it must say "not attempted"."""

    def runtest(self):
        super().runtest()
        if NOT_ATTEMPTED not in _printed(self):
            self.raise_cell_error(f"the student's exercise cell should say {NOT_ATTEMPTED!r}",
                                  f"it printed: {_printed(self)!r}")


ANSWER_PROBE = """
import numbers as _numbers
if isinstance(globals().get("answer"), _numbers.Real) and not isinstance(answer, bool):
    print("\\n__answer__", repr(float(answer)))
"""


def _stored_text(cells):
    """The text of the stored outputs of ``cells`` (streams, text/plain, errors)."""
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) + out.get("evalue", ""))
    return "\n".join(parts)


def _spoilers(value, text):
    """How a non-integer numeric answer, to 2 or 3 significant digits, appears in ``text`` (empty: nowhere)."""
    if value != value or value in (float("inf"), float("-inf")) or float(value).is_integer():
        return []
    found = []
    for digits in (2, 3):
        shown = f"{value:.{digits}g}"
        if "." not in shown and "e" not in shown:  # "4" for 4.01: too short to tell a copy from chance
            continue
        if shown not in found and re.search(rf"(?<![\d.]){re.escape(shown)}(?!\d)", text):
            found.append(shown)
    return found


class SolutionCell(IPyNbCell):
    """A reference solution (course_utils/solutions), run right after its exercise: it must print "[ok]",
    and a numeric answer must not be printed above the exercise (an answer copied from above is no exercise)."""

    def __init__(self, *args, above="", **kwargs):
        super().__init__(*args, **kwargs)
        self.above = above

    def runtest(self):
        super().runtest()
        printed = _printed(self)
        if "[ok]" not in printed:
            self.raise_cell_error("the reference solution does not pass its check", f"it printed: {printed!r}")
        match = re.search(r"__answer__ (\S+)", printed)
        spoilers = _spoilers(float(match.group(1)), self.above) if match else []
        if spoilers:
            self.raise_cell_error(f"the answer ({match.group(1)}) can be copied from above: the stored outputs "
                                  f"before the exercise show {' and '.join(spoilers)}")


class TwoPassNotebook(IPyNbFile):
    """A lesson notebook: as stored, then the instructor edition, in one kernel (see the module docstring)."""

    def collect(self):
        self.nb = nbformat.read(str(self.fspath), as_version=4)
        compare = self.compare_outputs
        code = [c for c in self.nb.cells if c.cell_type == "code"]
        number_of = {id(c): n for n, c in enumerate(code)}
        solutions = dict(solution_cells(self.nb, self.path.name[:2]))  # {index in nb.cells: solution cell}
        # A copy per item: nbval's coalesce_streams() merges the reference's stream outputs in place.
        for num, cell in enumerate(code):
            options = _options(cell, compare)
            kind = StudentExerciseCell if set(_tags(cell)) & set(ASKED) else IPyNbCell
            yield kind.from_parent(self, name=f"Cell {num}", cell_num=num, cell=copy.deepcopy(cell), options=options)
        second, label = self.nb, "instructor"
        chinese = ZH_LESSONS / self.path.name
        if chinese.exists():
            second, label = nbformat.read(str(chinese), as_version=4), "zh, instructor"
            if [c.cell_type for c in second.cells] != [c.cell_type for c in self.nb.cells]:
                raise ValueError(f"{chinese.relative_to(ROOT)} has other cells than {self.path.name}: run make zh")
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code":
                continue
            num = number_of[id(cell)]
            cell = second.cells[index]
            options = _options(cell, compare)
            if FIRST_PASS_ONLY in _tags(cell):
                options["skip"] = True  # its msrun job ran in the first pass; later cells use what it made
            yield IPyNbCell.from_parent(self, name=f"Cell {num} ({label})", cell_num=num,
                                        cell=copy.deepcopy(cell), options=options)
            if index in solutions:
                solution = copy.deepcopy(solutions[index])
                solution.source += "\n" + ANSWER_PROBE
                yield SolutionCell.from_parent(self, name=f"Cell {num} solution ({label})", cell_num=num,
                                               cell=solution, options=_options(solution, False),
                                               above=_stored_text(self.nb.cells[:index]))


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    """Replace nbval's collector by the two-pass one for the lesson notebooks."""
    collectors = yield
    out = []
    for collector in collectors or []:
        if type(collector) is IPyNbFile and file_path.parent == LESSONS and file_path.name[:2].isdigit():
            collector = TwoPassNotebook.from_parent(parent, path=file_path)
        out.append(collector)
    return out


def _duration_key():
    """A test file's measured seconds (tests/durations.json), longest first; unknown files count as 30 s."""
    try:
        known = json.loads(DURATIONS.read_text())
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
    items.sort(key=_duration_key())  # stable: a file's items keep their order


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
def _untracked():
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored=no"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:  # not a git checkout (e.g. an unpacked archive): nothing to compare
        return None
    return {line[3:] for line in out.stdout.splitlines() if line.startswith("??")}


def _is_xdist_worker(config):
    return hasattr(config, "workerinput")


def pytest_sessionstart(session):
    if not _is_xdist_worker(session.config):
        session.config._untracked_before = _untracked()


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
    after = _untracked()
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
            DURATIONS.write_text(json.dumps({k: round(v, 1) for k, v in sorted(_FILE_SECONDS.items())},
                                            indent=1) + "\n")
