"""Train the capstone classifier from the command line: USAGE below (what --help prints) gives the options,
the files a run writes and the exit codes."""

import argparse
import contextlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file by msrun: make `capstone` and `course_utils` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from capstone.rundir import (  # noqa: E402
    LOCK,
    MANIFEST,
    CkptDirError,
    RunDirBusy,
    RunLock,
    commit,
    sha256,
    stage_bytes,
    tmp_path,
    verify,
    write_atomic,
)
from course_utils.messages import lazy, t  # noqa: E402 (after the path above; it imports nothing heavy)

USAGE = lazy("""Train the capstone classifier from the command line.

    python -m capstone.train --ckpt-dir DIR [--config FILE] [--epochs N] [--mode graph|pynative]
                             [--amp O0|O1|O2|O3] [--workers N [--nodes K]] [--overwrite] [--quiet]
    python -m capstone.train --resume DIR [--stop-after EPOCH] [--workers N [--nodes K]] [--quiet]
                                                                      # continue an interrupted run exactly
    python -m capstone.train --rubric                                 # the challenge's rules

DIR must be new, empty, or hold an earlier run of this script (replaced only with --overwrite). A run
writes there: config.yaml (what it trained with), last.ckpt (weights, optimizer state and epoch, after every
epoch), best.ckpt (the epoch with the best validation accuracy), history.json, report.json (held-out
accuracy and loss, time, parameters, score), report.png (decision regions and curves) and checksums.sha256
(of config.yaml, the checkpoints and history.json); every file is replaced whole, never half-written. --resume
DIR checks those checksums, continues from last.ckpt with DIR's config.yaml (so --config, --epochs, --mode,
--amp and --overwrite do not go with it) and ends bitwise equal to a run never interrupted. While a run uses
DIR it holds DIR/.lock (its process id), so a second run into DIR is refused.
--workers N > 1 runs the same training data-parallel with msrun (N workers, each batch split between them);
--nodes K rehearses K machines on this one (K msrun invocations, --node_rank 0 .. K-1).

Exit codes:
  0  training finished: the files above are in DIR
  1  unexpected error (a bug: please report the traceback)
  2  bad command line or configuration: one line names the option or key, what it must be and what
     was found; nothing is written
  3  DIR refused: empty path, not a directory, holds another run (without --overwrite) or other
     files, cannot be created, or (--resume) holds no run to resume, or one that is damaged or from
     another configuration (one line names the file); nothing is written
  4  training diverged (the loss became NaN or inf): training stops, report.json is still written
     (valid JSON, with "diverged": true and null for non-finite numbers)
  5  DIR is in use by another run (one line gives its process id); nothing is written
""")

os.environ.setdefault("GLOG_v", "3")  # before importing mindspore: keep the console readable

EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_CKPT_DIR, EXIT_DIVERGED, EXIT_BUSY = 0, 1, 2, 3, 4, 5
# What a run writes into its directory (ModelCheckpoint is not used: one last.ckpt holds the state), and
# the temporary names its files are written under before they replace the old ones (.tmp.last.tmp: the
# name MindSpore itself writes .tmp.last.ckpt under). DIR/.lock is not a run's file: it is the lock.
_RUN_FILE = re.compile(r"^(\.tmp\.)?(best\.ckpt|last\.ckpt|config\.yaml|history\.json|report\.json|report\.png|"
                       r"checksums\.sha256|best\.tmp|last\.tmp)$")

# The scored challenge (--rubric prints it; report.json carries the score, python -m capstone.score re-scores).
THRESHOLD = 0.95  # held-out (test) accuracy a run must reach to score at all
# The default configuration: 1251 parameters, 456 steps (its early stop ends it after 24 epochs of 19 steps).
# Steps, not seconds: a score a busy machine or a faster laptop cannot change; identical runs score the same.
REF_PARAMETERS, REF_STEPS = 1251, 456
RUBRIC = lazy("""The capstone challenge
  1. Accuracy gate: held-out test accuracy must be >= {threshold:.2f}; below it the score is 0.
  2. Then smaller and quicker to train wins: score = 100 * sqrt({ref_parameters} / parameters) *
     sqrt({ref_steps} / train_steps). The default configuration scores 100; halving
     the parameters or the training steps multiplies the score by 1.41.
  3. Rules: change only the model and train keys of the configuration file, train with `python -m
     capstone.train --config FILE --ckpt-dir DIR`, and hand in DIR. A run that changes a data key is marked
     "eligible": false and scores 0. The official score is `python -m capstone.score DIR --test-seed S`: a
     held-out set drawn with a seed only the scorer knows, so tuning on your own test split cannot help.
""")  # printed by --rubric with THRESHOLD, REF_PARAMETERS and REF_STEPS filled in


