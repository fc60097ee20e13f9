"""Check that this machine can run the course, and say exactly what is wrong if it cannot.

From the shell (before a workshop):  ``make check``  or  ``python -m course_utils.setup_check``
From a notebook:                    ``from course_utils.setup_check import run; run()``
"""

import contextlib
import io
import os
import re
import sys
from importlib import metadata
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements.txt"
SUPPORTED_PYTHON = ((3, 11), (3, 12))  # 3.9: no MindSpore 2.10 wheel; 3.10: no pinned matplotlib
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)")


def read_pins(path=REQUIREMENTS):
    """Return {package: version} for every ``name==version`` line of a requirements file."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be the path of a requirements file (str or Path), got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no requirements file at {path}; run the check from a clone of the course")
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


def check_python(version_info=None):
    """Return a problem message, or None when the Python version is supported."""
    version = tuple(version_info or sys.version_info)[:2] if not isinstance(version_info, (str, int)) else ()
    if len(version) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in version):
        raise TypeError(f"version_info must be like sys.version_info, (major, minor, ...), got {version_info!r:.60}")
    major, minor = version
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED_PYTHON
    if (major, minor) < (lo_major, lo_minor) or (major, minor) > (hi_major, hi_minor):
        return (f"Python {major}.{minor} is not supported by the course's pins: use Python 3.11 or 3.12 "
                f"(MindSpore 2.10 has no wheel for 3.9 or 3.13; matplotlib 3.11 needs 3.11), "
                f"e.g. `python3.11 -m venv .venv`")
    return None


def check_packages(pins, installed=None):
    """Compare pins with installed versions. Returns (rows, problems); rows are (name, pinned, installed)."""
    for arg, value in (("pins", pins), ("installed", installed)):
        if value is not None and not isinstance(value, dict):
            raise TypeError(f"{arg} must be a dict {{package: version}}, got {type(value).__name__}")
    rows, problems = [], []
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
            problems.append(f"{name} is missing: run `make venv` (or `pip install -r requirements.txt`)")
        elif found != pinned:
            hint = ""
            if name == "numpy" and found.split(".")[0] != "1":
                hint = " (MindSpore 2.10 is built against NumPy 1.x and breaks with numpy 2)"
            problems.append(f"{name} {found} is installed but the course pins {pinned}{hint}: "
                            f"run `pip install {name}=={pinned}`")
    return rows, problems


def check_mindspore():
    """Import MindSpore quietly, run ``mindspore.run_check()`` and return (device, verdict, problem)."""
    os.environ.setdefault("GLOG_v", "3")
    try:
        import mindspore as ms
    except Exception as exc:  # any import failure is what the attendee needs to see
        return None, None, f"`import mindspore` failed: {type(exc).__name__}: {exc}"
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            ms.run_check()
    except Exception as exc:
        return None, None, f"mindspore.run_check() raised {type(exc).__name__}: {exc}"
    device = ms.get_context("device_target")
    verdict = next((line for line in captured.getvalue().splitlines() if "result" in line), "")
    if "correct" not in verdict or "successfully" not in verdict:
        return device, verdict, f"mindspore.run_check() did not succeed: {captured.getvalue().strip()!r}"
    return device, verdict, None


def run(requirements=REQUIREMENTS, out=None):
    """Print the report; return the list of problems (empty when the machine is ready)."""
    out = out or sys.stdout
    problems = []
    print(f"Python {sys.version.split()[0]}", file=out)
    python_problem = check_python()
    if python_problem:
        problems.append(python_problem)
    rows, package_problems = check_packages(read_pins(requirements))
    problems += package_problems
    width = max(len(name) for name, _, _ in rows)
    for name, pinned, found in rows:
        mark = "ok " if found == pinned else "!! "
        print(f"  {mark}{name:<{width}}  pinned {pinned:<10} installed {found or 'MISSING'}", file=out)
    if "mindspore" in {name for name, _, found in rows if found}:
        device, verdict, ms_problem = check_mindspore()
        print(f"MindSpore device: {device}", file=out)
        print(f"mindspore.run_check(): {verdict or 'no verdict'}", file=out)
        if ms_problem:
            problems.append(ms_problem)
    if problems:
        print(f"\nNOT READY: {len(problems)} problem(s)", file=out)
        for problem in problems:
            print(f"  - {problem}", file=out)
    else:
        print("\nREADY: everything the course needs is installed and MindSpore works on this machine.", file=out)
    return problems


def main():
    sys.exit(1 if run() else 0)


if __name__ == "__main__":
    main()
