"""Notebook 11's self-checks accept the reference solutions and reject typical wrong answers; the demo
plumbing (course_utils.ckpt_demo) does what the notebook relies on."""

import binascii
import logging
import os

import mindspore as ms
import numpy as np
import pytest
from reference_solutions import reference

from course_utils import solutions
from course_utils.checks import nb11
from course_utils.ckpt_demo import expect_error, flip_bit, quiet_python_logs, reseal_crc
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT


class _Setup:
    """What the notebook defines before its exercises: MinimalNet, the data, make_training, train."""

    def __init__(self):
        from mindspore import nn

        class MinimalNet(nn.Cell):
            def __init__(self):
                super().__init__()
                self.dense = nn.Dense(1, 1, weight_init="normal", bias_init="zero")

            def construct(self, x):
                return self.dense(x)

        self.MinimalNet = MinimalNet
        x, y = make_linear_data()
        self.X, self.Y = ms.Tensor(x), ms.Tensor(y)

    def make_training(self, seed, lr=0.1, momentum=0.9):
        from mindspore import nn

        ms.set_seed(seed)
        net = self.MinimalNet()
        optimizer = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=momentum)
        return net, optimizer, nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)

    def train(self, train_step, steps):
        for _ in range(steps):
            train_step(self.X, self.Y)


@pytest.fixture(scope="module")
def setup():
    return _Setup()


# ---- 11.2 load_or_fail, 11.3 resume: the references, and the mistakes as factories ----------------------
@pytest.mark.parametrize("ex", [nb11.load_or_fail, nb11.resume], ids=["11.2", "11.3"])
def test_the_reference_solutions_pass(ex, setup):
    _, printed = reference(ex, make_training=setup.make_training, train=setup.train)
    assert printed.startswith("[ok]"), printed


def loader(check=0, strict=True, error=ValueError, names=True, into=None):
    """load_or_fail with a typical mistake: check=None ignores load_param_into_net's lists (article 000's
    snippet), check=1 checks ckpt_not_loaded; into=type loads into a fresh net of that type instead."""
    def load_or_fail(net, path):
        lists = ms.load_param_into_net(into() if into else net, ms.load_checkpoint(path), strict_load=strict)
        if check is not None and lists[check]:
            raise error(f"no value for {lists[check]}" if names else "incomplete checkpoint")
    return load_or_fail


@pytest.mark.parametrize("wrong, says", [
    (loader(check=None), "'missing dense.bias' loaded without an error"),
    (loader(check=1), "checkpoint 'with optimizer state' raised ValueError"),
    (loader(strict=False), "how does load_param_into_net match"),
    (loader(error=RuntimeError), "raise ValueError, not RuntimeError"),
    (loader(names=False), "should name ['dense.bias']"),
    (loader(into=nb11._one_dense_net), "the net holds (0.0, 0.0), not (1.5, -0.25)"),
    ("load_or_fail", "expected your function load_or_fail(net, path)"),
])
def test_load_or_fail_rejects_typical_mistakes(wrong, says):
    result = nb11.load_or_fail.evaluate(wrong)
    assert result.status == INCORRECT and says in result.message, result.message


def test_load_or_fail_quotes_a_mindspore_error_without_its_cpp_banner():
    """Regression: the verdict quoted MindSpore's "C++ Call Stack" banner for framework developers."""
    def runs_the_net(net, path):
        net(ms.Tensor(np.ones((2, 3), np.float32)))  # MatMul refuses the shape, with the C++ banner

    message = nb11.load_or_fail.evaluate(runs_the_net).message
    assert "raised ValueError: For 'MatMul'" in message and "ckpt_not_loaded" in message, message
    assert "C++" not in message and "----" not in message, message


def resumer(setup, into="train_step", steps="rest", first="global_step", lr=0.1, seed=0, returns="net"):
    """resume, loading the checkpoint into "train_step", "net", "net and optimizer" or nothing (None); training
    the rest of the steps ("rest"), all of them ("all") or none (None), from the next batch ("global_step") or
    from the first (0)."""
    def resume(path, x, y, total_steps):
        net, optimizer, train_step = setup.make_training(seed=seed, lr=lr)
        state = ms.load_checkpoint(path, choice_func=lambda name: name != "learning_rate")
        cells = {"train_step": [train_step], "net": [net], "net and optimizer": [net, optimizer], None: []}
        for cell in cells[into]:
            ms.load_param_into_net(cell, state)
        done = int(state["global_step"].asnumpy()[0])
        batches = [(ms.Tensor(x[i:i + 20]), ms.Tensor(y[i:i + 20])) for i in range(0, len(x), 20)]
        start = done if first == "global_step" else 0
        count = {"rest": total_steps - done, "all": total_steps, None: 0}[steps]
        for step in range(start, start + count):
            train_step(*batches[step % len(batches)])
        return {"net": net, "train_step": train_step, "pair": (1.0, 2.0), None: None}[returns]
    return resume


