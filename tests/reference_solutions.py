"""The reference solutions, run outside their notebook, for the per-notebook check tests: a test takes the
answer the suite's second pass proves correct instead of re-typing it (a re-typed copy can drift)."""

import contextlib
import importlib
import io
import linecache

import numpy as np

from course_utils import solutions


def reference(ex, **names):
    """Run the solution section of ``ex`` with MindSpore's usual names (``ms``, ``nn``, ``ops``, ``Tensor``,
    ``np``, ``nbNN``) and ``names`` (what the section takes from its notebook); ``(answer, printed text)``."""
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    module = importlib.import_module(f"course_utils.checks.nb{ex.notebook}")
    namespace = {"__name__": "__main__", "ms": ms, "nn": nn, "ops": ops, "Tensor": Tensor, "np": np,
                 f"nb{ex.notebook}": module, **names}
    code = solutions.code(ex)
    filename = f"<solution {ex.expression}>"  # registered, so that ms.jit can read a compiled function's source
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, filename, "exec"), namespace)
    return namespace.get("answer"), printed.getvalue()