def score(test_accuracy, parameters, train_steps):
    """The challenge's score (see RUBRIC): 0 below the accuracy gate."""
    if not (isinstance(test_accuracy, float) and test_accuracy >= THRESHOLD) or train_steps <= 0:
        return 0.0
    return round(100.0 * math.sqrt(REF_PARAMETERS / parameters) * math.sqrt(REF_STEPS / train_steps), 1)


def eligible(config):
    """Whether a configuration keeps the data the rules fix: every data key at its default."""
    from capstone.config import load_config

    return config["data"] == load_config()["data"]


def versions():
    """What trained the run: Python, MindSpore and numpy (report.json records them)."""
    import platform

    import mindspore
    import numpy

    return {"python": platform.python_version(), "mindspore": mindspore.__version__, "numpy": numpy.__version__}


def prepare_ckpt_dir(ckpt_dir, overwrite=False, lock=False):
    """Check ``ckpt_dir`` and return it as a Path: created if new; an earlier run's files deleted only
    with ``overwrite``. Raises CkptDirError saying why a directory cannot be used. With ``lock``, return
    ``(path, RunLock)``: the directory is locked before its files are looked at (RunDirBusy if another run
    holds it), and unlocked again if it is refused."""
    if not isinstance(ckpt_dir, (str, Path)) or not str(ckpt_dir).strip():
        raise CkptDirError(t("--ckpt-dir must name a directory, got {ckpt_dir!r} (an empty path would write "
                             "into the current directory)", ckpt_dir=ckpt_dir))
    path = Path(ckpt_dir)
    if path.exists() and not path.is_dir():
        raise CkptDirError(t("--ckpt-dir {path} is a file, not a directory", path=path))
    if not lock:
        _check_run_files(path, overwrite, delete=False)  # before anything is created
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise CkptDirError(t("cannot create --ckpt-dir {path}: {error}", path=path, error=exc)) from None
    run_lock = RunLock(path) if lock else None
    try:
        _check_run_files(path, overwrite, delete=True)
    except BaseException:
        if run_lock is not None:
            run_lock.release()
        raise
    return (path, run_lock) if lock else path


def _check_run_files(path, overwrite, delete):
    try:
        entries = sorted(path.iterdir(), key=lambda entry: entry.name) if path.is_dir() else []
    except OSError as exc:
        raise CkptDirError(t("cannot create --ckpt-dir {path}: {error}", path=path, error=exc)) from None
    entries = [entry for entry in entries if entry.name != LOCK]
    others = [entry.name for entry in entries
              if not _RUN_FILE.match(entry.name) or entry.is_symlink() or not entry.is_file()]
    if others:
        raise CkptDirError(t("--ckpt-dir {path} holds files that are not from a capstone run ({files}): "
                             "choose a new or empty directory", path=path,
                             files=", ".join(others[:3]) + (", ..." if len(others) > 3 else "")))
    if entries and not overwrite:
        raise CkptDirError(t("--ckpt-dir {path} already holds a run: pass --overwrite to replace it, "
                             "--resume {path} to continue it, or choose a new directory", path=path))
    if delete:
        for entry in entries:
            try:
                entry.chmod(0o600)  # MindSpore leaves its checkpoints read-only
                entry.unlink()
            except OSError as exc:
                raise CkptDirError(t("cannot create --ckpt-dir {path}: {error}", path=path, error=exc)) from None


