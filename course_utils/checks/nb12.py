"""Exercises of notebook 12 (automatic mixed precision): float16 rounding, loss scales, clipping, a CPU trap.

The oracles are numpy: float16 arithmetic with ``np.float16`` and gradient descent in float64.
"""

import math

import numpy as np

from course_utils import oracles
from course_utils._validate import shown
from course_utils.data import make_linear_data
from course_utils.exercises import NONE_HINT, Exercise, FunctionExercise, Incorrect, Prediction, bind, close, number
from course_utils.messages import lazy, t

TINY = 2.0 ** -24  # the loss factor of the notebook's loss-scaling section
FIXED_SCALE = 128.0  # the loss scale of exercise 12.6


def _power_of_two(answer, what):
    """The answer as a positive power of two, else :class:`Incorrect`."""
    try:
        value = number(answer, what)
    except Incorrect as problem:
        raise Incorrect(t("{problem} (such as 2.0 ** -3)", problem=problem)) from None
    if value <= 0:
        raise Incorrect(t("expected a positive number, got {value!r}", value=value))
    if math.frexp(value)[0] != 0.5:
        raise Incorrect(t("{value!r} is not a power of two; write it as 2.0 ** k", value=value))
    return value


# ---- 12.1 the smallest update a float16 weight keeps ------------------------------------------
# The checker's own weights, each a float16 number (the lesson added updates to 1 only). Some have an even
# last mantissa bit, some an odd one: halfway between two float16 numbers, a tie rounds to the even one.
UPDATE_WEIGHTS = (3.0, 100.0, 0.0625, 7.0, 0.300048828125, 1000.5, 2050.0, 60000.0)


def kept_update_oracle(w):
    """The smallest power of two u with float16(w) + float16(u) != float16(w), tried in numpy float16."""
    w16 = np.float16(w)
    return next(2.0 ** k for k in range(-24, 16) if w16 + np.float16(2.0 ** k) != w16)


def _odd_last_bit(w):
    return bool(int(np.float16(w).view(np.uint16)) & 1)


def _check_smallest_update(smallest_kept_update):
    for w in UPDATE_WEIGHTS:
        got = smallest_update.call(smallest_kept_update, w)
        u = _power_of_two(got, t("smallest_kept_update({w!r})", w=w))
        want = kept_update_oracle(w)
        if u == want:
            continue
        k = math.log2(u)
        kept = bool(np.float16(w) + np.float16(u) != np.float16(w))
        if not kept and u == want / 2 and not _odd_last_bit(w):
            raise Incorrect(t("smallest_kept_update({w!r}) returned 2**{k:g}, but {w!r} + 2**{k:g} is still {w!r} in "
                              "float16: it lies exactly halfway to the next float16 number, and a tie rounds to the "
                              "neighbour whose last bit is even, here {w!r} itself", w=w, k=k))
        if not kept:
            raise Incorrect(t("smallest_kept_update({w!r}) returned 2**{k:g}, but {w!r} + 2**{k:g} is still {w!r} in "
                              "float16: that update is lost. Try larger ones", w=w, k=k))
        if u == 2 * want and _odd_last_bit(w):
            raise Incorrect(t("smallest_kept_update({w!r}) returned 2**{k:g}, the distance to the next float16 number; "
                              "but half of it already changes {w!r}: the sum lies exactly halfway, and a tie rounds to "
                              "the neighbour whose last bit is even, which for {w!r} is the larger one", w=w, k=k))
        raise Incorrect(t("smallest_kept_update({w!r}) returned 2**{k:g}; {w!r} + 2**{k:g} does change in float16, "
                          "but so does a smaller power of two: keep halving while the sum still changes", w=w, k=k))


def _tiny_loss_gradients(x=None, y=None):
    """Float64 gradients (dL/dw, dL/db) of L = TINY * mean((w*x + b - y)**2) at w = b = 0 (the course data by
    default)."""
    if x is None:
        x, y = make_linear_data()
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    return np.array([-2.0 * np.mean(x * y), -2.0 * np.mean(y)]) * TINY


