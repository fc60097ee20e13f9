"""Train the capstone classifier from the command line: USAGE below (what --help prints) gives the options,
the files a run writes and the exit codes."""

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file by msrun: make `capstone` and `course_utils` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course_utils.messages import lazy, t  # noqa: E402 (after the path above; it imports nothing heavy)

USAGE = lazy("""Train the capstone classifier from the command line.

    python -m capstone.train --ckpt-dir DIR [--config FILE] [--epochs N] [--mode graph|pynative]
                             [--amp O0|O1|O2|O3] [--workers N [--nodes K]] [--overwrite] [--quiet]
    python -m capstone.train --resume DIR [--workers N [--nodes K]]   # continue an interrupted run exactly
    python -m capstone.train --rubric                                 # the challenge's rules

DIR must be new, empty, or hold an earlier run of this script (replaced only with --overwrite). A run
writes there: config.yaml (what it trained with), last.ckpt (weights, optimizer state and epoch, after every
epoch), best.ckpt (the epoch with the best validation accuracy), history.json, report.json (held-out
accuracy and loss, time, parameters, score) and report.png (decision regions and curves). --resume DIR
continues from last.ckpt with DIR's config.yaml and ends bitwise equal to a run never interrupted.
--workers N > 1 runs the same training data-parallel with msrun (N workers, each batch split between them);
--nodes K rehearses K machines on this one (K msrun invocations, --node_rank 0 .. K-1).

Exit codes:
  0  training finished: the files above are in DIR
  1  unexpected error (a bug: please report the traceback)
  2  bad command line or configuration: one line names the option or key, what it must be and what
     was found; nothing is written
  3  DIR refused: empty path, not a directory, holds another run (without --overwrite) or other
     files, cannot be created, or (--resume) holds no run to resume; nothing is written
  4  training diverged (the loss became NaN or inf): training stops, report.json is still written
     (valid JSON, with "diverged": true and null for non-finite numbers)
""")

os.environ.setdefault("GLOG_v", "3")  # before importing mindspore: keep the console readable

EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_CKPT_DIR, EXIT_DIVERGED = 0, 1, 2, 3, 4
# What a run writes into its directory (ModelCheckpoint is not used: one last.ckpt holds the state).
_RUN_FILE = re.compile(r"^(best\.ckpt|last\.ckpt|config\.yaml|history\.json|report\.json|report\.png)$")

# The scored challenge (--rubric prints it; report.json carries the score).
THRESHOLD = 0.95  # held-out (test) accuracy a run must reach to score at all
REF_PARAMETERS, REF_SECONDS = 1251, 5.0  # the default configuration: 1251 parameters, about 5 s here
RUBRIC = lazy("""The capstone challenge
  1. Accuracy gate: held-out test accuracy (report.json "test_accuracy") must be >= {threshold:.2f};
     below it the score is 0.
  2. Then smaller and faster wins: score = 100 * sqrt({ref_parameters} / parameters) * sqrt({ref_seconds:g} /
     train_seconds). The default configuration scores about 100; halving the parameters or the training
     time multiplies the score by 1.41.
  3. Rules: change only the configuration file (any key), train with `python -m capstone.train --config
     FILE --ckpt-dir DIR` on the machine everyone uses, and hand in DIR/report.json. The data keys
     (data.*) must stay at their defaults: the held-out set is the same for everyone.
""")  # printed by --rubric with THRESHOLD, REF_PARAMETERS and REF_SECONDS filled in


class CkptDirError(ValueError):
    """The run directory cannot be used (exit code 3)."""


def score(test_accuracy, parameters, train_seconds):
    """The challenge's score (see RUBRIC): 0 below the accuracy gate."""
    if not (isinstance(test_accuracy, float) and test_accuracy >= THRESHOLD) or train_seconds <= 0:
        return 0.0
    return round(100.0 * math.sqrt(REF_PARAMETERS / parameters) * math.sqrt(REF_SECONDS / train_seconds), 1)


def prepare_ckpt_dir(ckpt_dir, overwrite=False):
    """Check ``ckpt_dir`` and return it as a Path: created if new; an earlier run's files deleted only
    with ``overwrite``. Raises CkptDirError saying why a directory cannot be used."""
    if not isinstance(ckpt_dir, (str, Path)) or not str(ckpt_dir).strip():
        raise CkptDirError(t("--ckpt-dir must name a directory, got {ckpt_dir!r} (an empty path would write "
                             "into the current directory)", ckpt_dir=ckpt_dir))
    path = Path(ckpt_dir)
    if path.exists() and not path.is_dir():
        raise CkptDirError(t("--ckpt-dir {path} is a file, not a directory", path=path))
    if path.is_dir():
        names = sorted(entry.name for entry in path.iterdir())
        others = [name for name in names if not _RUN_FILE.match(name)]
        if others:
            raise CkptDirError(t("--ckpt-dir {path} holds files that are not from a capstone run ({files}): "
                                 "choose a new or empty directory", path=path,
                                 files=", ".join(others[:3]) + (", ..." if len(others) > 3 else "")))
        if names and not overwrite:
            raise CkptDirError(t("--ckpt-dir {path} already holds a run: pass --overwrite to replace it, "
                                 "--resume {path} to continue it, or choose a new directory", path=path))
        for name in names:
            (path / name).unlink()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise CkptDirError(t("cannot create --ckpt-dir {path}: {error}", path=path, error=exc)) from None
    return path


