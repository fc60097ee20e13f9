"""Exercises of notebook 07 (the Model API, callbacks and metrics).

Each check runs the learner's answer in a real ``Model`` run or on real batches and compares with numpy:
epoch losses of plain mini-batch gradient descent, a root mean squared error over all samples.
"""

import numpy as np

from course_utils._validate import shown
from course_utils.data import make_linear_data
from course_utils.exercises import Exercise, as_number

BATCH = 20  # the course data in batches of 20, no shuffling: 5 steps per epoch
LR = 0.5
STOP_THRESHOLDS = (0.06, 0.03)  # each lies between two epoch means, away from both (see the tests)


def _dataset(x, y, batch_size):
    import mindspore.dataset as ds

    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch_size)


def _zero_model(metrics=None):
    """y = w*x + b from w = b = 0 (no random initialisation), MSE loss, SGD(LR)."""
    from mindspore import nn
    from mindspore.train import Model

    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    return Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=LR), metrics=metrics)


def _counter():
    from mindspore.train import Callback

    class Counter(Callback):
        def __init__(self):
            super().__init__()
            self.epochs, self.steps = 0, 0

        def on_train_step_end(self, run_context):
            self.steps += 1

        def on_train_epoch_end(self, run_context):
            self.epochs += 1

    return Counter()


def numpy_epoch_losses(epochs, batch_size=BATCH, lr=LR):
    """Oracle: (mean loss, last step's loss) of each epoch of mini-batch gradient descent from w = b = 0."""
    x, y = make_linear_data()
    x, y = x[:, 0].astype(np.float64), y[:, 0].astype(np.float64)
    w = b = 0.0
    means, lasts = [], []
    for _ in range(epochs):
        losses = []
        for i in range(0, len(x), batch_size):
            xb, yb = x[i:i + batch_size], y[i:i + batch_size]
            residual = w * xb + b - yb
            losses.append(np.mean(residual ** 2))  # a train step returns the loss before its update
            w, b = w - lr * 2 * np.mean(residual * xb), b - lr * 2 * np.mean(residual)
        means.append(float(np.mean(losses)))
        lasts.append(losses[-1])
    return means, lasts


def expected_stop_epoch(threshold, epochs=15):
    means, _ = numpy_epoch_losses(epochs)
    return next(k for k, mean in enumerate(means, 1) if mean < threshold)


# ---- 07.1: the monitor that works under model.train -----------------------------------------------------
def _check_train_monitor(answer):
    if not isinstance(answer, str):
        return f"expected the monitor's name as a string (such as 'eval_loss'), got {shown(answer)}"
    from mindspore.train import EarlyStopping

    x, y = make_linear_data()
    counter = _counter()
    # min_delta is huge: from the second epoch on nothing counts as an improvement, so a working monitor stops
    # training after epoch 2 (patience=1).
    _zero_model().train(4, _dataset(x, y, 50), callbacks=[EarlyStopping(monitor=answer, min_delta=1.0, patience=1),
                                                            counter])
    if counter.epochs == 4:
        return (f"with monitor={answer!r}, EarlyStopping found nothing to watch under model.train and all 4 epochs "
                f"ran. model.train does not validate: what is there to watch at the end of each epoch?")
    if counter.epochs != 2:
        return f"unexpected: training ran {counter.epochs} epochs"
    return None


train_monitor = Exercise("07.1", _check_train_monitor, hints=[
    "under model.train no validation runs: which number does every epoch end still have?",
    "under model.train the only number at an epoch's end is the training loss of its last step "
    "(cb_params.net_outputs); EarlyStopping's docstring names it",
])


# ---- 07.2: a callback that stops on the epoch's mean loss --------------------------------------------------
def _check_stop_below(answer):
    from mindspore.train import Callback

    if isinstance(answer, Callback):
        return "set answer to the class itself (StopBelow), not an instance (StopBelow(0.1))"
    if not isinstance(answer, type) or not issubclass(answer, Callback):
        return f"expected a class derived from mindspore.train.Callback, got {shown(answer)}"
    x, y = make_linear_data()
    means, lasts = numpy_epoch_losses(15)
    for threshold in STOP_THRESHOLDS:
        expected = expected_stop_epoch(threshold)
        counter = _counter()
        try:
            _zero_model().fit(15, _dataset(x, y, BATCH), callbacks=[answer(threshold), counter])
        except ValueError as error:
            if "on_train" in str(error):
                return ("model.fit refused the callback because it defines a 1.x method (epoch_end, step_end, "
                        "begin...): use on_train_epoch_end, on_train_step_end, on_train_epoch_begin")
            raise
        if counter.steps % 5:
            return (f"with threshold={threshold}, training stopped in the middle of epoch {counter.epochs} "
                    f"(after {counter.steps} steps): request the stop at the end of an epoch, not after a step")
        if counter.epochs == 15 and expected < 15:
            return f"with threshold={threshold}, training never stopped: call run_context.request_stop()"
        if counter.epochs != expected:
            last_rule = next((k for k, loss in enumerate(lasts, 1) if loss < threshold), None)
            why = (" That is where the loss of the epoch's last step drops below it: average all the epoch's "
                   "steps." if counter.epochs == last_rule else "")
            return (f"with threshold={threshold}, training stopped after epoch {counter.epochs}, but the first "
                    f"epoch whose mean loss is below it is epoch {expected} (mean {means[expected - 1]:.4f}, "
                    f"epoch {expected - 1}: {means[expected - 2]:.4f}).{why}")
    return None


