"""The capstone's run directory under hostile use: two runs at once, damaged folders on --resume, options
that contradict each other, and files written outside DIR.

One good interrupted run (2 epochs, stopped after 1) and one run of another model (hidden: 16) are made
once, in-process; every example works on a copy. Hypothesis runs derandomized, without a database.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from capstone import train as capstone_train
from capstone.config import DEFAULT_PATH
from capstone.rundir import LOCK, MANIFEST, sha256
from capstone.rundir import tmp_path as staged_name

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"course-hypothesis-{os.getuid()}")
PREFIX = "python -m capstone.train: error: "


def fast(examples):
    return settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def cli(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "capstone.train", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def run_main(argv, capfd):
    """main(argv) in-process: (exit code, stderr). argparse's exits count as exit codes."""
    capfd.readouterr()
    try:
        code = capstone_train.main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    return code, capfd.readouterr().err


def one_line_error(err):
    return err.startswith(PREFIX) and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{"good": an interrupted run (epoch 1 of 2), "foreign": a finished run of a model with hidden: 16}."""
    base = tmp_path_factory.mktemp("guards")
    config = yaml.safe_load(DEFAULT_PATH.read_text())
    config["model"]["hidden"] = 16
    (base / "hidden16.yaml").write_text(yaml.safe_dump(config))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(base)
        assert capstone_train.main(["--ckpt-dir", str(base / "good"), "--epochs", "2", "--stop-after", "1",
                                    "--quiet"]) == 0
        assert capstone_train.main(["--ckpt-dir", str(base / "foreign"), "--config", str(base / "hidden16.yaml"),
                                    "--epochs", "1", "--quiet"]) == 0
    return {"good": base / "good", "foreign": base / "foreign", "base": base}


@pytest.fixture
def no_figure(monkeypatch):
    """report.png is not drawn (it is tested elsewhere): resumed examples take less time."""
    import capstone.figure

    monkeypatch.setattr(capstone.figure, "save_report_figure", lambda net, test, history, path: Path(path).touch())


def copy_of(runs, tmp, name="good"):
    target = Path(tmp) / name
    shutil.copytree(runs[name], target)
    for path in target.iterdir():
        path.chmod(0o644)  # MindSpore leaves checkpoints read-only
    return target


def rewrite_manifest(run_dir):
    """As if the damage came with new checksums (a folder put together by hand)."""
    names = [name for name in ("config.yaml", "last.ckpt", "best.ckpt", "history.json") if (run_dir / name).exists()]
    (run_dir / MANIFEST).write_text("".join(f"{sha256(run_dir / n)}  {n}\n" for n in names))


# ---- 1. one run at a time ------------------------------------------------------------------------------
def _wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_second_run_into_a_busy_folder_is_refused_and_a_dead_runs_lock_is_taken_over(tmp_path):
    run_dir = tmp_path / "busy"
    first = subprocess.Popen([sys.executable, "-m", "capstone.train", "--ckpt-dir", str(run_dir), "--epochs",
                              "100000", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: (run_dir / LOCK).is_file() and (run_dir / LOCK).read_text().strip() == str(first.pid),
                  120, "the first run's lock")
        for arguments in (["--ckpt-dir", run_dir, "--overwrite"], ["--ckpt-dir", run_dir], ["--resume", run_dir]):
            second = cli(*arguments, "--epochs", "1") if arguments[0] == "--ckpt-dir" else cli(*arguments)
            assert second.returncode == 5, second.stderr
            assert second.stderr == f"{PREFIX}{run_dir} is in use by another run (pid {first.pid})\n"
        assert first.poll() is None, "the first run goes on"
    finally:
        first.send_signal(signal.SIGKILL)  # killed: its lock stays behind, with a dead PID
        first.communicate(timeout=60)
    assert (run_dir / LOCK).read_text().strip() == str(first.pid)
    again = cli("--ckpt-dir", run_dir, "--overwrite", "--epochs", "1", "--quiet")
    assert again.returncode == 0, again.stderr[-2000:]
    assert not (run_dir / LOCK).exists(), "removed when the run ends"


def test_a_hand_made_lock_of_a_live_process_is_respected_and_a_dead_ones_is_not(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(capstone_train, "train", lambda *a, **k: pytest.fail("must not train"))
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / LOCK).write_text(f"{os.getppid()}\n")  # alive: the process that started pytest
    code, err = run_main(["--ckpt-dir", run_dir], capfd)
    assert code == 5 and err == f"{PREFIX}{run_dir} is in use by another run (pid {os.getppid()})\n"
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (run_dir / LOCK).write_text(done.stdout)  # that process has ended
    fake = {"diverged": False, "interrupted": True, "epochs_run": 0}
    monkeypatch.setattr(capstone_train, "train", lambda *a, **k: fake)
    code, err = run_main(["--ckpt-dir", run_dir], capfd)
    assert code == 0, err
    assert sorted(p.name for p in run_dir.iterdir()) == [], "the stale lock was taken over, then removed"


def test_the_lock_is_not_a_foreign_file_and_is_gone_after_a_refusal(tmp_path, capfd):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("mine")
    code, err = run_main(["--ckpt-dir", run_dir], capfd)
    assert code == 3 and "(notes.txt)" in err and one_line_error(err)
    assert sorted(p.name for p in run_dir.iterdir()) == ["notes.txt"], "no .lock left behind"


# ---- 2, 3. a damaged folder on --resume: exit code 3 and one line ----------------------------------------
def _flip(path, position):
    data = bytearray(path.read_bytes())
    data[position % len(data)] ^= 0x10
    path.write_bytes(bytes(data))


DAMAGES = [  # (what is done to a copy of the good run, the message)
    (lambda d, runs: _flip(d / "last.ckpt", 5000),
     "last.ckpt is damaged (checksum mismatch): start a new run"),
    (lambda d, runs: (d / "last.ckpt").write_bytes((d / "last.ckpt").read_bytes()[:777]),
     "last.ckpt is damaged (checksum mismatch): start a new run"),
    (lambda d, runs: (d / "history.json").write_text("[{\"epoch\": 1, \"train"),
     "history.json is damaged (checksum mismatch)"),
    (lambda d, runs: ((d / "history.json").write_text("[{\"epoch\": 1, \"train"), rewrite_manifest(d)),
     "history.json is damaged (Unterminated string"),
    (lambda d, runs: ((d / "history.json").write_text("[]"), rewrite_manifest(d)),
     "history.json is damaged (its epochs are not 1 to 1, the epoch of last.ckpt)"),
    (lambda d, runs: (d / "last.ckpt").unlink(), "it holds no last.ckpt, so no run to resume"),
    (lambda d, runs: (d / MANIFEST).unlink(), "it holds no checksums.sha256, so no run to resume"),
    (lambda d, runs: (d / MANIFEST).write_text("nonsense\n"), "checksums.sha256 is damaged: start a new run"),
    (lambda d, runs: shutil.copyfile(runs["foreign"] / "last.ckpt", d / "last.ckpt"),
     "last.ckpt is damaged (checksum mismatch)"),
    # the hidden: 16 run's checkpoint, checksums and all: it does not fit this run's model
    (lambda d, runs: (shutil.copyfile(runs["foreign"] / "last.ckpt", d / "last.ckpt"), rewrite_manifest(d)),
     "last.ckpt does not fit this model (body.0.weight has shape (16, 2), the model's has (32, 2))"),
    # this run's config.yaml changed to hidden: 16 (the checkpoint is a hidden: 32 one)
    (lambda d, runs: ((d / "config.yaml").write_text((d / "config.yaml").read_text().replace("hidden: 32",
                                                                                             "hidden: 16")),
                      rewrite_manifest(d)), "last.ckpt does not fit this model"),
    (lambda d, runs: (d / "config.yaml").write_text("model: [\n"), "config.yaml is damaged (checksum mismatch)"),
    (lambda d, runs: ((d / "config.yaml").write_text("model: [\n"), rewrite_manifest(d)),
     "config.yaml is damaged ("),
    (lambda d, runs: ((d / "last.ckpt").write_bytes(b"\0" * 100), rewrite_manifest(d)),
     "last.ckpt cannot be read ("),
]


@pytest.mark.parametrize("index", range(len(DAMAGES)))
def test_a_damaged_run_is_refused_in_one_line(runs, tmp_path, capfd, index):
    damage, text = DAMAGES[index]
    run_dir = copy_of(runs, tmp_path)
    damage(run_dir, runs)
    code, err = run_main(["--resume", run_dir, "--quiet"], capfd)
    assert code == 3 and one_line_error(err) and text in err, err
    assert not (run_dir / LOCK).exists()


def test_the_cli_reports_a_foreign_checkpoint_in_one_line(runs, tmp_path):
    """The example of the review, as a learner meets it: MindSpore's own error used to end in a traceback."""
    run_dir = copy_of(runs, tmp_path)
    shutil.copyfile(runs["foreign"] / "last.ckpt", run_dir / "last.ckpt")
    rewrite_manifest(run_dir)
    out = cli("--resume", run_dir)
    assert out.returncode == 3 and one_line_error(out.stderr), out.stderr
    assert "last.ckpt does not fit this model" in out.stderr


