"""Check that this machine can run the course, and say exactly what is wrong if it cannot.

From the shell (before a workshop):  ``make check``  or  ``python -m course_utils.setup_check``
From a notebook:                    ``from course_utils.setup_check import run; run()``
A contributor (tests, lint, browser tests) adds the tools of requirements-dev.txt:  ``... setup_check --contributor``

It fails only on what breaks a notebook: a Python other than 3.11 or 3.12, a missing package, numpy 2, a
MindSpore the course was not tested on. Another version of a package than the pinned one is a warning: it usually
works. MindSpore follows the tested version matrix (docs/version-matrix.json, written by ``make test-matrix``):
the pinned 2.10 passes; an older minor version that was tested (2.7-2.9) passes with a warning naming the
notebooks that differ on it and how; any other version fails, naming the versions that were tested.
"""

import contextlib
import io
import json
import os
import re
import sys
from importlib import metadata
from pathlib import Path

from course_utils.messages import lazy, t

REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements.txt"  # what a learner needs
CONTRIBUTOR_REQUIREMENTS = REQUIREMENTS.with_name("requirements-dev.txt")  # plus the tests' and tools' pins
SUPPORTED_PYTHON = ((3, 11), (3, 12))  # 3.9: no MindSpore 2.10 wheel; 3.10: no pinned matplotlib
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)")


def read_pins(path=REQUIREMENTS):
    """Return {package: version} for every ``name==version`` line of a requirements file."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be the path of a requirements file (str or Path), got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(t("no requirements file at {path}; run the check from a clone of the course",
                                  path=path))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a text file (not UTF-8): give a requirements file") from None
    pins = {}
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[match.group(1)] = match.group(2)
    if not pins:
        raise ValueError(f"{path} has no 'name==version' lines")
    return pins


DISTRIBUTION = "mindspore-training-course"  # this course as an installed package (pyproject.toml)


def learner_pins(path=REQUIREMENTS):
    """The pins of ``path``; in an installed copy without the clone's requirements.txt, the same pins from the
    installed course's metadata (pyproject.toml takes its dependencies from requirements.txt)."""
    if Path(path) == REQUIREMENTS and not REQUIREMENTS.is_file():
        try:
            required = metadata.requires(DISTRIBUTION) or []
        except metadata.PackageNotFoundError:
            required = []
        pins = dict(m.groups() for m in map(_PIN.match, required) if m)
        if pins:
            return pins
    return read_pins(path)


def check_python(version_info=None):
    """Return a problem message, or None when the Python version is supported."""
    version = tuple(version_info or sys.version_info)[:2] if not isinstance(version_info, (str, int)) else ()
    if len(version) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in version):
        raise TypeError(f"version_info must be like sys.version_info, (major, minor, ...), got {version_info!r:.60}")
    major, minor = version
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED_PYTHON
    if (major, minor) < (lo_major, lo_minor) or (major, minor) > (hi_major, hi_minor):
        return t("Python {major}.{minor} is not supported by the course's pins: use Python 3.11 or 3.12 "
                 "(MindSpore 2.10 has no wheel for 3.9 or 3.13; matplotlib 3.11 needs 3.11), "
                 "e.g. `python3.11 -m venv .venv`", major=major, minor=minor)
    return None


# The tested version matrix (tools/matrix.py writes it; absent in an installed copy: then only the pin counts).
MATRIX = Path(__file__).resolve().parent.parent / "docs" / "version-matrix.json"
HOW = {"error": lazy("an error"), "changed output": lazy("a changed output"),
       "numbers": lazy("numbers that differ in their last digits"),
       "version-specific": lazy("a sentence about one MindSpore version (the lesson works)")}


