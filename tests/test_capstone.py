"""The capstone project: configuration checks, data order, and real command-line runs.

The command-line runs share one uninterrupted 8-epoch run (a module fixture): the interrupted-and-resumed
run and the 2-worker msrun run are compared with it.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from capstone import train as capstone_train
from capstone.config import DEFAULT_PATH, load_config, validate
from capstone.data import EpochBatches, epoch_order, load_splits

EPOCHS = "8"
REPORT_KEYS = {"test_accuracy": float, "test_loss": float, "parameters": int, "train_seconds": float,
               "epochs_run": int, "best_epoch": int, "val_accuracy": float, "stopped_early": bool,
               "interrupted": bool, "resumed_from_epoch": int, "first_step_seconds": float,
               "median_step_seconds": float, "fastest_step_seconds": float, "mode": str, "amp": str, "workers": int,
               "diverged": bool,
               "diverged_at_epoch": type(None), "train_steps": int, "eligible": bool, "score": float, "passed": bool,
               "config": dict, "versions": dict, "fingerprint": str}


def cli(*args, cwd=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "capstone.train", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def checkpoint(path):
    import mindspore as ms

    return {name: p.asnumpy() for name, p in ms.load_checkpoint(str(path)).items()}


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("capstone") / "full"
    out = cli("--ckpt-dir", run_dir, "--epochs", EPOCHS)
    assert out.returncode == 0, out.stderr[-3000:]
    return run_dir, out


# ---- configuration -------------------------------------------------------------------------------------
def test_default_config_is_valid():
    config = load_config()
    assert config["train"]["optimizer"] == "adam" and isinstance(config["train"]["learning_rate"], float)
    assert config["model"] == {"hidden": 32, "layers": 2}


@pytest.mark.parametrize("key, value, text", [
    ("train.optimizer", "rmsprop", "train.optimizer must be one of"),
    ("train.learning_rate", 0, "train.learning_rate must be a number in (0, 10]"),
    ("train.learning_rate", "fast", "train.learning_rate must be a number in (0, 10], got the text 'fast'"),
    ("train.learning_rate", "1e-3", "YAML reads a number like 1e-3 without a dot as text"),
    ("train.epochs", 2.5, "train.epochs must be an int"),
    ("train.amp", "O4", "train.amp must be one of ('O0', 'O1', 'O2', 'O3')"),
    ("train.mode", "eager", "train.mode must be one of ('graph', 'pynative')"),
    ("train.patience", -1, "train.patience must be an int from 0"),
    ("data.n_train", 3, "data.n_train must be an int from 8 to"),
    ("data.classes", 1, "data.classes must be an int from 2 to 10"),
    ("model.hidden", True, "model.hidden"),
    ("model.layers", 9, "model.layers must be an int from 0 to 8"),
    ("train.colour", "red", "unknown configuration keys: ['train.colour']"),
])
def test_bad_config_names_the_key(key, value, text):
    with pytest.raises(ValueError) as info:
        load_config(DEFAULT_PATH, {key: value})
    assert text in str(info.value)


def test_missing_key_and_file(tmp_path):
    config = yaml.safe_load(DEFAULT_PATH.read_text())
    del config["train"]["seed"]
    with pytest.raises(ValueError, match="missing configuration key train.seed"):
        validate(config)
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "nope.yaml")


def _write_config(tmp_path, change=None, text=None):
    path = tmp_path / "my.yaml"
    if text is None:
        config = yaml.safe_load(DEFAULT_PATH.read_text())
        for dotted, value in (change or {}).items():
            section, key = dotted.split(".")
            config[section][key] = value
        text = yaml.safe_dump(config)
    path.write_text(text)
    return path


# Each bad command line or configuration: exit code 2 or 3, its message, nothing written. None of these
# imports MindSpore, so they run in-process in a few milliseconds.
BAD_RUNS = [
    (lambda d: [], 2, "give either --ckpt-dir DIR (a new run) or --resume DIR (continue one)"),
    (lambda d: ["--ckpt-dir", d / "r", "--resume", d / "r"], 2, "give either --ckpt-dir DIR"),
    (lambda d: ["--ckpt-dir", d / "r", "--config", d / "nope.yaml"], 2, "no configuration file at"),
    (lambda d: ["--ckpt-dir", d / "r", "--config", _write_config(d, text="train: [1\n")], 2, "is not valid YAML"),
    (lambda d: ["--ckpt-dir", d / "r", "--config", _write_config(d, {"train.learning_rate": -1})], 2,
     "train.learning_rate must be a number in (0, 10], got float -1.0"),
    (lambda d: ["--ckpt-dir", d / "r", "--config", _write_config(d, {"model.depth": 3})], 2,
     "unknown configuration keys: ['model.depth']"),
    (lambda d: ["--ckpt-dir", d / "r", "--config", _write_config(d, {"train.batch_size": "32"})], 2,
     "train.batch_size must be an int from 1 to 1000000, got the text '32'"),
    (lambda d: ["--ckpt-dir", d / "r", "--epochs", "0"], 2, "train.epochs must be an int from 1 to 100000"),
    (lambda d: ["--ckpt-dir", d / "r", "--workers", "0"], 2, "--workers must be from 1 to 32, got 0"),
    (lambda d: ["--ckpt-dir", d / "r", "--workers", "-2"], 2, "--workers must be from 1 to 32, got -2"),
    (lambda d: ["--ckpt-dir", d / "r", "--nodes", "2"], 2, "--nodes 2 needs --workers N"),
    (lambda d: ["--ckpt-dir", d / "r", "--workers", "1", "--nodes", "2"], 2,
     "--workers (1) must be a multiple of --nodes (2)"),
    (lambda d: ["--ckpt-dir", d / "r", "--workers", "4", "--nodes", "3"], 2,
     "--workers (4) must be a multiple of --nodes (3)"),
    (lambda d: ["--ckpt-dir", d / "r", "--epochs", "3", "--stop-after", "4"], 2,
     "--stop-after 4 is beyond the run's last epoch (train.epochs: 3)"),
    (lambda d: ["--resume", d / "earlier", "--config", d / "my.yaml"], 2, "--config cannot be combined with it"),
    (lambda d: ["--resume", d / "earlier", "--epochs", "9"], 2, "--epochs cannot be combined with it"),
    (lambda d: ["--resume", d / "earlier", "--overwrite"], 2, "--overwrite cannot be combined with it"),
    (lambda d: ["--resume", d / "earlier", "--amp", "O1"], 2, "--amp cannot be combined with it"),
    (lambda d: ["--rubric", "--ckpt-dir", d / "r"], 2, "--rubric prints the rules and takes no other option"),
    (lambda d: ["--ckpt-dir", d / "r", "--_worker"], 2, "--_worker is set by the msrun launch"),
    (lambda d: ["--ckpt-dir", d / "r", "--epochs", "x"], 2, "argument --epochs: invalid int value: 'x'"),
    (lambda d: ["--ckpt-dir", d / "r", "--workers", "3"], 2,
     "with --workers 3, train.batch_size (32) and the last batch (24 of data.n_train 600) must divide by 3"),
    (lambda d: ["--ckpt-dir", d / "r", "--workers", "2", "--nodes", "3"], 2,
     "--workers (2) must be a multiple of --nodes (3)"),
    (lambda d: ["--ckpt-dir", d / "r", "--stop-after", "0"], 2, "--stop-after must be an epoch >= 1"),
    (lambda d: ["--ckpt-dir", ""], 3, "--ckpt-dir must name a directory"),
    (lambda d: ["--ckpt-dir", d / "a_file"], 3, "is a file, not a directory"),
    (lambda d: ["--ckpt-dir", d / "other"], 3, "holds files that are not from a capstone run (notes.txt)"),
    (lambda d: ["--ckpt-dir", d / "earlier"], 3, "already holds a run: pass --overwrite to replace it, --resume"),
    (lambda d: ["--resume", d / "missing"], 3, "no such directory"),
    (lambda d: ["--resume", d / "other"], 3, "it holds no config.yaml, so no run to resume"),
]


@pytest.mark.parametrize("index", range(len(BAD_RUNS)))
def test_bad_command_lines_fail_with_their_message(tmp_path, capsys, index):
    arguments, code, text = BAD_RUNS[index]
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    (tmp_path / "earlier").mkdir()
    (tmp_path / "earlier" / "report.json").write_text("{}")
    argv = [str(a) for a in arguments(tmp_path)]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    try:
        assert capstone_train.main(argv) == code
    except SystemExit as exit_:  # argparse's own errors
        assert exit_.code == code
    err = capsys.readouterr().err
    assert err.startswith("python -m capstone.train: error: ") and text in err, err
    assert err.count("\n") == 1, f"one line: {err!r}"
    assert sorted(p.name for p in tmp_path.rglob("*")) == before, "nothing is written"


def test_rubric_and_score():
    assert capstone_train.main(["--rubric"]) == 0
    assert capstone_train.score(0.949, 10, 1.0) == 0.0, "below the accuracy gate"
    assert capstone_train.score(0.96, capstone_train.REF_PARAMETERS, capstone_train.REF_STEPS) == 100.0
    assert capstone_train.score(0.96, capstone_train.REF_PARAMETERS / 2, capstone_train.REF_STEPS) == 141.4
    assert capstone_train.score(0.96, capstone_train.REF_PARAMETERS, capstone_train.REF_STEPS / 2) == 141.4
    assert capstone_train.score(None, 10, 1.0) == 0.0


# ---- data ----------------------------------------------------------------------------------------------
def test_splits_and_epoch_order():
    config = load_config()
    splits = load_splits(config["data"])
    assert {k: v[0].shape for k, v in splits.items()} == {"train": (600, 2), "val": (300, 2), "test": (300, 2)}
    assert not np.array_equal(splits["val"][0], splits["test"][0]), "held-out data is drawn separately"
    assert np.array_equal(epoch_order(0, 3, 10), epoch_order(0, 3, 10))
    assert not np.array_equal(epoch_order(0, 3, 10), epoch_order(0, 4, 10))
    x, y = splits["train"][0][:20], splits["train"][1][:20]
    whole = list(EpochBatches(x, y, 8, seed=5, first_epoch=2))
    shards = [list(EpochBatches(x, y, 8, seed=5, first_epoch=2, num_shards=2, shard_id=k)) for k in (0, 1)]
    assert [len(b[0]) for b in whole] == [8, 8, 4] and [len(b[0]) for b in shards[0]] == [4, 4, 2]
    for batch, half0, half1 in zip(whole, *shards):
        assert np.array_equal(batch[0][0::2], half0[0]) and np.array_equal(batch[0][1::2], half1[0])
    source = EpochBatches(x, y, 8, seed=5)
    first, second = list(source), list(source)
    assert not np.array_equal(first[0][0], second[0][0]), "every pass is the next epoch"


# ---- real runs -------------------------------------------------------------------------------------------
def test_a_run_writes_its_report_figure_and_checkpoints(full_run):
    run_dir, out = full_run
    assert sorted(p.name for p in run_dir.iterdir()) == ["best.ckpt", "checksums.sha256", "config.yaml",
                                                         "history.json", "last.ckpt", "report.json", "report.png"]
    assert "epoch   8/8 [####################]" in out.stdout and "done: held-out accuracy" in out.stdout
    report = json.loads((run_dir / "report.json").read_text())
    assert {key: type(value) for key, value in report.items()} == REPORT_KEYS
    assert report["parameters"] == 2 * 32 + 32 + 32 * 32 + 32 + 32 * 3 + 3
    assert report["epochs_run"] == 8 and 1 <= report["best_epoch"] <= 8
    assert report["test_accuracy"] > 0.8, "8 epochs already beat any straight line (about 0.55) by far"
    assert report["train_steps"] == 8 * 19 and report["eligible"] and report["config"]["train"]["epochs"] == 8
    assert report["score"] == capstone_train.score(report["test_accuracy"], report["parameters"], 8 * 19)
    assert report["versions"]["mindspore"] == "2.10.0" and len(report["fingerprint"]) == 64
    assert (run_dir / "report.png").read_bytes()[:4] == b"\x89PNG"
    history = json.loads((run_dir / "history.json").read_text())
    assert [row["epoch"] for row in history] == list(range(1, 9))
    # the best checkpoint reproduces the held-out accuracy in a fresh model, measured here with numpy
    import mindspore as ms

    from capstone.model import MLP

    net = MLP(32, 2, 3)
    assert ms.load_param_into_net(net, ms.load_checkpoint(str(run_dir / "best.ckpt")))[0] == []
    tx, ty = load_splits(load_config()["data"])["test"]
    assert np.mean(net(ms.Tensor(tx)).asnumpy().argmax(1) == ty) == report["test_accuracy"]


def test_interrupted_and_resumed_equals_uninterrupted_bitwise(full_run, tmp_path):
    run_dir, _ = full_run
    cut = tmp_path / "cut"
    first = cli("--ckpt-dir", cut, "--epochs", EPOCHS, "--stop-after", "3", "--quiet")
    assert first.returncode == 0 and f"continue with --resume {cut}" in first.stdout, first.stderr[-2000:]
    again = cli("--ckpt-dir", cut, "--epochs", EPOCHS)
    assert again.returncode == 3 and "already holds a run" in again.stderr
    resumed = cli("--resume", cut, "--quiet")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    full, both = checkpoint(run_dir / "last.ckpt"), checkpoint(cut / "last.ckpt")
    assert sorted(full) == sorted(both) and any(name.startswith("moment1.") for name in full)
    changed = [name for name in full if name != "seconds" and not np.array_equal(full[name], both[name])]
    assert changed == [], "weights, optimizer state and epoch are bitwise equal"
    assert json.loads((run_dir / "history.json").read_text()) == json.loads((cut / "history.json").read_text())
    report = json.loads((cut / "report.json").read_text())
    assert report["resumed_from_epoch"] == 3
    assert report["test_loss"] == json.loads((run_dir / "report.json").read_text())["test_loss"]


@pytest.mark.msrun
def test_two_workers_on_two_rehearsed_nodes_equal_one_process(full_run, tmp_path):
    run_dir, _ = full_run
    out = cli("--ckpt-dir", tmp_path / "dp", "--epochs", EPOCHS, "--workers", "2", "--nodes", "2")
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "epoch   8/8" in out.stdout, "rank 0's progress is shown"
    single, parallel = checkpoint(run_dir / "last.ckpt"), checkpoint(tmp_path / "dp" / "last.ckpt")
    weights = [name for name in single if name.startswith("body.")]
    gap = max(float(np.max(np.abs(single[n] - parallel[n]))) for n in weights)
    assert gap < 1e-4, f"the all-reduced mean of two half batches is the full batch up to rounding; gap {gap}"
    one, two = (json.loads((d / "report.json").read_text()) for d in (run_dir, tmp_path / "dp"))
    assert two["workers"] == 2 and two["test_accuracy"] == one["test_accuracy"]
    # the recorded training loss is the mean over both workers' half batches: the one process's loss
    history = [json.loads((d / "history.json").read_text()) for d in (run_dir, tmp_path / "dp")]
    for single_row, parallel_row in zip(*history, strict=True):
        assert abs(single_row["train_loss"] - parallel_row["train_loss"]) < 1e-5, (single_row, parallel_row)
        assert abs(single_row["val_loss"] - parallel_row["val_loss"]) < 1e-4
    assert abs(two["test_loss"] - one["test_loss"]) < 1e-4


# ---- the notebook and the project say the same ----------------------------------------------------------
def _definitions(source):
    """{name: normalised source} of the top-level functions, classes and assignments in ``source``."""
    import ast

    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign):
            found[", ".join(ast.unparse(t) for t in node.targets)] = ast.dump(node)
    return found


def test_notebook_cells_marked_with_a_project_file_hold_its_code():
    """A notebook 16 cell that begins with `# capstone/<file>.py` defines what the file defines, identically."""
    from pathlib import Path

    import nbformat

    root = Path(__file__).resolve().parent.parent
    marked = 0
    for cell in nbformat.read(root / "notebooks" / "16_capstone.ipynb", as_version=4).cells:
        first = cell.source.split("\n", 1)[0]
        if cell.cell_type != "code" or not first.startswith("# capstone/"):
            continue
        in_file = _definitions((root / first[2:].strip()).read_text())
        for name, code in _definitions(cell.source).items():
            assert name in in_file, f"{first[2:]} has no {name}, which the notebook shows as its code"
            assert code == in_file[name], f"{name} in notebook 16 differs from {first[2:]}"
            marked += 1
    assert marked >= 5, "load_splits, epoch_order, EpochBatches, score and its constants are shown"


# ---- the challenge's scorer (python -m capstone.score) --------------------------------------------------
def score_cli(*args):
    return subprocess.run([sys.executable, "-m", "capstone.score", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_the_scorer_scores_a_run_on_its_own_held_out_set_and_writes_nothing(full_run):
    run_dir, _ = full_run
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    first, again = score_cli(run_dir, "--json"), score_cli(run_dir, "--json")
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert first.stdout == again.stdout, "the same folder always gets the same score"
    assert result["n_test"] == 3000 and result["train_steps"] == 8 * 19 and result["eligible"]
    assert result["score"] == capstone_train.score(result["test_accuracy"], result["parameters"], 8 * 19)
    other = json.loads(score_cli(run_dir, "--json", "--test-seed", "7").stdout)
    assert other["test_accuracy"] != result["test_accuracy"], "another seed, another held-out set"
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def test_a_second_identical_run_gets_the_same_score(full_run, tmp_path):
    run_dir, _ = full_run
    again = cli("--ckpt-dir", tmp_path / "again", "--epochs", EPOCHS)
    assert again.returncode == 0, again.stderr[-2000:]
    first, second = (json.loads((d / "report.json").read_text()) for d in (run_dir, tmp_path / "again"))
    assert first["score"] == second["score"] and first["fingerprint"] == second["fingerprint"]


@pytest.mark.parametrize("damage, message", [
    ("report", "report.json's config is not config.yaml's"),
    ("checkpoint", "best.ckpt is damaged"),
    ("missing", "holds no report.json"),
])
def test_the_scorer_refuses_a_folder_that_was_changed(full_run, tmp_path, damage, message):
    import shutil

    run_dir = tmp_path / "copy"
    shutil.copytree(full_run[0], run_dir)
    if damage == "report":
        report = json.loads((run_dir / "report.json").read_text())
        report["config"]["data"]["noise"] = 0.0
        (run_dir / "report.json").write_text(json.dumps(report))
    elif damage == "checkpoint":
        (run_dir / "best.ckpt").write_bytes((run_dir / "best.ckpt").read_bytes()[:-8])
    else:
        (run_dir / "report.json").unlink()
    result = score_cli(run_dir)
    assert result.returncode == 3 and message in result.stderr, result.stderr


def test_a_run_that_changes_the_data_is_not_eligible(tmp_path):
    config = yaml.safe_load(DEFAULT_PATH.read_text())
    config["data"]["noise"], config["data"]["n_test"], config["train"]["epochs"] = 0.0, 30, 2
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    out = cli("--config", tmp_path / "c.yaml", "--ckpt-dir", tmp_path / "run")
    assert out.returncode == 0 and "not eligible" in out.stdout, out.stdout + out.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["eligible"] is False and report["score"] == 0.0 and not report["passed"]
    assert json.loads(score_cli(tmp_path / "run", "--json").stdout)["score"] == 0.0


@pytest.mark.parametrize("args, message", [(["--test-seed", "-1"], "--test-seed must be an int"),
                                           (["--test-seed", "x"], "not 'x'"), ([], "the following arguments")])
def test_the_scorer_refuses_bad_arguments(args, message, tmp_path):
    result = score_cli(*args) if not args or args[0] != "--test-seed" else score_cli(tmp_path, *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_the_scorer_names_a_folder_that_is_not_a_run(tmp_path):
    result = score_cli(tmp_path / "nothing")
    assert result.returncode == 3 and "is not a folder" in result.stderr
    result = score_cli(tmp_path)
    assert result.returncode == 3 and tmp_path.name in result.stderr
