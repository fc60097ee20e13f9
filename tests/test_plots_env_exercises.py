import os
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_utils import env  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED, Exercise  # noqa: E402
from course_utils.plots import plot_loss, plot_trajectory  # noqa: E402


# ---- plots -------------------------------------------------------------------------------------
def test_plot_loss_uses_log_scale_and_marks_divergence():
    ax = plot_loss([1.0, 0.5, 0.1, float("inf"), float("nan")], label="lr=1.1")
    assert ax.get_yscale() == "log"
    xdata = ax.lines[0].get_xdata()
    assert list(xdata) == [0, 1, 2], "non-finite steps must be cut off, not drawn"
    assert any(t.get_text() == "diverged" for t in ax.texts)
    plt.close("all")


def test_plot_trajectory_draws_target():
    ax = plot_trajectory([0.1, 1.0, 1.9], [0.5, 0.2, 0.01], target=(2.0, 0.0))
    stars = [line for line in ax.lines if line.get_marker() == "*"]
    assert len(stars) == 1 and stars[0].get_xdata()[0] == 2.0
    plt.close("all")


@pytest.mark.parametrize("call, error, text", [
    (lambda: plot_loss([]), ValueError, "non-empty 1-D"),
    (lambda: plot_loss([[1.0, 2.0]]), ValueError, "1-D"),
    (lambda: plot_loss("abc"), ValueError, "1-D"),
    (lambda: plot_loss([1.0], ax="axes"), TypeError, "matplotlib Axes"),
    (lambda: plot_trajectory([1.0, 2.0], [1.0]), ValueError, "same length"),
    (lambda: plot_trajectory([1.0, np.nan], [1.0, 2.0]), ValueError, "NaN"),
    (lambda: plot_trajectory([1.0], [1.0], target=(1.0,)), ValueError, "target"),
])
def test_plots_reject_bad_input(call, error, text):
    with pytest.raises(error, match=text):
        call()
    plt.close("all")


# ---- env ---------------------------------------------------------------------------------------
def test_quiet_logs_must_come_before_import():
    code = textwrap.dedent("""
        import os
        os.environ.pop("GLOG_v", None)
        from course_utils import env
        env.quiet_logs()
        assert os.environ["GLOG_v"] == "3"
        import mindspore
        os.environ["GLOG_v"] = "2"
        try:
            env.quiet_logs()
        except RuntimeError as exc:
            assert "Restart the kernel" in str(exc)
        else:
            raise SystemExit("no error after import")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_seed_everything_makes_runs_repeatable():
    import mindspore as ms

    env.seed_everything(7)
    a = (np.random.rand(3), ms.ops.randn(3).asnumpy())
    env.seed_everything(7)
    b = (np.random.rand(3), ms.ops.randn(3).asnumpy())
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    for bad, error in ((1.5, TypeError), (True, TypeError), (-1, ValueError), (2**32, ValueError)):
        with pytest.raises(error, match="seed"):
            env.seed_everything(bad)


def test_use_device():
    assert env.use_device("cpu") == "CPU"
    code = "from course_utils import env; import sys; env.use_device('GPU')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Unsupported device target GPU" in out.stderr, out.stderr[-500:]
    with pytest.raises(ValueError, match="'CPU', 'GPU' or 'Ascend'"):
        env.use_device("TPU")
    with pytest.raises(TypeError):
        env.use_device(0)


def test_scratch_dir_is_outside_the_repository():
    path = env.scratch_dir()
    assert os.path.isdir(path)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(env.__file__)))
    assert not os.path.abspath(path).startswith(repo)
    with pytest.raises(ValueError):
        env.scratch_dir(prefix="a/b")



@pytest.mark.skipif(os.name != "posix", reason="process ids are checked with os.kill(pid, 0)")
def test_scratch_dir_removes_only_what_ended_processes_left(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                           text=True, check=True)
    stale = tmp_path / f"ms-course-{int(ended.stdout)}-abc123"  # a kernel that was shut down
    (stale / "rank_0").mkdir(parents=True)
    (stale / "net.ckpt").write_bytes(b"x")
    running = tmp_path / f"ms-course-{os.getppid()}-def456"  # a process that still runs
    running.mkdir()
    unrelated = [tmp_path / "ms-course-legacy", tmp_path / "other-123-abc"]
    for path in unrelated:
        path.mkdir()
    path = env.scratch_dir()
    assert not stale.exists()
    assert running.exists() and all(p.exists() for p in unrelated)
    assert os.path.dirname(path) == str(tmp_path)
    assert os.path.basename(path).startswith(f"ms-course-{os.getpid()}-")
    assert env.scratch_dir() != path and os.path.isdir(path), "a second call keeps this process's directory"
    with pytest.raises(ValueError, match="non-empty"):
        env.scratch_dir(prefix="")

# ---- exercises ---------------------------------------------------------------------------------
def _square_checker(answer):
    if answer(3) != 9:
        return f"square(3) should be 9, your function gives {answer(3)}"
    return None


EX = Exercise(_square_checker, hints=["a square is a number times itself", "multiply x by itself"], name="0.1")


def test_three_verdicts_are_told_apart():
    assert EX.evaluate(...).status == NOT_ATTEMPTED
    forgot_return = EX.evaluate(None)  # what `answer = my_function()` gives when my_function has no return
    assert forgot_return.status == INCORRECT and "no `return`" in forgot_return.message
    wrong = EX.evaluate(lambda x: 2 * x)
    assert wrong.status == INCORRECT and "should be 9" in wrong.message
    assert EX.evaluate(lambda x: x * x).status == CORRECT


def test_a_failing_answer_is_reported_not_raised():
    result = EX.evaluate(lambda x: 1 / 0)
    assert result.status == INCORRECT and "ZeroDivisionError" in result.message


def test_check_prints_and_returns_nothing(capsys):
    assert EX.check(...) is None
    assert "[ ] Exercise 0.1: not attempted yet" in capsys.readouterr().out
    EX.check(lambda x: x * x)
    assert "[ok] Exercise 0.1: correct" in capsys.readouterr().out
    EX.hint()
    assert "a square is a number times itself" in capsys.readouterr().out


def test_exercise_rejects_bad_construction():
    with pytest.raises(ValueError):
        Exercise(_square_checker, [" "])
    with pytest.raises(TypeError):
        Exercise("not callable", ["h"])
    with pytest.raises(TypeError):
        Exercise(_square_checker, "")
