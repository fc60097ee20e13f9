"""Each notebook runs again in the same kernel (a learner's "Run All" twice) without new errors.

nbval proves a notebook runs once in a fresh kernel. Here every code cell runs twice in one kernel:
state a cell leaves behind (changed global modes, rebound names, files) must not break a second run.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_twice_in_one_kernel(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells = code + [nbformat.v4.new_code_cell(c.source, metadata=c.metadata) for c in code]
    client = NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError on an error outside cells tagged raises-exception
    second = nb.cells[len(code):]
    for cell, original in zip(second, code):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        expected = "raises-exception" in original.metadata.get("tags", [])
        assert bool(errors) == expected, (
            f"second run of cell {code.index(original)}: {'no error' if expected else errors[0].evalue}")
