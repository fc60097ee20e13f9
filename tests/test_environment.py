"""The pins: requirements.txt and environment.yml agree, and what is installed is what is pinned."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from course_utils import setup_check

ROOT = Path(__file__).resolve().parent.parent


def _yml_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
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
    return conda, pins


def test_requirements_are_all_exact_pins():
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            assert "==" in line, f"requirements.txt line {line!r} is not an exact pin"


def test_environment_yml_matches_requirements():
    conda, yml = _yml_pins()
    assert "python=3.11" in conda and "pip" in conda, f"conda part must be python=3.11 and pip, got {conda}"
    req = setup_check.read_pins(ROOT / "requirements.txt")
    assert yml == req, f"environment.yml and requirements.txt differ: {set(yml.items()) ^ set(req.items())}"


def test_numpy_is_pinned_below_2():
    assert setup_check.read_pins()["numpy"].startswith("1."), "MindSpore 2.10 breaks with numpy 2"


def test_installed_versions_equal_pins():
    _, problems = setup_check.check_packages(setup_check.read_pins())
    assert not problems, "\n".join(problems)


def test_setup_check_reports_wrong_and_missing_packages():
    pins = {"numpy": "1.26.4", "mindspore": "2.10.0"}
    rows, problems = setup_check.check_packages(pins, installed={"numpy": "2.1.0"})
    assert rows == [("numpy", "1.26.4", "2.1.0"), ("mindspore", "2.10.0", None)]
    assert "numpy 2.1.0 is installed but the course pins 1.26.4" in problems[0]
    assert "NumPy 1.x" in problems[0]
    assert problems[1].startswith("mindspore is missing")


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
