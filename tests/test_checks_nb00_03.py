"""Notebooks 00-03: the reference solutions pass, the checks name the typical mistakes, and the facts the lessons
and the checkers' oracles rely on hold (tests/test_exercise_contract.py covers what every exercise shares)."""

import functools

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from reference_solutions import reference

from course_utils import oracles
from course_utils.checks import nb00, nb01, nb02, nb03
from course_utils.checks._nets import one_neuron
from course_utils.data import make_linear_data
from course_utils.exercises import CORRECT, INCORRECT

X, Y = make_linear_data()
W_LS, B_LS = oracles.least_squares(X, Y)


def message(exercise, answer):
    result = exercise.evaluate(answer)
    assert result.status == INCORRECT, result
    return result.message


# The names a solution section takes from its notebook (03.4's sweep trains 7 nets: the second pass runs it).
NOTEBOOK_NAMES = {"to_float32": lambda: {"net": nn.Dense(1, 1)}}
REFERENCED = [nb00.ones, nb00.mode_name, nb01.param_count, nb01.to_float32, nb01.dense_twice,
              nb01.predict, nb02.l1_by_hand, nb02.log_cosh, nb02.loss_grid, nb03.least_squares, nb03.train_loop]


@pytest.mark.parametrize("ex", REFERENCED, ids=lambda ex: ex.name)
def test_the_reference_solutions_pass(ex):
    mode = ms.get_context("mode")
    _, printed = reference(ex, **NOTEBOOK_NAMES.get(ex.key, dict)())
    assert printed.startswith("[ok]"), printed
    assert ms.get_context("mode") == mode, "a check leaves MindSpore's mode as it found it"


def test_00_2_accepts_every_way_to_make_the_tensor():
    for answer in (Tensor(np.ones((2, 3), np.float32)), ops.ones((2, 3), ms.float32),
                   Tensor(np.ones((2, 3))).astype(ms.float32), ms.Parameter(Tensor(np.ones((2, 3), np.float32)))):
        assert nb00.ones.evaluate(answer).status == CORRECT, answer


# ---- wrong answers: 00 and 01 ---------------------------------------------------------------------------------
def _mode():
    return ms.get_context("mode")


