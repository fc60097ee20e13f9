"""Exercises of notebook 09 (the Model API, callbacks and metrics).

Each check runs the learner's answer in a real ``Model`` run or on real batches and compares with numpy:
momentum gradient descent with per-epoch validation, epoch losses of plain mini-batch gradient descent, a
root mean squared error over all samples. Two predictions: what EarlyStopping and ReduceLROnPlateau do under
``model.train``, and what ``eval_loss`` covers in ``fit``.
"""

from functools import partial

import numpy as np

from course_utils import oracles
from course_utils._validate import shown
from course_utils.data import make_linear_data
from course_utils.exercises import (
    FunctionExercise,
    Incorrect,
    Prediction,
    bind,
    brief_error,
    close,
    name_the_mistake,
    number,
)
from course_utils.messages import lazy, t

BATCH = 20  # the course data in batches of 20, no shuffling: 5 steps per epoch
LR = 0.5
STOP_THRESHOLDS = (0.06, 0.03)  # each lies between two epoch means, away from both (see the tests)


def _dataset(x, y, batch_size):
    import mindspore.dataset as ds

    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size)


def _zero_model(metrics=None):
    """y = w*x + b from w = b = 0 (no random initialisation), MSE loss, SGD(LR); and the optimizer, whose
    global_step counts the steps trained."""
    from mindspore import nn
    from mindspore.train import Model

    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    optimizer = nn.SGD(net.trainable_params(), learning_rate=LR)
    return Model(net, nn.MSELoss(), optimizer, metrics=metrics), optimizer


def numpy_epoch_losses(epochs, batch_size=BATCH, lr=LR):
    """Oracle: (mean loss, last step's loss) of each epoch of mini-batch gradient descent from w = b = 0."""
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    w = b = 0.0
    means, lasts = [], []
    for _ in range(epochs):
        losses = []
        for i in range(0, len(x), batch_size):
            ws, bs, loss = oracles.gradient_descent(x[i:i + batch_size], y[i:i + batch_size], lr, 1, w=w, b=b)
            losses.append(loss[0])  # a train step returns the loss before its update
            w, b = float(ws[0]), float(bs[0])
        means.append(float(np.mean(losses)))
        lasts.append(losses[-1])
    return means, lasts


def expected_stop_epoch(threshold, epochs=15):
    means, _ = numpy_epoch_losses(epochs)
    return next(k for k, mean in enumerate(means, 1) if mean < threshold)


# ---- 09.3: a callback that keeps the best epoch's weights ---------------------------------------------------
# Each setting: data (n, w, b, seed), training samples, Momentum(lr, 0.9), epochs. Batches of 10, validation in two
# batches of 10 (so that eval_loss, the last batch's loss, differs from the mse over the whole validation set).
KEEP_BEST_SETTINGS = ({"n": 50, "w": 3.0, "b": -0.5, "seed": 29, "train": 30, "lr": 0.3, "epochs": 10},
                      {"n": 50, "w": 1.0, "b": 2.0, "seed": 22, "train": 30, "lr": 0.25, "epochs": 10})
MOMENTUM = 0.9


def _keep_best_data(setting):
    x, y = make_linear_data(n=setting["n"], w=setting["w"], b=setting["b"], noise=0.05, seed=setting["seed"])
    k = setting["train"]
    return x[:k], y[:k], x[k:], y[k:]


def keep_best_oracle(setting):
    """Momentum gradient descent in float64 from w = b = 0: per epoch, the (w, b) at its end, the validation mse,
    the loss of the last validation batch (eval_loss) and the loss of the last training step."""
    xt, yt, xv, yv = (a[:, 0].astype(np.float64) for a in _keep_best_data(setting))
    w = b = vw = vb = 0.0
    rows = []
    for _ in range(setting["epochs"]):
        for i in range(0, len(xt), 10):
            xb, yb = xt[i:i + 10], yt[i:i + 10]
            r = w * xb + b - yb
            last_step = np.mean(r * r)
            vw, vb = MOMENTUM * vw + 2 * np.mean(r * xb), MOMENTUM * vb + 2 * np.mean(r)
            w, b = w - setting["lr"] * vw, b - setting["lr"] * vb
        rows.append({"w": w, "b": b, "mse": np.mean((w * xv + b - yv) ** 2),
                     "eval_loss": np.mean((w * xv[-10:] + b - yv[-10:]) ** 2), "last_step": last_step})
    return rows