def resumable(run_dir, checksums=True):
    """The epoch to resume ``run_dir`` from; raises CkptDirError if it holds no run to resume, or one
    whose files do not match their checksums (``checksums``: they must; else they are checked if listed)."""
    path = Path(run_dir)
    if not path.is_dir():
        raise CkptDirError(t("--resume {path}: no such directory", path=path))
    for name in ("config.yaml", "last.ckpt", "history.json"):
        if not (path / name).is_file() and not tmp_path(path / name).is_file():
            raise CkptDirError(t("--resume {path}: it holds no {name}, so no run to resume (start one with "
                                 "--ckpt-dir)", path=path, name=name))
    manifest = verify(path) if checksums or (path / MANIFEST).is_file() else None
    saved = _load_checkpoint(path / "last.ckpt")
    try:
        epoch = int(saved["epoch"].asnumpy())
        for key in ("best", "best_epoch", "bad_epochs", "seconds"):
            float(saved[key].asnumpy())
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as exc:
        raise CkptDirError(t("--resume {path}: last.ckpt holds no training state ({error}): start a new run",
                             path=path, error=_first_line(exc))) from None
    if epoch < 1:
        raise CkptDirError(t("--resume {path}: last.ckpt holds no training state ({error}): start a new run",
                             path=path, error=f"epoch {epoch}"))
    _read_history(path, epoch)
    if manifest is not None and "best.ckpt" in manifest:
        _load_checkpoint(path / "best.ckpt")
    return epoch


def _first_line(exc):
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not set(line.strip()) <= set("-")]
    return lines[0] if lines else type(exc).__name__


def _load_checkpoint(path):
    import mindspore as ms

    try:
        return ms.load_checkpoint(str(path))
    except Exception as exc:  # noqa: BLE001 (MindSpore raises ValueError, RuntimeError, TypeError... for a bad file)
        raise CkptDirError(t("--resume {path}: {name} cannot be read ({error})", path=path.parent, name=path.name,
                             error=_first_line(exc))) from None


def _read_history(run_dir, epoch):
    """history.json's rows for epochs 1 .. ``epoch``; CkptDirError if it is not such a history."""
    try:
        rows = json.loads((run_dir / "history.json").read_text(encoding="utf-8"))
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ValueError("not a list of epochs")
        rows = [row for row in rows if isinstance(row.get("epoch"), int) and row["epoch"] <= epoch]
        if [row["epoch"] for row in rows] != list(range(1, epoch + 1)):
            raise ValueError(f"its epochs are not 1 to {epoch}, the epoch of last.ckpt")
        for row in rows:
            for key in ("train_loss", "val_loss", "val_accuracy"):
                if not isinstance(row.get(key), (int, float)) or isinstance(row.get(key), bool):
                    raise ValueError(f"epoch {row['epoch']} has no number {key}")
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CkptDirError(t("--resume {path}: history.json is damaged ({error}): start a new run", path=run_dir,
                             error=_first_line(exc))) from None
    return rows


def build(config, num_shards=1, shard_id=0, first_epoch=0):
    """Data sets, model, loss and optimizer from a (validated) configuration."""
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn

    from capstone.data import EpochBatches, load_splits
    from capstone.model import MLP

    d, m, tr = config["data"], config["model"], config["train"]
    ms.set_seed(tr["seed"])
    splits = load_splits(d)
    x, y = splits["train"]
    source = EpochBatches(x, y, tr["batch_size"], tr["seed"], first_epoch, num_shards, shard_id)
    train_set = ds.GeneratorDataset(source, ["x", "y"], shuffle=False)
    val_set = ds.NumpySlicesDataset({"x": splits["val"][0], "y": splits["val"][1]}, shuffle=False).batch(d["n_val"])
    net = MLP(m["hidden"], m["layers"], d["classes"])
    if tr["amp"] != "O0":
        net = ms.amp.auto_mixed_precision(net, tr["amp"])
    params, lr, wd = net.trainable_params(), tr["learning_rate"], tr["weight_decay"]
    if tr["optimizer"] == "adam":
        optimizer = nn.Adam(params, lr, weight_decay=wd)
    elif tr["optimizer"] == "momentum":
        optimizer = nn.Momentum(params, lr, 0.9, weight_decay=wd)
    else:
        optimizer = nn.SGD(params, lr, weight_decay=wd)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return net, loss_fn, optimizer, train_set, val_set, splits


