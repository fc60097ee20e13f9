"""course_utils.callbacks in real Model runs, checked against plain numpy mini-batch gradient descent."""

import io
import os

os.environ.setdefault("GLOG_v", "3")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import mindspore.dataset as ds  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, nn  # noqa: E402
from mindspore.train import Callback, Model  # noqa: E402

from course_utils.callbacks import HistoryRecorder, LiveLossPlot, ProgressBar, loss_value  # noqa: E402
from course_utils.data import make_linear_data  # noqa: E402

X, Y = make_linear_data()
LR, BATCH = 0.5, 20


def dataset(x=X, y=Y, batch_size=BATCH):
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size)


def zero_model(metrics=None):
    """y = w*x + b from w = b = 0, so that numpy can follow every step."""
    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    return net, Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=LR), metrics=metrics)


def numpy_steps(epochs, x=X, y=Y, batch_size=BATCH):
    """Oracle: the loss of every step (before its update) and (w, b) after each epoch."""
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    w = b = 0.0
    losses, params = [], []
    for _ in range(epochs):
        for i in range(0, len(x), batch_size):
            residual = w * x[i:i + batch_size] + b - y[i:i + batch_size]
            losses.append(np.mean(residual ** 2))
            w, b = w - LR * 2 * np.mean(residual * x[i:i + batch_size]), b - LR * 2 * np.mean(residual)
        params.append((w, b))
    return np.array(losses), params


class FailAtStep(Callback):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_step_end(self, run_context):
        if run_context.original_args().cur_step_num == self.step:
            raise RuntimeError("stop here")


# ---- loss_value ----------------------------------------------------------------------------------
def test_loss_value_reads_tensors_tuples_and_numbers():
    assert loss_value(Tensor(np.float32(0.25))) == 0.25
    assert loss_value((Tensor(np.array([1.0, 3.0], np.float32)), Tensor(np.float32(9)))) == 2.0
    assert loss_value(np.float64(1.5)) == 1.5 and loss_value(2) == 2.0
    with pytest.raises(ValueError, match="empty tuple"):
        loss_value(())
    for bad in ("0.1", None, True):
        with pytest.raises(TypeError, match="cannot read a loss"):
            loss_value(bad)


# ---- HistoryRecorder -----------------------------------------------------------------------------
def test_history_recorder_matches_numpy_in_fit():
    net, model = zero_model(metrics={"mse"})
    recorder = HistoryRecorder(params=["weight", "bias"])  # nn.Dense's own parameter names
    model.fit(3, dataset(X[:80], Y[:80]), dataset(X[80:], Y[80:], batch_size=20), callbacks=[recorder])
    losses, params = numpy_steps(3, X[:80], Y[:80])
    np.testing.assert_allclose(recorder.step_losses, losses, rtol=1e-4)
    np.testing.assert_allclose(recorder.epoch_losses, losses.reshape(3, 4).mean(axis=1), rtol=1e-4)
    assert recorder.learning_rates == [LR] * 3
    assert recorder.eval_epochs == [1, 2, 3]
    for (w, b), result, weight, bias in zip(params, recorder.eval_results, recorder.params["weight"],
                                            recorder.params["bias"]):
        assert np.isclose(weight.item(), w, rtol=1e-5) and np.isclose(bias.item(), b, rtol=1e-5, atol=1e-7)
        mse = np.mean((w * X[80:].astype(np.float64) + b - Y[80:]) ** 2)
        assert np.isclose(result["mse"], mse, rtol=1e-4) and np.isclose(result["eval_loss"], mse, rtol=1e-4)
    assert repr(recorder) == "HistoryRecorder(3 epochs, 12 steps, 3 evaluations)"


