"""Reference solutions of notebook 00 (see course_utils/solutions/__init__.py)."""

# %% 00.1 nb00.version
answer = ms.__version__

nb00.version.check(answer)


# %% 00.2 nb00.default_mode
answer = ms.PYNATIVE_MODE

nb00.default_mode.check(answer)


# %% 00.3 nb00.glog_after_import
answer = "b"

nb00.glog_after_import.check(answer)


# %% 00.4 nb00.tensor_dtype
answer = "b"

nb00.tensor_dtype.check(answer)


# %% 00.5 nb00.mode_name
def mode_name():
    return "graph" if ms.get_context("mode") == ms.GRAPH_MODE else "pynative"


answer = mode_name
nb00.mode_name.check(answer)
