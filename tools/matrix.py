"""Which MindSpore runs which lesson: the tested version matrix (``make test-matrix``, ``course.py test-matrix``).

For each MindSpore version asked for (default: every one in VERSIONS), one at a time:

1. a fresh virtual environment OUTSIDE the repository (``$COURSE_MATRIX_DIR``, default
   /tmp/mindspore-course-matrix/<version>/venv) with the pins of requirements-dev.txt (and the requirements.txt
   it includes), the ``mindspore==`` pin replaced by that version;
2. a copy of the course as committed (``git archive HEAD``; ``--source worktree`` copies the working tree),
   installed into it with ``pip install --no-deps -e``;
3. every notebook (notebooks/*.ipynb, app/learning_rate_lab.ipynb) under the suite's strict nbval, with the
   suite's own plugins (a lesson runs twice in one kernel: the student's notebook, then its Chinese instructor
   edition); this module is loaded into pytest too (``-p course_matrix``) and logs every test report;
4. each cell that differs is classified from the nbval report: a *version-specific* cell (tagged ``ms-2.10-only``
   or any ``ms-X.Y-only`` in its metadata, or listed in docs/version_specific_cells.json: a sentence about one
   version, not a lesson that breaks), an *error* (the cell raised) or a *changed output* (it ran, printed
   something else);
5. the result is merged into docs/version-matrix.json (kept in the repository) and docs/version-matrix.md
   (rendered from it); the environment and the copy are removed.

Time and disk, measured on this machine (2 shared cores, ``--jobs 1``) are written in the matrix with each run
(install seconds, test seconds, the environment's size); ``--max-minutes`` bounds one version's test run
(default 40) and a run refuses to start with less than MIN_FREE_GB of free disk under the scratch folder. The
other pins' wheels stay in the scratch folder's wheels/ (~0.5 GB) for the next version; ``rm -r`` it when done.

    python tools/matrix.py run 2.9.0 2.10.0 [--jobs 2] [--source HEAD|COMMIT|worktree] [--passes student|both]
    python tools/matrix.py prepare 2.9.0  only build 2.9.0's venv (under `nice`, while another version runs)
    python tools/matrix.py render         rewrite docs/version-matrix.md from the json
    python tools/matrix.py readme [--lang zh]   print the table README.md (README.zh-CN.md) shows
    python tools/matrix.py rebuild VER    re-classify a finished run from its log in the scratch folder

Standard library only: it runs with any Python 3.11/3.12 and is loaded into the matrix venv's pytest as a plugin.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Python 3.11 wheels on PyPI exist for 2.7.0-2.10.0 (2.1-2.6 were never published there); one per minor version.
VERSIONS = ("2.7.2", "2.8.0", "2.9.0", "2.10.0")
DOCS = ROOT / "docs"
MATRIX_JSON = DOCS / "version-matrix.json"
MATRIX_MD = DOCS / "version-matrix.md"
SPECIFIC_CELLS = DOCS / "version_specific_cells.json"
SCRATCH = Path(os.environ.get("COURSE_MATRIX_DIR", "/tmp/mindspore-course-matrix"))
MIN_FREE_GB = 6  # one venv (3.0-3.2 GB measured) + the course copy + MindSpore's scratch files, with margin
LOG_ENV = "COURSE_MATRIX_LOG"  # the plugin's output file (json lines), set by run_version
PASSES_ENV = "COURSE_MATRIX_PASSES"  # "student": the first pass only; "both": the suite's two passes
VERSION_TAG = re.compile(r"^ms-(\d+\.\d+(?:\.\d+)?)-only$")  # ms-2.10-only: a cell that states a fact of 2.10
_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:\.post\d+)?$")
_PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==")
KINDS = ("version-specific", "error", "changed output")
_RANK = {"version-specific": 0, "changed output": 1, "error": 2}
_PASSES = {"student": "student pass", "both": "both passes"}


def notebooks(root=ROOT):
    """Every notebook the matrix runs, as paths relative to the repository."""
    found = sorted(p.relative_to(root).as_posix() for p in (root / "notebooks").glob("*.ipynb"))
    return found + ["app/learning_rate_lab.ipynb"]


def check_version(text):
    """A MindSpore version as pip spells it (2.9.0); bad input gets an error saying what to give."""
    if not isinstance(text, str) or not _VERSION.match(text):
        raise ValueError(f"{text!r} is not a MindSpore version: give one like 2.9.0 (tested here: "
                         f"{', '.join(VERSIONS)})")
    return text


# ---- the pins ------------------------------------------------------------------------------------------------
def pins_for(version, requirements=ROOT / "requirements-dev.txt"):
    """The lines of ``requirements`` (its ``-r`` files inlined), with ``mindspore==`` pinned to ``version``."""
    check_version(version)
    requirements = Path(requirements)
    lines, replaced = [], 0
    for line in requirements.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("-r"):
            included = pins_for(version, requirements.parent / stripped[2:].strip())
            replaced += sum(1 for x in included if x == f"mindspore=={version}")
            lines += included
            continue
        match = _PIN.match(stripped)
        if match and match.group(1).lower() == "mindspore":
            lines.append(f"mindspore=={version}")
            replaced += 1
        elif stripped and not stripped.startswith("#"):
            lines.append(stripped)
    if replaced != 1:
        raise ValueError(f"{requirements}: expected one mindspore== pin (in it or its -r files), found {replaced}")
    return lines


# ---- the pytest plugin (loaded into the matrix venv's pytest with -p course_matrix) --------------------------
def _log(report, kind):
    path = os.environ.get(LOG_ENV)
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):  # a worker's reports reach the controller's hook too
        return
    text = report.longreprtext if report.failed else ""
    record = {"nodeid": report.nodeid, "when": getattr(report, "when", kind), "outcome": report.outcome,
              "duration": round(getattr(report, "duration", 0.0), 3), "longrepr": text[:20000]}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def pytest_runtest_logreport(report):
    _log(report, "call")


def pytest_collection_modifyitems(config, items):
    """COURSE_MATRIX_PASSES=student: only the student's pass of each lesson (the suite's second pass, the
    Chinese instructor edition with every reference solution, is deselected): half the time per version."""
    if os.environ.get(PASSES_ENV, "both") != "student":
        return
    kept = [item for item in items if not re.search(r"\((?:zh, )?instructor\)$", item.name)]
    deselected = [item for item in items if item not in kept]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_collectreport(report):
    if report.failed:
        _log(report, "collect")


# ---- reading nbval's reports ---------------------------------------------------------------------------------
_NODE = re.compile(r"^(?P<path>[^:]+\.ipynb)::Cell (?P<num>\d+)(?P<solution> solution)?(?: \((?P<label>[^)]*)\))?$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def parse_nodeid(nodeid):
    """``notebooks/11_x.ipynb::Cell 51 (zh, instructor)`` -> (path, 51, "zh, instructor"); None if not a cell."""
    match = _NODE.match(nodeid)
    if not match:
        return None
    label = match.group("label") or "student"
    if match.group("solution"):
        label = f"solution ({label})"
    return match.group("path"), int(match.group("num")), label


def code_cells(path, root=ROOT):
    """nbval's numbering: the notebook's code cells in order, as (cell id, tags, first line of source)."""
    nb = json.loads((root / path).read_text(encoding="utf-8"))
    cells = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            source = "".join(cell.get("source", ""))
            first = next((line.strip() for line in source.splitlines() if line.strip()), "")
            cells.append((cell.get("id"), list(cell.get("metadata", {}).get("tags", [])), first[:100]))
    return cells


def load_specific(path=SPECIFIC_CELLS):
    """docs/version_specific_cells.json: {notebook: {cell id: why}} for cells that state a fact of one version."""
    if not Path(path).is_file():
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = data.get("cells", data)
    if not isinstance(cells, dict) or not all(isinstance(v, dict) for v in cells.values()):
        raise ValueError(f"{path}: expected {{\"cells\": {{notebook: {{cell id: why}}}}}}")
    return cells


def _failure_text(longrepr):
    return _ANSI.sub("", longrepr or "")


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")


def numbers_only(stored, got):
    """Do the differing lines nbval shows differ in their numbers only (float rounding, a line number)?

    Line by line, numbers masked and spaces collapsed (numpy aligns columns by their digits); a line pytest's
    diff cuts at "..." (the rest of the output is truncated) is left out.
    """
    def masked(lines):
        return [" ".join(_NUMBER.sub("#", line).split()) for line in lines if not line.endswith("...")]

    stored, got = masked(stored), masked(got)
    pairs = list(zip(stored, got))
    return bool(pairs) and len(stored) == len(got) and all(a == b for a, b in pairs)


def explain(longrepr):
    """(kind, why) of one failed nbval report: "error" with the exception's last line, or "changed output"
    with the first differing lines; anything else (a collection error, a crash) is an error too."""
    text = _failure_text(longrepr)
    if "Cell outputs differ" in text:
        # nbval asserts reference == test and shows pytest's diff: "+ " lines are the stored output, "- " the new
        got = [line.strip()[2:].strip() for line in text.splitlines() if line.strip().startswith("- ")]
        stored = [line.strip()[2:].strip() for line in text.splitlines() if line.strip().startswith("+ ")]
        mismatch = re.search(r"mismatch '([^']+)'", text)
        why = f"{mismatch.group(1)} differs" if mismatch else "the output differs"
        if got or stored:
            why += f": stored {stored[0] if stored else ''!r:.160}, got {got[0] if got else ''!r:.160}"
        if numbers_only(stored, got):
            why = "numbers only; " + why
        return "changed output", why
    if "Cell execution caused an exception" in text or "Traceback:" in text:
        tb = text.split("Traceback:", 1)[-1]
        lines = [line.strip() for line in tb.splitlines() if line.strip()]
        error = next((line for line in reversed(lines) if re.match(r"^[A-Za-z_][\w.]*(: |$)", line)
                      and not line.startswith(("File ", "Cell "))), None)
        return "error", (error or (lines[-1] if lines else "the cell raised"))[:300]
    first = next((line.strip() for line in text.splitlines() if line.strip()), "failed")
    return "error", first[:300]


def classify(records, version, root=ROOT, specific=None):
    """One version's table row per notebook from the plugin's records (dicts of nodeid/when/outcome/longrepr).

    Returns {notebook: {"status", "passed", "failed", "skipped", "cells": [...]}}: status "pass" (every
    cell as stored), "version-specific" (only cells that state a fact of one version differ), "numbers" (besides
    those, only numbers differ: float rounding), "differs" (a cell changed its output otherwise, or raised); each
    differing cell: index, first line, kind, why, the passes it failed in (and numbers_only).
    """
    specific = load_specific() if specific is None else specific
    table = {}
    cell_cache = {}
    for record in records:
        nodeid = record["nodeid"]
        path = nodeid.split("::", 1)[0]
        if not path.endswith(".ipynb"):
            continue
        row = table.setdefault(path, {"status": "pass", "passed": 0, "failed": 0, "skipped": 0, "cells": []})
        outcome, when = record["outcome"], record.get("when", "call")
        if outcome == "passed":
            row["passed"] += when == "call"
            continue
        if outcome == "skipped":
            row["skipped"] += 1
            continue
        row["failed"] += 1
        parsed = parse_nodeid(nodeid)
        kind, why = explain(record.get("longrepr", ""))
        num, label, first, tagged = None, when if when != "call" else "notebook", "", None
        if parsed:
            _, num, label = parsed
            if path not in cell_cache:
                cell_cache[path] = code_cells(path, root) if (root / path).is_file() else []
            cells = cell_cache[path]
            if num < len(cells):
                cell_id, tags, first = cells[num]
                tagged = next((m.group(1) for m in map(VERSION_TAG.match, tags) if m), None)
                if tagged is None and cell_id in specific.get(path, {}):
                    tagged = "listed"
        if tagged is not None and not _is_version(version, tagged):
            kind = "version-specific"
            why = (specific.get(path, {}).get(cells[num][0]) if tagged == "listed" else None) or why
            why = why if tagged == "listed" else f"tagged ms-{tagged}-only; {why}"
        existing = next((c for c in row["cells"] if c["cell"] == num and num is not None), None)
        if existing:  # the same cell in another pass: one entry; an error outranks a changed output
            existing["passes"].append(label)
            if _RANK[kind] > _RANK[existing["kind"]]:
                existing.update(kind=kind, why=why)
                existing.pop("numbers_only", None)
            continue
        row["cells"].append({"cell": num, "first_line": first, "kind": kind, "why": why, "passes": [label],
                             **({"numbers_only": True} if kind == "changed output" and why.startswith("numbers only")
                                else {})})
    for row in table.values():
        row["cells"].sort(key=lambda c: (c["cell"] is None, c["cell"] or 0))
        labels = {label_of(c) for c in row["cells"]}
        row["status"] = ("pass" if not labels else "version-specific" if labels == {LABELS["version-specific"]}
                         else "numbers" if labels <= {LABELS["version-specific"], LABELS["numbers"]}
                         else "differs")
    return table


def _is_version(version, tagged):
    """Does MindSpore ``version`` (2.10.0) match a tag's version (2.10 or 2.10.0)?"""
    return version == tagged or version.startswith(tagged + ".")