def scale_data():
    """The checker's data of exercise 12.4, not the course's: x2, y2 of shape (100, 1), float32, y2 = 3 x2 + 4 +
    noise with x2 in [0, 2)."""
    rng = np.random.RandomState(124)
    x = (2 * rng.rand(100, 1)).astype(np.float32)
    return x, (3 * x + 4 + rng.normal(0, 0.05, (100, 1))).astype(np.float32)


def _largest_power(grads):
    """The largest k with 2**k * grads finite in float16."""
    with np.errstate(over="ignore"):
        return max(k for k in range(-30, 120) if _finite_in_float16(2.0 ** k * grads))


def _finite_in_float16(values):
    with np.errstate(over="ignore"):
        return bool(np.all(np.isfinite(values.astype(np.float16))))


def _check_largest_scale(answer):
    scale = _power_of_two(answer, t("the loss scale"))
    x2, y2 = scale_data()
    grads = _tiny_loss_gradients(x2, y2)
    if scale == 2.0 ** _largest_power(_tiny_loss_gradients()) and not _finite_in_float16(scale * grads):
        raise Incorrect(t("that is the largest scale for the course data (the dynamic scaler above found it); this "
                          "exercise's data is x2, y2 = nb12.scale_data(): compute the gradients on those"))
    if scale == 2.0 ** _largest_power(grads / TINY):
        raise Incorrect(t("that is about the largest scale for the plain MSE of x2, y2; this section's loss is TINY "
                          "times smaller, and so are its gradients: compute them, and scale those"))
    if not _finite_in_float16(scale * grads):
        raise Incorrect(t("too large: the scaled gradient reaches {biggest:,.0f}, above float16's largest number "
                          "65504, so it becomes inf", biggest=float(np.max(np.abs(scale * grads)))))
    if _finite_in_float16(2 * scale * grads):
        raise Incorrect(t("S = 2**{log2:g} keeps the gradients finite, but twice that still does: go larger",
                          log2=math.log2(scale)))


class _CheckNet:  # built lazily: mindspore is imported only when a check runs
    cls = None

    @classmethod
    def make(cls, w, b):
        from mindspore import Tensor, nn

        if cls.cls is None:
            class CheckerNet(nn.Cell):
                """The checker's own one-neuron net (not the notebook's MinimalNet)."""

                def __init__(self, w, b):
                    super().__init__()
                    self.dense = nn.Dense(1, 1, weight_init=Tensor([[w]]), bias_init=Tensor([b]))

                def construct(self, x):
                    return self.dense(x)

            cls.cls = CheckerNet
        return cls.cls(w, b)


MODEL_LR, MODEL_EPOCHS, MODEL_START = 0.05, 20, (0.3, -0.2)  # the checker's run of 12.6


def model_data():
    """The checker's own data for 12.6: 20 points of y = -1.5 x + 0.4, no noise (the lesson's: y = 2x + noise)."""
    x = np.linspace(-1.0, 1.0, 20, dtype=np.float32).reshape(-1, 1)
    return x, (-1.5 * x + 0.4).astype(np.float32)


def model_oracle(lr=MODEL_LR, epochs=MODEL_EPOCHS):
    """Float64 gradient descent from MODEL_START on model_data(): (w, b) after `epochs` full-batch steps."""
    ws, bs, _ = oracles.gradient_descent(*model_data(), lr, epochs, w=MODEL_START[0], b=MODEL_START[1])
    return float(ws[-1]), float(bs[-1])


