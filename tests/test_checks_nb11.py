"""Notebook 11's self-checks accept the reference solutions and reject typical wrong answers; the demo
plumbing (course_utils.ckpt_demo) does what the notebook relies on."""

import binascii
import logging
import os

import numpy as np
import pytest

from course_utils.checks import nb11
from course_utils.ckpt_demo import expect_error, flip_bit, quiet_python_logs, reseal_crc
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED


def _ms():
    import mindspore as ms

    return ms


class _Setup:
    """What the notebook defines before its exercises: MinimalNet, the data, make_training, train."""

    def __init__(self):
        ms = _ms()
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
        ms = _ms()
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


# ---- 11.2 load_or_fail -------------------------------------------------------------------------------
def _reference_load_or_fail(net, path):
    ms = _ms()
    params_not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)
    if params_not_loaded:
        raise ValueError(f"{path}: no value for {params_not_loaded}")


def _never_checks(net, path):  # article 000's snippet: the return value is ignored
    ms = _ms()
    ms.load_param_into_net(net, ms.load_checkpoint(path))


def _checks_the_wrong_list(net, path):
    ms = _ms()
    _, ckpt_not_loaded = ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)
    if ckpt_not_loaded:
        raise ValueError(f"not loaded: {ckpt_not_loaded}")


def _not_strict(net, path):  # names matched by suffix: a prefixed file slips through
    ms = _ms()
    params_not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path))
    if params_not_loaded:
        raise ValueError(f"no value for {params_not_loaded}")


def _wrong_exception_type(net, path):
    ms = _ms()
    params_not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)
    if params_not_loaded:
        raise RuntimeError(f"no value for {params_not_loaded}")


def _message_without_names(net, path):
    ms = _ms()
    params_not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)
    if params_not_loaded:
        raise ValueError("incomplete checkpoint")


def _does_not_load(net, path):
    ms = _ms()
    params_not_loaded, _ = ms.load_param_into_net(type(net)(), ms.load_checkpoint(path), strict_load=True)
    if params_not_loaded:
        raise ValueError(f"no value for {params_not_loaded}")


def test_load_or_fail_accepts_the_reference():
    result = nb11.load_or_fail.evaluate(_reference_load_or_fail)
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("wrong, says", [
    (_never_checks, "'missing dense.bias' loaded without an error"),
    (_checks_the_wrong_list, "checkpoint 'with optimizer state' raised ValueError"),
    (_not_strict, "matched by suffix"),
    (_wrong_exception_type, "raise ValueError, not RuntimeError"),
    (_message_without_names, "should name ['dense.bias']"),
    (_does_not_load, "the net holds (0.0, 0.0), not (1.5, -0.25)"),
    ("load_or_fail", "expected a function"),
])
def test_load_or_fail_rejects_typical_mistakes(wrong, says):
    result = nb11.load_or_fail.evaluate(wrong)
    assert result.status == INCORRECT and says in result.message, result.message


def test_not_attempted():
    assert nb11.load_or_fail.evaluate(...).status == NOT_ATTEMPTED
    assert nb11.resume.evaluate(...).status == NOT_ATTEMPTED


# ---- 11.3 resume --------------------------------------------------------------------------------------
def test_resume_accepts_the_reference(setup):
    ms = _ms()

    def resume(path, steps):
        net, _, train_step = setup.make_training(seed=0)
        ms.load_param_into_net(train_step, ms.load_checkpoint(path))
        setup.train(train_step, steps)
        return net

    result = nb11.resume.evaluate(resume)
    assert result.status == CORRECT, result.message


def test_resume_also_accepts_loading_into_net_and_optimizer(setup):
    ms = _ms()

    def resume(path, steps):
        net, optimizer, train_step = setup.make_training(seed=3)
        state = ms.load_checkpoint(path)
        ms.load_param_into_net(net, state)
        ms.load_param_into_net(optimizer, state)
        setup.train(train_step, steps)
        return train_step  # any cell holding dense.weight / dense.bias

    result = nb11.resume.evaluate(resume)
    assert result.status == CORRECT, result.message


def test_resume_rejects_weights_only(setup):
    ms = _ms()

    def resume(path, steps):
        net, _, train_step = setup.make_training(seed=0)
        ms.load_param_into_net(net, ms.load_checkpoint(path))
        setup.train(train_step, steps)
        return net

    result = nb11.resume.evaluate(resume)
    assert result.status == INCORRECT and "not the optimizer's moments" in result.message, result.message


def test_resume_rejects_no_training_and_no_loading(setup):
    ms = _ms()

    def no_training(path, steps):
        net, _, train_step = setup.make_training(seed=0)
        ms.load_param_into_net(train_step, ms.load_checkpoint(path))
        return net

    def no_loading(path, steps):
        net, _, train_step = setup.make_training(seed=0)
        setup.train(train_step, steps)
        return net

    def wrong_lr(path, steps):
        net, _, train_step = setup.make_training(seed=0, lr=0.05)
        ms.load_param_into_net(train_step, ms.load_checkpoint(path, choice_func=lambda n: n != "learning_rate"))
        setup.train(train_step, steps)
        return net

    result = nb11.resume.evaluate(no_training)
    assert result.status == INCORRECT and "did you train" in result.message, result.message
    for wrong in (no_loading, wrong_lr):
        result = nb11.resume.evaluate(wrong)
        assert result.status == INCORRECT and "expected w=" in result.message, result.message
    result = nb11.resume.evaluate(lambda path, steps: (1.0, 2.0))
    assert result.status == INCORRECT and "return the trained net" in result.message


def test_resume_oracle_matches_mindspore_momentum(setup):
    """The checker's numpy oracle follows MindSpore's Momentum step for step (within float32 noise)."""
    net, _, train_step = setup.make_training(seed=0)
    w0, b0 = float(net.dense.weight.asnumpy()[0, 0]), float(net.dense.bias.asnumpy()[0])
    setup.train(train_step, 30)
    w, b, _, _ = nb11._oracle(w0, b0, 0.0, 0.0, 30)
    assert abs(w - net.dense.weight.asnumpy()[0, 0]) < 1e-5 and abs(b - net.dense.bias.asnumpy()[0]) < 1e-5


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
    ms = _ms()
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
    ms = _ms()
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


# ---- predictions 11.1, 11.4 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("prediction", [nb11.missing_key, nb11.flipped_bit])
def test_predictions_explain_every_option(prediction):
    assert prediction.evaluate(...).status == NOT_ATTEMPTED
    for letter, (_text, why) in prediction.options.items():
        result = prediction.evaluate(letter)
        assert (result.status == CORRECT) == (letter == prediction.answer) and why in result.message


def test_missing_key_prediction_says_what_mindspore_returns(tmp_path):
    """Option (b) of 11.1, on a net and file of this test's own: no error, the weight loaded, the bias reported."""
    ms = _ms()
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
