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
import functools
import re
from collections import defaultdict

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

from course_utils.solutions import ASKED, asked_expression, solution_cells

# The lessons are <rootdir>/notebooks/NN_*.ipynb; their Chinese edition, run by the second pass, zh/notebooks/.
# A cell that launches a real msrun job (notebook 15, about 20 s each) runs in the first pass only: the second
# pass skips it and its later cells use the job it made in the first pass. A second launch in one process is
# tested in tests/test_launcher.py; the job's output prints no course message, so nothing differs in Chinese.
FIRST_PASS_ONLY = "first-pass-only"
NOT_ATTEMPTED = "not attempted"


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
# The second pass runs the Chinese edition; the reference must pass in English too (its verdict, asked again).
ENGLISH_PROBE = """
import os as _os
_lang = _os.environ.get("COURSE_LANG", "")
_os.environ["COURSE_LANG"] = "en"
try:
    print("\\n__en__", {expression}.evaluate(answer).status)
finally:
    _os.environ["COURSE_LANG"] = _lang
"""


def _stored_text(cells):
    """The text of the stored outputs of ``cells`` (streams, text/plain, errors)."""
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) + out.get("evalue", ""))
    return "\n".join(parts)


def _spoilers(value, text, precisions=(2, 3)):
    """How a non-integer numeric answer, to 2 or 3 significant digits, appears in ``text`` (empty: nowhere)."""
    if value != value or value in (float("inf"), float("-inf")) or float(value).is_integer():
        return []
    found = []
    for digits in precisions:
        shown = f"{value:.{digits}g}"
        if "." not in shown and "e" not in shown:  # "4" for 4.01: too short to tell a copy from chance
            continue
        if len(shown.split("e")[0].replace("-", "").replace(".", "").lstrip("0")) < digits:
            continue  # 0.5 for 0.5004: as many digits as a learning rate someone typed
        if shown not in found and re.search(rf"(?<![\d.]){re.escape(shown)}(?!\d)", text):
            found.append(shown)
    return found


class SolutionCell(IPyNbCell):
    """A reference solution (course_utils/solutions), run right after its exercise: it must print "[ok]",
    and a numeric answer must not be printed above the exercise (an answer copied from above is no exercise)."""

    def __init__(self, *args, above="", elsewhere="", **kwargs):
        super().__init__(*args, **kwargs)
        self.above = above
        self.elsewhere = elsewhere

    def runtest(self):
        super().runtest()
        printed = _printed(self)
        if "[ok]" not in printed:
            self.raise_cell_error("the reference solution does not pass its check", f"it printed: {printed!r}")
        if "__en__ correct" not in printed:
            self.raise_cell_error("the reference solution does not pass its check in English", f"{printed!r}")
        match = re.search(r"__answer__ (\S+)", printed)
        spoilers = _spoilers(float(match.group(1)), self.above) if match else []
        if spoilers:
            self.raise_cell_error(f"the answer ({match.group(1)}) can be copied from above: the stored outputs "
                                  f"before the exercise show {' and '.join(spoilers)}")
        spoilers = _spoilers(float(match.group(1)), self.elsewhere, precisions=(3,)) if match else []
        if spoilers:
            self.raise_cell_error(f"the answer ({match.group(1)}) stands elsewhere: {' and '.join(spoilers)} is in"
                                  " this notebook's text or outputs below the exercise, or an earlier notebook's")


@functools.lru_cache(maxsize=None)
def _notebook_text(path):
    """A notebook's markdown and stored outputs: where a learner could read an answer."""
    nb = nbformat.read(str(path), as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown") + "\n" + _stored_text(nb.cells)


class TwoPassNotebook(IPyNbFile):
    """A lesson notebook: as stored, then the instructor edition, in one kernel (see the module docstring)."""

    def collect(self):
        self.nb = nbformat.read(str(self.fspath), as_version=4)
        compare = self.compare_outputs
        code = [c for c in self.nb.cells if c.cell_type == "code"]
        number_of = {id(c): n for n, c in enumerate(code)}
        solutions = dict(solution_cells(self.nb))  # {index in nb.cells: solution cell}
        # A copy per item: nbval's coalesce_streams() merges the reference's stream outputs in place.
        for num, cell in enumerate(code):
            options = _options(cell, compare)
            kind = StudentExerciseCell if set(_tags(cell)) & set(ASKED) else IPyNbCell
            yield kind.from_parent(self, name=f"Cell {num}", cell_num=num, cell=copy.deepcopy(cell), options=options)
        second, label = self.nb, "instructor"
        root = self.config.rootpath
        chinese = root / "zh" / "notebooks" / self.path.name
        if chinese.exists():
            second, label = nbformat.read(str(chinese), as_version=4), "zh, instructor"
            if [c.cell_type for c in second.cells] != [c.cell_type for c in self.nb.cells]:
                raise ValueError(f"{chinese.relative_to(root)} has other cells than {self.path.name}: run make zh")
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
                expression = asked_expression(self.nb.cells[index])
                solution.source += "\n" + ANSWER_PROBE + ENGLISH_PROBE.format(expression=expression)
                yield SolutionCell.from_parent(self, name=f"Cell {num} solution ({label})", cell_num=num,
                                               cell=solution, options=_options(solution, False),
                                               above=_stored_text(self.nb.cells[:index]),
                                               elsewhere=self._elsewhere(index))

    def _elsewhere(self, index):
        """Markdown of this notebook, its outputs after cell ``index``, and the text of every earlier notebook."""
        earlier = [p for p in sorted(self.path.parent.glob("[0-9][0-9]_*.ipynb")) if p.name < self.path.name]
        here = "\n".join(c.source for c in self.nb.cells if c.cell_type == "markdown")
        return "\n".join([here, _stored_text(self.nb.cells[index + 1:]), *map(_notebook_text, earlier)])


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    """Replace nbval's collector by the two-pass one for the lesson notebooks."""
    collectors = yield
    out = []
    for collector in collectors or []:
        lesson = file_path.parent == parent.config.rootpath / "notebooks" and file_path.name[:2].isdigit()
        if type(collector) is IPyNbFile and lesson:
            collector = TwoPassNotebook.from_parent(parent, path=file_path)
        out.append(collector)
    return out
