"""The tested version matrix (tools/matrix.py, ``make test-matrix``) and the setup check that follows it.

The classifier is tested on real nbval reports of a small synthetic notebook (one cell as stored, one whose
output changed, one that raises, one tagged ``ms-2.10-only``, one listed in a version-specific file), run through
the same plugin hook a matrix run loads; the setup check with fake MindSpore version strings against a synthetic
matrix; the committed matrix against its rendered table, the READMEs and the notebooks' cells.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))
import matrix  # noqa: E402

import course  # noqa: E402
from course_utils import setup_check  # noqa: E402


# ---- pins ----------------------------------------------------------------------------------------------------
def test_pins_replace_mindspore_only():
    pins = matrix.pins_for("2.8.0")
    assert pins.count("mindspore==2.8.0") == 1 and not any(p.startswith("mindspore==2.10") for p in pins)
    expected = {**setup_check.read_pins(ROOT / "requirements.txt"),
                **setup_check.read_pins(ROOT / "requirements-dev.txt")}
    expected["mindspore"] = "2.8.0"
    assert dict(p.split("==") for p in pins) == expected
    assert not any(p.startswith("-r") for p in pins)


@pytest.mark.parametrize("bad", ["2.9", "latest", "2.9.0; rm -rf /", "", None, 2.9])
def test_a_bad_version_is_refused_with_the_tested_ones(bad):
    with pytest.raises(ValueError, match=r"give one like 2\.9\.0 \(tested here: 2\.7\.2, 2\.8\.0, 2\.9\.0, 2\.10\.0\)"):
        matrix.pins_for(bad)


def test_pins_without_a_mindspore_pin_are_an_error(tmp_path):
    (tmp_path / "r.txt").write_text("numpy==1.26.4\n")
    with pytest.raises(ValueError, match="expected one mindspore== pin"):
        matrix.pins_for("2.9.0", tmp_path / "r.txt")


def test_the_versions_are_the_same_everywhere():
    assert course.MATRIX_VERSIONS == matrix.VERSIONS
    tested = json.loads(matrix.MATRIX_JSON.read_text())["tested"]  # what has run so far (make test-matrix)
    assert tested and set(tested) <= set(matrix.VERSIONS), tested
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^MS +\?= (.*)$", makefile, re.M).group(1).split() == list(matrix.VERSIONS)


def test_make_test_matrix_is_opt_in_and_calls_course_py():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test-matrix:.*\n\t(.*)$", makefile, re.M).group(1) == \
        "$(COURSE) test-matrix $(MS) --jobs $(MATRIX_JOBS)"
    assert "matrix" not in re.search(r"^test:.*\n\t(.*)$", makefile, re.M).group(1)
    args = course.parser().parse_args(["test-matrix", "2.7.2", "2.9.0", "--jobs", "2"])
    assert args.versions == ["2.7.2", "2.9.0"] and args.jobs == 2 and args.run is course.test_matrix
    assert course.parser().parse_args(["test-matrix"]).versions == list(matrix.VERSIONS)


@pytest.mark.parametrize("bad", ["2.9", "x.y.z", "2.9.0.0"])
def test_course_py_test_matrix_refuses_a_bad_version(bad, capsys):
    with pytest.raises(SystemExit) as exit_:
        course.parser().parse_args(["test-matrix", bad])
    assert exit_.value.code == 2 and "is not a MindSpore version: give one like 2.9.0" in capsys.readouterr().err


def test_the_scratch_folder_may_not_be_inside_the_repository():
    with pytest.raises(ValueError, match="inside the repository: set COURSE_MATRIX_DIR"):
        matrix.run_version("2.9.0", scratch=ROOT / "build" / "matrix")


# ---- reading nbval's reports ---------------------------------------------------------------------------------
@pytest.mark.parametrize("nodeid, parsed", [
    ("notebooks/11_checkpoints.ipynb::Cell 51", ("notebooks/11_checkpoints.ipynb", 51, "student")),
    ("notebooks/11_checkpoints.ipynb::Cell 51 (instructor)", ("notebooks/11_checkpoints.ipynb", 51, "instructor")),
    ("notebooks/00_setup.ipynb::Cell 4 (zh, instructor)", ("notebooks/00_setup.ipynb", 4, "zh, instructor")),
    ("notebooks/03_x.ipynb::Cell 7 solution (zh, instructor)", ("notebooks/03_x.ipynb", 7,
                                                                 "solution (zh, instructor)")),
    ("tests/test_x.py::test_y", None), ("notebooks/00_setup.ipynb", None),
])
def test_parse_nodeid(nodeid, parsed):
    assert matrix.parse_nodeid(nodeid) == parsed


def _synthetic_notebook(path):
    """Cells: 0 as stored; 1 output changed; 2 raises; 3 changed but tagged ms-2.10-only; 4 changed, listed."""
    nb = nbformat.v4.new_notebook()
    sources = ["print('same')", "print('on 2.10 this prints new')", "raise ValueError('2.9 rejects a scalar')",
               "print('MindSpore ' + '2.9.0')", "print('docstring of 2.9')"]
    stored = ["same\n", "on 2.10 this prints old\n", None, "MindSpore 2.10.0\n", "docstring of 2.10\n"]
    for i, (source, text) in enumerate(zip(sources, stored)):
        cell = nbformat.v4.new_code_cell(source, execution_count=i + 1, id=f"cell-{i}")
        if text is not None:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
        nb.cells.append(nbformat.v4.new_markdown_cell("text between", id=f"md-{i}"))  # not counted by nbval
    nb.cells[6].metadata["tags"] = ["ms-2.10-only"]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def nbval_records(tmp_path_factory):
    """The plugin's records of a real strict-nbval run of the synthetic notebook (one kernel, a few seconds)."""
    work = tmp_path_factory.mktemp("matrix")
    (work / "notebooks").mkdir()
    _synthetic_notebook(work / "notebooks" / "99_synthetic.ipynb")
    (work / "pytest.ini").write_text("[pytest]\n")
    plugin = work / "plugin"
    plugin.mkdir()
    shutil.copy(ROOT / "tools" / "matrix.py", plugin / "course_matrix.py")
    log = work / "reports.jsonl"
    env = dict(os.environ, PYTHONPATH=str(plugin), **{matrix.LOG_ENV: str(log)})
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "course_matrix", "-q",
                          "--nbval", "--nbval-current-env", "notebooks/99_synthetic.ipynb"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert "4 failed, 1 passed" in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]
    return work, matrix.read_log(log)


