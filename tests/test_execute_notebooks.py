"""The store command is deterministic: executing twice gives byte-identical notebooks."""

import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "execute_notebooks.py"


def _run(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_store_twice_is_byte_identical(tmp_path):
    nb = new_notebook(cells=[
        new_markdown_cell("# tiny"),
        # many small prints: the kernel sends them in timing-dependent chunks unless they are merged
        new_code_cell("import sys, time\nfor i in range(200):\n    print(i)\n    if i % 50 == 0:\n"
                      "        sys.stdout.flush(); time.sleep(0.01)"),
        new_code_cell("import ipywidgets as w\nw.IntSlider(3)"),
        new_code_cell("import time\n# Not compared: a timing\nprint(time.perf_counter())",
                      metadata={"tags": ["nbval-ignore-output"]}),
        new_code_cell("1 / 0", metadata={"tags": ["raises-exception"]}),
        new_code_cell("import json\njson.loads('{')", metadata={"tags": ["raises-exception"]}),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    assert _run(path).returncode == 0
    first = path.read_bytes()
    stored = nbformat.reads(first.decode(), as_version=4)
    assert [c.execution_count for c in stored.cells if c.cell_type == "code"] == [1, 2, 3, 4, 5]
    assert len(stored.cells[1].outputs) == 1, "stream chunks were not merged"
    assert "widgets" not in stored.metadata
    assert "application/vnd.jupyter.widget-view+json" not in stored.cells[2].outputs[0]["data"]
    assert stored.cells[4].outputs[0].output_type == "error"
    traceback = "\n".join(stored.cells[5].outputs[0].traceback)  # through the standard library's json
    assert "<stdlib>/json/" in traceback, traceback
    for machine in (sys.prefix, sys.base_prefix, str(Path.home()) + "/", "/tmp/"):
        assert machine not in traceback, f"{machine} is stored in a traceback"
    out = _run("--check", path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _run(path).returncode == 0
    assert path.read_bytes() == first
    assert _run("--refresh-run-dependent", path).returncode == 0
    assert path.read_bytes() != first, "the timing cell should change when refreshed"


def test_rejects_non_notebooks(tmp_path):
    out = _run(tmp_path / "missing.ipynb")
    assert out.returncode == 2 and "not notebook files" in out.stderr
