"""Exercises of notebook 09 (the Model API, callbacks and metrics).

Each check runs the learner's answer in a real ``Model`` run or on real batches of its own data and compares
with numpy: momentum gradient descent with per-epoch validation, mini-batch gradient descent whose learning
rate warms up step by step, Pearson's correlation over all samples (numpy's corrcoef). Two predictions: what
EarlyStopping and ReduceLROnPlateau do under ``model.train``, and what ``eval_loss`` covers in ``fit``.
"""

from functools import partial

import numpy as np

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


def _dataset(x, y, batch_size):
    import mindspore.dataset as ds

    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size)


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
                              "step_end, end, ...); fit calls only the 2.x hooks")) from None
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


_NOT_RESTORED = lazy("{where}, the net ends with the last epoch's weights: what does your callback keep, and when "
                     "does it put it back?")
_WATCHED_EVAL_LOSS = lazy("{where}, the net ends with epoch {eval_epoch}'s weights, where eval_loss is lowest: what "
                          "does eval_loss cover (prediction 09.1)?")
_WATCHED_TRAINING_LOSS = lazy("{where}, the net ends with epoch {train_epoch}'s weights, where the training loss "
                              "(net_outputs) is lowest, not the validation mse")


# ---- 09.4: a callback that warms the learning rate up, step by step ------------------------------------------
# Each setting: the checker's data (n, w, b, seed) in batches of 20, epochs, the optimizer's rate, warm-up steps.
WARMUP_SETTINGS = ({"n": 60, "w": -1.2, "b": 0.5, "seed": 17, "epochs": 4, "lr": 0.3, "steps": 5},
                   {"n": 80, "w": 2.5, "b": -1.0, "seed": 23, "epochs": 3, "lr": 0.2, "steps": 7})
# the rate of step s (1, 2, ...) in epoch e: the exercise's rule and the typical mistakes
SCHEDULES = {
    "warmup": lambda base, steps, s, e: base * min(1.0, s / steps),
    "constant": lambda base, steps, s, e: base,  # the rate never changed (or only through set_data, ignored)
    "after": lambda base, steps, s, e: base if s == 1 else base * min(1.0, s / steps),  # set in on_train_step_end
    "from zero": lambda base, steps, s, e: base * min(1.0, (s - 1) / steps),  # s counted from 0
    "frozen": lambda base, steps, s, e: base * min(1.0, 1 / steps),  # set_data: only the first change is seen
    "per epoch": lambda base, steps, s, e: base * min(1.0, e / steps),
}


def _warmup_data(setting):
    return make_linear_data(n=setting["n"], w=setting["w"], b=setting["b"], noise=0.05, seed=setting["seed"])


def warmup_oracle(setting, schedule="warmup"):
    """Plain mini-batch gradient descent on the MSE from w = b = 0 in float64, step s at the schedule's rate."""
    x, y = (a[:, 0].astype(np.float64) for a in _warmup_data(setting))
    rate, w, b, s = SCHEDULES[schedule], 0.0, 0.0, 0
    for epoch in range(1, setting["epochs"] + 1):
        for i in range(0, len(x), BATCH):
            s += 1
            lr = rate(setting["lr"], setting["steps"], s, epoch)
            r = w * x[i:i + BATCH] + b - y[i:i + BATCH]
            w, b = w - lr * 2 * np.mean(r * x[i:i + BATCH]), b - lr * 2 * np.mean(r)
    return w, b


_WARMUP_MISTAKES = {
    "constant": lazy("{where}, the weights are those of plain SGD at the full rate: the rate never changed "
                     "(notebook 06 shows how a new rate reaches the optimizer)"),
    "frozen": lazy("{where}, every step ran at step 1's rate: only your first change reached the optimizer "
                   "(notebook 06's trap)"),
    "after": lazy("{where}, step 1 ran at the full rate: when does your callback set a step's rate?"),
    "from zero": lazy("{where}, step 1 ran at rate 0: what is cur_step_num in the first step?"),
    "per epoch": lazy("{where}, the rate rose once an epoch, not at every step"),
}