def resumable(run_dir):
    """The epoch to resume ``run_dir`` from; raises CkptDirError if it holds no run to resume."""
    path = Path(run_dir)
    if not path.is_dir():
        raise CkptDirError(t("--resume {path}: no such directory", path=path))
    for name in ("config.yaml", "last.ckpt", "history.json"):
        if not (path / name).is_file():
            raise CkptDirError(t("--resume {path}: it holds no {name}, so no run to resume (start one with "
                                 "--ckpt-dir)", path=path, name=name))
    import mindspore as ms

    try:
        return int(ms.load_checkpoint(str(path / "last.ckpt"), choice_func=lambda name: name == "epoch")["epoch"])
    except (ValueError, RuntimeError, KeyError, OSError) as exc:
        raise CkptDirError(t("--resume {path}: last.ckpt cannot be read ({error})", path=path,
                             error=str(exc).splitlines()[0])) from None


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

        def __init__(self, run_dir, total_epochs, patience, state, history, quiet, writer):
            super().__init__()
            self.run_dir, self.total, self.patience = run_dir, total_epochs, patience
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
            import mindspore as ms

            cb = run_context.original_args()
            epoch, results = cb.cur_epoch_num, cb.eval_results
            if self.diverged_at is not None:
                return
            train_loss = statistics.fmean(self.losses) if self.losses else float("nan")
            self.losses = []
            row = {"epoch": epoch, "train_loss": train_loss, "val_loss": float(results["loss"]),
                   "val_accuracy": float(results["accuracy"])}
            self.history.append(row)
            mark = ""
            if row["val_accuracy"] > self.best:
                self.best, self.best_epoch, self.bad_epochs = row["val_accuracy"], epoch, 0
                if self.writer:
                    ms.save_checkpoint(cb.network, str(self.run_dir / "best.ckpt"))
                mark = t(" best")
            else:
                self.bad_epochs += 1
            stop = self.patience and self.bad_epochs >= self.patience and epoch < self.total
            if self.writer:  # the whole state, so that a resumed run goes on exactly as this one would
                state = {"epoch": epoch, "best": self.best, "best_epoch": self.best_epoch,
                         "bad_epochs": self.bad_epochs, "seconds": self.seconds()}
                ms.save_checkpoint(cb.train_network, str(self.run_dir / "last.ckpt"), append_dict=state)
                (self.run_dir / "history.json").write_text(json.dumps(self.history, indent=1))
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


def _finite_or_none(value):
    return value if isinstance(value, float) and math.isfinite(value) else None