def reference_code(ex):
    return solutions.code(ex)


def test_resume_reference_is_not_a_lesson_cell():
    """The reference reads the data position from the checkpoint: nothing the lesson's resume cells do."""
    assert "% len(batches)" in reference_code(nb11.resume)


def test_resume_also_accepts_loading_into_net_and_optimizer(setup):
    result = nb11.resume.evaluate(resumer(setup, into="net and optimizer", seed=3, returns="train_step"))
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("settings, says", [
    ({"into": "net"}, "not the optimizer's moments"),
    ({"first": 0}, "continued with the first batch"),
    ({"first": 0, "steps": "all"}, "total_steps more steps, from the first batch"),
    ({"steps": "all"}, "you trained total_steps more steps: the checkpoint had done 6"),
    ({"steps": None}, "did you train the remaining steps"),
    ({"into": None}, "expected w="),
    ({"lr": 0.05}, "expected w="),
    ({"returns": "pair"}, "return the trained net"),
    ({"returns": None}, "resume(...) returned None"),
])
def test_resume_rejects_typical_mistakes(setup, settings, says):
    result = nb11.resume.evaluate(resumer(setup, **settings))
    assert result.status == INCORRECT and says in result.message, result.message


def test_resume_oracle_matches_mindspore_momentum(setup):
    """The checker's numpy oracle follows MindSpore's Momentum step for step (within float32 noise), full batch
    and on mini-batches that wrap around the data, starting in the middle of an epoch."""
    net, _, train_step = setup.make_training(seed=0)
    w0, b0 = float(net.dense.weight.asnumpy()[0, 0]), float(net.dense.bias.asnumpy()[0])
    setup.train(train_step, 30)
    w, b, _, _ = nb11._oracle(w0, b0, 0.0, 0.0, 30)
    assert abs(w - net.dense.weight.asnumpy()[0, 0]) < 1e-5 and abs(b - net.dense.bias.asnumpy()[0]) < 1e-5
    x, y = nb11._resume_data()
    net, _, train_step = setup.make_training(seed=1)
    w0, b0 = float(net.dense.weight.asnumpy()[0, 0]), float(net.dense.bias.asnumpy()[0])
    batches = [(ms.Tensor(x[i:i + 20]), ms.Tensor(y[i:i + 20])) for i in range(0, len(x), 20)]
    for step in range(2, 2 + 11):
        train_step(*batches[step % len(batches)])
    w, b, _, _ = nb11._oracle(w0, b0, 0.0, 0.0, 11, first=2, x=x, y=y, batch=20)
    assert abs(w - net.dense.weight.asnumpy()[0, 0]) < 1e-5 and abs(b - net.dense.bias.asnumpy()[0]) < 1e-5


def test_resume_mistakes_are_told_apart():
    """Every named mistake gives weights far from the right answer and from the other mistakes."""
    results = [nb11.resume_oracle()] + [nb11.resume_oracle(**settings) for settings, _ in nb11.RESUME_MISTAKES]
    for i, a in enumerate(results):
        for b in results[i + 1:]:
            assert max(abs(a[0] - b[0]), abs(a[1] - b[1])) > 1e-3, (a, b)


# ---- ckpt_demo ------------------------------------------------------------------------------------------
def test_expect_error_prints_relative_paths_and_cause(tmp_path, capsys):
    target = tmp_path / "sub" / "file.ckpt"
    with expect_error(ValueError, folder=tmp_path) as caught:
        try:
            raise KeyError("inner")
        except KeyError as exc:
            raise ValueError(f"cannot read {target}") from exc
    out = capsys.readouterr().out
    assert out == f"ValueError: cannot read sub{os.sep}file.ckpt\n  caused by KeyError: 'inner'\n"
    assert isinstance(caught.exception, ValueError) and caught.message == out.rstrip("\n")


def test_expect_error_hides_log_lines_and_restores_logging(caplog):
    logger = logging.getLogger("nb11-test")
    with expect_error(RuntimeError):
        logger.error("hidden")
        raise RuntimeError("boom")
    assert "hidden" not in caplog.text
    logger.error("shown")
    assert "shown" in caplog.text
    with quiet_python_logs():
        logger.error("also hidden")
    assert "also hidden" not in caplog.text and logging.root.manager.disable == logging.NOTSET