def test_the_plugin_logs_every_cell(nbval_records):
    _, records = nbval_records
    calls = [r for r in records if r["when"] == "call"]
    assert [r["nodeid"].split("::")[1] for r in calls] == [f"Cell {i}" for i in range(5)]
    assert [r["outcome"] for r in calls] == ["passed"] + ["failed"] * 4
    assert all(r["longrepr"] for r in calls[1:]) and not calls[0]["longrepr"]


def test_the_classifier_on_real_nbval_reports(nbval_records):
    work, records = nbval_records
    nb = "notebooks/99_synthetic.ipynb"
    listed = {nb: {"cell-4": "reads a docstring whose wording changed in 2.10"}}
    row = matrix.classify(records, "2.9.0", root=work, specific=listed)[nb]
    assert row["status"] == "differs" and (row["passed"], row["failed"]) == (1, 4)
    by_cell = {c["cell"]: c for c in row["cells"]}
    assert sorted(by_cell) == [1, 2, 3, 4]
    assert by_cell[1]["kind"] == "changed output"
    assert by_cell[1]["why"] == "stdout differs: stored 'on 2.10 this prints old', got 'on 2.10 this prints new'"
    assert by_cell[2]["kind"] == "error" and by_cell[2]["why"] == "ValueError: 2.9 rejects a scalar"
    assert by_cell[2]["first_line"] == "raise ValueError('2.9 rejects a scalar')"
    assert by_cell[3]["kind"] == "version-specific" and by_cell[3]["why"].startswith("tagged ms-2.10-only")
    assert by_cell[4] == {"cell": 4, "first_line": "print('docstring of 2.9')", "kind": "version-specific",
                          "why": "reads a docstring whose wording changed in 2.10", "passes": ["student"]}
    # On 2.10 itself a tagged cell that differs is a real difference: the tag says it is about 2.10.
    on_210 = matrix.classify(records, "2.10.0", root=work, specific={})[nb]
    assert {c["cell"]: c["kind"] for c in on_210["cells"]}[3] == "changed output"


def test_only_version_specific_cells_still_mean_the_lesson_works(nbval_records):
    work, records = nbval_records
    nb = "notebooks/99_synthetic.ipynb"
    kept = [r for r in records if not r["nodeid"].endswith(("Cell 1", "Cell 2"))]
    row = matrix.classify(kept, "2.9.0", root=work, specific={nb: {"cell-4": "docstring"}})[nb]
    assert row["status"] == "version-specific" and matrix.cell_summary(row) == "cells 3, 4: version-specific claim"
    passing = [r for r in records if r["outcome"] == "passed"]
    assert matrix.classify(passing, "2.9.0", root=work, specific={})[nb]["status"] == "pass"