def _check_fixed_scale_fix(make_model):
    """Build the learner's Model on a net of the checker's own, train it on the checker's data, compare with numpy."""
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import Tensor
    from mindspore.train import Model

    net = _CheckNet.make(*MODEL_START)
    model = fixed_scale_fix.call(make_model, net, MODEL_LR)
    if not isinstance(model, Model):
        raise Incorrect(t("make_model(net, lr) returned {model}; return a mindspore.train.Model", model=shown(model)))
    sens = getattr(model.train_network, "sens", None)
    if sens is None:
        raise Incorrect(t("this Model has no train cell: give it the loss, the optimizer and amp_level"))
    if float(sens) != FIXED_SCALE:
        raise Incorrect(t("this Model's train cell scales the loss by {sens:g}, not {scale:g}: pass "
                          "loss_scale_manager=FixedLossScaleManager({scale}, drop_overflow_update=False)",
                          sens=float(sens), scale=FIXED_SCALE))
    if not any(p is net.dense.weight for p in model.train_network.get_parameters()):
        raise Incorrect(t("this Model does not train the net handed to make_model: build it on that net and on an "
                          "optimizer of its parameters"))
    x, y = model_data()
    if net(Tensor(x)).dtype != ms.float16:
        raise Incorrect(t("the net still computes in float32: pass amp_level=\"O2\" to Model"))
    dataset = ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(len(x))
    model.train(MODEL_EPOCHS, dataset)
    w, b = float(net.dense.weight.asnumpy().item()), float(net.dense.bias.asnumpy().item())
    w_ref, b_ref = model_oracle()
    if (w, b) == MODEL_START:
        raise Incorrect(t("the weights of the net handed to make_model never changed: build the Model on that net "
                          "and on an optimizer of its parameters"))
    if not (np.isfinite(w) and np.isfinite(b) and close(w, w_ref, rtol=0, atol=0.5)):
        raise Incorrect(t("after {steps} steps w = {w:.4g}, b = {b:.4g} (plain gradient descent: w = {w_ref:.4f}). "
                          "The gradients reach the optimizer multiplied by {sens:g}, and your update does not divide "
                          "them by exactly that again", steps=MODEL_EPOCHS, w=w, b=b, w_ref=w_ref, sens=FIXED_SCALE))
    if not close([w, b], [w_ref, b_ref], rtol=0, atol=2e-3):
        raise Incorrect(t("after {steps} steps w = {w:.5f}, b = {b:.5f}, but plain gradient descent from the same "
                          "start gives w = {w_ref:.5f}, b = {b_ref:.5f}: use nn.SGD with learning_rate=lr, and "
                          "unscale the gradients exactly once", steps=MODEL_EPOCHS, w=w, b=b, w_ref=w_ref,
                          b_ref=b_ref))


# ---- 12.5 a loss-scaled train step with gradient clipping -----------------------------------------
STEP_LR, STEP_SCALE, STEP_STEPS, STEP_CLIP = 0.05, 2.0 ** 12, 5, 1.0  # part 2 of the 12.5 check
NO_CLIP = 100.0  # part 1: a max_norm that never clips


def _scaled_step_data():
    """The checker's own data: 3 features, 16 samples (the lesson used 1 feature and 100 samples)."""
    rng = np.random.default_rng(9)
    x = rng.normal(0.0, 1.0, (16, 3)).astype(np.float32)
    y = (x @ np.array([[1.5], [-0.5], [0.25]]) + 0.3).astype(np.float32)
    w0 = rng.normal(0.0, 0.5, (1, 3)).astype(np.float32)
    return x, y, w0


def scaled_step_oracle(steps=STEP_STEPS, lr=STEP_LR, max_norm=STEP_CLIP, clip_scaled_by=None):
    """Float64 gradient descent with clipping by global norm on the MSE of the checker's data.

    Returns (losses before each step, w, b). ``max_norm=None``: no clipping; ``clip_scaled_by=S``: the mistake of
    clipping the gradients while they are still multiplied by S."""
    x, y, w0 = _scaled_step_data()
    x, y, w, b = x.astype(np.float64), y.astype(np.float64), w0.astype(np.float64).T, 0.0
    losses = []
    for _ in range(steps):
        err = x @ w + b - y
        losses.append(float(np.mean(err ** 2)))
        gw, gb = 2 * x.T @ err / len(x), 2 * float(np.mean(err))
        if max_norm is not None:
            scale = clip_scaled_by or 1.0
            norm = scale * math.sqrt(float(np.sum(gw ** 2)) + gb ** 2)
            factor = max_norm / max(norm, max_norm)
            gw, gb = gw * factor, gb * factor
        w, b = w - lr * gw, b - lr * gb
    return np.array(losses), w.ravel(), b


