"""Score a capstone run folder for the challenge: python -m capstone.score DIR [--test-seed S] [--json].

The official score, which an instructor computes from each handed-in folder: it checks the folder (every
file against checksums.sha256, the report's config and fingerprint against config.yaml and best.ckpt), then
evaluates best.ckpt on a held-out set drawn with the scorer's seed (--test-seed), which no configuration can
change and the learner has not seen, and scores it by the rubric (python -m capstone.train --rubric).
It writes nothing into DIR.

Exit codes: 0 scored (the score may be 0), 2 bad arguments, 3 DIR is not a complete, unaltered run.
"""

import argparse
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

from capstone.rundir import CkptDirError, sha256, verify  # noqa: E402
from course_utils.messages import t  # noqa: E402

EXIT_OK, EXIT_USAGE, EXIT_RUN = 0, 2, 3
N_TEST = 3000  # held-out points the scorer draws: 10 times the learner's test split, so one seed's luck is small


class RunError(Exception):
    """DIR is not a complete, unaltered run: one line says what is wrong."""


def read_run(run_dir):
    """The run's report and configuration, after checking the folder; RunError says what is wrong."""
    import yaml

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunError(t("{path} is not a folder: give the folder a run wrote (--ckpt-dir DIR)", path=run_dir))
    if not (run_dir / "checksums.sha256").is_file():
        raise RunError(t("{path} holds no checksums.sha256: score a folder that python -m capstone.train wrote",
                         path=run_dir))
    try:
        verify(run_dir)
    except CkptDirError as exc:
        raise RunError(str(exc).replace("--resume ", "", 1)) from None
    for name in ("report.json", "best.ckpt", "config.yaml"):
        if not (run_dir / name).is_file():
            raise RunError(t("{path} holds no {name}: it is not a finished run", path=run_dir, name=name))
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    if report.get("config") != config:
        raise RunError(t("{path}: report.json's config is not config.yaml's: the report was edited", path=run_dir))
    if report.get("fingerprint") != sha256(run_dir / "best.ckpt"):
        raise RunError(t("{path}: best.ckpt is not the checkpoint the run's report names (fingerprint)",
                         path=run_dir))
    return report, config


def held_out(config, test_seed, n=N_TEST):
    """The scorer's held-out set: the rules' data (classes, noise) with the scorer's seed and size."""
    from course_utils.data import make_spirals

    return make_spirals(n, config["data"]["classes"], config["data"]["noise"], test_seed)


def test_accuracy(run_dir, config, x, y):
    """The accuracy of the run's best.ckpt on (x, y), computed by MindSpore in PyNative mode."""
    import mindspore as ms
    import numpy as np

    from capstone.model import MLP

    net = MLP(config["model"]["hidden"], config["model"]["layers"], config["data"]["classes"])
    if config["train"]["amp"] != "O0":  # as capstone.train.build made it: the checkpoint's names are this net's
        net = ms.amp.auto_mixed_precision(net, config["train"]["amp"])
    missing, _ = ms.load_param_into_net(net, ms.load_checkpoint(str(Path(run_dir) / "best.ckpt")), strict_load=True)
    if missing:
        raise RunError(t("{path}: best.ckpt has no {name} for the model config.yaml describes", path=run_dir,
                         name=missing[0]))
    net.set_train(False)
    predicted = net(ms.Tensor(x.astype(np.float32))).asnumpy().argmax(axis=1)
    return float(np.mean(predicted == y))


def score_run(run_dir, test_seed):
    """``{"score", "test_accuracy", "eligible", ...}`` of a run folder (RunError if it is not a run)."""
    from capstone.config import validate
    from capstone.model import MLP, count_parameters
    from capstone.train import eligible, score

    report, config = read_run(run_dir)
    try:
        validate(config)
    except ValueError as exc:
        raise RunError(t("{path}: config.yaml: {error}", path=run_dir, error=exc)) from None
    x, y = held_out(config, test_seed)
    accuracy = test_accuracy(run_dir, config, x, y)
    parameters = count_parameters(MLP(config["model"]["hidden"], config["model"]["layers"], config["data"]["classes"]))
    steps = report["epochs_run"] * math.ceil(config["data"]["n_train"] / config["train"]["batch_size"])
    fair = eligible(config)
    return {"score": score(accuracy, parameters, steps) if fair else 0.0, "test_accuracy": accuracy,
            "eligible": fair, "parameters": parameters, "train_steps": steps, "test_seed": test_seed,
            "n_test": len(y)}


def _seed(text):
    if not text.isdigit() or int(text) > 2**32 - 1:
        raise argparse.ArgumentTypeError(t("--test-seed must be an int from 0 to 4294967295, not {text!r}",
                                           text=text))
    return int(text)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m capstone.score", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="the folder a run wrote (python -m capstone.train --ckpt-dir DIR)")
    parser.add_argument("--test-seed", type=_seed, default=20261202,
                        help="the held-out set's seed: choose one on the day and tell nobody before the scoring")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    try:
        result = score_run(args.run_dir, args.test_seed)
    except RunError as exc:
        print(exc, file=sys.stderr)
        return EXIT_RUN
    if args.json:
        print(json.dumps(result))
    else:
        why = "" if result["eligible"] else t(" (not eligible: a data key differs from the rules' defaults)")
        print(t("{path}: score {score:.1f}{why}: accuracy {accuracy:.4f} on {n} held-out points (seed {seed}), "
                "{parameters} parameters, {steps} training steps", path=args.run_dir, score=result["score"], why=why,
                accuracy=result["test_accuracy"], n=result["n_test"], seed=result["test_seed"],
                parameters=result["parameters"], steps=result["train_steps"]))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
