"""MindSpore 2.10 facts behind notebooks 12 and 13 that the lessons state but do not show in every mode, or show
through public behaviour only (O1's casts and its change to sys.path).

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
    compiles = []

    @ms.constexpr
    def count_compile():
        compiles.append(1)

    @ms.jit
    def scaled(x, factor):
        count_compile()
        return x * factor

    counts = {}
    for name, calls in (("floats 0.5 0.5 0.25", [(X, 0.5), (X, 0.5), (X, 0.25)]),
                        ("float32 Tensors 0.5 0.25", [(X, Tensor(0.5)), (X, Tensor(0.25))]),
                        ("a new shape", [(X[:4], Tensor(0.5))]),
                        ("a float64 Tensor", [(X, Tensor(0.5, ms.float64))]),
                        ("mutable float then int", [(X, ms.mutable(0.75)), (X, ms.mutable(3))])):
        before = len(compiles)
        for args in calls:
            scaled(*args)
        counts[name] = len(compiles) - before
    facts["jit compiles"] = counts
    try:
        ms.jit(lambda t: t * 2, capture_mode="graph")(X)
    except ValueError as err:
        facts["capture_mode refused"] = str(err)
    print(json.dumps(facts))
''')


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    # cwd: a failed graph compile writes rank_0/om/analyze_fail.ir into the working directory
    # a file, not -c: ms.jit reads the source of the functions it compiles
    folder = tmp_path_factory.mktemp("facts_12_13")
    (folder / "facts.py").write_text(SCRIPT, encoding="utf-8")
    out = subprocess.run([sys.executable, "facts.py"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "GLOG_v": "3"}, cwd=folder)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# Notebook 12, "O1 rewrites the source code": what the lesson shows through numbers and imports, read here from the
# generated source and sys.path. A file of its own: O1 reads the network's source and changes sys.path.
O1_SCRIPT = textwrap.dedent('''
    import inspect, json, os, sys
    os.environ["GLOG_v"] = "3"
    from pathlib import Path
    import mindspore as ms
    from mindspore import nn


    class OneDense(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1)

        def construct(self, x):
            return self.dense(x)


    net = ms.amp.auto_mixed_precision(OneDense(), "O1")
    layer_dir = str(Path(ms.__file__).parent / "nn" / "layer")
    print(json.dumps({"dense construct": [line.strip() for line in
                                          inspect.getsource(type(net.dense).construct).splitlines()],
                      "layer dir": sys.path.index(layer_dir) if layer_dir in sys.path else None,
                      "site-packages": min(i for i, entry in enumerate(sys.path) if entry.endswith("site-packages")),
                      "basic.py": (Path(layer_dir) / "basic.py").is_file(),
                      "conv.py": (Path(layer_dir) / "conv.py").is_file()}))
''')


@pytest.fixture(scope="module")
def o1_facts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("facts_12_o1")  # O1 writes rewritten_network/ into the working directory
    (folder / "o1_facts.py").write_text(O1_SCRIPT, encoding="utf-8")
    out = subprocess.run([sys.executable, "o1_facts.py"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "GLOG_v": "3"}, cwd=folder)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("operation", ["self.matmul(", "self.bias_add("])
def test_o1_casts_each_white_listed_operation_to_float16_and_straight_back(o1_facts, operation):
    # notebook 12: the rewritten Dense computes its product and its bias addition in float16, each cast back
    lines = o1_facts["dense construct"]
    at = next(i for i, line in enumerate(lines) if operation in line)
    assert all("amp_cast(" in line and "mindspore.float16" in line for line in lines[at - 2:at]), lines[at - 2:at + 2]
    assert lines[at + 1] == "x = amp_cast(x, mindspore.float32)", lines[at - 2:at + 2]


def test_o1_puts_mindspores_layer_folder_before_site_packages(o1_facts):
    # notebook 12: after O1, `import conv` (or basic, normalization ...) finds MindSpore's file first
    assert o1_facts["basic.py"] and o1_facts["conv.py"] and o1_facts["layer dir"] is not None
    assert o1_facts["layer dir"] < o1_facts["site-packages"]


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


def test_what_makes_jit_compile_again(facts):
    # notebook 13, section 3 and exercise 13.4: Python values are constants, a Tensor's dtype and shape count
    assert facts["jit compiles"] == {"floats 0.5 0.5 0.25": 2, "float32 Tensors 0.5 0.25": 1, "a new shape": 1,
                                     "a float64 Tensor": 1, "mutable float then int": 2}


def test_launch_blocking_documents_its_cost_and_takes_no_argument():
    # notebook 13 ("launch_blocking"): the docstring it prints, and no switch back
    import inspect

    import mindspore as ms

    doc = inspect.getdoc(ms.runtime.launch_blocking)
    assert "asynchronously" in doc and "reduces the execution performance" in doc
    assert not inspect.signature(ms.runtime.launch_blocking).parameters


def test_jit_level_o1_is_fusion_and_set_memory_the_memory_pool():
    # notebook 13 (article 000's settings): what the two 2.10 settings are, in their own docstrings
    import inspect

    import mindspore as ms

    assert "operator fusion" in inspect.getdoc(ms.jit)
    assert "memory pool" in inspect.getdoc(ms.runtime.set_memory)


def test_graph_kernel_needs_a_package_neither_mindspore_nor_the_course_requires():
    # notebook 13: enable_graph_kernel on CPU imports `decorator` (AKG); nothing installs it
    from importlib.metadata import requires

    from course_utils.setup_check import read_pins

    assert not any(r.startswith("decorator") for r in requires("mindspore"))
    assert "decorator" not in read_pins()


def test_graph_kernel_compiler_akg_ships_with_mindspore_and_imports_decorator():
    # notebook 13: the "No module named 'decorator'" of enable_graph_kernel comes from MindSpore's bundled AKG
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("mindspore._akg")
    assert spec is not None and spec.origin
    base = Path(spec.origin).parent / "akg" / "tvm" / "_ffi" / "base.py"
    text = base.read_text(encoding="utf-8")
    assert "import decorator" in text or "from decorator" in text