def _record(nodeid, outcome="failed", text=""):
    return {"nodeid": nodeid, "when": "call", "outcome": outcome, "duration": 0.1, "longrepr": text}


def test_passes_of_one_cell_merge_and_an_error_outranks_a_changed_output(tmp_path):
    (tmp_path / "notebooks").mkdir()
    _synthetic_notebook(tmp_path / "notebooks" / "99_synthetic.ipynb")
    nb = "notebooks/99_synthetic.ipynb"
    records = [_record(f"{nb}::Cell 1", text="Cell outputs differ\n + old\n - new"),
               _record(f"{nb}::Cell 1 (zh, instructor)",
                       text="Cell execution caused an exception\nTraceback:\n\x1b[0;31mTypeError\x1b[0m: bad input"),
               _record(f"{nb}::Cell 0", "passed"), _record(f"{nb}::Cell 0 (zh, instructor)", "skipped", "")]
    row = matrix.classify(records, "2.8.0", root=tmp_path, specific={})[nb]
    assert row["cells"] == [{"cell": 1, "first_line": "print('on 2.10 this prints new')", "kind": "error",
                             "why": "TypeError: bad input", "passes": ["student", "zh, instructor"]}]
    assert (row["passed"], row["failed"], row["skipped"]) == (1, 2, 1)


@pytest.mark.parametrize("stored, got, only", [
    (["Epoch: 1, Loss: 0.046901442"], ["Epoch: 1, Loss: 0.04690143"], True),  # float32 rounding, measured on 2.7.2
    (["/basic.py:791~792, 8~43"], ["/basic.py:808~809, 8~43"], True),  # a line number of MindSpore's source
    (["`nn.ClipByNorm` is deprecated from version 2.8.0"], ["Clips tensor values to a maximum norm."], False),
    (["loss 0.5"], ["loss 0.5", "extra line"], False), ([], [], False),
])
def test_numbers_only(stored, got, only):
    assert matrix.numbers_only(stored, got) is only


def test_a_numbers_only_change_is_labelled_changed_numbers(tmp_path):
    (tmp_path / "notebooks").mkdir()
    _synthetic_notebook(tmp_path / "notebooks" / "99_synthetic.ipynb")
    nb = "notebooks/99_synthetic.ipynb"
    text = "Cell outputs differ\n mismatch 'stdout'\n  - w = 2.4199331\n  ?  ^^\n  + w = 2.4199328\n  ?  ^^"
    row = matrix.classify([_record(f"{nb}::Cell 1", text=text)], "2.7.2", root=tmp_path, specific={})[nb]
    assert row["cells"][0]["why"] == "numbers only; stdout differs: stored 'w = 2.4199328', got 'w = 2.4199331'"
    assert row["cells"][0]["numbers_only"] and matrix.cell_summary(row) == "cell 1: changed numbers"
    assert row["status"] == "numbers" and "| 99_synthetic | runs; cell 1: changed numbers (2026-12-02) |" in \
        matrix.render({"runs": {"2.7.2": _run({nb: row})}})
    runs = {"2.7.2": _run({nb: row})}
    _, problems, warnings = _check("2.7.2", runs)
    assert problems == [] and "99_synthetic (cell 1: numbers that differ in their last digits)" in warnings[0]


def test_a_collection_error_is_a_notebook_error(tmp_path):
    record = {"nodeid": "notebooks/99_x.ipynb", "when": "collect", "outcome": "failed",
              "longrepr": "nbformat.reader.NotJSONError: Notebook does not appear to be JSON"}
    row = matrix.classify([record], "2.8.0", root=tmp_path, specific={})["notebooks/99_x.ipynb"]
    assert row["status"] == "differs" and row["cells"][0]["cell"] is None and row["cells"][0]["kind"] == "error"


def _run(notebooks, date="2026-12-02"):
    return {"date": date, "commit": "0" * 40, "source": "HEAD", "python": "3.11.7", "jobs": 1,
            "install_seconds": 40.0, "test_seconds": 700.0, "venv_gb": 3.1, "peak_scratch_gb": 3.3,
            "pytest_exit": 1, "timed_out": False, "passed": 10, "failed": 2, "skipped": 0, "notebooks": notebooks}