def test_a_run_stopped_between_its_checksums_and_its_files_is_finished_on_resume(runs, tmp_path, capfd,
                                                                                   no_figure):
    """The checksums are replaced before the files: the new files wait under their temporary names."""
    run_dir = copy_of(runs, tmp_path)
    os.replace(run_dir / "last.ckpt", tmp_path_of := staged_name(run_dir / "last.ckpt"))
    shutil.copyfile(runs["foreign"] / "last.ckpt", run_dir / "last.ckpt")  # the old version, say
    code, err = run_main(["--resume", run_dir, "--quiet"], capfd)
    assert code == 0, err
    assert not tmp_path_of.exists()
    assert sorted(p.name for p in run_dir.iterdir()) == ["best.ckpt", "checksums.sha256", "config.yaml",
                                                         "history.json", "last.ckpt", "report.json", "report.png"]


FILES = ["best.ckpt", "checksums.sha256", "config.yaml", "history.json", "last.ckpt", "report.json", "report.png"]


@fast(24)
@given(name=st.sampled_from(FILES), kind=st.sampled_from(["truncate", "flip", "delete", "foreign"]),
       position=st.integers(0, 2**31))
def test_any_damage_resumes_exactly_or_is_refused_in_one_line(runs, capfd, no_figure, name, kind, position):
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = copy_of(runs, tmp)
        path = run_dir / name
        if kind == "truncate":
            path.write_bytes(path.read_bytes()[:position % max(1, path.stat().st_size)])
        elif kind == "flip":
            _flip(path, position)
        elif kind == "delete":
            path.unlink()
        elif (runs["foreign"] / name).is_file():
            shutil.copyfile(runs["foreign"] / name, path)
        code, err = run_main(["--resume", run_dir, "--quiet"], capfd)
        assert code in (0, 3), (code, err)
        if code == 3:
            assert one_line_error(err), err
        else:
            assert name in ("report.json", "report.png") or kind == "foreign", (name, kind, "resumed")
            assert (run_dir / "history.json").read_text() != ""
        assert not (run_dir / LOCK).exists()


