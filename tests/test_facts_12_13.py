"""MindSpore 2.10 facts behind notebooks 12 and 13 that the lessons state but do not show in every mode.

Run in a fresh process: graph mode is global state, and this file must not leave it set for other tests.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json, os
    os.environ["GLOG_v"] = "3"
    import numpy as np
    import mindspore as ms
    from mindspore import Tensor, nn

    X = Tensor(np.ones((8, 1), np.float32))
    facts = {}
    for name, mode in (("pynative", ms.PYNATIVE_MODE), ("graph", ms.GRAPH_MODE)):
        ms.set_context(mode=mode)
        alone = nn.Dense(1, 1).to_float(ms.float16)
        facts[name + " Dense.to_float alone"] = str(alone(X).dtype)
        first = nn.Dense(1, 4).to_float(ms.float16)
        chain = nn.SequentialCell([first, nn.Dense(4, 1)])  # a float16 layer, then a float32 one
        try:
            chain(X)
            facts[name + " float16 into float32 Dense"] = "ran"
        except (TypeError, RuntimeError) as err:
            facts[name + " float16 into float32 Dense"] = str(err).splitlines()[0]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        ms.jit(lambda t: t * 2, capture_mode="graph")(X)
    except ValueError as err:
        facts["capture_mode refused"] = str(err)
    print(json.dumps(facts))
''')


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    # cwd: a failed graph compile writes rank_0/om/analyze_fail.ir into the working directory
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "GLOG_v": "3"}, cwd=tmp_path_factory.mktemp("facts_12_13"))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_to_float_on_a_dense_alone_works_in_both_modes(facts, mode):
    # notebook 12 ("choosing the float16 cells yourself"): to_float itself is not what fails
    assert facts[f"{mode} Dense.to_float alone"] == "Float16"


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_float16_output_into_a_float32_dense_fails(facts, mode):
    # what does fail: the float16 output of a to_float layer reaching a float32 MatMul, in either mode
    message = facts[f"{mode} float16 into float32 Dense"]
    assert message != "ran" and "MatMul" in message, message


def test_jit_accepts_three_capture_modes(facts):
    # notebook 13: the values 2.10 accepts, as the refusal lists them
    message = facts["capture_mode refused"]
    assert all(f"'{mode}'" in message for mode in ("ast", "bytecode", "trace")), message