def read_log(path):
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            records.append(json.loads(line))
    return records


# ---- the matrix file -----------------------------------------------------------------------------------------
def load_matrix(path=MATRIX_JSON):
    if not Path(path).is_file():
        return {"runs": {}}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("runs"), dict):
        raise ValueError(f"{path}: not a version matrix (expected {{\"runs\": {{version: ...}}}}); "
                         "delete it and run `make test-matrix` to write a new one")
    return data


def _version_key(version):
    return tuple(int(part) for part in re.findall(r"\d+", version))


def save_matrix(matrix, path=MATRIX_JSON, md_path=MATRIX_MD):
    matrix["runs"] = dict(sorted(matrix["runs"].items(), key=lambda kv: _version_key(kv[0])))
    matrix["tested"] = list(matrix["runs"])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(matrix, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    Path(md_path).write_text(render(matrix), encoding="utf-8")


def _short(path):
    return Path(path).stem


def _cells_text(cells, kind=None):
    chosen = [c for c in cells if kind is None or c["kind"] == kind]
    return ", ".join(str(c["cell"]) if c["cell"] is not None else "the notebook" for c in chosen)


# The table's words in English and in Chinese (README.zh-CN.md shows the same table in Chinese).
WORDS = {
    "en": {"cell": "cell", "cells": "cells", "sep": ": ", "join": "; ", "not run": "not run", "pass": "passes",
           "version-specific": "passes; ", "numbers": "runs; ", "differs": "**differs**: ", "notebook": "notebook",
           "footer": "*time, disk*", "time": "{install:.1f} min install + {tests:.1f} min tests (-n {jobs}), "
                                            "venv {gb:.1f} GB",
           "error": "error", "changed output": "changed output", "changed numbers": "changed numbers",
           "version-specific claim": "version-specific claim"},
    "zh": {"cell": "单元格", "cells": "单元格", "sep": "：", "join": "；", "not run": "未运行", "pass": "通过",
           "version-specific": "通过；", "numbers": "能运行；", "differs": "**不同**：", "notebook": "notebook",
           "footer": "*时间、磁盘*", "time": "安装 {install:.1f} 分钟 + 测试 {tests:.1f} 分钟（-n {jobs}），"
                                           "虚拟环境 {gb:.1f} GB",
           "error": "出错", "changed output": "输出有变化", "changed numbers": "数字不同",
           "version-specific claim": "版本相关的陈述"},
}


def cell_summary(row, lang="en"):
    """'cells 4, 5: version-specific claim; cell 12: error' for one notebook on one version."""
    words = WORDS[lang]
    parts = []
    for label in LABELS.values():
        chosen = [c for c in row["cells"] if label_of(c) == label]
        if chosen:
            word = words["cell"] if len(chosen) == 1 else words["cells"]
            parts.append(f"{word} {_cells_text(chosen)}{words['sep']}{words[label]}")
    return words["join"].join(parts)


LABELS = {"error": "error", "changed output": "changed output", "numbers": "changed numbers",
          "version-specific": "version-specific claim"}


def label_of(cell):
    """A differing cell's label in the table: changed numbers is a changed output whose shown lines differ in
    their numbers only (float rounding in the last digits, a line number of MindSpore's own source)."""
    return LABELS["numbers" if cell.get("numbers_only") else cell["kind"]]


def table_lines(matrix, lang="en"):
    """The markdown table: notebook x version, with the run's date; a footer row with time and disk."""
    words = WORDS[lang]
    runs = matrix["runs"]
    versions = list(runs)
    names = sorted({nb for run in runs.values() for nb in run["notebooks"]},
                   key=lambda nb: (nb.startswith("app/"), nb))
    lines = [f"| {words['notebook']} | " + " | ".join(f"MindSpore {v}" for v in versions) + " |",
             "|---|" + "---|" * len(versions)]
    for nb in names:
        cells = []
        for v in versions:
            row = runs[v]["notebooks"].get(nb)
            date = runs[v]["date"]
            if row is None or row["status"] == "not run":
                cells.append(words["not run"])
            elif row["status"] == "pass":
                cells.append(f"{words['pass']} ({date})")
            else:
                cells.append(f"{words[row['status']]}{cell_summary(row, lang)} ({date})")
        lines.append(f"| {_short(nb)} | " + " | ".join(cells) + " |")
    lines.append(f"| {words['footer']} | " + " | ".join(words["time"].format(
        install=runs[v]["install_seconds"] / 60, tests=runs[v]["test_seconds"] / 60, jobs=runs[v]["jobs"],
        gb=runs[v]["venv_gb"]) for v in versions) + " |")
    return lines


def render(matrix):
    """docs/version-matrix.md: the table, then every differing cell with its first line and why."""
    out = ["# Which MindSpore runs which lesson", "",
           "Written by `make test-matrix` (tools/matrix.py) from docs/version-matrix.json; do not edit by hand.",
           "Each version ran in a fresh venv with the course's pins (mindspore replaced), every notebook under "
           "strict nbval (*student pass*: each lesson as a learner gets it; *both passes*: also the suite's second "
           "pass, the Chinese instructor edition with every reference solution, in the same kernel). "
           "*version-specific claim*: a cell that states a fact of one version (tagged `ms-2.10-only` or listed "
           "in docs/version_specific_cells.json); the lesson itself works. *changed numbers*: a changed output "
           "whose differing lines differ in their numbers only (float32 rounding in the last digits, a line number "
           "in MindSpore's own source). *changed output*, *error*: the cell prints something else, or raises.", ""]
    out += table_lines(matrix)
    for version, run in matrix["runs"].items():
        out += ["", f"## MindSpore {version}", "",
                f"Run {run['date']} on commit {run['commit'][:12]}, Python {run['python']}, `-n {run['jobs']}`, "
                f"{_PASSES[run.get('passes', 'both')]}: {run['passed']} passed, {run['failed']} failed, "
                f"{run['skipped']} skipped; install {run['install_seconds']:.0f} s, tests {run['test_seconds']:.0f} s, "
                f"venv {run['venv_gb']:.2f} GB (removed after the run).", ""]
        differing = [(nb, row) for nb, row in run["notebooks"].items() if row["cells"]]
        if not differing:
            out.append("Every notebook passes as stored.")
        for nb, row in differing:
            for c in row["cells"]:
                cell = f"cell {c['cell']}" if c["cell"] is not None else "the notebook"
                first = f" `{c['first_line'].replace('`', '')}`" if c["first_line"] else ""
                out.append(f"- {_short(nb)}, {cell}{first}: **{label_of(c)}**: {c['why']} "
                           f"(in: {', '.join(c['passes'])})".replace("|", "\\|"))
    return "\n".join(out) + "\n"


# ---- one version's run ---------------------------------------------------------------------------------------
def _du(path):
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _commit(root=ROOT):
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def copy_course(dest, source="HEAD", root=ROOT):
    """The course as committed (``git archive`` of HEAD or of another commit) or the working tree (without .venv,
    .git, build outputs); returns the commit it is (for the working tree: HEAD's, with "+worktree")."""
    dest = Path(dest)
    if source != "worktree":
        commit = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{source}^{{commit}}"], cwd=root,
                                capture_output=True, text=True).stdout.strip()
        if not commit:
            raise ValueError(f"--source {source!r} is neither 'worktree' nor a commit of this repository")
        archive = dest.with_suffix(".tar")
        subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), commit], cwd=root, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        archive.unlink()
        return commit
    shutil.copytree(root, dest, ignore=shutil.ignore_patterns(".venv", ".git", "build", "student", "instructor",
                                                              "wheelhouse", "__pycache__", "*.egg-info"))
    return _commit(root) + "+worktree"