def load_matrix(path=MATRIX):
    """The runs of the version matrix, {version: run}; {} when there is no matrix file (an installed copy)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be the path of docs/version-matrix.json (str or Path), got {type(path).__name__}")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable version matrix ({exc}): restore it with `git checkout` "
                         "or rewrite it with `make test-matrix`") from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, dict):
        raise ValueError(f"{path} has no 'runs': restore it or rewrite it with `make test-matrix`")
    return runs


def _minor(version):
    return str(version).split(".")[:2]


def _differences(run):
    """'00_setup (cells 4, 5: ...), 11_checkpoints (cell 51: a changed output)': the notebooks that differ."""
    parts = []
    for notebook, row in run.get("notebooks", {}).items():
        cells = row.get("cells") or []
        if not cells:
            continue
        hows = []
        for kind in HOW:  # a changed output whose differing lines differ in their numbers only: "numbers"
            numbers = [str(c["cell"]) for c in cells if c.get("cell") is not None
                       and ("numbers" if c.get("numbers_only") else c.get("kind")) == kind]
            if numbers:
                hows.append(t("cell {cells}: {how}", cells=", ".join(numbers), how=t(HOW[kind])) if len(numbers) == 1
                            else t("cells {cells}: {how}", cells=", ".join(numbers), how=t(HOW[kind])))
        parts.append(f"{Path(notebook).stem} ({'; '.join(hows)})")
    return ", ".join(parts)


def check_mindspore_version(found, pinned, matrix=None):
    """(problem, warning) for the installed MindSpore ``found`` against the pin and the tested matrix.

    The pinned minor version: no problem (a warning for another patch release, as for any package). A minor
    version the matrix has a run of: a warning naming the notebooks that differ there and how. Anything else:
    a problem naming the tested versions.
    """
    runs = load_matrix() if matrix is None else matrix
    if not isinstance(runs, dict):
        raise TypeError("matrix must be {version: run} as docs/version-matrix.json's 'runs', "
                        f"got {type(runs).__name__}")
    found, pinned = str(found), str(pinned)
    if _minor(found) == _minor(pinned):
        return None, None
    tested = sorted({*runs, pinned}, key=lambda v: [int(p) if p.isdigit() else 0 for p in v.split(".")])
    same = [v for v in runs if _minor(v) == _minor(found)]
    if not same:
        return t("mindspore {found} is installed but the course is written for {pinned} and tested on {tested} "
                 "only (docs/version-matrix.md): run `pip install mindspore=={pinned}`", found=found,
                 pinned=pinned, tested=", ".join(tested)), None
    version = max(same, key=lambda v: v == found)  # the exact release if it was tested, else its minor version's
    run = runs[version]
    differences = _differences(run)
    summary = (t("these notebooks differ from their stored outputs there: {notebooks}; the others pass",
                 notebooks=differences) if differences else t("every notebook passes as stored"))
    return None, t("mindspore {found} is installed; the course is written for {pinned} and was tested on {version} "
                   "({date}): {summary} (docs/version-matrix.md). To see every output as stored: "
                   "`pip install mindspore=={pinned}`", found=found, pinned=pinned, version=version,
                   date=run.get("date", "?"), summary=summary)


def _breaks(name, found, pinned, matrix=None):
    """Why this installed version breaks the course, or None when it is only a different, compatible version."""
    if name == "numpy" and found.split(".")[0] != pinned.split(".")[0]:
        return t("numpy {found} is installed but the course pins {pinned} (MindSpore 2.10 is built against NumPy "
                 "1.x and breaks with numpy 2): run `pip install numpy=={pinned}`", found=found, pinned=pinned)
    if name == "mindspore":
        return check_mindspore_version(found, pinned, matrix)[0]
    return None


NOTEBOOK_INSTALL = lazy("`make venv` (or `pip install -r requirements.txt`)")  # what "run {install_hint}" says
CONTRIBUTOR_INSTALL = lazy("`make test` (or `pip install -r requirements-dev.txt`)")


def check_packages(pins, installed=None, install_hint=NOTEBOOK_INSTALL, matrix=None):
    """Compare pins with installed versions. Returns (rows, problems, warnings); rows are (name, pinned, installed).

    problems: missing packages and versions that break the course (numpy 2, a MindSpore minor version that is
    neither the pinned one nor in the tested matrix); warnings: any other version than the pinned one (it
    usually works), and a tested older MindSpore with the notebooks that differ on it. ``matrix``: the matrix's
    runs ({version: run}); default: docs/version-matrix.json.
    """
    for arg, value in (("pins", pins), ("installed", installed), ("matrix", matrix)):
        if value is not None and not isinstance(value, dict):
            raise TypeError(f"{arg} must be a dict {{package: version}}, got {type(value).__name__}")
    rows, problems, warnings = [], [], []
    for name, pinned in pins.items():
        if installed is None:
            try:
                found = metadata.version(name)
            except metadata.PackageNotFoundError:
                found = None
        else:
            found = installed.get(name)
        rows.append((name, pinned, found))
        if found is None:
            problems.append(t("{name} is missing: run {install_hint}", name=name, install_hint=t(install_hint)))
        elif found != pinned:
            broken = _breaks(name, str(found), str(pinned), matrix)
            tested = check_mindspore_version(found, pinned, matrix)[1] if name == "mindspore" else None
            if broken:
                problems.append(broken)
            elif tested:
                warnings.append(tested)
            else:
                warnings.append(t("{name} {found} is installed, the course is tested with {pinned}: this usually "
                                  "works; if something misbehaves, `pip install {name}=={pinned}`", name=name,
                                  found=found, pinned=pinned))
    return rows, problems, warnings


def check_mindspore():
    """Import MindSpore quietly, run ``mindspore.run_check()`` and return (device, verdict, problem)."""
    os.environ.setdefault("GLOG_v", "3")
    try:
        import mindspore as ms
    except Exception as exc:  # any import failure is what the attendee needs to see
        return None, None, t("`import mindspore` failed: {error}: {exc}", error=type(exc).__name__, exc=exc)
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            ms.run_check()
    except Exception as exc:
        return None, None, t("mindspore.run_check() raised {error}: {exc}", error=type(exc).__name__, exc=exc)
    device = ms.get_context("device_target")
    verdict = next((line for line in captured.getvalue().splitlines() if "result" in line), "")
    if "correct" not in verdict or "successfully" not in verdict:
        return device, verdict, t("mindspore.run_check() did not succeed: {output!r}",
                                  output=captured.getvalue().strip())
    return device, verdict, None


def run(requirements=REQUIREMENTS, out=None, contributor=False):
    """Print the report; return the list of problems (empty when the machine is ready; warnings are printed only).

    contributor=True also checks the tools of requirements-dev.txt (tests, lint, notebook tooling, browser tests).
    """
    out = out or sys.stdout
    problems, warnings = [], []
    print(f"Python {sys.version.split()[0]}", file=out)
    python_problem = check_python()
    if python_problem:
        problems.append(python_problem)
    groups = [(lazy("Packages for the notebooks:"), learner_pins(requirements), NOTEBOOK_INSTALL)]
    if contributor:
        tools = {k: v for k, v in read_pins(CONTRIBUTOR_REQUIREMENTS).items() if k not in groups[0][1]}
        groups.append((lazy("Packages for contributors:"), tools, CONTRIBUTOR_INSTALL))
    all_rows = []
    matrix = load_matrix()
    for title, pins, hint in groups:
        rows, group_problems, group_warnings = check_packages(pins, install_hint=hint, matrix=matrix)
        problems += group_problems
        warnings += group_warnings
        all_rows += rows
        width = max(len(name) for name, _, _ in rows)
        print(t(title), file=out)
        for name, pinned, found in rows:
            broken = found is None or (found != pinned and _breaks(name, str(found), str(pinned), matrix) is not None)
            mark = "ok " if found == pinned else "!! " if broken else "~  "
            print(t("  {mark}{name:<{width}}  pinned {pinned:<10} installed {found}", mark=mark, name=name,
                    width=width, pinned=pinned, found=found or t("MISSING")), file=out)
    if "mindspore" in {name for name, _, found in all_rows if found}:
        device, verdict, ms_problem = check_mindspore()
        print(t("MindSpore device: {device}", device=device), file=out)
        print(t("mindspore.run_check(): {verdict}", verdict=verdict or t("no verdict")), file=out)
        if ms_problem:
            problems.append(ms_problem)
    if warnings:
        print(file=out)
        print(t("{count} warning(s), nothing that stops the course:", count=len(warnings)), file=out)
        for warning in warnings:
            print(f"  ~ {warning}", file=out)
    if problems:
        print(file=out)
        print(t("NOT READY: {count} problem(s)", count=len(problems)), file=out)
        for problem in problems:
            print(f"  - {problem}", file=out)
    else:
        print(file=out)
        print(t("READY: everything a contributor needs is installed and MindSpore works on this machine.")
              if contributor else
              t("READY: everything the notebooks need is installed and MindSpore works on this machine."), file=out)
    return problems


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--contributor"]):
        print(t("usage: python -m course_utils.setup_check [--contributor]"), file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if run(contributor=bool(args)) else 0)


if __name__ == "__main__":
    main()
