"""MindSpore 2.10 facts behind notebook 15 that the lesson states without reading MindSpore's files: msrun's
command and options, how it numbers the workers of machines of different sizes (exercise 15.7, rehearsed here
with two msrun on this machine), and what set_device's documentation says about device ids under msrun."""

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from course_utils import launcher
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
    # notebook 15, "msrun's own defaults": --join=False, --cluster_time_out=600 (why launch() overrides them); the
    # lesson prints what `msrun --help` says of the two options, which does not name their defaults
    from unittest import mock

    from mindspore.parallel.cluster import run as msrun_program

    with mock.patch.object(sys, "argv", ["msrun", "dp_train.py"]):
        defaults = msrun_program.get_args()
    assert defaults.join is False and defaults.cluster_time_out == 600


RANK_SCRIPT = textwrap.dedent('''
    import json, sys
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    ms.set_device("CPU")
    init()
    with open(f"node{sys.argv[1]}_rank{get_rank()}.json", "w") as f:
        json.dump({"rank": get_rank(), "size": get_group_size()}, f)
''')


def _uneven_job(folder, second_node_rank):
    """Two msrun on this machine as two machines of different sizes: 2 workers with --node_rank=0, then 1 worker
    with --node_rank=``second_node_rank``. {node: sorted ranks its workers got}."""
    (folder / "ranks.py").write_text(RANK_SCRIPT, encoding="utf-8")
    port, tag = launcher.free_port(), f"{os.getpid()}-{uuid.uuid4().hex}"
    env = launcher._environment(tag)  # this interpreter's `python` first on PATH: msrun starts workers with it
    nodes = [(["-m", "mindspore.parallel.cluster.run"], 2, 0), (["-c", launcher.NODE_SHIM], 1, second_node_rank)]
    runs = []
    try:
        for node, (program, workers, node_rank) in enumerate(nodes):
            command = [sys.executable, *program, "--worker_num=3", f"--local_worker_num={workers}",
                       f"--node_rank={node_rank}", "--master_addr=127.0.0.1", f"--master_port={port}",
                       f"--log_dir=logs{node}", "--join=True", "--cluster_time_out=60", "ranks.py", str(node)]
            with open(folder / f"msrun{node}.log", "w", encoding="utf-8") as out:
                runs.append(subprocess.Popen(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True))
        codes = [run.wait(timeout=240) for run in runs]
    finally:
        launcher._stop_everything(runs, tag, set())
    assert codes == [0, 0], [(folder / f"msrun{k}.log").read_text(encoding="utf-8")[-2000:] for k in (0, 1)]
    found = {}
    for path in folder.glob("node*_rank*.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        assert result["size"] == 3
        found.setdefault(int(path.name[4]), []).append(result["rank"])
    return {node: sorted(ranks) for node, ranks in found.items()}


@pytest.mark.msrun
def test_machines_of_different_sizes_get_each_rank_once(tmp_path):
    # exercise 15.7: --node_rank=k gives a machine's workers the ranks k * local_worker_num + 0, 1, ..., whatever the
    # other machines start, so a smaller last machine takes the ranks left with k = first free rank / its workers
    # (here 2 / 1). Leaving --node_rank out there (MindSpore then hands out the rank) made such a job fail once in
    # three tries ("Failed to fetch the address of the rank MCCL_COLLECTIVE_RANK_MS_WORKER_2"): the check asks for it.
    assert _uneven_job(tmp_path, 2) == {0: [0, 1], 1: [2]}