def _a_subclass(answer, base):
    """Incorrect unless the class ``answer`` is derived from ``base`` (mindspore.train's Callback or Metric)."""
    if not issubclass(answer, base):
        raise Incorrect(t("expected a class derived from mindspore.train.{base}, got {answer}", base=base.__name__,
                          answer=shown(answer)))


def _run(run, *args, use="", **kwargs):
    """``run(*args, **kwargs)``: model.fit or model.eval with the learner's class in it. Incorrect when fit
    refuses a 1.x callback method (``use`` names those of 2.x), or MindSpore fails: its message, without
    its C++ call stack."""
    try:
        return run(*args, **kwargs)
    except (RuntimeError, TypeError, ValueError) as error:
        if use and "on_train" in str(error):
            raise Incorrect(t("model.fit refused the callback because it defines a 1.x method (epoch_end, "
                              "step_end, end, ...): use {use}", use=use)) from None
        if "C++ Call Stack" not in str(error):  # not MindSpore's: the verdict shows it with its line
            raise
        raise Incorrect(t("with your class in it, MindSpore raised {error}: {message}", error=type(error).__name__,
                          message=brief_error(error))) from None


_same_weights = partial(close, rtol=1e-4, atol=1e-4)  # float32 training against the float64 oracle


def _check_keep_best(answer):
    from mindspore import nn
    from mindspore.train import Callback, Model

    _a_subclass(answer, Callback)
    for setting in KEEP_BEST_SETTINGS:
        rows = keep_best_oracle(setting)
        epoch_of = {rule: 1 + int(np.argmin([r[rule] for r in rows])) for rule in ("mse", "eval_loss", "last_step")}
        xt, yt, xv, yv = _keep_best_data(setting)
        net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
        optimizer = nn.Momentum(net.trainable_params(), learning_rate=setting["lr"], momentum=MOMENTUM)
        _run(Model(net, nn.MSELoss(), optimizer, metrics={"mse"}).fit, setting["epochs"], _dataset(xt, yt, 10),
             _dataset(xv, yv, 10), callbacks=[answer()], use="on_train_epoch_end, on_train_end")
        got = (float(net.weight.asnumpy().ravel()[0]), float(net.bias.asnumpy().ravel()[0]))
        ends = [(r["w"], r["b"]) for r in rows]  # the weights at the end of each epoch
        if _same_weights(got, ends[epoch_of["mse"] - 1]):
            continue
        where = t("in a fit of {epochs} epochs whose validation mse is lowest after epoch {best}",
                  epochs=setting["epochs"], best=epoch_of["mse"])
        name_the_mistake(got, lambda epoch, ends=ends: ends[epoch - 1], [
            ({"epoch": setting["epochs"]}, _NOT_RESTORED),
            ({"epoch": epoch_of["eval_loss"]}, _WATCHED_EVAL_LOSS),
            ({"epoch": epoch_of["last_step"]}, _WATCHED_TRAINING_LOSS),
        ], same=_same_weights, where=where, eval_epoch=epoch_of["eval_loss"], train_epoch=epoch_of["last_step"])
        found = next((k for k, weights in enumerate(ends, 1) if _same_weights(got, weights)), None)
        if found is None:
            best = rows[epoch_of["mse"] - 1]
            raise Incorrect(t("{where}, the net ends with w, b = {w:.5f}, {b:.5f}, the weights of no epoch's end; "
                              "expected epoch {epoch}'s {best_w:.5f}, {best_b:.5f}", where=where, w=got[0], b=got[1],
                              epoch=epoch_of["mse"], best_w=best["w"], best_b=best["b"]))
        raise Incorrect(t("{where}, the net ends with the weights of epoch {found}", where=where, found=found))


_NOT_RESTORED = lazy("{where}, the net ends with the last epoch's weights: put the best ones back in on_train_end, "
                     "and keep copies of their values (p.asnumpy().copy()), not the Parameters, which go on changing")
_WATCHED_EVAL_LOSS = lazy("{where}, the net ends with epoch {eval_epoch}'s weights, where eval_loss is lowest: "
                          "eval_loss is only the last validation batch's loss; watch cb_params.eval_results['mse']")
_WATCHED_TRAINING_LOSS = lazy("{where}, the net ends with epoch {train_epoch}'s weights, where the training loss "
                              "(net_outputs) is lowest: watch the validation mse, cb_params.eval_results['mse']")