def test_history_recorder_starts_a_new_record_and_records_model_eval():
    net, model = zero_model(metrics={"mae"})
    recorder = HistoryRecorder()
    model.train(2, dataset(), callbacks=[recorder])
    model.train(1, dataset(), callbacks=[recorder])
    assert len(recorder.step_losses) == 5 and len(recorder.epoch_losses) == 1
    model.eval(dataset(batch_size=100), callbacks=[recorder])
    w, b = net.weight.asnumpy().item(), net.bias.asnumpy().item()
    assert recorder.eval_epochs == [None]
    assert np.isclose(recorder.eval_results[0]["mae"], np.mean(np.abs(w * X + b - Y)), rtol=1e-5)


def test_history_recorder_validates_params():
    for bad in ("weight", 3, ["weight", 1], [""]):
        with pytest.raises(TypeError, match="params|entry"):
            HistoryRecorder(params=bad)
    with pytest.raises(ValueError, match="duplicate"):
        HistoryRecorder(params=["weight", "weight"])
    _, model = zero_model()
    with pytest.raises(ValueError, match=r"no parameter named \['dense.weight'\].*available"):
        model.train(1, dataset(), callbacks=[HistoryRecorder(params=["dense.weight"])])


# ---- LiveLossPlot --------------------------------------------------------------------------------
def test_live_loss_plot_draws_steps_and_validation():
    _, model = zero_model(metrics={"mse"})
    plot = LiveLossPlot(every=2, live=False)
    model.fit(5, dataset(X[:80], Y[:80]), dataset(X[80:], Y[80:], batch_size=20), callbacks=[plot])
    assert plot.redraws == 3, "epochs 2 and 4, and the end of training (epoch 5)"
    losses, _ = numpy_steps(5, X[:80], Y[:80])
    ax = plot.figure.axes[0]
    train_line, valid_line = ax.lines[0], ax.lines[-1]
    np.testing.assert_allclose(train_line.get_ydata(), losses, rtol=1e-4)
    assert list(valid_line.get_xdata()) == [3, 7, 11, 15, 19] and ax.get_yscale() == "log", "after steps 4, 8..."
    assert "epoch 5/5" in ax.get_title()

    plot = LiveLossPlot(every=1, live=True, monitor="mse")  # live outside IPython: draws, shows nothing
    _, model = zero_model(metrics={"mse"})
    model.fit(2, dataset(X[:80], Y[:80]), dataset(X[80:], Y[80:], batch_size=10), callbacks=[plot])
    assert plot.redraws == 2 and len(plot.val_losses) == 2


@pytest.mark.parametrize("kwargs, error, text", [
    ({"every": 0}, ValueError, ">= 1"),
    ({"every": 1.5}, TypeError, "int"),
    ({"every": True}, TypeError, "int"),
    ({"live": "yes"}, TypeError, "live"),
    ({"title": 1}, TypeError, "title"),
    ({"monitor": 1}, TypeError, "monitor"),
    ({"monitor": ""}, ValueError, "monitor"),
])
def test_live_loss_plot_rejects_bad_arguments(kwargs, error, text):
    with pytest.raises(error, match=text):
        LiveLossPlot(**kwargs)


# ---- ProgressBar ---------------------------------------------------------------------------------
def _text_bar_run(method, epochs, **kwargs):
    out = io.StringIO()
    _, model = zero_model(metrics={"mse"})
    bar = ProgressBar(kind="text", timings=False, file=out, **kwargs)
    args = (dataset(X[:80], Y[:80]), dataset(X[80:], Y[80:], batch_size=20)) if method == "fit" else (dataset(),)
    getattr(model, method)(epochs, *args, callbacks=[bar])
    return bar, out.getvalue()


def test_text_progress_bar_is_deterministic_and_complete():
    bar, text = _text_bar_run("train", 2)
    assert bar.bar is None, "closed at the end of training"
    losses, _ = numpy_steps(2)
    final = text.rstrip().split("\r")[-1]
    assert final.startswith("train: 100%|") and f"10/10, epoch 2/2, loss {losses[-1]:.4f}" in final, final
    assert text.count("\r") >= 10, "one refresh per step"
    assert _text_bar_run("train", 2)[1] == text, "without timings the text is the same on every run"