def train(config, run_dir, quiet=False, resume_from=0, workers=1, rank=0, stop_after=None, figure=True):
    """Train (rank ``rank`` of ``workers``); rank 0 writes the run's files into ``run_dir`` (prepared by
    the caller) and the report, which is returned. ``resume_from`` continues from run_dir/last.ckpt;
    ``stop_after`` stops after that epoch as if interrupted (to rehearse a resume); ``figure=False``
    skips report.png."""
    import mindspore as ms
    import yaml
    from mindspore.train import Model

    from capstone.model import count_parameters

    tr, run_dir, writer = config["train"], Path(run_dir), rank == 0
    ms.set_context(mode=ms.GRAPH_MODE if tr["mode"] == "graph" else ms.PYNATIVE_MODE)
    net, loss_fn, optimizer, train_set, val_set, splits = build(config, workers, rank, resume_from)
    model = Model(net, loss_fn, optimizer, metrics={"accuracy", "loss"})
    state, history = (float("-inf"), 0, 0, 0.0), []
    if resume_from:
        saved = ms.load_checkpoint(str(run_dir / "last.ckpt"))
        state = (float(saved.pop("best").asnumpy()), int(saved.pop("best_epoch").asnumpy()),
                 int(saved.pop("bad_epochs").asnumpy()), float(saved.pop("seconds").asnumpy()))
        saved.pop("epoch")
        not_loaded, _ = ms.load_param_into_net(model.train_network, saved)
        if not_loaded:
            raise CkptDirError(t("--resume {path}: last.ckpt does not fit this model (missing {missing})",
                                 path=run_dir, missing=not_loaded[:3]))
        history = [row for row in json.loads((run_dir / "history.json").read_text()) if row["epoch"] <= resume_from]
    elif writer:
        (run_dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    progress = _progress_callback_class()(run_dir, tr["epochs"], tr["patience"], state, history, quiet, writer)
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
        best = ms.load_checkpoint(str(run_dir / "best.ckpt"))
        ms.load_param_into_net(net, best)
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
    report["score"] = score(report["test_accuracy"], parameters, seconds)
    report["passed"] = report["score"] > 0
    report = {key: _finite_or_none(v) if isinstance(v, float) else v for key, v in report.items()}
    if writer:
        (run_dir / "report.json").write_text(json.dumps(report, indent=1, allow_nan=False))
        if report["test_accuracy"] is not None and figure:
            from capstone.figure import save_report_figure

            save_report_figure(net, splits["test"], progress.history, run_dir / "report.png")
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


def main(argv=None):
    from capstone.config import AMP_LEVELS, DEFAULT_PATH, MODES, load_config

    parser = argparse.ArgumentParser(prog="python -m capstone.train", description=t(USAGE),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt-dir", help=t("the run directory: checkpoints, history, report"))
    parser.add_argument("--resume", metavar="DIR", help=t("continue the interrupted run in DIR"))
    parser.add_argument("--config", help=t("YAML configuration (default: {name} of the project)",
                                           name=DEFAULT_PATH.name))
    parser.add_argument("--epochs", type=int, help=t("override train.epochs"))
    parser.add_argument("--mode", choices=MODES, help=t("override train.mode"))
    parser.add_argument("--amp", choices=AMP_LEVELS, help=t("override train.amp (mixed precision level)"))
    parser.add_argument("--workers", type=int, default=1, help=t("data-parallel workers (msrun for N > 1)"))
    parser.add_argument("--nodes", type=int, default=1, help=t("with --workers: rehearse this many machines"))
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

    if args.rubric:
        print(t(RUBRIC, threshold=THRESHOLD, ref_parameters=REF_PARAMETERS, ref_seconds=REF_SECONDS), end="")
        return EXIT_OK
    if (args.ckpt_dir is None) == (args.resume is None) and not args._worker:
        return fail(EXIT_USAGE, t("give either --ckpt-dir DIR (a new run) or --resume DIR (continue one)"))
    for option in ("workers", "nodes"):
        if not 1 <= getattr(args, option) <= 32:
            return fail(EXIT_USAGE, t("--{option} must be from 1 to 32, got {value}", option=option,
                                      value=getattr(args, option)))
    if args.stop_after is not None and args.stop_after < 1:
        return fail(EXIT_USAGE, t("--stop-after must be an epoch >= 1, got {value}", value=args.stop_after))
    run_dir = args.resume or args.ckpt_dir
    overrides = {f"train.{key}": getattr(args, key) for key in ("epochs", "mode", "amp")
                 if getattr(args, key) is not None}
    resume_from = 0
    try:
        if args.resume:
            resume_from = resumable(run_dir)
        config_path = Path(run_dir) / "config.yaml" if args.resume else (args.config or DEFAULT_PATH)
    except CkptDirError as exc:
        return fail(EXIT_CKPT_DIR, exc)
    try:
        config = load_config(config_path, overrides)
        if args.workers > 1 or args._worker:
            _check_workers(config, args.workers, args.nodes)
    except (FileNotFoundError, ValueError, TypeError) as exc:
        return fail(EXIT_USAGE, exc)
    if args._worker:  # one rank of an msrun job: the parent prepared the directory
        workers, rank = _worker_setup()
        train(config, run_dir, quiet=args.quiet, resume_from=resume_from, workers=workers, rank=rank,
              stop_after=args.stop_after)
        return EXIT_OK
    try:
        if not args.resume:
            prepare_ckpt_dir(run_dir, args.overwrite)
    except CkptDirError as exc:
        return fail(EXIT_CKPT_DIR, exc)
    if args.workers > 1:
        report = _launch(args, run_dir, args.workers, args.nodes, args.quiet)
        if report is None:
            return EXIT_BUG
    else:
        try:
            report = train(config, run_dir, quiet=args.quiet, resume_from=resume_from, stop_after=args.stop_after)
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
            else t("below the {threshold:.2f} gate", threshold=THRESHOLD))
    print(t("done: held-out accuracy {accuracy:.3f} (best epoch {best_epoch}), {parameters} parameters, "
            "{seconds:.1f} s of training; score {score:.1f} ({gate}; --rubric explains). Report: {report}",
            accuracy=report["test_accuracy"], best_epoch=report["best_epoch"], parameters=report["parameters"],
            seconds=report["train_seconds"], score=report["score"], gate=gate, report=Path(run_dir) / "report.json"))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
