"""course_utils.errors.expect_error: the course's one short, path-free style for an expected error."""

import logging

import pytest

from course_utils.errors import MAX_LINES, expect_error


def test_prints_type_and_message_only(capsys):
    with expect_error(ValueError) as caught:
        raise ValueError("bad value")
    assert capsys.readouterr().out == "ValueError: bad value\n"
    assert isinstance(caught.exception, ValueError) and caught.message == "ValueError: bad value"


def test_cuts_the_cpp_call_stack_and_long_messages(capsys):
    rule = "-" * 52
    cpp = f"For 'MatMul', wrong type.\n\n{rule}\n- C++ Call Stack: (For framework developers)\n{rule}\nm.cc:1\n"
    with expect_error(TypeError):
        raise TypeError(cpp)
    assert capsys.readouterr().out == "TypeError: For 'MatMul', wrong type.\n"
    with expect_error(TypeError):
        raise TypeError("3 parameters, 2 arguments.\nFunctionGraph ID : grad_7\nNodeInfo: In file /x/y.py:121\n")
    assert capsys.readouterr().out == "TypeError: 3 parameters, 2 arguments.\n"
    with expect_error(RuntimeError):
        raise RuntimeError("\n".join(f"line {i}" for i in range(20)))
    out = capsys.readouterr().out.splitlines()
    assert len(out) == MAX_LINES + 1 and out[-1] == f"[... {20 - MAX_LINES} more lines]"


def test_shortens_paths_under_the_folder_and_shows_the_cause(tmp_path, capsys):
    with expect_error(OSError, folder=tmp_path):
        try:
            raise KeyError("k")
        except KeyError as cause:
            raise OSError(f"cannot read {tmp_path.resolve()}/a.ckpt") from cause
    assert capsys.readouterr().out == "OSError: cannot read a.ckpt\n  caused by KeyError: 'k'\n"


def test_hides_log_records_while_the_block_runs(caplog):
    with expect_error(ValueError):
        logging.getLogger("x").error("[ERROR] ME(123) noise")
        raise ValueError("v")
    assert "noise" not in caplog.text
    logging.getLogger("x").error("visible again")
    assert "visible again" in caplog.text


def test_no_error_fails_and_other_errors_propagate():
    with pytest.raises(AssertionError, match="expected ValueError, but the block raised nothing"):
        with expect_error(ValueError):
            pass
    with pytest.raises(KeyError):
        with expect_error(ValueError):
            raise KeyError("other")
    with pytest.raises(TypeError, match="give the expected exception classes"):
        with expect_error("ValueError"):
            pass


def test_one_more_line_is_singular(capsys):
    with expect_error(RuntimeError):
        raise RuntimeError("\n".join(f"line {i}" for i in range(MAX_LINES + 1)))
    assert capsys.readouterr().out.splitlines()[-1] == "[... 1 more line]"