def _progress_callback_class():
    from mindspore.train import Callback

    class Progress(Callback):
        """A progress bar, the best checkpoint, an early stop, and last.ckpt after every epoch.

        ``Model.fit`` evaluates the validation set before on_train_epoch_end, which finds the results in
        ``eval_results`` and takes its decisions there (a stop requested in on_eval_end would be ignored).
        """

        def __init__(self, run_dir, total_epochs, patience, state, history, quiet, writer, workers=1,
                     manifest=None):
            super().__init__()
            self.run_dir, self.total, self.patience = run_dir, total_epochs, patience
            self.workers, self.manifest = workers, manifest
            self.best, self.best_epoch, self.bad_epochs, self.prior_seconds = state
            self.started = time.perf_counter()
            self.history, self.quiet, self.writer = history, quiet, writer
            self.losses, self.step_seconds, self.diverged_at, self.stopped_early = [], [], None, False
            self._started = 0.0

        def seconds(self):
            """Training time so far, the part before an interruption included."""
            return self.prior_seconds + time.perf_counter() - self.started

        def on_train_step_begin(self, run_context):
            self._started = time.perf_counter()

        def on_train_step_end(self, run_context):
            self.step_seconds.append(time.perf_counter() - self._started)
            cb = run_context.original_args()
            self.losses.append(float(cb.net_outputs.asnumpy()))
            if not math.isfinite(self.losses[-1]):
                self.diverged_at = cb.cur_epoch_num
                run_context.request_stop()

        def on_train_epoch_end(self, run_context):

            cb = run_context.original_args()
            epoch, results = cb.cur_epoch_num, cb.eval_results
            if self.diverged_at is not None:
                return
            losses, self.losses = self.losses, []
            if self.workers > 1 and losses:  # each rank saw a share of every batch: the mean over all of them
                import numpy as np
                from mindspore import Tensor, ops

                shares = ops.AllReduce()(Tensor(np.array(losses, np.float32))).asnumpy()
                losses = [float(value) / self.workers for value in shares]
            train_loss = statistics.fmean(losses) if losses else float("nan")
            row = {"epoch": epoch, "train_loss": train_loss, "val_loss": float(results["loss"]),
                   "val_accuracy": float(results["accuracy"])}
            self.history.append(row)
            mark = ""
            staged = {}
            if row["val_accuracy"] > self.best:
                self.best, self.best_epoch, self.bad_epochs = row["val_accuracy"], epoch, 0
                if self.writer:
                    staged["best.ckpt"] = _stage_checkpoint(cb.network, self.run_dir / "best.ckpt")
                mark = t(" best")
            else:
                self.bad_epochs += 1
            stop = self.patience and self.bad_epochs >= self.patience and epoch < self.total
            if self.writer:  # the whole state, so that a resumed run goes on exactly as this one would
                state = {"epoch": epoch, "best": self.best, "best_epoch": self.best_epoch,
                         "bad_epochs": self.bad_epochs, "seconds": self.seconds()}
                staged["last.ckpt"] = _stage_checkpoint(cb.train_network, self.run_dir / "last.ckpt", state)
                staged["history.json"] = stage_bytes(self.run_dir / "history.json",
                                                     json.dumps(self.history, indent=1).encode())
                commit(self.run_dir, staged, self.manifest)  # checksums first, then the files, each whole
            if not self.quiet:
                done = round(20 * epoch / self.total)
                print(t("epoch {epoch:3d}/{total} [{bar}] train loss {train_loss:.4f}  val accuracy "
                        "{val_accuracy:.3f}{mark}", epoch=epoch, total=self.total, bar="#" * done + "." * (20 - done),
                        train_loss=train_loss, val_accuracy=row["val_accuracy"], mark=mark), flush=True)
            if stop:
                self.stopped_early = True
                if not self.quiet:
                    print(t("early stop: no better validation accuracy for {patience} epochs",
                            patience=self.patience), flush=True)
                run_context.request_stop()

    return Progress


def _stage_checkpoint(cell, path, append_dict=None):
    """Save ``cell`` under ``path``'s temporary name (:func:`commit` flushes it to disk); return that name."""
    import mindspore as ms

    staged = tmp_path(path)
    ms.save_checkpoint(cell, str(staged), append_dict=append_dict)
    return staged


@contextlib.contextmanager
def _scratch_cwd():
    """Run in a new temporary working directory: MindSpore writes into the current one (mixed precision O1
    rewrites the network into ./rewritten_network/, a failed graph compile leaves ./rank_0/)."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="capstone-") as scratch:
        os.chdir(scratch)
        try:
            yield
        finally:
            os.chdir(before)


def _finite_or_none(value):
    return value if isinstance(value, float) and math.isfinite(value) else None


def train(config, run_dir, quiet=False, resume_from=0, workers=1, rank=0, stop_after=None, figure=True,
          checksums=False):
    """Train (rank ``rank`` of ``workers``); rank 0 writes the run's files into ``run_dir`` (prepared by
    the caller) and the report, which is returned. ``resume_from`` continues from run_dir/last.ckpt;
    ``stop_after`` stops after that epoch as if interrupted (to rehearse a resume); ``figure=False``
    skips report.png; ``checksums`` keeps run_dir/checksums.sha256 (which the command line verifies on
    --resume). Nothing is written outside run_dir, and MindSpore's execution mode is given back."""
    import mindspore as ms

    run_dir = Path(run_dir).resolve()
    mode = ms.get_context("mode")  # the caller's (a notebook's kernel): given back, whatever the config says
    try:
        with _scratch_cwd():
            return _train(config, run_dir, quiet, resume_from, workers, rank, stop_after, figure, checksums)
    finally:
        ms.set_context(mode=mode)


