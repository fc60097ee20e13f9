"""Train the capstone model from the command line; checkpoints go where --ckpt-dir says.

    python -m capstone.train --ckpt-dir DIR [--config FILE] [--epochs N] [--overwrite] [--quiet]

DIR must be new, empty, or hold an earlier run of this script. An earlier run is never replaced
silently: pass --overwrite to delete its checkpoints and summary.json first, or give each run its own
directory. A directory that holds anything else is refused, so a run cannot mix its files with others.

Exit codes:
  0  training finished: best.ckpt, the last checkpoints and summary.json are in DIR
  1  unexpected error (a bug: please report the traceback)
  2  bad command line or configuration: one line names the option or key, what it must be and what
     was found; nothing is written
  3  DIR refused: empty path, not a directory, holds another run (without --overwrite) or other
     files, or cannot be created; nothing is written
  4  training diverged (the loss or validation MSE became NaN or inf): training stops, summary.json is
     still written (valid JSON, with "diverged": true and null for non-finite numbers)
"""

import argparse
import json
import math
import os
import re
import sys
import warnings
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")  # before importing mindspore: keep the console readable

EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_CKPT_DIR, EXIT_DIVERGED = 0, 1, 2, 3, 4
# What a run writes into its directory: best.ckpt, summary.json, and ModelCheckpoint's files
# (capstone-<epoch>_<step>.ckpt, capstone-graph.meta; capstone_1-... when names are taken).
_RUN_FILE = re.compile(r"^(best\.ckpt|summary\.json|capstone(_\d+)?-.+\.(ckpt|meta))$")


class CkptDirError(ValueError):
    """The checkpoint directory cannot be used (exit code 3)."""


def prepare_ckpt_dir(ckpt_dir, overwrite=False):
    """Check ``ckpt_dir`` and return it as a Path: created if new; an earlier run's files deleted only
    with ``overwrite``. Raises CkptDirError saying why a directory cannot be used."""
    if not isinstance(ckpt_dir, (str, Path)) or not str(ckpt_dir).strip():
        raise CkptDirError(f"--ckpt-dir must name a directory, got {ckpt_dir!r} (an empty path would write "
                           f"into the current directory)")
    path = Path(ckpt_dir)
    if path.exists() and not path.is_dir():
        raise CkptDirError(f"--ckpt-dir {path} is a file, not a directory")
    if path.is_dir():
        names = sorted(entry.name for entry in path.iterdir())
        others = [name for name in names if not _RUN_FILE.match(name)]
        if others:
            raise CkptDirError(f"--ckpt-dir {path} holds files that are not from a capstone run "
                               f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}): choose a new or "
                               f"empty directory")
        if names and not overwrite:
            raise CkptDirError(f"--ckpt-dir {path} already holds a run ({_describe_run(path)}): pass --overwrite "
                               f"to replace it, or choose a new directory")
        for name in names:
            (path / name).unlink()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise CkptDirError(f"cannot create --ckpt-dir {path}: {exc}") from None
    return path


def _describe_run(path):
    try:
        best = json.loads((path / "summary.json").read_text())["best_val_mse"]
        return f"best validation MSE {best:.5f}" if isinstance(best, float) else "it diverged"
    except (OSError, ValueError, KeyError, TypeError):
        return "its checkpoints"


def build(config):
    """Data sets, model, loss and optimizer from a configuration (validated here)."""
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn

    from capstone.config import validate
    from capstone.data import make_sine_data
    from capstone.model import MLP

    config = validate(config)
    d, t = config["data"], config["train"]
    ms.set_seed(t["seed"])
    x, y = make_sine_data(d["n_train"], d["noise"], d["seed"])
    vx, vy = make_sine_data(d["n_val"], d["noise"], d["seed"] + 1)
    train_set = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(t["batch_size"])
    val_set = ds.NumpySlicesDataset({"x": vx, "y": vy}, shuffle=False).batch(d["n_val"])
    net = MLP(config["model"]["hidden"])
    params, lr, wd = net.trainable_params(), t["learning_rate"], t["weight_decay"]
    optimizer = {"adam": lambda: nn.Adam(params, lr, weight_decay=wd),
                 "momentum": lambda: nn.Momentum(params, lr, 0.9, weight_decay=wd),
                 "sgd": lambda: nn.SGD(params, lr, weight_decay=wd)}[t["optimizer"]]()
    return net, nn.MSELoss(), optimizer, train_set, val_set


