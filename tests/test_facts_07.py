"""MindSpore facts notebook 07 states but no longer reads in a lesson cell (it shows the public behaviour).

Section 1 of notebook 07 lists `TrainOneStepCell.construct` as MindSpore 2.10 defines it, without the branches
for graceful exit and `return_grad`; this pins that listing to the installed MindSpore, so a release that
changes the method fails here instead of leaving a stale listing in the lesson."""

import inspect
import json
import os
import re
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

from mindspore import nn  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = ("graceful", "return_grad", "grad_with_param", "weights_name", "enumerate")


def _listing():
    nb = json.loads((ROOT / "notebooks" / "07_custom_train_steps.ipynb").read_text(encoding="utf-8"))
    text = next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
                and "def construct(self, *inputs):" in "".join(c["source"]))
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_listed_construct_is_the_installed_one_without_its_optional_branches():
    source = inspect.getsource(nn.TrainOneStepCell.construct)
    kept = [line.strip() for line in source.splitlines() if line.strip() and not any(w in line for w in SKIPPED)]
    listed = [line.strip() for line in _listing().splitlines() if line.strip()]
    assert kept == listed


def test_the_listing_is_in_the_chinese_edition_too():
    translation = json.loads((ROOT / "translations" / "zh" / "07_custom_train_steps.json").read_text(encoding="utf-8"))
    assert any(_listing() in entry["zh"] for entry in translation["cells"].values())
