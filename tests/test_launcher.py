"""course_utils.launcher: msrun launches that succeed, and every way they fail, without stray processes.

Each real launch starts msrun, a scheduler and the workers (10 to 60 s each on 2 busy cores). Every
launch test checks that no process of the launch is alive afterwards: none that descends from this test
process, and none that carries this process's launch tag (workers that msrun detached would carry it).
"""

import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_utils import launcher
from course_utils.data import make_linear_data
from course_utils.launcher import LaunchError, launch, log_excerpt

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "15_data_parallel.ipynb"
needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="counts processes through /proc")


def _stat(pid):
    """(state, ppid) of a process, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def job_processes():
    """Live (not zombie) processes that descend from this process or carry a launch tag of this process."""
    table, tagged = {}, set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(entry.name)
        if stat is None or stat[0] in "ZX":
            continue
        table[int(entry.name)] = stat[1]
        try:
            if f"{launcher.LAUNCH_TAG}={os.getpid()}-".encode() in (entry / "environ").read_bytes():
                tagged.add(int(entry.name))
        except OSError:
            pass
    descendants = set()
    for pid in table:
        parent = pid
        while parent in table and parent not in (0, 1):
            parent = table[parent]
            if parent == os.getpid():
                descendants.add(pid)
                break
    return descendants | tagged


@pytest.fixture
def no_leftovers():
    """Fail the test if a process of its launches is still running when it ends."""
    before = job_processes()
    yield
    deadline = time.monotonic() + 5  # the launcher already waited; this only absorbs scheduling delays
    while job_processes() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    left = job_processes() - before
    assert not left, f"processes left behind: {[(pid, _cmdline(pid)) for pid in left]}"


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"


def write(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return path


def notebook_script(name):
    """The script a `%%writefile name` cell of notebook 15 writes."""
    for cell in nbformat.read(NOTEBOOK, as_version=4).cells:
        if cell.cell_type == "code" and cell.source.startswith(f"%%writefile {name}\n"):
            return cell.source.split("\n", 1)[1]
    raise AssertionError(f"notebook 15 has no %%writefile {name} cell")


# ---- arguments, no launch ----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, text", [
    ({"script": 3}, TypeError, "path of a .py file"),
    ({"script": "train.txt"}, ValueError, "ending in .py"),
    ({"num_workers": 2.0}, TypeError, "num_workers must be an int"),
    ({"num_workers": True}, TypeError, "num_workers must be an int"),
    ({"num_workers": 0}, ValueError, "from 1 to 32"),
    ({"num_workers": -3}, ValueError, "from 1 to 32"),
    ({"script_args": "--lr 1"}, TypeError, "list of strings"),
    ({"script_args": ["--lr", 1]}, TypeError, "list of strings"),
    ({"timeout": "60"}, TypeError, "number of seconds"),
    ({"timeout": 0}, ValueError, ">= 1"),
    ({"timeout": float("nan")}, ValueError, "finite"),  # NaN or inf would switch off "a launch never hangs"
    ({"timeout": float("inf")}, ValueError, "finite"),
    ({"timeout": 10**400}, ValueError, "finite"),
    ({"timeout": 1e9}, ValueError, "<= 86400"),
    ({"cluster_time_out": 2}, ValueError, ">= 5"),
    ({"cluster_time_out": float("nan")}, ValueError, "finite"),
    ({"cluster_time_out": 7.5}, ValueError, "whole number"),
    ({"port": "8118"}, TypeError, "port must be an int"),
    ({"port": 80}, ValueError, "1024..65535"),
    ({"work_dir": "/no/such/dir"}, ValueError, "existing directory"),
    ({"nodes": 0}, ValueError, "nodes must be an int from 1"),
    ({"nodes": 3}, ValueError, r"num_workers \(2\) must be a multiple of nodes \(3\)"),
    ({"nodes": 2, "node_ranks": [1]}, ValueError, "include node 0"),
    ({"nodes": 2, "node_ranks": [0, 0]}, ValueError, "different nodes"),
    ({"nodes": 2, "node_ranks": [0, 2]}, ValueError, "from 0 to 1"),
    ({"nodes": 2, "node_ranks": "01"}, TypeError, "list of node numbers"),
])
def test_bad_arguments_are_refused_before_anything_starts(tmp_path, kwargs, error, text):
    script = write(tmp_path, "ok.py", "print('hi')\n")
    arguments = {"script": script, **kwargs}
    with pytest.raises(error, match=text):
        launch(**arguments)


def test_missing_script_is_named_at_once(tmp_path):
    started = time.monotonic()
    with pytest.raises(FileNotFoundError, match="no_such_script.py"):
        launch(tmp_path / "no_such_script.py")
    assert time.monotonic() - started < 5


def test_a_port_in_use_is_refused_at_once(tmp_path):
    script = write(tmp_path, "ok.py", "print('hi')\n")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(ValueError, match=f"port {busy.getsockname()[1]} .* already in use"):
            launch(script, port=busy.getsockname()[1])


def test_workers_must_find_this_interpreter_as_python(tmp_path, monkeypatch):
    script = write(tmp_path, "ok.py", "print('hi')\n")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python3.11"))
    with pytest.raises(RuntimeError, match="virtual environment"):
        launch(script)


def test_free_port_and_command_line(tmp_path):
    port = launcher.free_port()
    assert 1024 <= port <= 65535 and launcher._port_is_free(port)
    command = launcher.msrun_command(tmp_path / "t.py", 4, port, tmp_path / "logs", 20, ("--lr", "0.1"))
    assert command[:3] == [sys.executable, "-m", "mindspore.parallel.cluster.run"]
    assert command[3:] == ["--worker_num=4", "--local_worker_num=4", "--master_addr=127.0.0.1",
                           f"--master_port={port}", f"--log_dir={tmp_path / 'logs'}", "--join=True",
                           "--cluster_time_out=20", str(tmp_path / "t.py"), "--lr", "0.1"]
    result = launcher.LaunchResult(command, str(tmp_path), {}, {0: "hi\n[INFO] ME(1:2) x\n"}, 1.0)
    assert result.display_command() == (
        "msrun --worker_num=4 --local_worker_num=4 --master_addr=127.0.0.1 --master_port=<port> "
        "--log_dir=<work_dir>/logs --join=True --cluster_time_out=20 t.py --lr 0.1")
    assert result.printed(0) == ["hi"]
    with pytest.raises(ValueError, match="no rank 3"):
        result.printed(3)


def test_commands_of_two_nodes_on_one_machine(tmp_path):
    """Two nodes: the same job options, --node_rank 0 and 1, one local worker each; node 1 starts no scheduler."""
    node = [launcher.msrun_command(tmp_path / "t.py", 2, 8118, tmp_path / "logs", 30, nodes=2, node_rank=k)
            for k in (0, 1)]
    assert node[0][1:3] == ["-m", "mindspore.parallel.cluster.run"] and node[1][1:3] == ["-c", launcher.NODE_SHIM]
    for k in (0, 1):
        assert node[k][3:7] == ["--worker_num=2", "--local_worker_num=1", f"--node_rank={k}",
                                "--master_addr=127.0.0.1"]
    assert node[0][3:] == [a.replace("--node_rank=1", "--node_rank=0") for a in node[1][3:]]
    result = launcher.LaunchResult(node[0], str(tmp_path), {}, {}, 1.0, node)
    assert result.display_command().splitlines() == [
        f"msrun --worker_num=2 --local_worker_num=1 --node_rank={k} --master_addr=127.0.0.1 --master_port=<port> "
        "--log_dir=<work_dir>/logs --join=True --cluster_time_out=30 t.py" for k in (0, 1)]
    with pytest.raises(ValueError, match="node_rank must be an int from 0 to 1"):
        launcher.msrun_command(tmp_path / "t.py", 2, 8118, tmp_path, nodes=2, node_rank=2)


def test_the_node_shim_only_changes_whose_address_it_is():
    """What NODE_SHIM replaces exists in msrun and is what decides whether a node starts the scheduler."""
    import inspect

    from mindspore.parallel.cluster.process_entity import _api

    assert "self.is_master = _is_local_ip(self.master_addr)" in inspect.getsource(_api._ProcessManager.__init__)
    assert "if self.is_master and not self.is_simulation:" in inspect.getsource(_api._ProcessManager.run)


def test_log_excerpt_keeps_the_traceback_and_drops_mindspore_noise():
    log = textwrap.dedent("""\
        rank 1 starting
        [INFO] DISTRIBUTED(77,7f,python):2026-01-01-00:00:00.000.000 [tcp_server.cc:314] Start] Event base dispatch
        [ERROR] DISTRIBUTED(77,7f,python):2026-01-01-00:00:01.000.000 [cluster_context.cc:307] BuildCluster] Failed.
        Traceback (most recent call last):
          File "train.py", line 6, in <module>
        RuntimeError: no cluster

        ----------------------------------------------------
        - C++ Call Stack: (For framework developers)
        ----------------------------------------------------
        mindspore/ccsrc/cluster/init.cc:37 Initialize
        """)
    assert log_excerpt(log) == ('Traceback (most recent call last):\n  File "train.py", line 6, in <module>\n'
                                "RuntimeError: no cluster")
    assert log_excerpt("a\n[ERROR] X(1,2,python):t [f.cc:1] F] boom\n") == "a\n[ERROR] F] boom"
    assert log_excerpt("") == "(nothing in the log)"
    assert log_excerpt("\n".join(map(str, range(40))), max_lines=6).splitlines() == ["0", "1", "...", "37", "38", "39"]


# ---- real launches -------------------------------------------------------------------------------
@needs_proc
def test_notebook_script_on_four_workers_equals_one_process(tmp_path, no_leftovers):
    """Exercise 15.4's premise and section 6 with 4 workers: the notebook's dp_train.py, for real."""
    import mindspore as ms
    from mindspore import nn

    script = write(tmp_path, "dp_train.py", notebook_script("dp_train.py"))
    run = launch(script, num_workers=4, work_dir=tmp_path)
    assert sorted(run.results) == [0, 1, 2, 3]
    x, y = make_linear_data()
    for rank, result in run.results.items():
        assert (result["w"], result["b"]) == (run.results[0]["w"], run.results[0]["b"]), f"rank {rank} differs"
        assert result["shard_x"] == x[rank::4].ravel().tolist(), "interleaved shards of 25"
        assert run.printed(rank)[0].startswith(f"rank {rank} of 4: 25 samples")
    # Oracle 1: one MindSpore process on the full batch, no parallel context.
    ms.set_seed(0)
    net = nn.Dense(1, 1, weight_init="normal", bias_init="zero")
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.5))
    for _ in range(50):
        train_net(ms.Tensor(x), ms.Tensor(y))
    w, b = np.float32(net.weight.asnumpy().item()), np.float32(net.bias.asnumpy().item())
    assert abs(np.float32(run.results[0]["w"]) - w) <= 4 * np.spacing(w)
    assert abs(np.float32(run.results[0]["b"]) - b) <= 4 * np.spacing(b)
    # Oracle 2: float64 numpy gradient descent from the same start.
    w64, b64, x64, y64 = run.results[0]["w0"], 0.0, x.astype(np.float64), y.astype(np.float64)
    for _ in range(50):
        r = w64 * x64 + b64 - y64
        w64, b64 = w64 - 0.5 * np.mean(2 * r * x64), b64 - 0.5 * np.mean(2 * r)
    assert np.isclose(run.results[0]["w"], w64, atol=1e-5) and np.isclose(run.results[0]["b"], b64, atol=1e-5)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["dp_train.py", "logs", "msrun.log"] + [f"result_rank_{r}.json" for r in range(4)], (
        "the workers write only into their working directory, and only their results")


@needs_proc
def test_a_failing_rank_is_named_and_its_log_quoted(tmp_path, no_leftovers):
    script = write(tmp_path, "fail_on_rank_1.py", """
        import mindspore as ms
        from mindspore.communication import get_rank, init
        ms.set_device("CPU")
        init()
        if get_rank() == 1:
            raise ValueError("rank 1 cannot go on")
        print("rank", get_rank(), "is fine")
    """)
    with pytest.raises(LaunchError) as caught:
        launch(script, num_workers=2, timeout=300, cluster_time_out=60)
    message = str(caught.value)
    assert "rank 1 failed" in message and "ValueError: rank 1 cannot go on" in message
    assert "did not finish within" not in message, "found by watching the job, not by the overall timeout"
    assert "rank 1 cannot go on" in caught.value.logs[1]


@needs_proc
def test_a_worker_that_never_joins(tmp_path, no_leftovers):
    script = write(tmp_path, "never_joins.py", """
        import os, time
        if os.environ.get("MS_ROLE") == "MS_WORKER" and os.environ.get("RANK_ID") == "1":
            time.sleep(3600)  # stuck before init(): never joins the cluster
        import mindspore as ms
        from mindspore.communication import init
        ms.set_device("CPU")
        init()
    """)
    with pytest.raises(LaunchError) as caught:
        launch(script, num_workers=2, timeout=300, cluster_time_out=10)
    message = str(caught.value)
    assert "The cluster never formed: rank 1 never joined" in message and "rank 0 gave up waiting" in message
    assert "Failed to initialize distributed job cluster" in message, "rank 0's log is quoted"
    assert "did not finish within" not in message


@needs_proc
def test_a_node_that_never_joins_is_named(tmp_path, no_leftovers):
    """Two nodes, node 1 never started (a machine that never came up): a clear error, nothing left running."""
    script = write(tmp_path, "ok.py", """
        import mindspore as ms
        from mindspore.communication import init
        ms.set_device("CPU")
        init()
    """)
    with pytest.raises(LaunchError) as caught:
        launch(script, num_workers=2, nodes=2, node_ranks=[0], timeout=300, cluster_time_out=5)
    message = str(caught.value)
    assert "The cluster never formed: node 1 (rank 1) never joined (was never started)" in message, message
    assert "rank 0 gave up waiting" in message and "--- rank 0: worker_0.log ---" in message
    assert "--- rank 1" not in message and "did not finish within" not in message


@needs_proc
def test_a_port_taken_after_the_check_fails_fast(tmp_path, monkeypatch, no_leftovers):
    """The race the pre-check cannot see: another program takes the port before msrun's scheduler."""
    script = write(tmp_path, "ok.py", """
        import mindspore as ms
        from mindspore.communication import init
        ms.set_device("CPU")
        init()
    """)
    monkeypatch.setattr(launcher, "_port_is_free", lambda port: True)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(LaunchError) as caught:
            launch(script, num_workers=2, port=port, timeout=300, cluster_time_out=120)
    assert time.monotonic() - started < 120, "stopped before msrun itself would notice, after cluster_time_out"
    message = str(caught.value)
    assert f"The scheduler could not listen on 127.0.0.1:{port}" in message
    assert "--- scheduler.log ---" in message and "RuntimeError" in message
    assert "did not finish within" not in message