# ---- 09.4: a callback that stops on the epoch's mean loss --------------------------------------------------
def _check_stop_below(answer):
    from mindspore.train import Callback

    _a_subclass(answer, Callback)
    x, y = make_linear_data()
    means, lasts = numpy_epoch_losses(15)
    for threshold in STOP_THRESHOLDS:
        expected = expected_stop_epoch(threshold)
        model, optimizer = _zero_model()
        _run(model.fit, 15, _dataset(x, y, BATCH), callbacks=[answer(threshold)],
             use="on_train_epoch_end, on_train_step_end, on_train_epoch_begin")
        steps = int(optimizer.global_step.asnumpy().ravel()[0])
        epochs = -(-steps // 5)  # 5 steps an epoch: the one it stopped in
        if steps % 5:
            raise Incorrect(t("with threshold={threshold}, training stopped in the middle of epoch {epoch} (after "
                              "{steps} steps): request the stop at the end of an epoch, not after a step",
                              threshold=threshold, epoch=epochs, steps=steps))
        if epochs == 15 and expected < 15:
            raise Incorrect(t("with threshold={threshold}, training never stopped: call run_context.request_stop()",
                              threshold=threshold))
        if epochs != expected:
            last_rule = next((k for k, loss in enumerate(lasts, 1) if loss < threshold), None)
            why = (t(" That is where the loss of the epoch's last step drops below it: average all the epoch's "
                     "steps.") if epochs == last_rule else "")
            raise Incorrect(t("with threshold={threshold}, training stopped after epoch {epoch}, but the first epoch "
                              "whose mean loss is below it is epoch {expected} (mean {mean:.4f}, epoch {before}: "
                              "{mean_before:.4f}).{why}", threshold=threshold, epoch=epochs,
                              expected=expected, mean=means[expected - 1], before=expected - 1,
                              mean_before=means[expected - 2], why=why))


# ---- 09.5: an RMSE metric over batches of any size ---------------------------------------------------------
def _random_batches(rng, sizes):
    batches = []
    for n in sizes:
        true = rng.normal(size=(n, 1)).astype(np.float32)
        pred = (true + rng.normal(scale=rng.uniform(0.1, 2.0), size=(n, 1))).astype(np.float32)
        batches.append((pred, true))
    return batches


def _numpy_rmse(batches, average=None, root=True):
    """Oracle: the RMSE over all samples of the (prediction, truth) batches; and the typical mistakes: the mean
    of the batches' RMSE (average="rmse"), the root of the mean of their MSE (average="mse"), no root."""
    if average == "rmse":
        return float(np.mean([_numpy_rmse([batch]) for batch in batches]))
    if average == "mse":
        return float(np.sqrt(np.mean([_numpy_rmse([batch], root=False) for batch in batches])))
    mse = float(np.mean(np.concatenate([p.astype(np.float64) - y.astype(np.float64) for p, y in batches]) ** 2))
    return float(np.sqrt(mse)) if root else mse


_PER_BATCH = lazy("for batches of 7, 30, 3 and 60 samples your metric gives {value:.6f}, numpy {want:.6f}: you "
                  "average per-batch values. Accumulate sums over samples and divide once in eval()")
_RMSE_MISTAKES = [({"average": "rmse"}, _PER_BATCH), ({"average": "mse"}, _PER_BATCH),
                  ({"root": False}, lazy("your metric gives {value:.6f} = the mean squared error; RMSE is its "
                                         "square root ({want:.6f})"))]
_same_rmse = partial(close, rtol=1e-5, atol=1e-8)


def _check_rmse_metric(answer):
    from mindspore import Tensor
    from mindspore.train import Metric

    _a_subclass(answer, Metric)
    metric, rng = answer(), np.random.default_rng(7)

    def fed(batches):
        metric.clear()
        for pred, true in batches:
            _run(metric.update, Tensor(pred), Tensor(true))
        return number(metric.eval(), t("your metric's eval()")), _numpy_rmse(batches)

    first = _random_batches(rng, (7, 30, 3, 60))
    got, want = fed(first)
    if not _same_rmse(got, want):
        name_the_mistake(got, lambda **mistake: _numpy_rmse(first, **mistake), _RMSE_MISTAKES, same=_same_rmse,
                         value=got, want=want)  # (name_the_mistake's first argument is called got)
        raise Incorrect(t("for batches of 7, 30, 3 and 60 samples your metric gives {got:.6f}, numpy gives "
                          "{want:.6f}", got=got, want=want))
    got, want = fed(_random_batches(rng, (11, 5)))
    if not _same_rmse(got, want):
        raise Incorrect(t("after clear() and two new batches your metric gives {got:.6f}, numpy {want:.6f}: reset in "
                          "clear()", got=got, want=want))
    x, y = make_linear_data(n=50, seed=3)  # in batches of 15, 15, 15, 5; w = b = 0 predicts 0
    got = number(_run(_zero_model(metrics={"rmse": answer()})[0].eval, _dataset(x, y, 15))["rmse"],
                 t("inside Model.eval, your metric"))
    want = float(np.sqrt(np.mean(y.astype(np.float64) ** 2)))
    if not _same_rmse(got, want):
        raise Incorrect(t("inside Model.eval your metric gives {got:.6f}, numpy {want:.6f}", got=got, want=want))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
eval_loss_meaning = Prediction(
    lazy("In fit, the validation set (20 samples) comes in two batches of 10. Which number is "
         "cb_params.eval_results['eval_loss']?"),
    {"a": (lazy("the mean squared error over all 20 validation samples, the same as the 'mse' metric"),
           lazy("what the name suggests, and true when the validation set is one batch; with two batches, eval_loss "
                "covers only the second")),
     "b": (lazy("the mean of the two batch losses"),
           lazy("that is what the 'loss' metric does (section 7 shows it): it averages the batch losses. eval_loss is "
                "another number: MindSpore creates a new loss accumulator for every validation batch")),
     "c": (lazy("the loss of the last validation batch only"),
           lazy("on 2.10 a new loss accumulator is made for every validation batch, so only the last one's loss is "
                "left. Give fit the validation set as one batch, or watch a metric such as 'mse'"))},
    answer="c")
plateau_under_train = Prediction(
    lazy("EarlyStopping(patience=0) and ReduceLROnPlateau(factor=0.5, patience=0), both with their default "
         "monitor='eval_loss', are given to model.train (no validation set) for 3 epochs at lr 0.5. What happens?"),
    {"a": (lazy("they watch the training loss instead: training stops early and the learning rate is halved"),
           lazy("a sensible fallback, but MindSpore does not switch monitors: eval_loss is the only thing they look "
                "for, and under model.train it does not exist. monitor='loss' (the training loss) must be asked for")),
     "b": (lazy("model.train raises an error: there is no eval_loss without validation"),
           lazy("an error would be kinder; instead the callbacks log a warning each epoch (which GLOG_v=3 also hides) "
                "and carry on")),
     "c": (lazy("all 3 epochs run and the learning rate stays 0.5: both only log a warning each epoch"),
           lazy("under model.train nothing is validated, so the value they watch never appears: each epoch they log "
                "'eval_loss, which is not available' and do nothing. With GLOG_v=3 you do not even see the warning"))},
    answer="c")
keep_best = FunctionExercise(_check_keep_best, signature="KeepBest()", cls=True, hints=[
    lazy("two moments matter: the end of each epoch, when fit has just validated, and the end of training"),
    lazy("on_train_epoch_end: mse = run_context.original_args().eval_results['mse']; when it is the lowest so far, "
         "keep it and {p.name: p.asnumpy().copy() for p in cb_params.network.trainable_params()}"),
    lazy("on_train_end: for every parameter p of cb_params.network.trainable_params(), "
         "ops.assign(p, Tensor(self.best_weights[p.name]))"),
])
stop_below = FunctionExercise(_check_stop_below, signature="StopBelow(threshold)", cls=True, hints=[
    lazy("the decision needs every step's loss of an epoch, so collect them, and decide when the epoch ends"),
    lazy("collect the step losses in on_train_step_end (reset them in on_train_epoch_begin), then in "
         "on_train_epoch_end compare their mean with the threshold and call run_context.request_stop()"),
])
rmse_metric = FunctionExercise(_check_rmse_metric, signature="RMSE()", cls=True, hints=[
    lazy("a Metric accumulates over batches in update() and combines in eval(); RMSE is a root of a mean"),
    lazy("keep the number of samples and the sum of squared errors; eval() returns sqrt(sum / n). "
         "self._convert_data(tensor) gives a numpy array"),
])

bind(globals())
