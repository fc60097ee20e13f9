"""The course installs as a package: a wheel built from the repository holds the lab, the Chinese catalogue and
the capstone's default config, and a copy installed from it (outside the clone) runs the setup check and an
exercise check in English and in Chinese."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A wheel of the course, installed without dependencies into a fresh venv that sees this venv's packages
    (MindSpore and the rest) but not the editable install of the clone."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy: a build writes build/ and *.egg-info beside the sources, never into the clone
    for name in ("pyproject.toml", "README.md", "requirements.txt"):
        source.mkdir(exist_ok=True)
        shutil.copy(ROOT / name, source)
    for package in ("course_utils", "capstone"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp / "dist"), str(source)], check=True, capture_output=True, timeout=300)
    wheel = next((tmp / "dist").glob("*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # this venv's packages, as a plain path: its .pth files (the clone's editable finder) are not processed
    Path(site, "course_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    return wheel, python, tmp


def _run(python, code, cwd, **env):
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COURSE_LANG")}
    return subprocess.run([str(python), "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**environ, "GLOG_v": "3", **env})


def test_the_wheel_holds_every_package_and_its_data(installed):
    names = set(zipfile.ZipFile(installed[0]).namelist())
    for name in ("course_utils/lab/app.py", "course_utils/messages/__init__.py",
                 "course_utils/messages/zh/exercises.json",
                 "course_utils/checks/nb03.py", "course_utils/solutions/nb03.py", "capstone/config.yaml"):
        assert name in names, f"{name} is missing from the wheel"


def test_an_installed_copy_works_outside_the_clone(installed):
    _wheel, python, tmp = installed
    where = _run(python, "import course_utils, capstone.config as c; print(course_utils.__file__); "
                 "print(c.DEFAULT_PATH.is_file())", tmp)
    assert where.returncode == 0, where.stderr
    assert str(ROOT) not in where.stdout and where.stdout.split()[1] == "True", where.stdout
    check = _run(python, "import course_utils.lab; from course_utils.checks import nb03; "
                 "nb03.least_squares.check(lambda x, y: (2.0, 0.0)); nb03.least_squares.solution()", tmp)
    assert check.returncode == 0, check.stderr
    assert "[x] Exercise 03.2: incorrect: on the check's data" in check.stdout and "np.linalg.lstsq" in check.stdout
    zh = _run(python, "from course_utils.checks import nb03; nb03.least_squares.check(...)", tmp, COURSE_LANG="zh")
    assert zh.returncode == 0 and zh.stdout.startswith("[ ] 练习 03.2"), zh.stdout + zh.stderr
    setup = _run(python, "import sys; from course_utils import setup_check; sys.exit(setup_check.main([]))", tmp)
    assert "mindspore" in setup.stdout and "2.10.0" in setup.stdout, setup.stdout + setup.stderr
    assert setup.returncode == 0, setup.stdout + setup.stderr