def _resume_state(model, run_dir, resume_from):
    """The early-stop state and history saved in run_dir, loaded into ``model``; CkptDirError if they do not
    fit it."""
    saved = _load_checkpoint(run_dir / "last.ckpt")
    try:
        state = (float(saved.pop("best").asnumpy()), int(saved.pop("best_epoch").asnumpy()),
                 int(saved.pop("bad_epochs").asnumpy()), float(saved.pop("seconds").asnumpy()))
        saved.pop("epoch")
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as exc:
        raise CkptDirError(t("--resume {path}: last.ckpt holds no training state ({error}): start a new run",
                             path=run_dir, error=_first_line(exc))) from None
    _load_into(model.train_network, saved, run_dir / "last.ckpt")
    return state, _read_history(run_dir, resume_from)


def _load_into(cell, saved, path):
    """Load a checkpoint's parameters into ``cell``; CkptDirError if they are not exactly its parameters
    (checked here: MindSpore would log its own error lines first)."""
    import mindspore as ms

    params = cell.parameters_dict()
    missing = [name for name in params if name not in saved]
    unexpected = [name for name in saved if name not in params]
    if missing or unexpected:
        raise CkptDirError(t("--resume {path}: last.ckpt does not fit this model (missing {missing}, "
                             "unexpected {unexpected})", path=path.parent, missing=missing[:3],
                             unexpected=unexpected[:3]))
    for name, param in params.items():
        found, wanted = tuple(getattr(saved[name], "shape", ())), tuple(param.shape)
        if found != wanted or getattr(saved[name], "dtype", None) != param.dtype:
            raise CkptDirError(t("--resume {path}: {name} does not fit this model ({error})", path=path.parent,
                                 name=path.name, error=t("{param} has shape {found}, the model's has {wanted}",
                                                         param=name, found=found, wanted=wanted)))
    try:
        ms.load_param_into_net(cell, saved, strict_load=True)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise CkptDirError(t("--resume {path}: {name} does not fit this model ({error})", path=path.parent,
                             name=path.name, error=_first_line(exc))) from None