def _step(what, command, log, check=False, timeout=None, **kwargs):
    """Run one command, its output appended to ``log``; past ``timeout`` seconds its whole process group (pytest,
    its workers, their kernels) is killed and TimeoutExpired raised."""
    print(f"[matrix] {what}: {' '.join(map(str, command))}", flush=True)
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(map(str, command))}\n")
        out.flush()
        proc = subprocess.Popen([str(c) for c in command], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, **kwargs)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise
    if check and proc.returncode:
        raise SystemExit(f"{what} failed (exit {proc.returncode}); see {log}")
    return proc


def resolve_source(source):
    """``worktree``, or the commit ``source`` names (HEAD, a branch, a sha) as a full sha."""
    if source == "worktree":
        return source
    commit = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{source}^{{commit}}"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    if not commit:
        raise ValueError(f"--source {source!r} is neither 'worktree' nor a commit of this repository")
    return commit


def _scratch_base(version, scratch):
    base = Path(scratch) / version
    if base.resolve().is_relative_to(ROOT):
        raise ValueError(f"the matrix's scratch folder {base} is inside the repository: set COURSE_MATRIX_DIR "
                         "to a folder outside it (default /tmp/mindspore-course-matrix)")
    return base


def _alive(pid):
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def install_version(version, source="HEAD", scratch=SCRATCH, python=None):
    """The fresh venv of one version with the course copy installed in it; writes <version>/prepared.json (the
    commit, install seconds, venv size). ``prepare`` calls it for the next version while one runs."""
    check_version(version)
    base = _scratch_base(version, scratch)
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    free = shutil.disk_usage(base).free / 2**30
    if free < MIN_FREE_GB:
        shutil.rmtree(base)
        raise SystemExit(f"{free:.1f} GB free under {base}: a version needs about {MIN_FREE_GB} GB (one venv is "
                         "~3 GB); free some space or set COURSE_MATRIX_DIR to another disk")
    lock = base / "preparing"
    lock.write_text(str(os.getpid()))
    python = python or sys.executable
    log = base / "run.log"
    venv, course = base / "venv", base / "course"
    started = time.monotonic()
    commit = copy_course(course, source)
    pins = base / "pins.txt"
    pins.write_text("\n".join(pins_for(version, course / "requirements-dev.txt")) + "\n", encoding="utf-8")
    _step("venv", [python, "-m", "venv", venv], log, check=True)
    py = venv / "bin" / "python"
    # The wheels are downloaded once into the scratch folder's wheels/ (the pins but mindspore are the same for
    # every version): a second version installs from there, only its mindspore (~0.8 GB) comes from the index.
    wheels = Path(scratch) / "wheels"
    _step("download", [py, "-m", "pip", "download", "--quiet", "-d", wheels, "-r", pins], log)
    # --no-compile: no .pyc for every file of 3 GB up front (minutes of CPU on a shared machine); Python
    # compiles what the notebooks import, when they import it.
    done = _step("install", [py, "-m", "pip", "install", "--quiet", "--no-compile", "--find-links", wheels,
                             "-r", pins], log)
    if done.returncode:
        raise SystemExit(f"MindSpore {version}: installing the pins failed (see {log})")
    _step("install the course", [py, "-m", "pip", "install", "--quiet", "--no-deps", "-e", course], log, check=True)
    for wheel in wheels.glob(f"mindspore-{version}-*.whl"):  # this version's own wheel is not needed again
        wheel.unlink()
    prepared = {"commit": commit, "install_seconds": round(time.monotonic() - started, 1), "venv_bytes": _du(venv),
                "python": _py_version(py)}
    (base / "prepared.json").write_text(json.dumps(prepared) + "\n")
    lock.unlink()
    return prepared


