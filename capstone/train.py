"""Train the capstone model from the command line; checkpoints go where --ckpt-dir says.

    python -m capstone.train --ckpt-dir DIR [--config FILE] [--epochs N] [--quiet]
"""

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")  # before importing mindspore: keep the console readable


def build(config):
    """Data sets, model, loss and optimizer from a validated configuration."""
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn

    from capstone.data import make_sine_data
    from capstone.model import MLP

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
    """A callback that prints one line per epoch group and keeps the best validation loss."""

    def __new__(cls, *args, **kwargs):  # subclass MindSpore's Callback lazily (import cost)
        from mindspore.train import Callback

        class _Progress(Callback):
            def __init__(self, model, val_set, ckpt_dir, every, quiet):
                super().__init__()
                self.model, self.val_set, self.ckpt_dir = model, val_set, Path(ckpt_dir)
                self.every, self.quiet, self.best, self.history = every, quiet, float("inf"), []

            def on_train_epoch_end(self, run_context):
                import mindspore as ms

                cb = run_context.original_args()
                epoch, total = cb.cur_epoch_num, cb.epoch_num
                if epoch % self.every and epoch != total:
                    return
                val = self.model.eval(self.val_set, dataset_sink_mode=False)["mse"]
                train_loss = float(cb.net_outputs.asnumpy())
                self.history.append({"epoch": epoch, "train_loss": train_loss, "val_mse": val})
                mark = ""
                if val < self.best:
                    self.best = val
                    ms.save_checkpoint(cb.network, str(self.ckpt_dir / "best.ckpt"))
                    mark = "  (best, saved best.ckpt)"
                if not self.quiet:
                    print(f"epoch {epoch:4d}/{total}  train loss {train_loss:.5f}  val mse {val:.5f}{mark}",
                          flush=True)

        return _Progress(*args, **kwargs)


def train(config, ckpt_dir, quiet=False):
    import mindspore as ms
    from mindspore.train import CheckpointConfig, Model, ModelCheckpoint

    ckpt_dir = Path(ckpt_dir)
    ckpt_dir.mkdir(parents=True, exist_ok=True)
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
    model.train(t["epochs"], train_set, callbacks=[progress, keep], dataset_sink_mode=False)
    summary = {"best_val_mse": progress.best, "history": progress.history,
               "checkpoints": sorted(p.name for p in ckpt_dir.glob("*.ckpt"))}
    (ckpt_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main(argv=None):
    from capstone.config import DEFAULT_PATH, load_config

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt-dir", required=True, help="where checkpoints and summary.json are written")
    parser.add_argument("--config", default=str(DEFAULT_PATH), help="YAML configuration (default: %(default)s)")
    parser.add_argument("--epochs", type=int, help="override train.epochs")
    parser.add_argument("--quiet", action="store_true", help="print only the final line")
    args = parser.parse_args(argv)
    try:
        overrides = {"train.epochs": args.epochs} if args.epochs is not None else {}
        config = load_config(args.config, overrides)
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    summary = train(config, args.ckpt_dir, quiet=args.quiet)
    print(f"done: best validation MSE {summary['best_val_mse']:.5f}; checkpoints in {args.ckpt_dir}: "
          f"{', '.join(summary['checkpoints'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
