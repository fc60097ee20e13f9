"""Exercises of notebook 03 (TrainOneStepCell, the training loop, least squares)."""

import functools
from contextlib import contextmanager

import numpy as np

from course_utils import oracles, training
from course_utils._validate import shown
from course_utils.checks._nets import one_neuron
from course_utils.exercises import (
    Exercise,
    FunctionExercise,
    Incorrect,
    Prediction,
    bind,
    close,
    name_the_mistake,
    series,
)
from course_utils.messages import lazy, t


def exercise_data():
    """Exercise 03.4's data: 100 points with x in [0.3, 1.1) and y = 3x - 1 + N(0, 0.01), float32 (100, 1).

    Not the course data: x is spread differently, so the learning rates that work differ too."""
    rng = np.random.RandomState(1)
    x = (0.3 + 0.8 * rng.rand(100, 1)).astype(np.float32)
    y = (3.0 * x - 1.0 + rng.normal(0.0, 0.01, size=(100, 1))).astype(np.float32)
    return x, y


EXERCISE_STEPS = 150  # on exercise_data() 100 steps converge for no learning rate; 150 do for about 0.49-0.66
COURSE_WINDOW = (0.37, 0.78)  # the learning rates that converge in 100 steps on the course data (section 5)


@functools.lru_cache(maxsize=1)
def _exercise_window(step=0.001):
    """The learning rates (a grid of ``step``) with which EXERCISE_STEPS full-batch steps from (0, 0) converge on
    exercise_data(): (lowest, highest), by the course's numpy oracle."""
    x, y = exercise_data()
    best = oracles.least_squares(x, y)
    good = [lr for lr in np.round(np.arange(0.2, 1.0, step), 3) if _converges(x, y, lr, best)]
    return float(good[0]), float(good[-1])


def _converges(x, y, lr, best):
    ws, bs, _ = oracles.gradient_descent(x, y, lr, EXERCISE_STEPS)
    return oracles.steps_to_converge(np.vstack([[0.0, 0.0], np.stack([ws, bs], axis=1)]), best) is not None


WINDOW_TOLERANCE = 0.01  # each end of the answer within this of the true end


def _check_learning_rate(answer):
    if isinstance(answer, (int, float)) or not isinstance(answer, (tuple, list, np.ndarray)):
        raise Incorrect(t("expected a pair (lowest, highest) of learning rates, got {answer}", answer=shown(answer)))
    low, high = series(answer, t("your pair (lowest, highest)"), 2)
    if low <= 0:
        raise Incorrect(t("a learning rate must be positive, got {lr:g}", lr=low))
    if low > high:
        raise Incorrect(t("{low:g} is larger than {high:g}: answer (lowest, highest)", low=low, high=high))
    if abs(low - COURSE_WINDOW[0]) <= 0.005 and abs(high - COURSE_WINDOW[1]) <= 0.005:
        raise Incorrect(t("({low:g}, {high:g}) is the window on the course data (section 5); the window moves with "
                          "the data: sweep on x2, y2", low=low, high=high))
    true_low, true_high = _exercise_window()
    # Which end is off, never in which direction: a direction would let a guesser bisect without a sweep.
    off = [(end, value) for end, value, true in ((t("lowest"), low, true_low), (t("highest"), high, true_high))
           if abs(value - true) > WINDOW_TOLERANCE + 1e-9]  # 1e-9: 0.48 is 0.01 from 0.49, not a hair more
    if len(off) == 2:
        raise Incorrect(t("neither end is within {tol:g} of the window where {steps} steps converge on this data: "
                          "sweep x2, y2 first in coarse steps, then in steps of 0.01 around each end",
                          tol=WINDOW_TOLERANCE, steps=EXERCISE_STEPS))
    if off:
        (end, value), = off
        raise Incorrect(t("your {end} rate, {lr:g}, is more than {tol:g} from that end of the window where {steps} "
                          "steps converge on this data: sweep in steps of 0.01 around it", end=end, lr=value,
                          tol=WINDOW_TOLERANCE, steps=EXERCISE_STEPS))


@contextmanager
def _forbidden(answer, helpers, why, names=()):
    """While the learner's function runs, the course's own helpers raise Incorrect(why): each (module, name) in
    ``helpers``, under whatever name the learner's module holds it, and the learner's globals called ``names``."""
    def tripwire(*_args, **_kwargs):
        raise Incorrect(why)

    spaces = getattr(answer, "__globals__", {})
    patched = []
    for module, name in helpers:
        original = getattr(module, name)
        if answer is original:
            raise Incorrect(why)
        patched.append((module.__dict__, name, original))
        patched += [(spaces, key, value) for key, value in list(spaces.items()) if value is original]
    patched += [(spaces, key, spaces[key]) for key in names if callable(spaces.get(key)) and spaces[key] is not answer]
    try:
        for space, key, _ in patched:
            space[key] = tripwire
        yield
    finally:
        for space, key, value in reversed(patched):
            space[key] = value


