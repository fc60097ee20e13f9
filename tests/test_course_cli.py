"""course.py: the commands a learner without make types (Windows, macOS), and the one code path make uses too."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import course  # noqa: E402


def run_course(*args):
    return subprocess.run([sys.executable, str(ROOT / "course.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_make_calls_course_py_for_every_learner_command():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target, command in [("lab", "lab"), ("lab-zh", "lab --zh"), ("app", "app"), ("app-zh", "app --zh"),
                            ("check", "check"), ("test", "test --jobs $(JOBS)"),
                            ("test-quick", "test --quick --jobs $(JOBS)"), ("execute", "execute $(NB)")]:
        recipe = re.search(rf"^{re.escape(target)}:.*\n\t(.*)$", makefile, re.M)
        assert recipe and recipe.group(1) == f"$(COURSE) {command}", (target, recipe and recipe.group(1))
    assert "COURSE := $(PYTHON) course.py" in makefile


@pytest.mark.parametrize("readme", ["README.md", "README.zh-CN.md"])
def test_the_readmes_show_commands_that_exist(readme):
    text = (ROOT / readme).read_text(encoding="utf-8")
    shown = [command.split() for command in re.findall(r"course\.py ([^`\n]*)`", text)]
    assert {"lab", "test", "check", "classroom"} <= {words[0] for words in shown}, shown
    for words in shown:
        if words != ["--help"]:
            course.parser().parse_args(words)  # an unknown command, flag or value exits with 2 here


def test_the_setup_check_runs_through_course_py():
    result = run_course("check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "READY" in result.stdout and "+ " in result.stdout  # the command it ran is shown first


@pytest.mark.parametrize("args, message", [
    (["bogus"], "invalid choice: 'bogus'"),
    (["test", "--jobs", "0"], "--jobs must be a whole number of workers, 1 or more, not '0'"),
    (["test", "--jobs", "two"], "not 'two'"),
    (["lab", "--nope"], "unrecognized arguments: --nope"),
])
def test_bad_arguments_are_refused_with_a_reason(args, message):
    result = run_course(*args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_notebook_that_does_not_exist_is_named():
    result = run_course("execute", "notebooks/99_nothing.ipynb")
    assert result.returncode == 1
    assert "no such notebook: notebooks/99_nothing.ipynb" in result.stderr


def test_an_unsupported_python_is_told_which_to_use(monkeypatch, tmp_path):
    monkeypatch.setattr(course, "VENV", tmp_path / "venv")
    monkeypatch.setattr(course.sys, "version_info", (3, 13, 0))
    monkeypatch.setattr(course.sys, "version", "3.13.0 (main)")
    with pytest.raises(SystemExit, match=r"Python 3\.13\.0; the course needs 3\.11 or 3\.12.*py -3\.11 course\.py lab"):
        course.ensure_venv()
    assert not (tmp_path / "venv").exists()


def test_the_venv_python_is_where_each_system_puts_it(monkeypatch, tmp_path):
    monkeypatch.setattr(course.os, "name", "nt")
    assert course.venv_python(tmp_path) == tmp_path / "Scripts" / "python.exe"
    monkeypatch.setattr(course.os, "name", "posix")
    assert course.venv_python(tmp_path) == tmp_path / "bin" / "python"


def test_an_installed_venv_is_not_reinstalled(monkeypatch, tmp_path):
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed").touch()
    (venv / ".installed-dev").touch()
    monkeypatch.setattr(course, "VENV", venv)
    monkeypatch.setattr(course.os, "name", "posix")
    calls = []
    monkeypatch.setattr(course, "run", calls.append)
    monkeypatch.setattr(course, "_stale", lambda stamp, pins: False)
    assert course.ensure_venv(dev=True) == venv / "bin" / "python" and calls == []
    monkeypatch.setattr(course, "_stale", lambda stamp, pins: stamp.name == ".installed-dev")
    course.ensure_venv(dev=True)
    assert [c[-1] for c in calls] == ["requirements-dev.txt"]


def test_a_wheelhouse_that_is_not_one_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_WHEELHOUSE", str(tmp_path))
    with pytest.raises(SystemExit, match=r"no wheelhouse there \(no mindspore wheel\).*course\.py wheelhouse"):
        course.pip_source()
    (tmp_path / "mindspore-2.10.0-cp311-cp311-win_amd64.whl").touch()
    assert course.pip_source() == ["--no-index", "--find-links", str(tmp_path.resolve())]
    monkeypatch.delenv("COURSE_WHEELHOUSE")
    assert course.pip_source() == []


def test_the_wheelhouse_asks_pip_for_every_system_and_python(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(course, "run", calls.append)
    course.main(["wheelhouse", str(tmp_path)])
    asked = {(c[c.index("--python-version") + 1], c[c.index("--platform") + 1]) for c in calls}
    first_tags = ("manylinux_2_28_x86_64", "win_amd64", "macosx_14_0_arm64", "macosx_14_0_x86_64")
    assert asked == {(v, p) for v in ("3.11", "3.12") for p in first_tags}
    assert all("--only-binary=:all:" in c and "requirements.txt" in c for c in calls)
    assert not any("requirements-dev.txt" in c for c in calls)
    result = run_course("wheelhouse", str(tmp_path), "--python", "3.13")
    assert result.returncode == 2 and "invalid choice: '3.13'" in result.stderr