def _call_step(step, data, label, k):
    """(loss, finite as a bool) from the k-th call of the learner's train_step, else :class:`Incorrect`."""
    out = step(data, label)
    if out is None:
        raise Incorrect(t("step {number}: train_step returned {out}; return the pair (loss, finite). {hint}",
                          number=k, out=shown(out), hint=t(NONE_HINT)))
    if not (isinstance(out, tuple) and len(out) == 2):
        raise Incorrect(t("step {number}: train_step returned {out}; return the pair (loss, finite)", number=k,
                          out=shown(out)))
    loss, finite = out
    finite_np = finite.asnumpy() if hasattr(finite, "asnumpy") else np.asarray(finite)
    if finite_np.dtype != np.bool_ or finite_np.size != 1:
        raise Incorrect(t("step {number}: finite should be what ms.amp.all_finite(grads) returns, got {finite}",
                          number=k, finite=shown(finite)))
    return loss, bool(finite_np.reshape(()))


def _eager_dynamic_scaler(scale_value, scale_factor, scale_window):
    """A ``DynamicLossScaler`` whose ``scale`` and ``unscale`` run as plain ops.

    MindSpore 2.10's own run through a jitted function that takes ``scale_value`` as an input; called from an eager
    step right after ``adjust`` assigned a new scale, that function sometimes reads the scale from before the
    assignment (about 1 run in 70 of this check, with an otherwise correct step). Plain ops keep the order.
    """
    import mindspore as ms
    from mindspore import ops

    class EagerDynamicLossScaler(ms.amp.DynamicLossScaler):
        def scale(self, inputs):
            if isinstance(inputs, (tuple, list)):
                return tuple([x * self.scale_value.astype(x.dtype) for x in inputs])
            return inputs * self.scale_value.astype(inputs.dtype)

        def unscale(self, inputs):
            inverse = ops.reciprocal(self.scale_value)
            if isinstance(inputs, (tuple, list)):
                return tuple([x * inverse.astype(x.dtype) for x in inputs])
            return inputs * inverse.astype(inputs.dtype)

    return EagerDynamicLossScaler(scale_value, scale_factor, scale_window)