class DenseOnce(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(1, 1)

    def construct(self, x):
        return self.dense(x)


class TwoLayers(nn.SequentialCell):
    def __init__(self):
        super().__init__([nn.Dense(1, 1), nn.Dense(1, 1)])


def _batch(values, dtype=np.float32):
    return Tensor(np.asarray(values, dtype=dtype).reshape(-1, 1))


# ---- wrong answers: 02 --------------------------------------------------------------------------------------
DIFF = nb02.PREDICTIONS.astype(np.float64) - nb02.LABELS


def _grid(net, loss_fn, weights, biases, x, y, write_weight=True, write_bias=True, with_predictions=False,
          loss=None, transpose=False):
    """The loss grid written with copy_ (the solution uses ops.assign), and typical mistakes."""
    cell = nn.WithLossCell(net, loss or loss_fn)
    out = np.zeros((len(weights), len(biases)))
    for i, w in enumerate(weights):
        for j, b in enumerate(biases):
            if write_weight:
                net.dense.weight.copy_(Tensor([[w]], ms.float32))
            if write_bias:
                net.dense.bias.copy_(Tensor([b], ms.float32))
            out[i, j] = float(cell(net(Tensor(x)) if with_predictions else Tensor(x), Tensor(y)).asnumpy())
    return out.T if transpose else out


def _log_cosh_loss(reduce="mean", log=True, with_numpy=False):
    """A log-cosh loss Cell class, right or with a typical mistake."""
    class Loss(nn.Cell):
        def construct(self, prediction, label):
            if with_numpy:  # the right number, but no MindSpore operation to differentiate
                e = prediction.asnumpy() - label.asnumpy()
                return Tensor(np.mean(np.log(np.cosh(e))), ms.float32)
            value = ops.cosh(prediction - label)
            value = ops.log(value) if log else value
            return {"mean": value.mean(), "sum": value.sum(), "none": value}[reduce]
    return Loss


def _restoring_grid(net, loss_fn, weights, biases, x, y):  # the right grid, and the net put back as it was
    start = net.dense.weight.asnumpy().copy(), net.dense.bias.asnumpy().copy()
    out = _grid(net, loss_fn, weights, biases, x, y)
    ops.assign(net.dense.weight, Tensor(start[0]))
    ops.assign(net.dense.bias, Tensor(start[1]))
    return out


def _numpy_grid(net, loss_fn, weights, biases, x, y, run_the_net=False):
    """The right numbers from numpy; ``run_the_net``: the loss cell is called as often, but on the net's own w, b."""
    if run_the_net:
        cell = nn.WithLossCell(net, loss_fn)
        for _ in range(len(weights) * len(biases)):
            cell(Tensor(x), Tensor(y))
    return nb02._grid("l1" if isinstance(loss_fn, nn.L1Loss) else "mse_sum")


# ---- wrong answers: 03 --------------------------------------------------------------------------------------
def _start(net):
    return net.dense.weight.asnumpy().item(), net.dense.bias.asnumpy().item()


def _views(net):  # of the Parameters' memory, which training overwrites
    return net.dense.weight.asnumpy(), net.dense.bias.asnumpy()


def _cell_loop(net, x, y, lr, steps, optimizer="momentum", record="after", loss_when="before"):
    """The loop written with TrainOneStepCell (the notebook's other way), and typical mistakes."""
    params = net.trainable_params()
    opt = (nn.Momentum(params, learning_rate=lr, momentum=0.9) if optimizer == "momentum"
           else nn.SGD(params, learning_rate=lr))
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    train, data, label = nn.TrainOneStepCell(loss_net, opt), Tensor(x), Tensor(y)
    w_b = functools.partial(_views if record == "view" else _start, net)
    losses, path = [], []
    for _ in range(steps):
        before = w_b()
        loss = train(data, label)
        losses.append(float((loss_net(data, label) if loss_when == "after" else loss).asnumpy()))
        path.append(before if record == "before" else w_b())
    ws, bs = zip(*path)
    return losses, [float(np.ravel(w)[0]) for w in ws], [float(np.ravel(b)[0]) for b in bs]


def _frozen(net, x, y, lr, steps):  # records, but never steps
    return [0.0] * steps, [_start(net)[0]] * steps, [_start(net)[1]] * steps


def _numpy_loop(net, x, y, lr, steps):  # the right numbers, from numpy: the net is never trained
    return nb03.momentum_descent(x, y, lr, steps, _start(net))[:3]


def _train_helper_loop(net, x, y, lr, steps):  # the course's train() with nn.Momentum: not the exercise
    from course_utils.training import train
    history = train(net, x, y, lr, steps, optimizer=nn.Momentum(net.trainable_params(), lr, 0.9))
    return list(history["loss"]), list(history["params"][1:, 0]), list(history["params"][1:, 1])


def _lesson_numbers(*args):
    ws, bs, losses = oracles.gradient_descent(X, Y, 0.01, nb03.LOOP_CASES[0][3])
    return list(losses), list(ws), list(bs)


MISTAKES = [
    (nb00.ones, np.ones((2, 3), np.float32), "numpy array"),
    (nb00.ones, [[1.0] * 3] * 2, "expected a MindSpore Tensor"),
    (nb00.ones, Tensor(np.ones((2, 3))), "where did that dtype come from"),  # numpy's default float64, kept
    (nb00.ones, Tensor(np.ones((2, 3), np.int32)), "where did that dtype come from"),
    (nb00.ones, Tensor(np.ones((3, 2), np.float32)), "2 rows of 3"),
    (nb00.ones, Tensor(np.ones(6, np.float32)), "2 rows of 3"),
    (nb00.ones, Tensor(np.zeros((2, 3), np.float32)), "should all be 1"),
    (nb00.mode_name, lambda: "pynative", "alike"),  # a constant (what 2.10 starts in)
    (nb00.mode_name, _mode, "mode's number"),
    (nb00.mode_name, lambda: "pynative" if _mode() == 0 else "graph", "swapped"),
    (nb00.mode_name, lambda: "Graph" if _mode() == 0 else "PyNative", "lower case"),
    (nb00.mode_name, lambda: 1 / 0, "raised ZeroDivisionError"),
    (nb01.param_count, 6, "besides the weight matrix"),
    (nb01.param_count, 5, "one number per input and one per output"),
    (nb01.param_count, 9, "shape of the bias"),
    (nb01.param_count, 12, "every trainable Parameter"),
    (nb01.param_count, 8.0, "whole number"),
    (nb01.to_float32, nb01.X64, "dtype is float64"),
    (nb01.to_float32, nb01.X64.astype(np.float32).ravel(), "shape is (5,)"),
    (nb01.to_float32, np.zeros((5, 1), np.float32), "values changed"),
    (nb01.to_float32, Tensor(nb01.X64.astype(np.float32)), "numpy array"),
    (nb01.dense_twice, DenseOnce, "applies the Dense layer once"),
    (nb01.dense_twice, TwoLayers, "exactly one Dense"),
    (nb01.dense_twice, DenseOnce(), "the class itself, not an instance"),
    (nb01.dense_twice, int, "is not a Cell"),
    (nb01.predict, lambda net, v: net(_batch(v, None)).asnumpy(), "raised TypeError"),  # float64
    (nb01.predict, lambda net, v: net(_batch(v)), "MindSpore Tensor"),
    (nb01.predict, lambda net, v: net(_batch(v)).asnumpy(), "(n, 1) batch shape"),
    (nb01.predict, lambda net, v: np.asarray(v, dtype=float), "run the net you were given"),
    (nb01.predict, lambda net, v: v, "return a numpy array"),  # its input
    (nb01.predict, lambda net, v: 0.75, "return a numpy array, got float"),  # a constant
    (nb02.l1_by_hand, np.mean(DIFF ** 2), "mean *squared* error"),
    (nb02.l1_by_hand, np.sum(np.abs(DIFF)), "is the sum"),
    (nb02.l1_by_hand, np.mean(DIFF), "cancelled out"),
    (nb02.l1_by_hand, 0.6, "not the mean absolute difference"),
    (nb02.log_cosh, _log_cosh_loss(reduce="sum"), "is the sum over the samples"),
    (nb02.log_cosh, _log_cosh_loss(log=False), "a step of the formula is missing"),
    (nb02.log_cosh, _log_cosh_loss(reduce="none"), "one loss per sample"),
    (nb02.log_cosh, _log_cosh_loss(with_numpy=True), "MindSpore's gradients through your loss"),
    (nb02.log_cosh, nn.MSELoss, "is the mean squared error"),
    (nb02.log_cosh, nn.L1Loss, "should be"),
    (nb02.log_cosh, _log_cosh_loss()(), "the class itself, not an instance"),
    (nb02.log_cosh, int, "is not a Cell"),
    (nb02.loss_grid, functools.partial(_grid, write_bias=False), "do not change along a row"),
    (nb02.loss_grid, functools.partial(_grid, write_weight=False), "do not change down a column"),
    (nb02.loss_grid, functools.partial(_grid, write_weight=False, write_bias=False), "neither Parameter changed"),
    (nb02.loss_grid, functools.partial(_grid, with_predictions=True), "net(net(x))"),
    (nb02.loss_grid, functools.partial(_grid, loss=nn.MSELoss()), "use the loss_fn you were given"),
    (nb02.loss_grid, functools.partial(_grid, transpose=True), "transposed"),
    (nb02.loss_grid, _numpy_grid, "never ran with w = -2"),  # numpy, no MindSpore
    (nb02.loss_grid, functools.partial(_numpy_grid, run_the_net=True), "never ran with"),  # the net run, unchanged
    (nb02.loss_grid, lambda net, fn, w, b, x, y: x, "expected (3, 4)"),  # its input
    (nb02.loss_grid, lambda *a: [[1.0] * 4] * 3, "2-D numpy array"),  # a list, not an array
    (nb02.loss_grid, lambda *a: np.ones(12), "expected (3, 4)"),
    (nb02.loss_grid, lambda net, fn, ws, bs, x, y: np.array([[np.mean(np.abs(w * X + b - Y)) for b in bs] for w in ws]),
     "entry [0, 0]"),  # the lesson's data
    (nb03.least_squares, lambda x, y: (2.0, 0.0), "not the least-squares line"),  # the line the data was made from
    (nb03.least_squares, lambda x, y: (float(np.sum(x * y) / np.sum(x * x)), 0.0), "through the origin"),
    (nb03.least_squares, lambda x, y: tuple(np.polyfit(x.ravel(), y.ravel(), 1))[::-1], "(b, w)"),
    (nb03.least_squares, lambda x, y: (W_LS, B_LS), "not the least-squares line"),  # the course data's fit
    (nb03.least_squares, oracles.least_squares, "the course's own code"),
    (nb03.least_squares, lambda x, y: 2.0, "should return a pair"),
    (nb03.least_squares, lambda x, y: (1.0, 2.0, 0.0), "should hold 2 numbers, got shape (3,)"),
    (nb03.train_loop, functools.partial(_cell_loop, optimizer="sgd"), "follows plain SGD"),
    (nb03.train_loop, functools.partial(_cell_loop, record="view"), "recorded views"),
    (nb03.train_loop, functools.partial(_cell_loop, record="before"), "before each update"),
    (nb03.train_loop, functools.partial(_cell_loop, loss_when="after"), "losses are those after each update"),
    (nb03.train_loop, _frozen, "never changed"),
    (nb03.train_loop, _numpy_loop, "was not trained"),
    (nb03.train_loop, lambda *a: nb03.momentum_descent(*nb03.LOOP_CASES[0])[:3], "was not trained"),  # hard-coded
    (nb03.train_loop, _lesson_numbers, "after step 1 expected"),
    (nb03.train_loop, lambda net, x, y, lr, steps: (x, y, lr, steps), "three lists"),  # its inputs
    (nb03.train_loop, lambda *a: ([0.5], [2.0], [0.0]), "losses should hold 15 numbers"),
    (nb03.train_loop, _train_helper_loop, "called the lesson's train()"),
]


@pytest.mark.parametrize("ex, answer, text", MISTAKES, ids=[f"{ex.name}-{text}" for ex, _, text in MISTAKES])
def test_named_mistakes(ex, answer, text):
    mode = ms.get_context("mode")
    assert text in message(ex, answer)
    assert ms.get_context("mode") == mode, "a check leaves MindSpore's mode as it found it, whatever the answer did"


def test_nb02_a_mindspore_error_is_cut_to_its_first_line():
    """MindSpore's TypeError goes on with its C++ call stack: the learner sees only what went wrong."""
    class Float16Loss(nn.Cell):
        def construct(self, prediction, label):
            return ops.matmul(prediction - label, Tensor(np.ones((1, 1), np.float16))).mean()

    text = message(nb02.log_cosh, Float16Loss)
    assert "For 'MatMul" in text and "C++" not in text and "----" not in text and "\n" not in text, text


@pytest.mark.parametrize("answer, text", [
    (0.55, "expected a pair (lowest, highest)"),  # one rate from the middle: a guess no longer passes
    ((0.37, 0.78), "the window on the course data"),  # section 5's window
    ((0.5, 0.65), "your lowest rate, 0.5, is"),  # a sweep in steps of 0.05 only
    ((0.45, 0.7), "neither end is within 0.01"),
    ((0.45, 0.66), "your lowest rate, 0.45, is more than 0.01"),
    ((0.49, 0.62), "your highest rate, 0.62, is more than 0.01"),
    ((0.49, 0.75), "your highest rate, 0.75"),
    ((0.75, 0.8), "neither end"),
    ((0.66, 0.49), "answer (lowest, highest)"),
    ((-0.5, 0.6), "must be positive"),
])
def test_nb03_learning_rate_mistakes(answer, text):
    assert text in message(nb03.learning_rate, answer)


def test_nb03_learning_rate_messages_never_say_which_way():
    """A message that said 'higher' or 'lower' would let a guesser bisect each end in a few tries, with no sweep."""
    low, high = nb03._exercise_window()
    for answer in [(low - 0.05, high), (low + 0.05, high), (low, high - 0.05), (low, high + 0.05),
                   (low - 0.05, high + 0.05), (low + 0.05, high - 0.05)]:
        text = message(nb03.learning_rate, answer)
        assert not any(word in text for word in ("higher", "lower", "larger", "smaller", "does not converge")), text
    assert message(nb03.learning_rate, (low - 0.05, high)) == message(nb03.learning_rate, (low + 0.05, high)) \
        .replace(f"{low + 0.05:g}", f"{low - 0.05:g}")


# ---- the facts the lessons and the oracles rely on -----------------------------------------------------------
def test_prediction_answers_match_mindspore():
    """What each right answer claims, measured."""
    assert nb00.tensor_dtype.answer == "b" and Tensor(np.zeros(3)).dtype == ms.float64
    assert nb00.default_mode.answer == "b" and ms.get_context("mode") == ms.PYNATIVE_MODE  # no test leaves graph on
    net = nn.Dense(1, 1)
    with pytest.raises(TypeError):
        net(Tensor(np.random.rand(4, 1)))
    assert nb01.float64_input.answer == "c"
    t = Tensor(np.ones((2, 1), np.float32))
    t.asnumpy()[1, 0] = 9.0
    assert nb01.asnumpy_view.answer == "b" and t.asnumpy()[1, 0] == 9.0

    x = Tensor(np.linspace(0, 1, 8, dtype=np.float32).reshape(-1, 1))
    y = 2 * x
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    assert nb02.called_with_predictions.answer == "c"
    assert not np.isclose(loss_net(net(x), y).asnumpy(), loss_net(x, y).asnumpy())

    class Wrapper(nn.Cell):
        def __init__(self, backbone):
            super().__init__()
            self.backbone = backbone

    named = DenseOnce()
    Wrapper(named)
    assert nb02.auto_prefix_names.answer == "b"
    assert [p.name for p in named.trainable_params()] == ["backbone.dense.weight", "backbone.dense.bias"]

    ops.assign(net.weight, Tensor([[1.0]], ms.float32))
    train = nn.TrainOneStepCell(loss_net, nn.SGD(net.trainable_params(), 0.1))
    before = loss_net(x, y).asnumpy().item()
    assert nb03.loss_before_update.answer == "b" and train(x, y).asnumpy().item() == before


def test_nb02_log_cosh_oracle_is_what_mindspore_computes():
    """The checker's numpy oracle (value and gradients) against MindSpore's own nn.MSELoss, one of its kinds."""
    net = one_neuron(*nb02.LC_START)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    data, label = Tensor(nb02.LC_X), Tensor(nb02.LC_Y)
    grads = ms.grad(loss_net, None, net.trainable_params())(data, label)
    got = [float(loss_net(data, label).asnumpy())] + [float(g.asnumpy().sum()) for g in grads]
    np.testing.assert_allclose(got, nb02._log_cosh_oracle("mse"), rtol=1e-5)
    assert nb02.log_cosh.evaluate(_log_cosh_loss()).status == CORRECT


def test_nb02_loss_grid_oracle_is_the_l1_loss_of_each_pair():
    got = _grid(one_neuron(nb02.START_WEIGHT, nb02.START_BIAS), nn.L1Loss(), nb02.GRID_WEIGHTS, nb02.GRID_BIASES,
                nb02.GRID_X, nb02.GRID_Y)
    want = [[np.mean(np.abs(w * nb02.GRID_X - nb02.GRID_Y + b)) for b in nb02.GRID_BIASES]
            for w in nb02.GRID_WEIGHTS]  # independent of _grid
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert nb02.loss_grid.evaluate(_grid).status == CORRECT
    assert nb02.loss_grid.evaluate(_restoring_grid).status == CORRECT, "putting the net back is no mistake"


def test_nb03_oracle_facts_the_lesson_relies_on():
    ws, bs, _ = oracles.gradient_descent(X, Y, 0.01, 100)  # the article's recipe (FACTS: w = 0.57, b = 0.64)
    assert abs(ws[-1] - 0.57) < 0.02 and abs(bs[-1] - 0.64) < 0.02
    ws, bs, _ = oracles.gradient_descent(X, Y, 0.01, 400)
    assert 110 <= int(np.argmax(bs)) + 1 <= 135, "the bias peaks near step 120 (FACTS: about 122)"
    ws, bs, losses = oracles.gradient_descent(X, Y, 0.81, 100)  # prediction 03.3: 0.81 diverges, 0.75 converges
    assert nb03.just_above_bound.answer == "c" and np.mean((ws[-1] * X + bs[-1] - Y) ** 2) > losses[0]
    ws, bs, _ = oracles.gradient_descent(X, Y, 0.75, 100)
    assert oracles.steps_to_converge(np.vstack([[0.0, 0.0], np.stack([ws, bs], axis=1)]), (W_LS, B_LS)) is not None


def test_nb03_course_window_and_oracle_pins():
    """Pins moved out of notebook 03's learner cells: its fine sweep's window (0.37 to 0.78, 42 rates in steps of
    0.01, from the initial weight of seed 0) and the course's oracle equal to the lesson's six lines of numpy."""
    ms.set_seed(0)
    w0 = nn.Dense(1, 1, weight_init="normal", bias_init="zero").weight.asnumpy().item()
    fine = []
    for lr in np.round(np.arange(0.30, 0.85, 0.01), 2):
        ws, bs, _ = oracles.gradient_descent(X, Y, lr, 100, w=w0)
        if oracles.steps_to_converge(np.vstack([[w0, 0.0], np.stack([ws, bs], axis=1)]), (W_LS, B_LS)) is not None:
            fine.append(lr)
    assert (fine[0], fine[-1], len(fine)) == (0.37, 0.78, 42), fine
    assert tuple(nb03.COURSE_WINDOW) == (fine[0], fine[-1])
    assert fine[-1] < 2 / oracles.lambda_max(X) < 0.81
    x, y, w, b = X.astype(np.float64).ravel(), Y.astype(np.float64).ravel(), w0, 0.0
    lesson_ws = []
    for _ in range(500):  # the lesson's loop
        err = w * x + b - y
        w, b = w - 0.01 * 2 * np.mean(err * x), b - 0.01 * 2 * np.mean(err)
        lesson_ws.append(w)
    np.testing.assert_allclose(oracles.gradient_descent(X, Y, 0.01, 500, w=w0)[0], lesson_ws)


def _converges(lr, x, y, steps):
    """Gradient descent written as a matrix power (independent of the checker's loop): theta_k = theta* +
    (I - lr H)^k (theta_0 - theta*) for the quadratic MSE, from theta_0 = (0, 0); the course's criterion."""
    best = np.array(oracles.least_squares(x, y))
    step = np.eye(2) - lr * oracles.hessian(x)
    path = [best + np.linalg.matrix_power(step, k) @ (np.zeros(2) - best) for k in range(steps + 1)]
    return oracles.steps_to_converge(np.array(path), best) is not None


def test_nb03_learning_rate_window_on_its_own_data():
    x, y = nb03.exercise_data()
    assert x.dtype == y.dtype == np.float32 and x.shape == y.shape == (100, 1)
    assert 0.3 <= x.min() and x.max() < 1.1
    lrs = np.round(np.arange(0.01, 1.2, 0.01), 2)
    assert not [lr for lr in lrs if _converges(lr, x, y, 100)], "no learning rate converges in 100 steps here"
    window = [lr for lr in lrs if _converges(lr, x, y, nb03.EXERCISE_STEPS)]
    assert window == list(np.round(np.arange(0.49, 0.665, 0.01), 2)), window  # contiguous: 0.49 to 0.66
    low, high = nb03._exercise_window()  # the checker's finer grid, against the matrix-power oracle
    assert _converges(low, x, y, nb03.EXERCISE_STEPS) and not _converges(round(low - 0.001, 3), x, y, 150)
    assert _converges(high, x, y, nb03.EXERCISE_STEPS) and not _converges(round(high + 0.001, 3), x, y, 150)
    for answer in [(0.49, 0.66), (low, high), (0.48, 0.67)]:  # a sweep in steps of 0.01 passes
        assert nb03.learning_rate.evaluate(answer).status == CORRECT, answer


def test_nb03_train_loop_oracle_is_what_mindspore_does():
    for x, y, lr, steps, start in nb03.LOOP_CASES:
        _, ws, bs = _cell_loop(one_neuron(*start), x, y, lr, steps)
        want_ws, want_bs, _ = oracles.gradient_descent(x, y, lr, steps, w=start[0], b=start[1], momentum=0.9)
        np.testing.assert_allclose(ws, want_ws, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bs, want_bs, rtol=1e-5, atol=1e-6)
    assert nb03.train_loop.evaluate(_cell_loop).status == CORRECT


def test_nb03_least_squares_oracle_is_lstsq():
    for x, y in nb03.FIT_CASES:
        np.testing.assert_allclose(nb03._fit_oracle(x, y), oracles.least_squares(x, y), rtol=1e-9, atol=1e-9)
    assert oracles.least_squares is not None and callable(oracles.least_squares), "the tripwire restored the oracle"
