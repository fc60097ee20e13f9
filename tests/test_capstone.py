"""The capstone project: configuration checks, data, and a real command-line training run."""

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from capstone.config import DEFAULT_PATH, load_config, validate
from capstone.data import make_sine_data
from course_utils.checks import nb12
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def test_default_config_is_valid():
    config = load_config()
    assert config["train"]["optimizer"] == "adam" and isinstance(config["train"]["learning_rate"], float)


@pytest.mark.parametrize("key, value, text", [
    ("train.optimizer", "rmsprop", "train.optimizer must be one of"),
    ("train.learning_rate", 0, "train.learning_rate must be a number in (0, 10]"),
    ("train.learning_rate", "fast", "train.learning_rate"),
    ("train.epochs", 2.5, "train.epochs must be an int"),
    ("data.n_train", 3, "data.n_train must be an int from 8 to"),
    ("model.hidden", True, "model.hidden"),
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


def test_sine_data():
    x, y = make_sine_data(50, noise=0.0, seed=3)
    assert x.dtype == y.dtype == np.float32 and x.shape == (50, 1)
    np.testing.assert_allclose(y, np.sin(3 * x), atol=1e-6)
    with pytest.raises(ValueError):
        make_sine_data(0)
    with pytest.raises(ValueError):
        make_sine_data(10, noise=-1)


def test_command_line_training_writes_checkpoints_where_told(tmp_path):
    run_dir = tmp_path / "run"
    out = subprocess.run([sys.executable, "-m", "capstone.train", "--ckpt-dir", str(run_dir), "--epochs", "20"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "epoch   20/20" in out.stdout and "done: best validation MSE" in out.stdout
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "best.ckpt" in summary["checkpoints"] and len(summary["checkpoints"]) <= 4
    # oracle: the best straight line on the validation data; the MLP must beat it clearly
    vx, vy = make_sine_data(128, 0.05, 1)
    design = np.hstack([vx, np.ones_like(vx)]).astype(np.float64)
    coef, *_ = np.linalg.lstsq(design, vy.astype(np.float64), rcond=None)
    line_mse = float(np.mean((design @ coef - vy) ** 2))
    assert summary["best_val_mse"] < line_mse / 3
    # the best checkpoint reproduces the best validation MSE when loaded into a fresh model
    import mindspore as ms

    from capstone.model import MLP

    net = MLP(32)
    not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(str(run_dir / "best.ckpt")))
    assert not_loaded == []
    mse = float(np.mean((net(ms.Tensor(vx)).asnumpy().astype(np.float64) - vy) ** 2))
    assert abs(mse - summary["best_val_mse"]) < 1e-5


def test_command_line_rejects_bad_config(tmp_path):
    bad = tmp_path / "bad.yaml"
    config = yaml.safe_load(DEFAULT_PATH.read_text())
    config["train"]["learning_rate"] = -1
    bad.write_text(yaml.safe_dump(config))
    out = subprocess.run([sys.executable, "-m", "capstone.train", "--ckpt-dir", str(tmp_path / "r"),
                          "--config", str(bad)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "train.learning_rate must be a number in (0, 10]" in out.stderr
    assert not (tmp_path / "r").exists()


def test_nb12_checks():
    import mindspore as ms
    from mindspore import nn

    from capstone.model import MLP  # the reference notebook 12 imports after exercise 12.1

    class Linear2(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = nn.SequentialCell(nn.Dense(1, 8), nn.Dense(8, 1))

        def construct(self, x):
            return self.body(x)

    assert nb12.mlp_class.evaluate(...).status == NOT_ATTEMPTED
    assert nb12.mlp_class.evaluate(MLP).status == CORRECT
    assert "straight line in x" in nb12.mlp_class.evaluate(Linear2).message
    assert "not an instance" in nb12.mlp_class.evaluate(MLP()).message
    # a trained net passes, an untrained one and a straight line do not
    untrained = MLP()
    assert "below 0.01" in nb12.trained_net.evaluate(untrained).message
    assert "straight line" in nb12.trained_net.evaluate(nn.Dense(1, 1)).message
    ms.set_seed(0)
    net = MLP()
    x, y = make_sine_data(256)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Adam(net.trainable_params(), 0.01))
    for _ in range(400):
        step(ms.Tensor(x), ms.Tensor(y))
    assert nb12.trained_net.evaluate(net).status == CORRECT
    assert nb12.trained_net.evaluate("net").status == INCORRECT
