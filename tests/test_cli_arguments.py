"""Every command line of the course refuses bad arguments with a short message and a non-zero exit, never a
traceback: the classroom app, the classroom server, the setup check and the tools (the capstone's own
parser is tested in tests/test_capstone*.py). The servers are not started: what they would run is replaced by
a stub that records it."""

import contextlib
import io

import classroom  # app/, on the path through pyproject's pythonpath
import pytest
import serve
from hypothesis import given, settings
from hypothesis import strategies as st

NUMBERS = ["0", "-1", "1", "80", "1023", "1024", "8866", "65535", "65536", "70000", "1e3", "abc", "", "nan", "0.5",
           "20", "201", "3"]
WORDS = ["--port", "--lang", "--no-browser", "--room", "--pool", "--idle-minutes", "--token", "--ip", "--no-qr",
         "en", "zh", "xx", "lan", "127.0.0.1", "0.0.0.0", "abcdefgh12", "short", "--bogus", "-h"]


class Ran(Exception):
    """The stub of what a valid command line would run."""


def _outcome(main, args):
    """("ran", None) when the command line was accepted, else (exit code, what was printed on stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(args)
        except Ran:
            return "ran", None
        except SystemExit as stop:
            return stop.code, err.getvalue()
    return "returned", err.getvalue()


def _assert_refused_plainly(code, stderr, args):
    assert code not in (0, None) or "-h" in args, (args, code, stderr)
    assert "Traceback" not in stderr, (args, stderr)
    if code not in (0, None):
        lines = [line for line in stderr.splitlines() if line.strip()]
        # one line of ours, or argparse's usage (which wraps) followed by its one error line
        assert len(lines) == 1 or (len(lines) <= 6 and ": error: " in lines[-1]), (args, stderr)


@pytest.fixture
def stubs(monkeypatch):
    def ran(*_args, **_kwargs):
        raise Ran()

    monkeypatch.setattr(serve.os, "execve", ran)
    monkeypatch.setattr(classroom, "run", ran)
    monkeypatch.setattr(classroom, "_check_port_free", lambda ip, port: None)
    monkeypatch.setattr(classroom, "lan_address", lambda: "127.0.0.1")


@pytest.mark.parametrize("port", ["0", "70000", "-1", "abc", "65536"])
def test_the_app_refuses_a_port_out_of_range(stubs, port):
    code, stderr = _outcome(serve.main, ["--port", port])
    _assert_refused_plainly(code, stderr, ["--port", port])
    assert code == 2 and "port" in stderr


def test_the_app_and_the_room_run_with_good_arguments(stubs):
    assert _outcome(serve.main, ["--port", "8870", "--lang", "zh", "--no-browser"])[0] == "ran"
    assert _outcome(classroom.main, ["--port", "8870", "--room", "5", "--pool", "2", "--no-qr"])[0] == "ran"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS + NUMBERS), max_size=6))
def test_the_app_never_answers_with_a_traceback(args):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(serve.os, "execve", lambda *a, **k: (_ for _ in ()).throw(Ran()))
        code, stderr = _outcome(serve.main, args)
    if code != "ran":
        _assert_refused_plainly(code, stderr, args)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS + NUMBERS), max_size=6))
def test_the_room_never_answers_with_a_traceback(args):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(classroom, "run", lambda *a, **k: (_ for _ in ()).throw(Ran()))
        mp.setattr(classroom, "_check_port_free", lambda ip, port: None)
        mp.setattr(classroom, "lan_address", lambda: "127.0.0.1")
        code, stderr = _outcome(classroom.main, args)
    if code != "ran":
        _assert_refused_plainly(code, stderr, args)


@pytest.mark.parametrize("tool, args", [
    ("setup_check", ["--bogus"]), ("setup_check", ["--contributor", "x"]),
    ("make_editions", ["teacher"]), ("make_editions", []),
    ("zh", ["template", "99"]), ("zh", ["translate"]), ("zh", []),
    ("execute_notebooks", ["no/such.ipynb"]), ("execute_notebooks", []),
    ("course_map", ["--bogus"]),
])
def test_the_tools_refuse_bad_arguments(tool, args):
    if tool == "setup_check":
        from course_utils import setup_check as module
    else:
        module = __import__(tool)
    code, stderr = _outcome(module.main, args)
    if code == "returned":  # a main() that returns its exit code
        pytest.fail(f"{tool} {args} was accepted")
    if isinstance(code, str):  # SystemExit("message"): printed by Python on exit, code 1
        stderr, code = code, 1
    _assert_refused_plainly(code, stderr, args)
