"""MindSpore 2.10 facts behind notebook 15 that the lesson states without reading MindSpore's files: msrun's
command and options, and what set_device's documentation says about device ids under msrun."""

import os
import subprocess
import sys
from pathlib import Path

from course_utils.checks import nb15


def _msrun():
    return Path(sys.executable).with_name("msrun")


def test_the_msrun_command_is_the_cluster_run_module():
    # notebook 15, section 4: "msrun ... (python -m mindspore.parallel.cluster.run is the same program)"
    assert "from mindspore.parallel.cluster.run import main" in _msrun().read_text(encoding="utf-8")


def test_exercise_15_7_knows_every_option_of_msrun():
    # the check refuses options msrun does not have; its list is msrun's own
    out = subprocess.run([str(_msrun()), "--help"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GLOG_v": "3"})
    assert out.returncode == 0, out.stderr[-2000:]
    listed = {word[2:] for word in out.stdout.replace("[", " ").replace("]", " ").split()
              if word.startswith("--") and word[2:].replace("_", "").isalpha()}
    assert listed - {"help"} == set(nb15.MSRUN_OPTIONS)


def test_set_device_documents_negotiated_device_ids_under_msrun():
    # notebook 15, "GPUs and Ascend NPUs": set_device without a device_id under msrun
    import mindspore as ms

    assert ("In a distributed scenario where msrun is started, the framework will automatically negotiate the "
            "available `device_id` values.") in " ".join(ms.set_device.__doc__.split())


def test_msrun_defaults_are_unkind_in_a_notebook():
    # notebook 15, "msrun's own defaults": --join=False, --cluster_time_out=600 (why launch() overrides them)
    from unittest import mock

    from mindspore.parallel.cluster import run as msrun_program

    with mock.patch.object(sys, "argv", ["msrun", "dp_train.py"]):
        defaults = msrun_program.get_args()
    assert defaults.join is False and defaults.cluster_time_out == 600
