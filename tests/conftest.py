import os

import pytest

# MindSpore reads GLOG_v once, at import: set it before any test imports mindspore.
os.environ.setdefault("GLOG_v", "3")


@pytest.fixture(autouse=True)
def _work_in_a_temporary_directory(tmp_path, monkeypatch):
    """MindSpore writes rank_0/, *.meta, kernel_meta/ into the working directory: keep them out of the repo."""
    monkeypatch.chdir(tmp_path)