def _check_warmup(answer):
    from mindspore import nn
    from mindspore.train import Callback, Model

    _a_subclass(answer, Callback)
    for setting in WARMUP_SETTINGS:
        x, y = _warmup_data(setting)
        net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
        optimizer = nn.SGD(net.trainable_params(), learning_rate=setting["lr"])
        _run(Model(net, nn.MSELoss(), optimizer).train, setting["epochs"], _dataset(x, y, BATCH),
             callbacks=[answer(setting["steps"])], use="on_train_begin, on_train_step_begin")
        got = (float(net.weight.asnumpy().ravel()[0]), float(net.bias.asnumpy().ravel()[0]))
        if _same_weights(got, warmup_oracle(setting)):
            continue
        where = t("with Warmup({steps}) on SGD({lr}), {epochs} epochs of {batches} batches",
                  steps=setting["steps"], lr=setting["lr"], epochs=setting["epochs"], batches=len(x) // BATCH)
        name_the_mistake(got, lambda schedule, setting=setting: warmup_oracle(setting, schedule),
                         [({"schedule": name}, why) for name, why in _WARMUP_MISTAKES.items()],
                         same=_same_weights, where=where)
        want = warmup_oracle(setting)
        raise Incorrect(t("{where}, the net ends with w, b = {w:.5f}, {b:.5f}; warming up as asked gives "
                          "{want_w:.5f}, {want_b:.5f}", where=where, w=got[0], b=got[1], want_w=want[0],
                          want_b=want[1]))


# ---- 09.5: a correlation metric over batches of any size ------------------------------------------------------
def _random_batches(rng, sizes):
    batches = []
    for n in sizes:
        true = rng.normal(loc=rng.uniform(-2, 2), size=(n, 1)).astype(np.float32)  # each batch its own mean
        pred = (0.8 * true + rng.normal(scale=rng.uniform(0.3, 1.5), size=(n, 1))).astype(np.float32)
        batches.append((pred, true))
    return batches


def _numpy_correlation(batches, per_batch=False, squared=False):
    """Oracle: Pearson's r between all predictions and all labels (numpy's corrcoef); and two typical mistakes:
    the mean of the batches' r (per_batch=True), r squared."""
    if per_batch:
        return float(np.mean([_numpy_correlation([batch]) for batch in batches]))
    pred, true = (np.concatenate([b[k].astype(np.float64).ravel() for b in batches]) for k in (0, 1))
    r = float(np.corrcoef(pred, true)[0, 1])
    return r * r if squared else r


_SIZES = (7, 30, 3, 60)
_CORRELATION_MISTAKES = [
    ({"per_batch": True}, lazy("for batches of 7, 30, 3 and 60 samples your metric gives {value:.6f}, numpy "
                               "{want:.6f}: the mean of the batches' correlations")),
    ({"squared": True}, lazy("for batches of 7, 30, 3 and 60 samples your metric gives {value:.6f}, the square of "
                             "numpy's r ({want:.6f})")),
]
_same_value = partial(close, rtol=1e-5, atol=1e-7)


def _check_correlation(answer):
    from mindspore import Tensor, nn
    from mindspore.train import Metric, Model

    _a_subclass(answer, Metric)
    metric, rng = answer(), np.random.default_rng(11)

    def fed(batches):
        metric.clear()
        for pred, true in batches:
            _run(metric.update, Tensor(pred), Tensor(true))
        return number(metric.eval(), t("your metric's eval()")), _numpy_correlation(batches)

    first = _random_batches(rng, _SIZES)
    got, want = fed(first)
    if not _same_value(got, want):
        name_the_mistake(got, lambda **mistake: _numpy_correlation(first, **mistake), _CORRELATION_MISTAKES,
                         same=_same_value, value=got, want=want)
        raise Incorrect(t("for batches of 7, 30, 3 and 60 samples your metric gives {got:.6f}, numpy's corrcoef "
                          "{want:.6f}", got=got, want=want))
    second = _random_batches(rng, (11, 5))
    second = [(-p, t_) for p, t_ in second]  # negatively correlated: the sign matters
    got, want = fed(second)
    if not _same_value(got, want):
        if _same_value(abs(got), abs(want)):
            raise Incorrect(t("after clear() and two new batches, correlated negatively, your metric gives {got:.6f}, "
                              "numpy {want:.6f}: the sign is lost", got=got, want=want))
        raise Incorrect(t("after clear() and two new batches your metric gives {got:.6f}, numpy {want:.6f}: what does "
                          "clear() leave behind?", got=got, want=want))
    x, y = make_linear_data(n=50, w=-1.0, b=0.3, noise=0.5, seed=3)  # in batches of 15, 15, 15, 5
    net = nn.Dense(1, 1, weight_init="ones", bias_init="zeros")  # predicts x
    got = number(_run(Model(net, nn.MSELoss(), metrics={"r": answer()}).eval, _dataset(x, y, 15))["r"],
                 t("inside Model.eval, your metric"))
    want = float(np.corrcoef(x[:, 0].astype(np.float64), y[:, 0].astype(np.float64))[0, 1])
    if not _same_value(got, want):
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
    lazy("at the end of each epoch, eval_results holds what fit has just measured on the validation set; whenever "
         "the mse is the lowest so far, keep it and copies of the parameters' values (numpy arrays, by name), since "
         "the Parameters themselves go on changing"),
    lazy("at the end of training, write each kept value back into the Parameter of its name, with the op notebook "
         "08 resets parameters with"),
])
warmup = FunctionExercise(_check_warmup, signature="Warmup(steps)", cls=True, hints=[
    lazy("two moments matter: when training begins (remember the optimizer's rate, the base) and before every step"),
    lazy("in on_train_step_begin, cur_step_num is the number of the step about to run (1 in the first); the "
         "optimizer is run_context.original_args().optimizer, its rate the Parameter optimizer.learning_rate"),
    lazy("the rate is a Parameter the optimizer has already used: write each new value into it as notebook 06 does, "
         "as a float32 Tensor"),
])
correlation_metric = FunctionExercise(_check_correlation, signature="Correlation()", cls=True, hints=[
    lazy("the batches' correlations do not combine into the correlation over all samples; running totals over "
         "samples do, since they simply add up from batch to batch"),
    lazy("the covariance and the two variances can each be written with six sums over samples (n, Σp, Σy, Σp², Σy², "
         "Σpy): update() adds to them, eval() combines them. tensor.asnumpy() gives a numpy array; use float64"),
])

bind(globals())
