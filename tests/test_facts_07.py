"""MindSpore facts notebook 07 states but no longer reads in a lesson cell (it shows the public behaviour).

Section 1 of notebook 07 lists `TrainOneStepCell.construct` as MindSpore 2.10 defines it, without the branches
for graceful exit and `return_grad` and without the one for a cell built without `sens`; this pins that listing to
the installed MindSpore, so a release that changes the method fails here instead of leaving a stale listing in the
lesson. Item 3 of the section says in words what that last branch (the private `_no_sens_impl`) runs; pinned here
too."""

import inspect
import json
import os
import re
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

from mindspore import nn  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = ("graceful", "return_grad", "grad_with_param", "weights_name", "enumerate")
NO_SENS_BRANCH = ["if not self.sense_flag:", "return self._no_sens_impl(*inputs)"]


def _listing():
    nb = json.loads((ROOT / "notebooks" / "07_custom_train_steps.ipynb").read_text(encoding="utf-8"))
    text = next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
                and "def construct(self, *inputs):" in "".join(c["source"]))
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def _kept(method):
    """The stripped lines of ``method``'s source, without its docstring and the branches the lesson leaves out."""
    return [line.strip() for line in inspect.getsource(method).splitlines()
            if line.strip() and not line.strip().startswith('"""') and not any(w in line for w in SKIPPED)]


def _listed():
    return [line.strip() for line in _listing().splitlines() if line.strip()]


def test_the_listed_construct_is_the_installed_one_without_its_optional_branches():
    kept = _kept(nn.TrainOneStepCell.construct)
    assert kept[1:3] == NO_SENS_BRANCH  # the branch for a cell built without sens comes first
    assert kept[:1] + kept[3:] == _listed()


def test_without_sens_the_cell_runs_the_listed_lines_without_sens_and_with_grad_no_sens():
    """Item 3: the no-sens branch is the listing minus its `sens` line, with `self.grad_no_sens(...)(*inputs)`."""
    no_sens = _kept(nn.TrainOneStepCell._no_sens_impl)
    expected = [line.replace("self.grad(", "self.grad_no_sens(").replace("(*inputs, sens)", "(*inputs)")
                for line in _listed()[1:] if not line.startswith("sens =")]
    assert no_sens[1:] == expected


def test_the_listing_is_in_the_chinese_edition_too():
    translation = json.loads((ROOT / "translations" / "zh" / "07_custom_train_steps.json").read_text(encoding="utf-8"))
    assert any(_listing() in entry["zh"] for entry in translation["cells"].values())