def test_progress_bar_shows_validation_in_fit_and_survives_its_evaluations():
    _, text = _text_bar_run("fit", 3)
    final = text.rstrip().split("\r")[-1]
    assert "100%" in final and "12/12" in final and ", val_loss " in final, final
    _, text = _text_bar_run("fit", 1, monitor="mse")
    assert ", val_mse " in text


def test_progress_bar_closes_when_training_fails():
    out = io.StringIO()
    bar = ProgressBar(kind="text", file=out)
    _, model = zero_model()
    with pytest.raises(RuntimeError, match="stop here"):
        model.train(2, dataset(), callbacks=[bar, FailAtStep(3)])
    assert bar.bar is None and "3/10" in out.getvalue()


def test_progress_bar_kinds_and_arguments():
    import tqdm.notebook
    import tqdm.std

    assert ProgressBar(kind="text")._tqdm_class() is tqdm.std.tqdm
    assert ProgressBar(kind="notebook")._tqdm_class() is tqdm.notebook.tqdm
    auto = ProgressBar()._tqdm_class()
    assert issubclass(auto, tqdm.std.tqdm) and not issubclass(auto, tqdm.notebook.tqdm), "auto: text outside Jupyter"
    for kwargs, error, text in [
        ({"kind": "widget"}, ValueError, "kind must be one of"),
        ({"kind": None}, ValueError, "kind must be one of"),
        ({"timings": "no"}, TypeError, "timings"),
        ({"desc": 3}, TypeError, "desc"),
        ({"file": object()}, TypeError, "write"),
        ({"kind": "notebook", "file": io.StringIO()}, ValueError, "only for text bars"),
        ({"monitor": None}, TypeError, "monitor"),
    ]:
        with pytest.raises(error, match=text):
            ProgressBar(**kwargs)


def test_callbacks_are_accepted_by_fit():
    """fit refuses callbacks that define 1.x methods (epoch_end, step_end, begin...): ours use the 2.x hooks."""
    _, model = zero_model(metrics={"mse"})
    recorder, plot, out = HistoryRecorder(), LiveLossPlot(live=False), io.StringIO()
    model.fit(1, dataset(), dataset(batch_size=100), callbacks=[recorder, plot, ProgressBar(kind="text", file=out)])
    steps = len(recorder.step_losses)
    assert steps >= 1 and np.all(np.isfinite(recorder.step_losses)) and len(recorder.epoch_losses) == 1
    assert len(recorder.eval_results) == 1 and "mse" in recorder.eval_results[0], recorder.eval_results
    assert plot.step_losses == recorder.step_losses and len(plot.val_losses) == 1 and plot.redraws == 1
    assert f"{steps}/{steps}" in out.getvalue() and "val_loss" in out.getvalue(), out.getvalue()


@pytest.mark.parametrize("make", [lambda: LiveLossPlot(live=False, monitor="nope"),
                                  lambda: ProgressBar(kind="text", file=io.StringIO(), monitor="nope")])
def test_a_monitor_typo_is_said_once_not_drawn_silently(make):
    """Regression (issue 13): monitor="nope" drew nothing without a word."""
    callback = make()
    _, model = zero_model(metrics={"mse"})
    with pytest.warns(UserWarning, match=r"monitor='nope' is not a value of this evaluation.*'eval_loss'") as caught:
        model.fit(2, dataset(), dataset(batch_size=100), callbacks=[callback])
    assert len([w for w in caught if "monitor='nope'" in str(w.message)]) == 1, "once per run, not per epoch"


def test_a_known_monitor_gives_no_warning():
    import warnings

    _, model = zero_model(metrics={"mse"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.fit(2, dataset(), dataset(batch_size=100),
                  callbacks=[LiveLossPlot(live=False), ProgressBar(kind="text", file=io.StringIO(), monitor="mse")])
