"""The pins: requirements.txt (a learner's), requirements-dev.txt (a contributor's) and environment.yml's two
parts agree, what is installed is what is pinned, and the setup check fails only on what breaks the course."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from course_utils import setup_check

ROOT = Path(__file__).resolve().parent.parent


DEV_MARKER = "# contributor tools (requirements-dev.txt)"


def _yml_pins():
    text = (ROOT / "environment.yml").read_text()
    env = yaml.safe_load(text)
    deps = env["dependencies"]
    pip_lists = [d["pip"] for d in deps if isinstance(d, dict) and "pip" in d]
    assert len(pip_lists) == 1, "environment.yml needs exactly one 'pip:' list"
    conda = [d for d in deps if isinstance(d, str)]
    pins = {}
    for line in pip_lists[0]:
        if line.startswith("-e "):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"environment.yml pip entry {line!r} is not pinned with =="
        pins[name] = version
    lines = [line.strip() for line in text.splitlines()]
    assert DEV_MARKER in lines, f"environment.yml's pip list needs the line {DEV_MARKER!r} before the contributor tools"
    after = lines[lines.index(DEV_MARKER):]
    dev = {name for name in pins if any(line.startswith(f"- {name}==") for line in after)}
    return conda, {k: v for k, v in pins.items() if k not in dev}, {k: v for k, v in pins.items() if k in dev}


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-dev.txt"])
def test_requirements_are_all_exact_pins(name):
    for line in (ROOT / name).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line != "-r requirements.txt":
            assert "==" in line, f"{name} line {line!r} is not an exact pin"


def test_environment_yml_matches_both_requirements_files():
    conda, learner, dev = _yml_pins()
    assert conda == ["python>=3.11,<3.13", "pip"], f"conda part must be python>=3.11,<3.13 and pip, got {conda}"
    req = setup_check.read_pins(ROOT / "requirements.txt")
    assert learner == req, f"environment.yml's first part and requirements.txt differ: {learner.items() ^ req.items()}"
    req_dev = setup_check.read_pins(ROOT / "requirements-dev.txt")
    assert dev == req_dev, f"environment.yml's tools and requirements-dev.txt differ: {dev.items() ^ req_dev.items()}"
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert not set(req) & set(req_dev), "a package is pinned in both files"


def test_python_versions_agree_everywhere():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.11,<3.13"' in pyproject
    assert setup_check.SUPPORTED_PYTHON == ((3, 11), (3, 12))
    assert "Python 3.11 or 3.12" in (ROOT / "README.md").read_text()


def test_numpy_is_pinned_below_2():
    assert setup_check.read_pins()["numpy"].startswith("1."), "MindSpore 2.10 breaks with numpy 2"


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-dev.txt"])
def test_installed_versions_equal_pins(name):
    _, problems, warnings = setup_check.check_packages(setup_check.read_pins(ROOT / name))
    assert not problems and not warnings, "\n".join(problems + warnings)


def test_setup_check_reports_wrong_and_missing_packages():
    pins = {"numpy": "1.26.4", "mindspore": "2.10.0"}
    rows, problems, warnings = setup_check.check_packages(pins, installed={"numpy": "2.1.0"})
    assert rows == [("numpy", "1.26.4", "2.1.0"), ("mindspore", "2.10.0", None)]
    assert "numpy 2.1.0 is installed but the course pins 1.26.4" in problems[0]
    assert "NumPy 1.x" in problems[0]
    assert problems[1].startswith("mindspore is missing") and warnings == []


def test_setup_check_warns_on_compatible_versions_and_fails_on_breaking_ones():
    pins = {"numpy": "1.26.4", "mindspore": "2.10.0", "jupyterlab": "4.6.6", "matplotlib": "3.11.2"}
    installed = {"numpy": "1.26.3", "mindspore": "2.10.1", "jupyterlab": "4.6.7", "matplotlib": "3.11.2"}
    _, problems, warnings = setup_check.check_packages(pins, installed=installed)
    assert problems == [] and len(warnings) == 3, (problems, warnings)
    assert warnings[2].startswith("jupyterlab 4.6.7 is installed, the course is tested with 4.6.6: this usually works")
    # Another MindSpore minor version follows the tested matrix (tests/test_matrix.py tests it in detail).
    _, problems, _ = setup_check.check_packages(pins, installed={**installed, "mindspore": "2.6.0"}, matrix={})
    assert problems == ["mindspore 2.6.0 is installed but the course is written for 2.10.0 and tested on 2.10.0 "
                        "only (docs/version-matrix.md): run `pip install mindspore==2.10.0`"]


def test_setup_check_learner_report_names_no_contributor_tool(capsys):
    problems = setup_check.run(out=None)
    out = capsys.readouterr().out
    assert problems == [] and "READY: everything the notebooks need" in out
    assert not any(tool in out for tool in ("pytest", "ruff", "playwright", "nbval", "jupytext"))
    setup_check.run(contributor=True)
    out = capsys.readouterr().out
    assert "Packages for contributors:" in out and "playwright" in out
    assert "READY: everything a contributor needs" in out


def test_setup_check_rejects_unsupported_python():
    assert setup_check.check_python((3, 11)) is None and setup_check.check_python((3, 12)) is None
    for old_or_new in ((3, 8), (3, 9), (3, 10), (3, 13)):
        assert f"{old_or_new[0]}.{old_or_new[1]} is not supported" in setup_check.check_python(old_or_new)


def test_read_pins_errors_are_clear(tmp_path):
    empty = tmp_path / "r.txt"
    empty.write_text("# nothing\nnumpy>=1\n")
    with pytest.raises(ValueError, match="no 'name==version' lines"):
        setup_check.read_pins(empty)


def test_setup_check_command_says_ready():
    out = subprocess.run([sys.executable, "-m", "course_utils.setup_check"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "READY" in out.stdout and "NOT READY" not in out.stdout
    assert "MindSpore device: CPU" in out.stdout
    assert "has been installed on platform [CPU] successfully" in out.stdout


def test_ruff_lints_code_and_notebooks_clean():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
