"""Structural checks on the stored notebooks that strict nbval cannot make by itself.

nbval compares only cells that have a stored execution: a notebook saved after "Clear All Outputs"
passes it while checking nothing. These tests make sure every notebook was stored executed, in order,
without stray errors or MindSpore log lines, and that it has what a lesson needs.
"""

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# Every notebook nbval runs: the lessons, and the classroom app (stored executed so that nbval compares it).
STORED = NOTEBOOKS + [ROOT / "app" / "learning_rate_lab.ipynb"]
MS_LOG_LINE = re.compile(r"\[(WARNING|ERROR|INFO|DEBUG|CRITICAL)\] [A-Z_]+\(\d+|ME\(pid")
NOT_COMPARED = ("nbval-ignore-output", "nbval-skip")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
MAX_ERROR_LINES = 8


def _tags(cell):
    return cell.metadata.get("tags", [])


def _text_of(output):
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return str(output.get("data", {}).get("text/plain", ""))


@pytest.fixture(params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def nb(request):
    return nbformat.read(request.param, as_version=4)


@pytest.fixture(params=STORED, ids=[p.name for p in STORED])
def stored_nb(request):
    return nbformat.read(request.param, as_version=4)


def test_the_notebooks_are_the_course_map():
    """Numbered 00, 01, ... without gaps or duplicates, and exactly the notebooks the README's course map links."""
    numbers = [p.name[:2] for p in NOTEBOOKS]
    assert numbers == [f"{i:02d}" for i in range(len(NOTEBOOKS))] and len(NOTEBOOKS) >= 13, numbers
    linked = set(re.findall(r"\(notebooks/(\d\d_[\w.-]+\.ipynb)\)", (ROOT / "README.md").read_text()))
    assert linked == {p.name for p in NOTEBOOKS}, f"README links {sorted(linked)}"


def test_every_code_cell_was_executed_in_order(stored_nb):
    counts = [c.execution_count for c in stored_nb.cells if c.cell_type == "code"]
    assert None not in counts, "some code cells have no stored execution: run tools/execute_notebooks.py"
    assert counts == list(range(1, len(counts) + 1)), f"execution counts are not 1..n in order: {counts}"


def test_errors_only_in_cells_tagged_raises_exception(stored_nb):
    for i, cell in enumerate(stored_nb.cells):
        if cell.cell_type != "code":
            continue
        has_error = any(o.output_type == "error" for o in cell.outputs)
        tagged = "raises-exception" in _tags(cell)
        assert not (has_error and not tagged), f"cell {i} stores an error but is not tagged raises-exception"
        assert not (tagged and not has_error), f"cell {i} is tagged raises-exception but stores no error"


def test_no_mindspore_log_lines_stored(stored_nb):
    for i, cell in enumerate(stored_nb.cells):
        for out in cell.get("outputs", []):
            match = MS_LOG_LINE.search(_text_of(out))
            assert not match, f"cell {i} stores a MindSpore log line ({match.group(0)}...): set GLOG_v=3 first"


def test_no_path_of_this_machine_stored(stored_nb):
    """Tracebacks and outputs show placeholders (<site-packages>/, <course>/), never this machine's folders."""
    machine = [str(ROOT) + "/", str(Path.home()) + "/", "/tmp/", sys.prefix + "/", sys.base_prefix + "/"]
    for i, cell in enumerate(stored_nb.cells):
        for out in cell.get("outputs", []):
            text = _text_of(out)
            found = [m for m in machine if m in text]
            assert not found, f"cell {i} stores {found[0]}: re-store with tools/execute_notebooks.py"


def test_expected_errors_are_short_and_path_free(stored_nb):
    """One style for every expected error: `Type: message` (course_utils.errors.expect_error, or IPython's
    `%xmode Minimal`), a few lines, no traceback frames and no C++ call stack."""
    for i, cell in enumerate(stored_nb.cells):
        for out in cell.get("outputs", []):
            text = ANSI.sub("", _text_of(out))
            assert "C++ Call Stack" not in text, f"cell {i} stores MindSpore's C++ call stack: use expect_error"
            if out.output_type == "error":
                lines = text.strip().splitlines()
                frames = [line for line in lines if line.startswith(("Traceback", "Cell In[", "File "))]
                assert len(lines) <= MAX_ERROR_LINES and not frames, (
                    f"cell {i} stores a {len(lines)}-line traceback: show the expected error as 'Type: message'"
                    " with course_utils.errors.expect_error")


def test_no_widget_state_or_timing_metadata(stored_nb):
    assert "widgets" not in stored_nb.metadata, "widget state is stored: re-store with tools/execute_notebooks.py"
    for i, cell in enumerate(stored_nb.cells):
        assert "execution" not in cell.metadata, f"cell {i} stores execution timestamps"


def test_uncompared_cells_say_why(nb):
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and set(_tags(cell)) & set(NOT_COMPARED):
            assert "# Not compared:" in cell.source, (
                f"cell {i} is excluded from nbval comparison; say why in a '# Not compared: ...' comment")


def test_setup_cell_quiets_mindspore_before_import(nb):
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    if "mindspore" not in code:
        return
    glog = code.find('os.environ["GLOG_v"] = "3"')
    first_import = min(i for i in (code.find("import mindspore"), code.find("from mindspore")) if i >= 0)
    assert 0 <= glog < first_import, 'set os.environ["GLOG_v"] = "3" before the first mindspore import'
    assert re.search(r"^%matplotlib inline\b", code, re.M), (
        "the setup cell needs %matplotlib inline, not commented out (MPLBACKEND=Agg hides figures)")


def test_lesson_structure(nb):
    intro = nb.cells[0].source
    assert nb.cells[0].cell_type == "markdown" and intro.startswith("# "), "first cell: a markdown title"
    for needed in ("Objectives", "Prerequisites", "Teaching:", "Exercises:"):
        assert needed in intro, f"the first cell must state {needed!r}"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "## Key points" in markdown, "a '## Key points' section is missing"


def test_exercises_are_stored_not_attempted_and_without_solutions(nb):
    """Solutions live in course_utils/solutions (tests/test_editions.py); the notebook shows none."""
    cells = nb.cells
    asked = [i for i, c in enumerate(cells) if c.cell_type == "code" and set(_tags(c)) & {"exercise", "prediction"}]
    exercises = [i for i in asked if "exercise" in _tags(cells[i])]
    assert len(exercises) >= 2, "each notebook needs at least two exercises (code cells tagged 'exercise')"
    for i in asked:
        cell = cells[i]
        assert ".check(" in cell.source, f"exercise cell {i} must call .check(...)"
        shown = "".join(_text_of(o) for o in cell.outputs)
        assert "not attempted" in shown, f"exercise cell {i} must be stored as not attempted, shows {shown!r}"
    for i, cell in enumerate(cells):
        assert "solution" not in _tags(cell), f"cell {i} is a solution cell: solutions live in course_utils/solutions"
        text = "".join(_text_of(o) for o in cell.get("outputs", []))
        assert "[ok] Exercise" not in text and "[ok] Prediction" not in text, f"cell {i} stores a solved check"


@pytest.mark.parametrize("index", range(len(NOTEBOOKS)), ids=[p.name for p in NOTEBOOKS])
def test_links_to_previous_and_next(index):
    intro = nbformat.read(NOTEBOOKS[index], as_version=4).cells[0].source
    if index > 0:
        assert f"({NOTEBOOKS[index - 1].name})" in intro, f"link to the previous notebook {NOTEBOOKS[index - 1].name}"
    if index < len(NOTEBOOKS) - 1:
        assert f"({NOTEBOOKS[index + 1].name})" in intro, f"link to the next notebook {NOTEBOOKS[index + 1].name}"


def test_only_msrun_launches_run_in_the_first_pass_only(nb):
    """The second pass (tests/plugins/two_pass.py) skips cells tagged first-pass-only: only for a real msrun launch."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "first-pass-only" in _tags(cell):
            assert "launch(" in cell.source, f"cell {i} is first-pass-only but launches no msrun job"


# A lesson shows MindSpore's public behaviour; facts read from its private names or source live in
# tests/test_mindspore_facts.py (a patch release may change them; a learner should not meet them).
PRIVATE = [re.compile(r"\b(?:mindspore|ms|nn|ops|Model|Tensor|Parameter)(?:\.\w+)*\._(?!_)\w+"),  # ms.log._get_logger
           re.compile(r"\bfrom mindspore[\w.]*\._\w+"),  # from mindspore.parallel...._api import
           re.compile(r"\bms_compile_cache\b"),
           re.compile(r"\binspect\.getsource\("),  # reading source, MindSpore's or anyone's, is a test's job
           re.compile(r"\b(?:mindspore|ms)\.__file__\b"),  # where MindSpore is installed: a machine's path
           re.compile(r"\.get_args\(\)"),  # msrun's own argument parser
           re.compile(r"\b_convert_data\b")]  # nn.Metric's private converter (a metric's self._convert_data)


def test_lesson_cells_use_no_private_mindspore_names(nb):
    found = [f"cell {i}: {line.strip()}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
             for line in cell.source.splitlines() if any(p.search(line) for p in PRIVATE)]
    assert not found, "private MindSpore names or source in lesson cells (move the fact to " \
        "tests/test_mindspore_facts.py):\n" + "\n".join(found)


# In prose, a backticked name that starts with one underscore is a private name (`_OutputTo32`, `_no_sens_impl`):
# the lesson says what it does in words; `self._n` (a learner's own attribute) and `__init__` are fine.
PRIVATE_IN_PROSE = re.compile(r"`[^`\n]*?(?<![\w.])_(?!_)[A-Za-z]\w*[^`\n]*?`")


def test_lesson_prose_names_no_private_mindspore_names(nb):
    found = [f"cell {i}: {m.group(0)}" for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
             for m in PRIVATE_IN_PROSE.finditer(cell.source)]
    assert not found, "private names in the lesson's prose (say what they do in words):\n" + "\n".join(found)


def test_the_prose_guard_catches_what_it_should():
    assert PRIVATE_IN_PROSE.search("the wrapper `_OutputTo32` casts") and PRIVATE_IN_PROSE.search("`_no_sens_impl`")
    assert not any(PRIVATE_IN_PROSE.search(text) for text in ["`self._n`", "`__init__`", "`drop_remainder`", "`x_val`"])


def test_the_private_name_guard_catches_what_it_should():
    caught = ["logger = ms.log._get_logger()", "inspect.getsource(Model._eval_process)",
              "from mindspore.parallel.cluster.process_entity._api import _ProcessManager",
              "ms.ops.operations.comm_ops._HostAllGather.__doc__", "len(graph_api.ms_compile_cache)",
              "inspect.getsource(type(net.dense).construct)", "Path(ms.__file__).parent / 'nn'",
              "defaults = msrun_program.get_args()", "y = self._convert_data(inputs[1])"]
    allowed = ["self._n += y_true.size", "y = inputs[1].asnumpy()", "nn.ClipByNorm.__doc__",
               "inspect.signature(EarlyStopping).parameters", "ms.set_device.__doc__"]
    assert all(any(p.search(line) for p in PRIVATE) for line in caught)
    assert not any(p.search(line) for p in PRIVATE for line in allowed)


SECTION_MENTION = re.compile(r"\b[Ss]ections? ((?:\d+(?:\.\d+)?(?:, | and | to | or |–|-)?)+)")
ELSEWHERE = re.compile(r"[Aa]rticle|notebook \d\d|\b\d\d's\b|\bin \d\d\b|\(\d\d\)|\bof \d\d\b|\d\d_\w+\.ipynb")


def _sections_mentioned(text):
    """(number, context) of each "section N" of ``text`` that means this notebook's own section N."""
    for match in SECTION_MENTION.finditer(text):
        context = text[max(0, match.start() - 40):match.end() + 25]
        if ELSEWHERE.search(context):  # another notebook's section, or a source article's
            continue
        for number in re.findall(r"\d+(?:\.\d+)?", match.group(1)):
            yield int(float(number)), " ".join(context.split())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name[:2] for p in NOTEBOOKS])
def test_section_mentions_name_sections_that_exist(path):
    """A hint, a message or a cell that says "section 5" points at this notebook's heading "## 5. ..."."""
    nb = nbformat.read(path, as_version=4)
    numbered = {int(m.group(1)) for cell in nb.cells if cell.cell_type == "markdown"
                for m in re.finditer(r"^##+ (\d+)\.", cell.source, re.M)}
    checks = ROOT / "course_utils" / "checks" / f"nb{path.name[:2]}.py"
    texts = [cell.source for cell in nb.cells] + ([checks.read_text(encoding="utf-8")] if checks.exists() else [])
    wrong = [(n, where) for text in texts for n, where in _sections_mentioned(text) if n not in numbered]
    assert not wrong, f"{path.name} has sections {sorted(numbered)}; these mentions name others: {wrong[:3]}"


def test_the_section_guard_reads_what_it_should():
    assert [n for n, _ in _sections_mentioned("as section 3 showed, and sections 4 and 6")] == [3, 4, 6]
    assert list(_sections_mentioned("Article 000 (section 9.1) advises")) == []
    assert list(_sections_mentioned("notebook 05, section 2")) == []