def _check_scaled_step(answer):
    import mindspore as ms
    from mindspore import Tensor, nn

    # Part 1: a scale that overflows. A Dense(1, 1) at w = b = 0 on the one sample (1, -2): every value of
    # the backward pass is 4 times the scale, a power of two, so overflow happens exactly when 4 * S >= 2**128.
    net = nn.Dense(1, 1, weight_init=Tensor([[0.0]], ms.float32), bias_init="zeros")
    scaler = _eager_dynamic_scaler(2.0 ** 127, 2, 50)
    step = scaled_step.call(answer, net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=0.25), scaler,
                            NO_CLIP)
    if not callable(step):
        raise Incorrect(t("make_clipped_step(...) returned {step}; return the train_step function", step=shown(step)))
    data, label = Tensor([[1.0]], ms.float32), Tensor([[-2.0]], ms.float32)
    # (finite, w after the step, log2 of the scale after the step): skip, skip, then one exact step
    expected = [(False, 0.0, 126), (False, 0.0, 125), (True, -1.0, 125), (True, -1.0, 125)]
    for k, (want_finite, want_w, want_log2) in enumerate(expected, 1):
        _, finite = _call_step(step, data, label, k)
        w, b = float(net.weight.asnumpy().item()), float(net.bias.asnumpy().item())
        scale = float(scaler.scale_value.asnumpy())
        if k == 1 and finite:
            raise Incorrect(t("with a loss scale of 2**127 the scaled gradients must overflow to inf at the first "
                              "step, but your step reports finite gradients: scale the loss with "
                              "loss_scaler.scale(...) inside the function you differentiate"))
        if finite != want_finite:
            raise Incorrect(t("step {number} should report finite = {want}, got {finite}: return "
                              "finite = ms.amp.all_finite(grads), computed on the scaled gradients", number=k,
                              want=want_finite, finite=finite))
        if not want_finite and (w != 0.0 or b != 0.0):
            raise Incorrect(t("step {number} overflowed, but your step changed the weights to w = {w:.4g}, "
                              "b = {b:.4g}: update (optimizer(grads)) only when the gradients are finite", number=k,
                              w=w, b=b))
        if want_finite and not (np.isfinite(w) and np.isfinite(b)):
            raise Incorrect(t("after step {number}, the first with finite gradients, w = {w:.4g}: the norm of the "
                              "gradients overflowed, because they were still multiplied by the loss scale when it was "
                              "computed", number=k, w=w))
        if want_finite and (w, b) == (0.0, 0.0):
            raise Incorrect(t("the weights of the net handed to make_clipped_step never changed: call optimizer(grads) "
                              "when the gradients are finite"))
        if want_finite and scale == 2.0 ** 125 and (w, b) != (want_w, want_w):
            raise Incorrect(t("after step {number}, the first with finite gradients, w = {w:.6g}, b = {b:.6g}; "
                              "expected {want:g} for both: the optimizer got gradients still multiplied by the "
                              "loss scale", number=k, w=w, b=b, want=want_w))
        if scale != 2.0 ** want_log2:
            raise Incorrect(t("after step {number} the scaler's scale is 2**{log2:g}, expected 2**{want_log2}: "
                              "the scaler did not halve its scale after an overflow: is it told at every step "
                              "whether the gradients were finite?", number=k, log2=math.log2(scale),
                              want_log2=want_log2))
    # Part 2: a static scale on the checker's own data, gradients clipped: gradient descent with clipping.
    x, y, w0 = _scaled_step_data()
    net = nn.Dense(3, 1, weight_init=Tensor(w0), bias_init="zeros")
    step = scaled_step.call(answer, net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=STEP_LR),
                            ms.amp.StaticLossScaler(STEP_SCALE), STEP_CLIP)
    want_losses, want_w, want_b = scaled_step_oracle()
    losses = []
    for k, want_loss in enumerate(want_losses, 1):
        loss, _ = _call_step(step, Tensor(x), Tensor(y), k)
        loss = number(loss, t("the loss your step returned at step {number}", number=k))
        if close(loss, want_loss * STEP_SCALE, rtol=1e-3, atol=0):
            raise Incorrect(t("at step {number} your step returned the loss {loss:.6g}, expected {want:.6g} (that "
                              "is {ratio:.0f} times the loss: the loss you return is still scaled)", number=k,
                              loss=loss, want=want_loss, ratio=loss / want_loss))
        losses.append(loss)
    w, b = net.weight.asnumpy().astype(np.float64).ravel(), float(net.bias.asnumpy().item())
    if close([w, b], [w0.ravel().astype(np.float64), 0.0], rtol=0, atol=1e-9):
        raise Incorrect(t("the weights of the net handed to make_clipped_step never changed: call optimizer(grads) "
                          "when the gradients are finite"))
    mistakes = [(scaled_step_oracle(max_norm=None), t("your step did not clip: these are the weights of plain gradient "
                                                      "descent")),
                (scaled_step_oracle(clip_scaled_by=STEP_SCALE),
                 t("your step clipped the gradients while they were still multiplied by the loss scale, so every step "
                   "is about {scale:g} times too small", scale=STEP_SCALE))]
    for (_, mistake_w, mistake_b), message in mistakes:
        if close([w, b], [mistake_w, mistake_b], rtol=1e-4, atol=1e-5):
            raise Incorrect(message)
    for k, (loss, want_loss) in enumerate(zip(losses, want_losses), 1):
        if not close(loss, want_loss, rtol=1e-4, atol=0):
            raise Incorrect(t("at step {number} your step returned the loss {loss:.6g}, expected {want:.6g}",
                              number=k, loss=loss, want=want_loss))
    if not close([w, b], [want_w, want_b], rtol=1e-4, atol=1e-5):
        raise Incorrect(t("with StaticLossScaler({scale:g}) and max_norm = {clip:g} on 3 features, after {steps} steps "
                          "w = {w}, b = {b:.5f}; gradient descent with the gradients clipped to a global norm of "
                          "{clip:g} gives w = {want_w}, b = {want_b:.5f}", scale=STEP_SCALE, clip=STEP_CLIP,
                          steps=STEP_STEPS, w=np.round(w, 5).tolist(), b=b, want_w=np.round(want_w, 5).tolist(),
                          want_b=want_b))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