PASS = {"status": "pass", "passed": 5, "failed": 0, "skipped": 0, "cells": []}
SYNTHETIC = {
    "2.8.0": _run({"notebooks/01_minimal_net.ipynb": PASS, "notebooks/07_custom.ipynb": {
        "status": "differs", "passed": 3, "failed": 2, "skipped": 0, "cells": [
            {"cell": 12, "first_line": "ops.equal(1.0, x)", "kind": "error", "why": "TypeError: x",
             "passes": ["student"]},
            {"cell": 14, "first_line": "print(y)", "kind": "changed output", "why": "stdout differs",
             "passes": ["student"]}]}}),
    "2.9.0": _run({"notebooks/00_setup.ipynb": {
        "status": "version-specific", "passed": 3, "failed": 2, "skipped": 0, "cells": [
            {"cell": 4, "first_line": "run()", "kind": "version-specific", "why": "the version", "passes": []},
            {"cell": 5, "first_line": "claim", "kind": "version-specific", "why": "the version", "passes": []}]},
        "notebooks/01_minimal_net.ipynb": PASS}),
    "2.10.0": _run({"notebooks/00_setup.ipynb": PASS, "notebooks/01_minimal_net.ipynb": PASS}),
}


def test_the_rendered_table(tmp_path):
    text = matrix.render({"runs": SYNTHETIC})
    assert "| notebook | MindSpore 2.8.0 | MindSpore 2.9.0 | MindSpore 2.10.0 |" in text
    assert "| 01_minimal_net | passes (2026-12-02) | passes (2026-12-02) | passes (2026-12-02) |" in text
    assert "| 07_custom | **differs**: cell 12: error; cell 14: changed output (2026-12-02) | not run | not run |" \
        in text
    assert "| 00_setup | not run | passes; cells 4, 5: version-specific claim (2026-12-02) |" in text
    assert "0.7 min install + 11.7 min tests (-n 1), venv 3.1 GB" in text
    assert "- 07_custom, cell 12 `ops.equal(1.0, x)`: **error**: TypeError: x (in: student)" in text
    matrix.save_matrix({"runs": dict(SYNTHETIC)}, tmp_path / "m.json", tmp_path / "m.md")
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved["tested"] == ["2.8.0", "2.9.0", "2.10.0"] and (tmp_path / "m.md").read_text() == text


def test_a_matrix_file_that_is_not_one_is_refused(tmp_path):
    (tmp_path / "m.json").write_text('{"nope": 1}')
    with pytest.raises(ValueError, match="not a version matrix"):
        matrix.load_matrix(tmp_path / "m.json")
    with pytest.raises(ValueError, match="has no 'runs'"):
        setup_check.load_matrix(tmp_path / "m.json")
    (tmp_path / "m.json").write_text("{")
    with pytest.raises(ValueError, match="not a readable version matrix"):
        setup_check.load_matrix(tmp_path / "m.json")
    assert setup_check.load_matrix(tmp_path / "missing.json") == {}


# ---- the setup check with fake MindSpore versions ------------------------------------------------------------
PINS = {"numpy": "1.26.4", "mindspore": "2.10.0"}


def _check(found, runs=SYNTHETIC):
    return setup_check.check_packages(PINS, installed={"numpy": "1.26.4", "mindspore": found}, matrix=runs)


def test_the_pinned_version_passes_as_today():
    assert _check("2.10.0")[1:] == ([], [])
    _, problems, warnings = _check("2.10.1")
    assert problems == [] and warnings[0].startswith("mindspore 2.10.1 is installed, the course is tested with "
                                                     "2.10.0: this usually works")


def test_a_tested_older_version_passes_with_the_notebooks_that_differ():
    _, problems, warnings = _check("2.8.0")
    assert problems == [] and len(warnings) == 1
    assert warnings[0] == ("mindspore 2.8.0 is installed; the course is written for 2.10.0 and was tested on 2.8.0 "
                           "(2026-12-02): these notebooks differ from their stored outputs there: 07_custom (cell "
                           "12: an error; cell 14: a changed output); the others pass (docs/version-matrix.md). To "
                           "see every output as stored: `pip install mindspore==2.10.0`")
    _, problems, warnings = _check("2.9.0")
    assert problems == [] and "00_setup (cells 4, 5: a sentence about one MindSpore version (the lesson works))" \
        in warnings[0]


def test_another_patch_of_a_tested_minor_version_names_the_tested_release():
    _, problems, warnings = _check("2.9.1")
    assert problems == [] and "was tested on 2.9.0 (2026-12-02)" in warnings[0]
    passing = {"2.9.0": _run({"notebooks/01_minimal_net.ipynb": PASS})}
    assert "2.9.0 (2026-12-02): every notebook passes as stored" in _check("2.9.0", passing)[2][0]