def run_version(version, jobs=1, source="HEAD", keep=False, max_minutes=40, scratch=SCRATCH, python=None,
                passes="student"):
    """Build the venv (or take the one ``prepare`` built for this commit), run every notebook, classify, merge
    into the matrix; return this version's run record."""
    check_version(version)
    if passes not in ("student", "both"):
        raise ValueError(f"passes must be 'student' or 'both', not {passes!r}")
    base = _scratch_base(version, scratch)
    source = resolve_source(source)
    lock = base / "preparing"
    while lock.is_file() and _alive(int(lock.read_text() or 0)):  # `prepare` is still installing it
        time.sleep(5)
    venv, course, plugin = base / "venv", base / "course", base / "plugin"
    log = base / "run.log"
    try:
        prepared = json.loads((base / "prepared.json").read_text())
    except (OSError, ValueError):
        prepared = None
    if (prepared is None or lock.is_file() or not (venv / "bin" / "python").is_file()
            or (source != "worktree" and prepared["commit"] != source)):
        prepared = install_version(version, source, scratch, python)
    py = venv / "bin" / "python"
    commit, install_seconds, venv_bytes = prepared["commit"], prepared["install_seconds"], prepared["venv_bytes"]
    try:
        plugin.mkdir()
        shutil.copy(__file__, plugin / "course_matrix.py")
        records = base / "reports.jsonl"
        records.unlink(missing_ok=True)
        env = dict(os.environ, GLOG_v="3", PYTHONPATH=str(plugin), COURSE_SKIP_CLEAN_CHECK="1",
                   **{LOG_ENV: str(records), PASSES_ENV: passes})
        env.pop("COURSE_LANG", None)
        test_started = time.monotonic()
        try:
            tests = _step("notebooks", [py, "-m", "pytest", "-p", "no:cacheprovider", "-p", "course_matrix",
                                        "-n", str(jobs), "-q", *notebooks(course)], log, cwd=course, env=env,
                          timeout=max_minutes * 60)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        test_seconds = time.monotonic() - test_started
        peak_bytes = _du(base)
        reported = read_log(records) if records.is_file() else []
        run = summarise(version, reported, course, dict(
            date=datetime.date.today().isoformat(), commit=commit, source=source,
            python=prepared["python"],
            jobs=jobs, passes=passes, install_seconds=round(install_seconds, 1), test_seconds=round(test_seconds, 1),
            venv_gb=round(venv_bytes / 2**30, 2), peak_scratch_gb=round(peak_bytes / 2**30, 2),
            pytest_exit=None if timed_out else tests.returncode, timed_out=timed_out))
        matrix = load_matrix()
        matrix["runs"][version] = run
        save_matrix(matrix)
        print(f"[matrix] MindSpore {version}: {run['passed']} passed, {run['failed']} failed; install "
              f"{install_seconds:.0f} s, tests {test_seconds:.0f} s, venv {venv_bytes / 2**30:.2f} GB; "
              f"written to {MATRIX_JSON.relative_to(ROOT)}", flush=True)
        return run
    finally:
        if not keep:
            for folder in (venv, plugin):  # the course copy (~30 MB) stays: `rebuild` reads its notebooks
                shutil.rmtree(folder, ignore_errors=True)