smallest_update = FunctionExercise(_check_smallest_update, signature="smallest_kept_update(w)", hints=[
    lazy("try candidates u = 2.0 ** k from large to small: add each to Tensor(w, ms.float16) and stop at the last "
         "one that still changes it"),
    lazy("float16 keeps 11 significant bits, so the gap between neighbours grows with the weight; an update of "
         "exactly half a gap is a tie, which rounds to the neighbour whose last bit is even"),
])
param_dtype = Prediction(
    lazy("After ms.amp.auto_mixed_precision(MinimalNet(), level), at which levels are the network's "
         "parameters (weight and bias) float16?"),
    {"a": (lazy("at O2 and O3, the levels that run whole cells in float16"),
           lazy("O2 and O3 do make the layers compute in float16 (their outputs are float16), which is why it is "
                "tempting; but the cells cast the float32 weights to float16 on the fly, and the stored parameters "
                "stay float32")),
     "b": (lazy("only at O3, which casts everything"),
           lazy("O3 casts every operation, but an operation's inputs are cast, not the Parameters that hold the "
                "weights: they stay float32 at O3 too")),
     "c": (lazy("at no level: the parameters stay float32"),
           lazy("the float32 parameters are the master weights: each step's small update is added in float32, "
                "where it is not rounded away (the 100 updates of 1e-4 above); only the computation uses float16"))},
    answer="c")
fp16_gradients = Prediction(
    lazy("The loss is multiplied by 2**-24. What gradients does the O3 (all float16) network give, "
         "compared with float32's?"),
    {"a": (lazy("float32's gradients times 2**-24, rounded to about three digits"),
           lazy("that would hold if every number of the backward pass fitted float16; but the backward pass first "
                "computes the gradient of each of the 100 predictions, a hundredth of the total, and those are "
                "below 2**-25 (about 3e-8): entering the float16 layer, they round to zero")),
     "b": (lazy("exactly 0.0 for both"),
           lazy("every gradient per prediction is below 2**-25 (about 3e-8), half of float16's smallest subnormal "
                "number, so the cast to float16 rounds it to 0; the sums of zeros are 0: the weights will never "
                "move")),
     "c": (lazy("NaN or inf: the computation breaks down"),
           lazy("inf comes from overflow, numbers too large (above 65504); here the numbers are too small, and a "
                "too-small number becomes 0, silently, with no NaN to warn you"))},
    answer="b")
largest_scale = Exercise(_check_largest_scale, hints=[
    lazy("the scale multiplies the gradients in float16; the largest safe one keeps every scaled gradient finite"),
    lazy("compute the two float32 gradients, then try S = 2.0 ** k for growing k until float16(S * g) is inf"),
])
scaled_step = FunctionExercise(
    _check_scaled_step, signature="make_clipped_step(net, loss_fn, optimizer, loss_scaler, max_norm)", hints=[
        lazy("start from the five steps of train_scaled in section 4; the clipping is one more line among them"),
        lazy("the norm you want to bound is the norm of the gradients the optimizer will use: where in the step "
             "do the gradients become those?"),
    ])
fixed_scale_fix = FunctionExercise(_check_fixed_scale_fix, signature="make_model(net, lr)", hints=[
    lazy("Model takes the network, the loss, the optimizer, amp_level and loss_scale_manager, like "
         "build_train_network"),
    lazy("with a fixed loss scale the gradients reach the optimizer multiplied by it: read the "
         "optimizer's documentation (help(nn.SGD)): which of its arguments is about loss scaling?"),
])

bind(globals())