def _train(config, run_dir, quiet, resume_from, workers, rank, stop_after, figure, checksums):
    import mindspore as ms
    import yaml
    from mindspore.train import Model

    from capstone.model import count_parameters

    tr, run_dir, writer = config["train"], Path(run_dir), rank == 0
    ms.set_context(mode=ms.GRAPH_MODE if tr["mode"] == "graph" else ms.PYNATIVE_MODE)
    net, loss_fn, optimizer, train_set, val_set, splits = build(config, workers, rank, resume_from)
    model = Model(net, loss_fn, optimizer, metrics={"accuracy", "loss"})
    state, history = (float("-inf"), 0, 0, 0.0), []
    manifest = {} if checksums and writer else None
    if resume_from:
        state, history = _resume_state(model, run_dir, resume_from)
        if manifest is not None:
            manifest = verify(run_dir)
    elif writer:
        staged = stage_bytes(run_dir / "config.yaml", yaml.safe_dump(config, sort_keys=False).encode())
        commit(run_dir, {"config.yaml": staged}, manifest)
    progress = _progress_callback_class()(run_dir, tr["epochs"], tr["patience"], state, history, quiet, writer,
                                          workers, manifest)
    last_epoch = tr["epochs"] if stop_after is None else min(stop_after, tr["epochs"])
    progress.started = time.perf_counter()
    if resume_from < last_epoch:
        # dataset_sink_mode=False: sink mode is for Ascend/GPU and changes nothing on CPU (notebook 14)
        model.fit(last_epoch, train_set, val_set, callbacks=[progress], dataset_sink_mode=False,
                  initial_epoch=resume_from)
    seconds = progress.seconds()
    diverged = progress.diverged_at is not None
    report = {"test_accuracy": None, "test_loss": None}
    if (run_dir / "best.ckpt").is_file() and not diverged:
        _load_into(net, _load_checkpoint(run_dir / "best.ckpt"), run_dir / "best.ckpt")
        tx, ty = splits["test"]
        test_set = ms.dataset.NumpySlicesDataset({"x": tx, "y": ty}, shuffle=False).batch(len(tx))
        results = model.eval(test_set, dataset_sink_mode=False)
        report = {"test_accuracy": float(results["accuracy"]), "test_loss": float(results["loss"])}
    parameters = count_parameters(net)
    steps = progress.step_seconds
    report.update({
        "parameters": parameters, "train_seconds": seconds, "epochs_run": len(progress.history),
        "best_epoch": progress.best_epoch, "val_accuracy": _finite_or_none(progress.best),
        "stopped_early": progress.stopped_early,
        "interrupted": last_epoch < tr["epochs"] and not progress.stopped_early,
        "resumed_from_epoch": resume_from, "first_step_seconds": steps[0] if steps else None,
        "median_step_seconds": statistics.median(steps[1:]) if len(steps) > 1 else None,
        "fastest_step_seconds": min(steps[1:]) if len(steps) > 1 else None,
        "mode": tr["mode"], "amp": tr["amp"], "workers": workers, "diverged": diverged,
        "diverged_at_epoch": progress.diverged_at})
    report["train_steps"] = len(progress.history) * math.ceil(config["data"]["n_train"] / tr["batch_size"])
    report["eligible"] = eligible(config)
    report["score"] = score(report["test_accuracy"], parameters, report["train_steps"]) if report["eligible"] else 0.0
    report["passed"] = report["score"] > 0
    report["config"], report["versions"] = config, versions()
    # what capstone.score checks: the checkpoint scored is the one this run kept
    report["fingerprint"] = sha256(run_dir / "best.ckpt") if (run_dir / "best.ckpt").is_file() else None
    report = {key: _finite_or_none(v) if isinstance(v, float) else v for key, v in report.items()}
    if writer:
        write_atomic(run_dir / "report.json", json.dumps(report, indent=1, allow_nan=False))
        if report["test_accuracy"] is not None and figure:
            from capstone.figure import save_report_figure

            save_report_figure(net, splits["test"], progress.history, tmp_path(run_dir / "report.png"))
            commit(run_dir, {"report.png": tmp_path(run_dir / "report.png")})
    return report


def _worker_setup():
    """Inside msrun: join the cluster and switch on data parallelism (before any Model is built)."""
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    ms.set_device("CPU")
    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    return get_group_size(), get_rank()


def _check_workers(config, workers, nodes):
    """Data parallelism must split every batch evenly, so that it equals one process exactly."""
    batch_size, n = config["train"]["batch_size"], config["data"]["n_train"]
    if workers % nodes:
        raise ValueError(t("--workers ({workers}) must be a multiple of --nodes ({nodes})", workers=workers,
                           nodes=nodes))
    last = n % batch_size or batch_size
    if batch_size % workers or last % workers:
        raise ValueError(t("with --workers {workers}, train.batch_size ({batch_size}) and the last batch ({last} of "
                           "data.n_train {n}) must divide by {workers}, so that every worker gets an equal share "
                           "of each batch", workers=workers, batch_size=batch_size, last=last, n=n))


def _launch(args, run_dir, workers, nodes, quiet):
    from course_utils.launcher import LaunchError, launch

    script_args = ["--_worker", "--ckpt-dir", str(Path(run_dir).resolve())] + (["--quiet"] if quiet else [])
    for option in ("config", "epochs", "mode", "amp", "stop_after"):
        value = getattr(args, option)
        if value is not None:
            script_args += [f"--{option.replace('_', '-')}", str(Path(value).resolve()) if option == "config" else
                            str(value)]
    if args.resume:
        script_args += ["--resume", str(Path(run_dir).resolve())]
    try:
        run = launch(Path(__file__).resolve(), workers, script_args=script_args, nodes=nodes, timeout=900,
                     cluster_time_out=60)
    except LaunchError as exc:
        print(t("python -m capstone.train: the msrun job failed:\n{error}", error=exc), file=sys.stderr)
        return None
    if not quiet:
        print("\n".join(run.printed(0)))
    return json.loads((Path(run_dir) / "report.json").read_text())


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors are one line (exit code 2) like the script's own."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _contradiction(args):
    """The first pair of options that do not go together, as a message; None if there is none."""
    if args.rubric:
        given = [f"--{name.replace('_', '-')}" for name, value in vars(args).items()
                 if name != "rubric" and value not in (None, False)]
        return t("--rubric prints the rules and takes no other option, got {options}",
                 options=" ".join(given)) if given else None
    if args.resume is not None:
        given = [option for option, value in (("--config", args.config), ("--epochs", args.epochs),
                                              ("--mode", args.mode), ("--amp", args.amp),
                                              ("--overwrite", args.overwrite or None)) if value is not None]
        if given:
            return t("--resume continues with the configuration the run started with (DIR/config.yaml): "
                     "{option} cannot be combined with it", option=given[0])
    if args.nodes is not None and args.nodes != 1 and args.workers is None:
        return t("--nodes {nodes} needs --workers N (N a multiple of {nodes}): the workers are shared "
                 "between the nodes", nodes=args.nodes)
    return None


