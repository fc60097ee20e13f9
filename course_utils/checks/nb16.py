"""Exercises of notebook 16 (capstone: a small MLP for y = sin(3x))."""

import numpy as np

from course_utils._validate import shown
from course_utils.exercises import Exercise, Prediction, ScaffoldExercise, as_array

# The checker's own inputs for 16.1: a grid over [-1, 1].
GRID = np.linspace(-1.0, 1.0, 201, dtype=np.float32).reshape(-1, 1)


def _check_mlp_class(answer):
    import mindspore as ms
    from mindspore import nn, ops

    if not (isinstance(answer, type) and issubclass(answer, nn.Cell)):
        return f"expected a class that subclasses nn.Cell (not an instance), got {shown(answer)}"
    net = answer()
    shapes = [tuple(p.shape) for p in net.trainable_params()]
    # The checker's own random values (its own generator: the learner's global seed is left alone). A net
    # initialised to zeros, or to any symmetric values, outputs a constant and would look like a straight line.
    rng = np.random.default_rng(1)
    for p in net.trainable_params():
        ops.assign(p, ms.Tensor(rng.normal(0.0, 0.7, tuple(p.shape)), p.dtype))
    out, problem = as_array(net(ms.Tensor(GRID)), "the output of your net")
    if problem:
        return problem
    if out.shape != GRID.shape:
        return f"for input of shape {GRID.shape} the output has shape {out.shape}; end with Dense(hidden, 1)"
    if len(shapes) < 4:
        return f"one Dense layer is MinimalNet again (a straight line); add a hidden layer. Parameters: {shapes}"
    if not np.all(np.isfinite(out)):
        return "the output holds NaN or inf for inputs in [-1, 1]"
    values = out.ravel()
    line = np.polyval(np.polyfit(GRID.ravel(), values, 1), GRID.ravel())
    if np.max(np.abs(values - line)) < 1e-6:
        return "the output is still a straight line in x: put a nonlinearity such as nn.Tanh() between the layers"
    return None


# ---- 16.2 the training function ----------------------------------------------------------------------
TRAIN_LR, TRAIN_EPOCHS, TRAIN_BATCH = 0.02, 3, 16  # the check's settings: 40 rows, so batches of 16, 16, 8


def _train_setup():
    """The checker's own task and net: y = cos(2.5x) on 40 points, a 1-4-1 tanh net with its own weights."""
    rng = np.random.default_rng(12)
    x = rng.uniform(-1.0, 1.0, (40, 1)).astype(np.float32)
    y = np.cos(2.5 * x).astype(np.float32)
    init = [rng.normal(0.0, 0.8, (4, 1)), rng.normal(0.0, 0.3, (4,)), rng.normal(0.0, 0.8, (1, 4)),
            rng.normal(0.0, 0.3, (1,))]
    return x, y, [a.astype(np.float32) for a in init]


def train_oracle(lr=TRAIN_LR, epochs=TRAIN_EPOCHS, batch_size=TRAIN_BATCH, optimizer="adam", drop_last=False):
    """Numpy (float64) mini-batch training of the 1-4-1 tanh net on the MSE, batches in order; Adam as
    MindSpore defines it (beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected step) or plain SGD."""
    x, y, init = _train_setup()
    x, y = x.astype(np.float64), y.astype(np.float64)
    params = [p.astype(np.float64) for p in init]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = 0
    for _ in range(epochs):
        for start in range(0, len(x), batch_size):
            xb, yb = x[start:start + batch_size], y[start:start + batch_size]
            if drop_last and len(xb) < batch_size:
                continue
            w1, c1, w2, c2 = params
            h = np.tanh(xb @ w1.T + c1)
            d = 2.0 * (h @ w2.T + c2 - yb) / len(xb)
            dh = (d @ w2) * (1.0 - h ** 2)
            grads = [dh.T @ xb, dh.sum(0), d.T @ h, d.sum(0)]
            t += 1
            for i, g in enumerate(grads):
                if optimizer == "sgd":
                    params[i] = params[i] - lr * g
                    continue
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g ** 2
                params[i] = params[i] - lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m[i] / (np.sqrt(v[i]) + 1e-8)
    return params


_TRAIN_MISTAKES = [
    ({"optimizer": "sgd"}, "that is plain SGD; use nn.Adam(net.trainable_params(), learning_rate=lr)"),
    ({"drop_last": True}, "the last, smaller batch (8 of the 40 rows) was skipped; train on it too"),
    ({"batch_size": 40}, "that is one full batch per epoch; split each epoch into batches of batch_size rows"),
    ({"epochs": TRAIN_EPOCHS - 1}, f"that is {TRAIN_EPOCHS - 1} epochs; train for `epochs` passes over the data"),
    ({"epochs": 1}, "that is 1 epoch; train for `epochs` passes over the data"),
]