def test_expect_error_complains_when_nothing_or_something_else_is_raised():
    with pytest.raises(AssertionError, match="expected ValueError"):
        with expect_error(ValueError):
            pass
    with pytest.raises(KeyError):
        with expect_error(ValueError):
            raise KeyError("other")
    with pytest.raises(TypeError, match="exception classes"):
        with expect_error("ValueError"):
            pass
    assert logging.root.manager.disable == logging.NOTSET


def test_flip_bit(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes([0b00000000, 0b11111111]))
    assert flip_bit(path, 1, 0) == 0b11111110
    assert flip_bit(path, 0, 7) == 0b10000000
    assert path.read_bytes() == bytes([0b10000000, 0b11111110])
    for kwargs, error in (({"offset": 2, "bit": 0}, ValueError), ({"offset": 0, "bit": 8}, ValueError),
                          ({"offset": 0.5, "bit": 0}, TypeError), ({"offset": 0, "bit": True}, TypeError)):
        with pytest.raises(error):
            flip_bit(path, **kwargs)
    with pytest.raises(ValueError, match="no file"):
        flip_bit(tmp_path / "missing", 0, 0)


def test_flipped_weight_loads_silently_and_crc_catches_it(tmp_path):
    """The notebook's integrity claims, on a checkpoint with other values than the notebook's."""
    w = np.array([[-0.75]], np.float32)
    entries = [{"name": "dense.weight", "data": ms.Tensor(w)},
               {"name": "dense.bias", "data": ms.Tensor(np.array([0.5], np.float32))}]
    plain, crc = str(tmp_path / "plain.ckpt"), str(tmp_path / "crc.ckpt")
    ms.save_checkpoint(entries, plain)
    ms.save_checkpoint(entries, crc, crc_check=True)
    for path in (plain, crc):
        flip_bit(path, open(path, "rb").read().find(w.tobytes()) + 2, 7)
    assert ms.load_checkpoint(plain)["dense.weight"].asnumpy()[0, 0] in (-1.5, -0.375)
    with expect_error(ValueError, folder=tmp_path) as caught:
        ms.load_checkpoint(crc, crc_check=True)
    assert "May not have permission" in caught.message and "crc check is failed" in caught.message
    assert "crc.ckpt" in caught.message and str(tmp_path) not in caught.message


def test_reseal_crc_makes_an_edited_file_pass(tmp_path):
    path = str(tmp_path / "c.ckpt")
    w = np.array([[3.0]], np.float32)
    ms.save_checkpoint([{"name": "w", "data": ms.Tensor(w)}], path, crc_check=True)
    data = open(path, "rb").read()
    assert data[-17:-10] == b"crc_num" and int.from_bytes(data[-10:], "big") == binascii.crc32(data[:-17])
    flip_bit(path, data.find(w.tobytes()) + 3, 7)  # the sign bit
    with quiet_python_logs(), pytest.raises(ValueError):
        ms.load_checkpoint(path, crc_check=True)
    reseal_crc(path)
    assert ms.load_checkpoint(path, crc_check=True)["w"].asnumpy()[0, 0] == -3.0
    ms.save_checkpoint([{"name": "w", "data": ms.Tensor(w)}], path)  # no CRC trailer
    with pytest.raises(ValueError, match="no CRC trailer"):
        reseal_crc(path)


# ---- prediction 11.1 -----------------------------------------------------------------------------------
def test_missing_key_prediction_says_what_mindspore_returns(tmp_path):
    """Option (b) of 11.1, on a net and file of this test's own: no error, the weight loaded, the bias reported."""
    path = str(tmp_path / "no_bias.ckpt")
    ms.save_checkpoint([{"name": "dense.weight", "data": ms.Tensor(np.array([[0.75]], np.float32))}], path)
    net = nb11._one_dense_net()
    assert ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True) == (["dense.bias"], [])
    assert nb11._weights(net) == (0.75, 0.0)
    assert "(['dense.bias'], [])" in nb11.missing_key.options[nb11.missing_key.answer][0]


def test_plot_checkpoint_contents_marks_what_each_file_holds():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_utils.ckpt_demo import plot_checkpoint_contents

    ax = plot_checkpoint_contents({"net.ckpt": ["w", "b"], "train.ckpt": ["w", "b", "moments.w"]}, ["data position"])
    marks = [t.get_text() for t in ax.texts]
    assert marks == ["saved", "saved", "-", "-", "saved", "saved", "saved", "-"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["w", "b", "moments.w", "data position"]
    plt.close("all")
    with pytest.raises(TypeError, match="files must map"):
        plot_checkpoint_contents({"a.ckpt": "w"}, [])