# ---- 4. the command line: contradictions, and any list of arguments --------------------------------------
OPTIONS = ["--ckpt-dir", "--resume", "--config", "--epochs", "--mode", "--amp", "--workers", "--nodes",
           "--stop-after", "--overwrite", "--quiet", "--rubric", "--help", "-h", "--_worker", "--work", "--bogus",
           "--ckpt", "--"]
VALUES = ["NEW", "RUN", "FILE", "", "a\0b", "0", "1", "2", "3", "-1", "33", "99999999999999999999", "1e3",
          "graph", "pynative", "O1", "O4", "x"]


@fast(120)
@given(words=st.lists(st.one_of(st.sampled_from(OPTIONS), st.sampled_from(VALUES),
                                st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)), max_size=7))
def test_any_command_line_runs_or_fails_in_one_line(runs, capfd, monkeypatch, words):
    ran = []

    def fake_train(config, run_dir, **kwargs):
        ran.append(run_dir)
        return {"diverged": False, "interrupted": True, "epochs_run": 1}

    monkeypatch.setattr(capstone_train, "train", fake_train)
    monkeypatch.setattr(capstone_train, "_launch", lambda *a, **k: fake_train(None, a[1]))
    monkeypatch.delenv("MS_ROLE", raising=False)
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.chdir(tmp)  # a relative path lands here
        run = copy_of(runs, tmp)
        Path(tmp, "FILE").write_text("x")
        argv = [{"NEW": str(Path(tmp, "new")), "RUN": str(run), "FILE": str(Path(tmp, "FILE"))}.get(w, w)
                for w in words]
        capfd.readouterr()
        try:
            code = capstone_train.main(argv)
        except SystemExit as exit_:
            code = exit_.code
        out, err = capfd.readouterr()
        if code == 0:
            assert ran or "usage: python -m capstone.train" in out or "The capstone challenge" in out, (argv, out)
        else:
            assert code in (2, 3) and one_line_error(err), (argv, code, err)
            assert not ran
        assert not Path(tmp, "new", LOCK).exists() and not (run / LOCK).exists()


def test_stop_after_on_resume_must_be_a_later_epoch(runs, tmp_path, capfd):
    run_dir = copy_of(runs, tmp_path)
    code, err = run_main(["--resume", run_dir, "--stop-after", "1"], capfd)
    assert code == 2 and one_line_error(err) and "already reached epoch 1; give a later epoch" in err, err
    code, err = run_main(["--resume", run_dir, "--stop-after", "3"], capfd)
    assert code == 2 and one_line_error(err) and "--stop-after 3 is beyond the run's last epoch" in err, err


# ---- nothing outside DIR -------------------------------------------------------------------------------
def test_mixed_precision_o1_writes_nothing_outside_the_run_folder(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = cli("--ckpt-dir", tmp_path / "amp", "--amp", "O1", "--epochs", "1", "--quiet", cwd=cwd)
    assert out.returncode == 0, out.stderr[-2000:]
    assert list(cwd.iterdir()) == [], "no rewritten_network/ (nor anything else) in the current folder"
    assert sorted(p.name for p in (tmp_path / "amp").iterdir()) == FILES