def _close(got, want):
    return all(g.shape == w.shape and np.allclose(g, w, rtol=1e-3, atol=1e-4) for g, w in zip(got, want))


def _check_train_function(answer):
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    if not callable(answer):
        return f"expected your function train_mlp, got {shown(answer)}"
    x, y, init = _train_setup()
    net = nn.SequentialCell(nn.Dense(1, 4), nn.Tanh(), nn.Dense(4, 1))
    for param, value in zip(net.trainable_params(), init):
        ops.assign(param, Tensor(value, ms.float32))
    answer(net, x.copy(), y.copy(), TRAIN_LR, TRAIN_EPOCHS, TRAIN_BATCH)
    got = [p.asnumpy().astype(np.float64) for p in net.trainable_params()]
    if not all(np.all(np.isfinite(g)) for g in got):
        return "after your training the net's weights hold NaN or inf"
    if _close(got, init):
        return ("the net's weights did not change: train the net you are given, in place (not a new one), "
                "with an optimizer over net.trainable_params()")
    if _close(got, train_oracle()):
        return None
    where = f"on the check's data (40 rows, lr {TRAIN_LR}, {TRAIN_EPOCHS} epochs, batches of {TRAIN_BATCH})"
    for settings, why in _TRAIN_MISTAKES:
        if _close(got, train_oracle(**settings)):
            return f"{where}: {why}"
    err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, train_oracle()))
    return (f"{where} your weights differ from Adam's by up to {err:.3g}: MSE loss, nn.Adam, batches in order "
            "without shuffling, every batch once per epoch")


mlp_class = Exercise("16.1", _check_mlp_class, hints=[
    "MinimalNet is one Dense layer, a straight line. What has to sit between two Dense layers so that the "
    "output can bend?",
    "a hidden layer: Dense(1, hidden), then a nonlinearity such as nn.Tanh(), then Dense(hidden, 1); "
    "nn.SequentialCell chains cells, and construct returns it applied to x",
    "self.body = nn.SequentialCell(nn.Dense(1, hidden), nn.Tanh(), nn.Dense(hidden, hidden), nn.Tanh(), "
    "nn.Dense(hidden, 1)) in __init__, and construct returns self.body(x)",
])
train_function = ScaffoldExercise("16.2", _check_train_function, hints=[
    "the pieces of notebook 07 (or 09): an optimizer, a loss, a step, and two loops, over epochs and over "
    "batches",
    "optimizer = nn.Adam(net.trainable_params(), learning_rate=lr); grad_fn = ms.value_and_grad(forward, None, "
    "optimizer.parameters) with forward(a, b) = loss_fn(net(a), b); the batches are x[s:s + batch_size] for "
    "s in range(0, len(x), batch_size)",
    "in the loops: loss, grads = grad_fn(Tensor(xb), Tensor(yb)); optimizer(grads). Or with Model: "
    "Model(net, nn.MSELoss(), optimizer).train(epochs, ds.NumpySlicesDataset({'x': x, 'y': y}, shuffle=False)"
    ".batch(batch_size), dataset_sink_mode=False)",
])

# ---- predictions --------------------------------------------------------------------------------------
best_lr = Prediction(
    "16.3", "Adam trains the MLP for 40 epochs at lr 0.0003, 0.003, 0.03 and 0.3. Which ends with the lowest "
            "validation error?",
    {"a": ("0.0003: the smallest steps are the most precise",
           "small steps are precise only if there are enough of them; 320 steps of at most about 0.0003 each "
           "(Adam's step is about lr per weight) barely move the weights from their start"),
     "b": ("0.003: a little below the 0.01 that worked above, to be safe",
           "below 0.01 is not safer here, only slower: in 320 steps of about 0.003 the net is still on its way "
           "(look at how its error is still falling); a larger rate gets further in the same number of steps"),
     "c": ("0.03",
           "large enough to cover the distance in 320 steps, small enough not to jump around the minimum: "
           "the middle of the range, as in notebook 05"),
     "d": ("0.3: Adam normalises the gradients, so larger is just faster",
           "Adam's normalisation makes each step about lr in size whatever the gradient; at 0.3 that step is "
           "far too large for weights of size about 1, and training jumps around instead of settling")},
    answer="c")
reload_exact = Prediction(
    "16.4", "A fresh MLP gets the parameters of the last checkpoint. How do its predictions compare with "
            "those of the trained net that saved it?",
    {"a": ("identical, bit for bit",
           "a checkpoint stores every float32 parameter exactly as it is, and the same network on the same input "
           "computes the same output"),
     "b": ("equal to about 6 digits: saving rounds the weights",
           "nothing is rounded: the checkpoint holds the float32 values themselves, byte for byte"),
     "c": ("different: the optimizer's state (Adam's moments) is missing",
           "the optimizer state matters for training on, not for predicting: predictions use only the "
           "network's parameters")},
    answer="a")