@needs_proc
def test_the_overall_timeout_stops_every_process(tmp_path, no_leftovers):
    script = write(tmp_path, "sleeps.py", """
        import time
        print("started", flush=True)
        time.sleep(3600)
    """)
    with pytest.raises(LaunchError) as caught:
        launch(script, num_workers=2, timeout=20, cluster_time_out=60)
    message = str(caught.value)
    assert "did not finish within timeout=20 s" in message
    assert "--- rank 0: worker_0.log ---" in message and "--- rank 1: worker_1.log ---" in message


def test_notebook_15_figures():
    """The data-parallel step and the launch timeline draw, and refuse what they cannot draw."""
    import matplotlib.pyplot as plt

    from course_utils.dp_figures import data_parallel_figure, launch_timeline_figure

    fig = data_parallel_figure(rows=8, workers=2)
    assert fig.get_size_inches()[0] == 9 and "all-reduce" in " ".join(t.get_text() for t in fig.axes[0].texts)
    times = {r: {"started": 0.5, "imported": 3.0, "joined": 12.0, "trained": 13.0 + r} for r in (0, 1)}
    fig2 = launch_timeline_figure(times, 0.0, 15.0)
    assert len(fig2.axes[0].patches) == 6, "three phases for each of the two ranks"
    plt.close("all")
    with pytest.raises(ValueError, match="workers must be an int from 2 to 4"):
        data_parallel_figure(workers=5)
    with pytest.raises(ValueError, match="times must map each rank"):
        launch_timeline_figure({}, 0.0, 1.0)