def _py_version(py):
    out = subprocess.run([str(py), "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
                         capture_output=True, text=True)
    return out.stdout.strip()


def summarise(version, records, root, info):
    """The run record: info (date, timings, ...) plus the counts and the per-notebook table."""
    calls = [r for r in records if r.get("when") == "call" or r["outcome"] == "failed"]
    table = classify(records, version, root=Path(root))
    for nb in notebooks(Path(root)):
        table.setdefault(nb, {"status": "not run", "passed": 0, "failed": 0, "skipped": 0, "cells": []})
    return dict(info, passed=sum(r["outcome"] == "passed" for r in calls),
                failed=sum(r["outcome"] == "failed" for r in calls),
                skipped=sum(r["outcome"] == "skipped" for r in calls),
                notebooks=dict(sorted(table.items())))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python tools/matrix.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the matrix for some versions (default: all tested ones)")
    r.add_argument("versions", nargs="*", default=list(VERSIONS))
    r.add_argument("--jobs", "-n", type=int, default=2)
    r.add_argument("--source", default="HEAD", help="HEAD (default), another commit, or worktree (uncommitted "
                                                      "edits too); give one commit to run several versions on it")
    r.add_argument("--keep", action="store_true", help="keep the venv and the copy (for a look afterwards)")
    r.add_argument("--max-minutes", type=float, default=40)
    r.add_argument("--passes", choices=["student", "both"], default="student",
                   help="student (default): each lesson as a learner gets it; both: also the suite's second pass "
                        "(the Chinese instructor edition with every reference solution), twice the time")
    q = sub.add_parser("prepare", help="only build a version's venv (e.g. the next one, under `nice`, while one "
                                       "runs); `run` then takes it if it is of the same commit")
    q.add_argument("version")
    q.add_argument("--source", default="HEAD")
    sub.add_parser("render", help="rewrite docs/version-matrix.md from docs/version-matrix.json")
    m = sub.add_parser("readme", help="print the table the READMEs show")
    m.add_argument("--lang", choices=["en", "zh"], default="en", help="zh: README.zh-CN.md's table")
    b = sub.add_parser("rebuild", help="re-classify a finished run from its reports in the scratch folder")
    b.add_argument("version")
    args = p.parse_args(argv)
    if args.command == "run":
        try:
            versions = [check_version(v) for v in args.versions]
        except ValueError as exc:
            p.error(str(exc))
        try:  # every version of this run on one commit, even if HEAD moves meanwhile
            source = resolve_source(args.source)
        except ValueError as exc:
            p.error(str(exc))
        failed = []
        for version in versions:
            try:
                run_version(version, jobs=args.jobs, source=source, keep=args.keep, max_minutes=args.max_minutes,
                            passes=args.passes)
            except (SystemExit, OSError, subprocess.SubprocessError, ValueError) as exc:
                print(f"[matrix] MindSpore {version}: not run: {exc}", file=sys.stderr, flush=True)
                failed.append(version)
        if failed:
            print(f"[matrix] not run: {', '.join(failed)} (their earlier rows, if any, are unchanged)", file=sys.stderr)
            return 1
    elif args.command == "prepare":
        try:
            version, source = check_version(args.version), resolve_source(args.source)
        except ValueError as exc:
            p.error(str(exc))
        prepared = install_version(version, source)
        print(f"[matrix] MindSpore {version} prepared in {prepared['install_seconds']:.0f} s, "
              f"{prepared['venv_bytes'] / 2**30:.2f} GB", flush=True)
    elif args.command == "render":
        save_matrix(load_matrix())
    elif args.command == "readme":
        print("\n".join(table_lines(load_matrix(), args.lang)))
    elif args.command == "rebuild":
        matrix = load_matrix()
        version = check_version(args.version)
        if version not in matrix["runs"]:
            p.error(f"no run of {version} in {MATRIX_JSON}: run it first (make test-matrix MS={version})")
        records = read_log(SCRATCH / version / "reports.jsonl")
        old = matrix["runs"][version]
        info = {k: v for k, v in old.items() if k not in ("passed", "failed", "skipped", "notebooks")}
        copy = SCRATCH / version / "course"
        matrix["runs"][version] = summarise(version, records, copy if copy.is_dir() else ROOT, info)
        save_matrix(matrix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
