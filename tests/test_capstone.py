"""The capstone project: configuration checks, data, and a real command-line training run."""

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from capstone.config import DEFAULT_PATH, load_config, validate
from capstone.data import make_sine_data
from course_utils.checks import nb16
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


def test_nb12_mlp_class_check():
    import mindspore as ms
    from mindspore import nn

    from capstone.model import MLP  # the reference notebook 16 imports after exercise 16.1

    class Linear2(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = nn.SequentialCell(nn.Dense(1, 8), nn.Dense(8, 1))

        def construct(self, x):
            return self.body(x)

    class OneLayer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1)

        def construct(self, x):
            return ms.ops.tanh(self.dense(x))

    class Wide(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = nn.SequentialCell(nn.Dense(1, 8), nn.Tanh(), nn.Dense(8, 2))

        def construct(self, x):
            return self.body(x)

    assert nb16.mlp_class.evaluate(...).status == NOT_ATTEMPTED
    assert nb16.mlp_class.evaluate(MLP).status == CORRECT
    assert "straight line in x" in nb16.mlp_class.evaluate(Linear2).message  # no activation
    assert "not an instance" in nb16.mlp_class.evaluate(MLP()).message
    assert "MinimalNet again" in nb16.mlp_class.evaluate(OneLayer).message
    assert "end with Dense(hidden, 1)" in nb16.mlp_class.evaluate(Wide).message
    assert len(nb16.mlp_class.hints) == 3 and "SequentialCell(" not in nb16.mlp_class.hints[0]


def _train_mlp(mistake=None):
    """train_mlp written with Model (the reference uses a jit loop), with one typical mistake or none."""
    import mindspore.dataset as ds
    from mindspore import nn
    from mindspore.train import Model

    def train_mlp(net, x, y, lr, epochs, batch_size):
        if mistake == "new net":
            net = nn.SequentialCell(nn.Dense(1, 4), nn.Tanh(), nn.Dense(4, 1))
        optimizer = (nn.SGD if mistake == "sgd" else nn.Adam)(net.trainable_params(), learning_rate=lr)
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=mistake == "shuffle")
        data = data.batch(len(x) if mistake == "full batch" else batch_size, drop_remainder=mistake == "drop last")
        Model(net, nn.MSELoss(), optimizer).train(1 if mistake == "one epoch" else epochs, data,
                                                  dataset_sink_mode=False)
        return net

    return train_mlp


def test_nb12_train_oracle_moves_downhill():
    x, y, init = nb16._train_setup()

    def loss(params):
        w1, c1, w2, c2 = params
        return float(np.mean((np.tanh(x @ w1.T + c1) @ w2.T + c2 - y) ** 2))

    assert loss(nb16.train_oracle()) < loss(init)
    assert np.isclose(loss(nb16.train_oracle(epochs=0)), loss(init), rtol=1e-6)


def test_nb12_train_function_accepts_the_reference():
    result = nb16.train_function.evaluate(_train_mlp())
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("mistake, text", [
    ("sgd", "plain SGD"),
    ("drop last", "the last, smaller batch"),
    ("full batch", "one full batch per epoch"),
    ("one epoch", "that is 1 epoch"),
    ("new net", "did not change: train the net you are given"),
    ("shuffle", "without shuffling"),
])
def test_nb12_train_function_rejects(mistake, text):
    result = nb16.train_function.evaluate(_train_mlp(mistake))
    assert result.status == INCORRECT and text in result.message, result.message


def test_nb12_train_function_is_not_fooled_by_inputs_or_constants():
    for answer in (lambda net, x, y, lr, epochs, batch_size: net, lambda *args: None,
                   lambda net, x, y, lr, epochs, batch_size: nb16.train_oracle(), "train_mlp", 0.01):
        assert nb16.train_function.evaluate(answer).status == INCORRECT


def _train_stub(net, x, y, lr, epochs, batch_size):
    optimizer = ...
    return optimizer


def test_nb12_train_function_scaffold_is_not_attempted():
    assert nb16.train_function.evaluate(_train_stub).status == NOT_ATTEMPTED


@pytest.mark.parametrize("prediction, right", [(nb16.best_lr, "c"), (nb16.reload_exact, "a")])
def test_nb12_predictions_explain_every_option(prediction, right):
    assert prediction.evaluate(right).status == CORRECT
    for letter, (_text, why) in prediction.options.items():
        if letter != right:
            result = prediction.evaluate(letter)
            assert result.status == INCORRECT and why in result.message
