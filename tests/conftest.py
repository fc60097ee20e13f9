import os
import subprocess
from pathlib import Path

import pytest

# MindSpore reads GLOG_v once, at import: set it before any test imports mindspore.
os.environ.setdefault("GLOG_v", "3")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _work_in_a_temporary_directory(tmp_path, monkeypatch):
    """MindSpore writes rank_0/, *.meta, kernel_meta/ into the working directory: keep them out of the repo."""
    monkeypatch.chdir(tmp_path)


def _untracked():
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored=no"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:  # not a git checkout (e.g. an unpacked archive): nothing to compare
        return None
    return {line[3:] for line in out.stdout.splitlines() if line.startswith("??")}


def pytest_sessionstart(session):
    session.config._untracked_before = _untracked()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run if tests or notebooks wrote files into the repository."""
    if os.environ.get("COURSE_SKIP_CLEAN_CHECK") == "1":  # several people testing in one checkout
        return
    before = getattr(session.config, "_untracked_before", None)
    after = _untracked()
    if before is None or after is None:
        return
    new = sorted(after - before)
    if new:
        print("\nERROR: the test run wrote files into the repository (use a temporary directory):")
        for name in new:
            print(f"  {name}")
        session.exitstatus = 1