class Progress:
    """A callback that prints one line per epoch group, keeps the best validation loss, and stops training
    when the loss or the validation MSE is no longer finite (``diverged_at`` is then that epoch)."""

    def __new__(cls, *args, **kwargs):  # subclass MindSpore's Callback lazily (import cost)
        from mindspore.train import Callback

        class _Progress(Callback):
            def __init__(self, model, val_set, ckpt_dir, every, quiet):
                super().__init__()
                self.model, self.val_set, self.ckpt_dir = model, val_set, Path(ckpt_dir)
                self.every, self.quiet, self.best, self.history = every, quiet, float("inf"), []
                self.diverged_at = None

            def on_train_epoch_end(self, run_context):
                import mindspore as ms

                cb = run_context.original_args()
                epoch, total = cb.cur_epoch_num, cb.epoch_num
                train_loss = float(cb.net_outputs.asnumpy())
                if epoch % self.every and epoch != total and math.isfinite(train_loss):
                    return
                val = float(self.model.eval(self.val_set, dataset_sink_mode=False)["mse"])
                self.history.append({"epoch": epoch, "train_loss": train_loss, "val_mse": val})
                mark = ""
                if val < self.best:
                    self.best = val
                    ms.save_checkpoint(cb.network, str(self.ckpt_dir / "best.ckpt"))
                    mark = "  (best, saved best.ckpt)"
                if not self.quiet:
                    print(f"epoch {epoch:4d}/{total}  train loss {train_loss:.5f}  val mse {val:.5f}{mark}",
                          flush=True)
                if not (math.isfinite(train_loss) and math.isfinite(val)):
                    self.diverged_at = epoch
                    run_context.request_stop()

        return _Progress(*args, **kwargs)


def _finite_or_none(value):
    return value if isinstance(value, float) and math.isfinite(value) else None


def train(config, ckpt_dir, quiet=False, overwrite=False):
    """Train; write checkpoints and summary.json into ``ckpt_dir`` (see ``prepare_ckpt_dir``); return the
    summary. ``summary["diverged"]`` is True when the loss became NaN or inf (training then stops)."""
    import mindspore as ms
    from mindspore.train import CheckpointConfig, Model, ModelCheckpoint

    from capstone.config import validate

    config = validate(config)
    ckpt_dir = prepare_ckpt_dir(ckpt_dir, overwrite)
    t = config["train"]
    ms.set_context(mode=ms.GRAPH_MODE if t["mode"] == "graph" else ms.PYNATIVE_MODE)
    net, loss_fn, optimizer, train_set, val_set = build(config)
    model = Model(net, loss_fn, optimizer, metrics={"mse"})
    steps_per_epoch = train_set.get_dataset_size()
    every = max(1, t["epochs"] // 10)
    progress = Progress(model, val_set, ckpt_dir, every, quiet)
    keep = ModelCheckpoint(prefix="capstone", directory=str(ckpt_dir),
                           config=CheckpointConfig(save_checkpoint_steps=steps_per_epoch * every,
                                                   keep_checkpoint_max=t["keep_checkpoints"]))
    with warnings.catch_warnings():  # numpy overflow in MindSpore's MSE metric on a diverged net: reported below
        warnings.filterwarnings("ignore", "(overflow|invalid value) encountered", RuntimeWarning)
        model.train(t["epochs"], train_set, callbacks=[progress, keep], dataset_sink_mode=False)
    history = [{key: _finite_or_none(v) if key != "epoch" else v for key, v in row.items()}
               for row in progress.history]
    summary = {"best_val_mse": _finite_or_none(progress.best), "history": history,
               "checkpoints": sorted(p.name for p in ckpt_dir.glob("*.ckpt")),
               "diverged": progress.diverged_at is not None, "diverged_at_epoch": progress.diverged_at}
    (ckpt_dir / "summary.json").write_text(json.dumps(summary, indent=1, allow_nan=False))
    return summary


def main(argv=None):
    from capstone.config import DEFAULT_PATH, load_config

    parser = argparse.ArgumentParser(prog="python -m capstone.train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt-dir", required=True, help="where checkpoints and summary.json are written")
    parser.add_argument("--config", default=str(DEFAULT_PATH), help="YAML configuration (default: %(default)s)")
    parser.add_argument("--epochs", type=int, help="override train.epochs")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the run already in --ckpt-dir (its checkpoints and summary.json)")
    parser.add_argument("--quiet", action="store_true", help="print only the final line")
    args = parser.parse_args(argv)

    def fail(code, message):
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
        return code

    try:
        overrides = {"train.epochs": args.epochs} if args.epochs is not None else {}
        config = load_config(args.config, overrides)
    except (FileNotFoundError, ValueError, TypeError) as exc:
        return fail(EXIT_USAGE, exc)
    try:
        summary = train(config, args.ckpt_dir, quiet=args.quiet, overwrite=args.overwrite)
    except CkptDirError as exc:
        return fail(EXIT_CKPT_DIR, exc)
    if summary["diverged"]:
        best = summary["best_val_mse"]
        kept = f"; best.ckpt keeps the best epoch before that (MSE {best:.5f})" if best is not None else ""
        return fail(EXIT_DIVERGED, f"training diverged at epoch {summary['diverged_at_epoch']}: the loss or the "
                                   f"validation MSE is NaN or inf. Lower train.learning_rate (now "
                                   f"{config['train']['learning_rate']:g}){kept}. "
                                   f"Summary: {Path(args.ckpt_dir) / 'summary.json'}")
    print(f"done: best validation MSE {summary['best_val_mse']:.5f}; checkpoints in {args.ckpt_dir}: "
          f"{', '.join(summary['checkpoints'])}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