@pytest.mark.parametrize("found", ["2.6.0", "2.11.0", "1.10.1", "3.0.0"])
def test_an_untested_version_fails_naming_the_tested_ones(found):
    _, problems, warnings = _check(found)
    assert warnings == [] and problems == [
        f"mindspore {found} is installed but the course is written for 2.10.0 and tested on 2.8.0, 2.9.0, 2.10.0 "
        "only (docs/version-matrix.md): run `pip install mindspore==2.10.0`"]


def test_the_report_marks_a_tested_older_version_as_a_warning(monkeypatch):
    versions = {**setup_check.learner_pins(), "mindspore": "2.9.0"}
    monkeypatch.setattr(setup_check.metadata, "version", lambda name: versions[name])
    monkeypatch.setattr(setup_check, "check_mindspore", lambda: ("CPU", "The result is correct", None))
    monkeypatch.setattr(setup_check, "load_matrix", lambda: SYNTHETIC)
    import io
    out = io.StringIO()
    assert setup_check.run(out=out) == []
    text = out.getvalue()
    assert re.search(r"^  ~  mindspore +pinned 2\.10\.0 +installed 2\.9\.0$", text, re.M), text
    assert "was tested on 2.9.0" in text and "READY: everything the notebooks need" in text
    versions["mindspore"] = "2.5.0"
    out = io.StringIO()
    assert len(setup_check.run(out=out)) == 1 and "!! mindspore" in out.getvalue()


def test_the_warning_in_chinese(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    _, problems, warnings = _check("2.8.0")
    assert warnings[0].startswith("已安装 mindspore 2.8.0；课程是为 2.10.0 编写的，并于 2026-12-02 在 2.8.0 上测试过")
    assert "07_custom (单元格 12：出错; 单元格 14：输出有变化)" in warnings[0]
    assert _check("2.6.0")[1][0].startswith("已安装 mindspore 2.6.0，但课程是为 2.10.0 编写的，"
                                            "只在 2.8.0, 2.9.0, 2.10.0 上测试过")


def test_the_committed_matrix_lets_every_tested_version_pass_the_check():
    runs = setup_check.load_matrix()
    assert runs and set(runs) <= set(matrix.VERSIONS)
    for version in runs:
        problem, warning = setup_check.check_mindspore_version(version, "2.10.0")
        assert problem is None and (warning is None) == (version == "2.10.0"), (version, problem)


# ---- the committed matrix, its table and the cells it names ---------------------------------------------------
def test_the_rendered_markdown_is_the_json():
    assert matrix.MATRIX_MD.read_text(encoding="utf-8") == matrix.render(matrix.load_matrix())


@pytest.mark.parametrize("readme, lang", [("README.md", "en"), ("README.zh-CN.md", "zh")])
def test_the_readmes_show_the_table(readme, lang):
    text = (ROOT / readme).read_text(encoding="utf-8")
    assert "\n".join(matrix.table_lines(matrix.load_matrix(), lang)) in text, \
        f"{readme}: paste the output of `python tools/matrix.py readme --lang {lang}` into its version-matrix section"


def test_the_chinese_table():
    lines = matrix.table_lines({"runs": SYNTHETIC}, "zh")
    assert "| 07_custom | **不同**：单元格 12：出错；单元格 14：输出有变化 (2026-12-02) | 未运行 | 未运行 |" in lines
    assert lines[-1].startswith("| *时间、磁盘* | 安装 0.7 分钟 + 测试 11.7 分钟（-n 1），虚拟环境 3.1 GB |")


def test_the_version_specific_cells_exist():
    """Each listed cell is a code cell of its notebook in the working tree or at a commit the matrix ran on (a
    cell an author has since rewritten stays listed until the next `make test-matrix`)."""
    listed = matrix.load_specific()
    assert listed, "docs/version_specific_cells.json lists no cell"
    commits = {run["commit"].split("+")[0] for run in matrix.load_matrix()["runs"].values()}
    for path, cells in listed.items():
        ids = {cell_id for cell_id, _tags, _first in matrix.code_cells(path)} if (ROOT / path).is_file() else set()
        for commit in commits:
            shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True)
            if shown.returncode == 0:
                ids |= {c.get("id") for c in json.loads(shown.stdout)["cells"] if c["cell_type"] == "code"}
        assert set(cells) <= ids, f"{path}: listed cells {sorted(set(cells) - ids)} are no code cell of it"
        assert all(isinstance(why, str) and why for why in cells.values())