# (x, y): the checker's own lines, none of them the course data
_FIT_X1 = np.linspace(2.0, 5.0, 13, dtype=np.float32).reshape(-1, 1)
_FIT_X2 = np.array([[-3.0], [-1.0], [-0.5], [0.5], [4.0]], dtype=np.float32)
FIT_CASES = [
    (_FIT_X1, (-1.5 * _FIT_X1 + 4.0 + 0.2 * np.sin(3.0 * _FIT_X1)).astype(np.float32)),
    (_FIT_X2, np.array([[-3.4], [-2.1], [-2.6], [-1.5], [0.3]], dtype=np.float32)),
]


def _fit_oracle(x, y):
    """Least squares from the normal equations in float64 (independent of np.linalg.lstsq)."""
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    w = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    return w, y.mean() - w * x.mean()


def _check_least_squares(answer):
    for x, y in FIT_CASES:
        want = _fit_oracle(x, y)
        with _forbidden(answer, [(oracles, "least_squares")], t("fit_line called the course's own oracle "
                                                                  "(least_squares): compute the fit with numpy")):
            got = least_squares.call(answer, x, y)
        if not isinstance(got, (tuple, list, np.ndarray)):
            raise Incorrect(t("fit_line(x, y) should return a pair (w, b) of numbers, got {got}", got=shown(got)))
        w, b = series(got, t("the pair fit_line(x, y) returned"), 2)
        if close([b, w], want, rtol=1e-4, atol=1e-4):
            raise Incorrect(t("fit_line returned (b, w): the bias first and the slope second, the other way "
                              "round from the pair the exercise asks for"))
        if abs(w - float(np.sum(x * y) / np.sum(x * x))) < 1e-4 and abs(b) < 1e-6:
            raise Incorrect(t("that slope fits a line through the origin (b = 0): where does your fit leave room "
                              "for the bias?"))
        if not close([w, b], want, rtol=1e-4, atol=1e-4):
            raise Incorrect(t("on the check's data (x from {lo:g} to {hi:g}) fit_line returned ({w:.5f}, {b:.5f}), "
                              "which is not the least-squares line: its mean squared error is {mse:.5f}, the "
                              "least-squares line's is {best:.5f}", lo=float(x.min()), hi=float(x.max()), w=w, b=b,
                              mse=float(np.mean((w * x + b - y) ** 2)),
                              best=float(np.mean((want[0] * x + want[1] - y) ** 2))))


# ---- 03.5: a training loop with nn.Momentum ----------------------------------------------------------
MOMENTUM = 0.9
# (x, y, lr, steps, start): the checker's own problems, neither the lesson's data nor its settings.
_LOOP_X1 = np.linspace(-1.0, 1.0, 20, dtype=np.float32).reshape(-1, 1)
_LOOP_X2 = np.linspace(0.0, 2.0, 11, dtype=np.float32).reshape(-1, 1)
LOOP_CASES = [
    (_LOOP_X1, (1.5 * _LOOP_X1 - 0.5 + 0.05 * np.sin(5 * _LOOP_X1)).astype(np.float32), 0.05, 15, (0.3, 0.2)),
    (_LOOP_X2, (2.0 - _LOOP_X2).astype(np.float32), 0.02, 10, (-0.5, 0.0)),
]


def momentum_descent(x, y, lr, steps, start, momentum=MOMENTUM):
    """Heavy-ball gradient descent on the MSE of y = w*x + b in float64, as nn.Momentum does it
    (v = momentum * v + grad; p -= lr * v). Returns (losses before each step, ws, bs after each step,
    losses after each step)."""
    ws, bs, losses = oracles.gradient_descent(x, y, lr, steps, w=start[0], b=start[1], momentum=momentum)
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    after = np.mean((ws[:, None] * x + bs[:, None] - y) ** 2, axis=1)
    return losses, ws, bs, after