def main(argv=None):
    from capstone.config import AMP_LEVELS, DEFAULT_PATH, MODES, load_config

    parser = _Parser(prog="python -m capstone.train", description=t(USAGE),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt-dir", help=t("the run directory: checkpoints, history, report"))
    parser.add_argument("--resume", metavar="DIR", help=t("continue the interrupted run in DIR"))
    parser.add_argument("--config", help=t("YAML configuration (default: {name} of the project)",
                                           name=DEFAULT_PATH.name))
    parser.add_argument("--epochs", type=int, help=t("override train.epochs"))
    parser.add_argument("--mode", choices=MODES, help=t("override train.mode"))
    parser.add_argument("--amp", choices=AMP_LEVELS, help=t("override train.amp (mixed precision level)"))
    parser.add_argument("--workers", type=int, help=t("data-parallel workers (msrun for N > 1)"))
    parser.add_argument("--nodes", type=int, help=t("with --workers: rehearse this many machines"))
    parser.add_argument("--stop-after", type=int, metavar="EPOCH",
                        help=t("stop after this epoch, as if interrupted"))
    parser.add_argument("--overwrite", action="store_true", help=t("replace the run already in --ckpt-dir"))
    parser.add_argument("--quiet", action="store_true", help=t("print only the final lines"))
    parser.add_argument("--rubric", action="store_true", help=t("print the challenge's rules and exit"))
    parser.add_argument("--_worker", action="store_true", help=argparse.SUPPRESS)  # set by the msrun launch
    args = parser.parse_args(argv)

    def fail(code, message):
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
        return code

    if args._worker:
        if "MS_ROLE" not in os.environ:
            return fail(EXIT_USAGE, t("--_worker is set by the msrun launch of --workers N, not by hand"))
        return _worker_main(args, load_config)
    contradiction = _contradiction(args)
    if contradiction:
        return fail(EXIT_USAGE, contradiction)
    if args.rubric:
        print(t(RUBRIC, threshold=THRESHOLD, ref_parameters=REF_PARAMETERS, ref_steps=REF_STEPS), end="")
        return EXIT_OK
    if (args.ckpt_dir is None) == (args.resume is None):
        return fail(EXIT_USAGE, t("give either --ckpt-dir DIR (a new run) or --resume DIR (continue one)"))
    workers, nodes = args.workers or 1, args.nodes or 1
    for option, value in (("workers", args.workers), ("nodes", args.nodes)):
        if value is not None and not 1 <= value <= 32:
            return fail(EXIT_USAGE, t("--{option} must be from 1 to 32, got {value}", option=option, value=value))
    if args.stop_after is not None and args.stop_after < 1:
        return fail(EXIT_USAGE, t("--stop-after must be an epoch >= 1, got {value}", value=args.stop_after))
    run_dir = args.resume or args.ckpt_dir
    overrides = {f"train.{key}": getattr(args, key) for key in ("epochs", "mode", "amp")
                 if getattr(args, key) is not None}
    config = None
    if not args.resume:  # a new run: its configuration is checked before anything is written
        try:
            config = load_config(args.config or DEFAULT_PATH, overrides)
            _check_run_options(config, workers, nodes, args.stop_after, 0)
        except (FileNotFoundError, ValueError, TypeError) as exc:
            return fail(EXIT_USAGE, exc)
    try:
        if args.resume:
            if not Path(run_dir).is_dir():
                raise CkptDirError(t("--resume {path}: no such directory", path=run_dir))
            lock = RunLock(run_dir)
        else:
            _, lock = prepare_ckpt_dir(run_dir, args.overwrite, lock=True)
    except RunDirBusy as exc:
        return fail(EXIT_BUSY, exc)
    except CkptDirError as exc:
        return fail(EXIT_CKPT_DIR, exc)
    with lock:
        return _run(args, run_dir, config, workers, nodes, fail, load_config)


def _check_run_options(config, workers, nodes, stop_after, resume_from, run_dir=None):
    """Options that must fit the configuration (ValueError, exit code 2)."""
    epochs = config["train"]["epochs"]
    if stop_after is not None and stop_after > epochs:
        raise ValueError(t("--stop-after {value} is beyond the run's last epoch (train.epochs: {epochs})",
                           value=stop_after, epochs=epochs))
    if stop_after is not None and stop_after <= resume_from:
        raise ValueError(t("--stop-after {value}: the run in {path} already reached epoch {epoch}; give a later "
                           "epoch", value=stop_after, path=run_dir, epoch=resume_from))
    if workers > 1 or nodes > 1:
        _check_workers(config, workers, nodes)


def _run(args, run_dir, config, workers, nodes, fail, load_config):
    """The part of main() that holds DIR's lock: resume checks, training, the final lines."""
    resume_from = 0
    if args.resume:
        try:
            resume_from = resumable(run_dir)
            config = load_config(Path(run_dir) / "config.yaml")
        except CkptDirError as exc:
            return fail(EXIT_CKPT_DIR, exc)
        except (FileNotFoundError, ValueError, TypeError) as exc:
            return fail(EXIT_CKPT_DIR, t("--resume {path}: config.yaml is damaged ({error}): start a new run",
                                         path=run_dir, error=exc))
        try:
            _check_run_options(config, workers, nodes, args.stop_after, resume_from, run_dir)
        except ValueError as exc:
            return fail(EXIT_USAGE, exc)
    if workers > 1:
        report = _launch(args, run_dir, workers, nodes, args.quiet)
        if report is None:
            return EXIT_BUG
    else:
        try:
            report = train(config, run_dir, quiet=args.quiet, resume_from=resume_from, stop_after=args.stop_after,
                           checksums=True)
        except CkptDirError as exc:
            return fail(EXIT_CKPT_DIR, exc)
    if report["diverged"]:
        return fail(EXIT_DIVERGED, t("training diverged at epoch {epoch}: the loss is NaN or inf. Lower "
                                     "train.learning_rate (now {lr:g}). Report: {report}",
                                     epoch=report["diverged_at_epoch"], lr=config["train"]["learning_rate"],
                                     report=Path(run_dir) / "report.json"))
    if report["interrupted"]:
        print(t("stopped after epoch {epoch} as asked: continue with --resume {path}", epoch=report["epochs_run"],
                path=run_dir))
        return EXIT_OK
    gate = (t("passed the {threshold:.2f} gate", threshold=THRESHOLD) if report["passed"]
            else t("not eligible: a data key differs from the rules' defaults") if not report["eligible"]
            else t("below the {threshold:.2f} gate", threshold=THRESHOLD))
    print(t("done: held-out accuracy {accuracy:.3f} (best epoch {best_epoch}), {parameters} parameters, "
            "{seconds:.1f} s of training; score {score:.1f} ({gate}; --rubric explains). Report: {report}",
            accuracy=report["test_accuracy"], best_epoch=report["best_epoch"], parameters=report["parameters"],
            seconds=report["train_seconds"], score=report["score"], gate=gate, report=Path(run_dir) / "report.json"))
    return EXIT_OK


def _worker_main(args, load_config):
    """One rank of an msrun job: the parent checked the options and locked and prepared the directory."""
    from capstone.config import DEFAULT_PATH

    run_dir = args.resume or args.ckpt_dir
    overrides = {f"train.{key}": getattr(args, key) for key in ("epochs", "mode", "amp")
                 if getattr(args, key) is not None}
    resume_from = resumable(run_dir) if args.resume else 0
    config = load_config(Path(run_dir) / "config.yaml" if args.resume else (args.config or DEFAULT_PATH), overrides)
    workers, rank = _worker_setup()
    train(config, run_dir, quiet=args.quiet, resume_from=resume_from, workers=workers, rank=rank,
          stop_after=args.stop_after, checksums=True)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