stop_below = Exercise("07.2", _check_stop_below, hints=[
    "the decision needs every step's loss of an epoch, so collect them, and decide when the epoch ends",
    "collect the step losses in on_train_step_end (reset them in on_train_epoch_begin), then in on_train_epoch_end "
    "compare their mean with the threshold and call run_context.request_stop()",
])


# ---- 07.3: an RMSE metric over batches of any size ---------------------------------------------------------
def _feed(metric, batches):
    """Feed the batches; return (the metric's eval() as a float, None) or (None, what is wrong with it)."""
    from mindspore import Tensor

    for pred, true in batches:
        metric.update(Tensor(pred), Tensor(true))
    return as_number(metric.eval(), "your metric's eval()")


def _random_batches(rng, sizes):
    batches = []
    for n in sizes:
        true = rng.normal(size=(n, 1)).astype(np.float32)
        pred = (true + rng.normal(scale=rng.uniform(0.1, 2.0), size=(n, 1))).astype(np.float32)
        batches.append((pred, true))
    return batches


def _numpy_rmse(batches):
    errors = np.concatenate([p.astype(np.float64) - t.astype(np.float64) for p, t in batches])
    return float(np.sqrt(np.mean(errors ** 2)))


def _check_rmse_metric(answer):
    from mindspore.train import Metric

    if isinstance(answer, Metric):
        return "set answer to the class itself (RMSE), not an instance (RMSE())"
    if not isinstance(answer, type) or not issubclass(answer, Metric):
        return f"expected a class derived from mindspore.train.Metric, got {shown(answer)}"
    rng = np.random.default_rng(7)
    metric = answer()
    metric.clear()
    first = _random_batches(rng, (7, 30, 3, 60))
    (got, problem), want = _feed(metric, first), _numpy_rmse(first)
    if problem:
        return problem
    if not np.isclose(got, want, rtol=1e-5):
        per_batch = float(np.mean([_numpy_rmse([b]) for b in first]))
        batch_mse = float(np.sqrt(np.mean([_numpy_rmse([b]) ** 2 for b in first])))
        if np.isclose(got, per_batch, rtol=1e-5) or np.isclose(got, batch_mse, rtol=1e-5):
            return (f"for batches of 7, 30, 3 and 60 samples your metric gives {got:.6f}, numpy {want:.6f}: you "
                    f"average per-batch values. Accumulate sums over samples and divide once in eval()")
        if np.isclose(got, want ** 2, rtol=1e-5):
            return f"your metric gives {got:.6f} = the mean squared error; RMSE is its square root ({want:.6f})"
        return f"for batches of 7, 30, 3 and 60 samples your metric gives {got:.6f}, numpy gives {want:.6f}"
    metric.clear()
    second = _random_batches(rng, (11, 5))
    (got, problem), want = _feed(metric, second), _numpy_rmse(second)
    if problem:
        return problem
    if not np.isclose(got, want, rtol=1e-5):
        return f"after clear() and two new batches your metric gives {got:.6f}, numpy {want:.6f}: reset in clear()"
    x, y = make_linear_data(n=50, seed=3)
    model = _zero_model(metrics={"rmse": answer()})
    got, problem = as_number(model.eval(_dataset(x, y, 15))["rmse"], "inside Model.eval, your metric")
    if problem:  # batches of 15, 15, 15, 5; w = b = 0 predicts 0
        return problem
    want = float(np.sqrt(np.mean(y.astype(np.float64) ** 2)))
    if not np.isclose(got, want, rtol=1e-5):
        return f"inside Model.eval your metric gives {got:.6f}, numpy {want:.6f}"
    return None


rmse_metric = Exercise("07.3", _check_rmse_metric, hints=[
    "a Metric accumulates over batches in update() and combines in eval(); RMSE is a root of a mean",
    "keep the number of samples and the sum of squared errors; eval() returns sqrt(sum / n). "
    "self._convert_data(tensor) gives a numpy array",
])