def _check_train_loop(answer):
    for x, y, lr, steps, start in LOOP_CASES:
        call = f"train_momentum(net, x, y, lr={lr}, steps={steps})"
        net = one_neuron(*start)
        with _forbidden(answer, [(training, "train")], t("train_momentum called the lesson's train(): the exercise "
                                                         "is to write the loop itself"), names=("train",)):
            got = train_loop.call(answer, net, x, y, lr, steps)
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            raise Incorrect(t("{call} should return three lists (losses, ws, bs), got {got}", call=call,
                              got=shown(got)))
        try:
            losses, ws, bs = (series(value, what, steps) for value, what in zip(got, ("losses", "ws", "bs")))
        except Incorrect as why:
            raise Incorrect(t("{fn}: {why}", fn=call, why=why)) from None
        want_losses, want_ws, want_bs, want_after = momentum_descent(x, y, lr, steps, start)
        if close([ws, bs], [want_ws, want_bs]):
            if close(losses, want_after):
                raise Incorrect(t("{call}: your losses are those after each update, not the loss each step "
                                  "computed", call=call))
            if not close(losses, want_losses):
                raise Incorrect(t("{call}: w and b are right, but the losses are not the MSE before each step: "
                                  "{first}...", call=call, first=losses[:3].round(5)))
            trained = (net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item())
            if not close(trained, (want_ws[-1], want_bs[-1])):
                raise Incorrect(t("{call}: the numbers are right, but the net you were given was not trained (its w "
                                  "and b end at {w:.5f}, {b:.5f}): did MindSpore compute them, on that net?",
                                  call=call, w=trained[0], b=trained[1]))
            continue
        oracle = functools.partial(momentum_descent, x=x, y=y, lr=lr, steps=steps, start=start)
        name_the_mistake([ws, bs], oracle, same=lambda got, run: close(got, list(run[1:3])), call=call, mistakes=[
            (dict(momentum=0.0), lazy("{call} follows plain SGD: its w and b are those of gradient descent "
                                      "without momentum")),
            (dict(lr=0.0), lazy("{call}: w and b never changed: were the gradients ever applied to the "
                                "Parameters?")),
        ])
        if steps > 1 and np.all(ws == ws[-1]):
            raise Incorrect(t("{call}: every recorded w is {w:.5f}, the same value: you recorded views that training "
                              "kept overwriting (notebook 01, section 5)", call=call, w=ws[-1]))
        if close([ws, bs], [np.r_[start[0], want_ws[:-1]], np.r_[start[1], want_bs[:-1]]]):
            raise Incorrect(t("{call}: you recorded w and b before each update, not after each step", call=call))
        k = int(np.argmax(~(np.isclose(ws, want_ws, rtol=1e-4, atol=1e-5) &
                            np.isclose(bs, want_bs, rtol=1e-4, atol=1e-5))))
        raise Incorrect(t("{call}: after step {step} expected w = {want_w:.5f}, b = {want_b:.5f} (Momentum 0.9, "
                          "learning rate {lr}), got w = {w:.5f}, b = {b:.5f}", call=call, step=k + 1,
                          want_w=want_ws[k], want_b=want_bs[k], lr=lr, w=ws[k], b=bs[k]))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
loss_before_update = Prediction(
    lazy("train_net = nn.TrainOneStepCell(loss_net, optimizer). One call, train_net(X, Y), runs the forward pass, "
         "the gradients and the update. Which loss does it return?"),
    {"a": (lazy("The loss after the update, with the new weights"),
           lazy("the step ends with the update, which makes this tempting; but the loss is computed in the "
                "forward pass, before the gradients exist, and TrainOneStepCell does not run the net a second "
                "time")),
     "b": (lazy("The loss before the update: the one the gradients were computed from"),
           lazy("the forward pass computes the loss, the gradients come from it, the optimizer updates in place, "
                "and the cell returns that first loss. So a recorded loss history lags the weights by one step")),
     "c": (lazy("Nothing (None): the step changes the weights in place"),
           lazy("PyTorch's optimizer.step() returns None, but a MindSpore train cell is a Cell and returns the "
                "output of its construct: the loss, as a Tensor"))},
    answer="b")
least_squares = FunctionExercise(_check_least_squares, signature="fit_line(x, y)", hints=[
    lazy("write the model as a matrix product: a column for x and a column for the bias"),
    lazy("numpy's np.linalg.lstsq solves a least-squares problem for a matrix with one column per parameter; the "
         "first thing it returns holds the parameters"),
])
just_above_bound = Prediction(
    lazy("On the course data, 100 SGD steps with lr = 0.75 converge (within 0.01 of the least-squares fit). What "
         "does lr = 0.81, only 8 % larger, do in 100 steps?"),
    {"a": (lazy("It converges too, a little sooner: each step is a little longer"),
           lazy("that holds below the bound, where a larger step means faster progress. But 0.81 is just above "
                "2 / lambda_max, about 0.807 for this data: there the error along the steep direction grows at "
                "every step instead of shrinking")),
     "b": (lazy("It gets there more slowly: the loss still falls, but it is not at (2, 0) after 100 steps"),
           lazy("a learning rate too SMALL gives that picture (lr = 0.01 and 0.1 above). Too large a one does not slow "
                "down: it overshoots, more and more at every step")),
     "c": (lazy("It diverges: after 100 steps the loss is larger than at the start"),
           lazy("0.81 is just above the stability bound 2 / lambda_max (about 0.807, notebook 05): each step "
                "multiplies the error along the steep direction by |1 - lr * lambda_max| > 1. This close to the "
                "bound the factor is barely above 1 and the loss creeps up; at 0.85 it explodes"))},
    answer="c")
learning_rate = Exercise(_check_learning_rate, hints=[
    lazy("run a sweep like section 5's on x2, y2, with 150 steps per learning rate, and ask the course's criterion "
         "about each run, against the least-squares fit of x2, y2 (not of the course data)"),
    lazy("first a coarse sweep (steps of 0.05) shows roughly where the window lies; then steps of 0.01 around each "
         "of its two ends find them"),
])
train_loop = FunctionExercise(_check_train_loop, signature="train_momentum(net, x, y, lr, steps)", hints=[
    lazy("start from section 2's loop (or the train function of section 3): the same steps, with another "
         "optimizer, and w and b recorded after each step"),
    lazy("nn.Momentum takes nn.SGD's place, with the momentum the exercise gives; the gradients come from "
         "ms.value_and_grad as in train (or a TrainOneStepCell does it all), and each step ends with the recording, "
         "in Python floats"),
])

bind(globals())
