"""The exercises of notebook 13 accept the reference solutions and reject typical wrong answers; the
timing helper counts asynchronous work and checks its arguments."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, nn  # noqa: E402

from course_utils.checks import nb13  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED  # noqa: E402
from course_utils.timing import time_calls  # noqa: E402


# ---- 13.2 faster_mode --------------------------------------------------------------------------
def reference_faster_mode(n_steps, compile_s, pynative_step_s, graph_step_s):
    return "graph" if compile_s + n_steps * graph_step_s < n_steps * pynative_step_s else "pynative"


def via_break_even(n_steps, compile_s, pynative_step_s, graph_step_s):
    """Another correct formulation: compare with the break-even point."""
    if graph_step_s >= pynative_step_s:
        return "pynative"
    return "graph" if n_steps > compile_s / (pynative_step_s - graph_step_s) else "pynative"


def test_faster_mode_accepts_correct_formulations():
    assert nb13.faster_mode.evaluate(reference_faster_mode).status == CORRECT
    assert nb13.faster_mode.evaluate(via_break_even).status == CORRECT


@pytest.mark.parametrize("wrong, text", [
    (lambda n, c, p, g: "graph" if g < p else "pynative", "expected 'pynative'"),       # ignores the compile
    (lambda n, c, p, g: "graph" if c + n * g <= n * p else "pynative", "strictly"),     # a tie counts as a win
    (lambda n, c, p, g: "graph" if c + g < p else "pynative", "expected 'graph'"),      # one step only
    (lambda n, c, p, g: "pynative" if c + n * g < n * p else "graph", "expected"),      # reversed
    (lambda n, c, p, g: "GRAPH", "return the string"),
    (lambda n, c, p, g: None, "return the string"),
])
def test_faster_mode_rejects_typical_mistakes(wrong, text):
    result = nb13.faster_mode.evaluate(wrong)
    assert result.status == INCORRECT and text in result.message, result.message


def test_faster_mode_not_attempted_and_not_callable():
    assert nb13.faster_mode.evaluate(...).status == NOT_ATTEMPTED
    result = nb13.faster_mode.evaluate("graph")
    assert result.status == INCORRECT and "expected a function" in result.message


def test_faster_mode_cases_cover_both_answers_and_the_tie():
    answers = {reference_faster_mode(*case) for case in nb13._MODE_CASES}
    assert answers == {"graph", "pynative"}
    assert (4, 1.0, 0.5, 0.25) in nb13._MODE_CASES and 1.0 + 4 * 0.25 == 4 * 0.5  # an exact tie


# ---- 13.4 compiles -----------------------------------------------------------------------------
def test_compiles_oracle_model():
    assert nb13.expected_compiles() == 4
    assert nb13.expected_compiles([((3,), 0.1), ((3,), 0.2), ((3,), 0.1)]) == 2
    assert nb13.expected_compiles([((3,), ("Tensor", 0.1)), ((3,), ("Tensor", 0.2))]) == 1


def test_compiles_accepts_four_and_explains_mistakes():
    assert nb13.compiles.evaluate(4).status == CORRECT
    assert nb13.compiles.evaluate(np.int64(4)).status == CORRECT
    for wrong, text in ((6, "not every call compiles"), (3, "new shape"), (5, "value does not"),
                        (2, "each new float"), (1, "not what MindSpore does"), ("4", "whole number"),
                        (4.0, "whole number"), (True, "whole number")):
        result = nb13.compiles.evaluate(wrong)
        assert result.status == INCORRECT and text in result.message, (wrong, result.message)


def test_compiles_oracle_matches_mindspore():
    """The checker's model of the compile cache against MindSpore itself, counted with @ms.constexpr."""
    compiles = []

    @ms.constexpr
    def count_compile():
        compiles.append(1)

    @ms.jit
    def scaled(x, factor):
        count_compile()
        return x * factor

    for shape, factor in nb13.CALLS:
        x = Tensor(np.ones(shape, np.float32))
        scaled(x, Tensor(factor[1], ms.float32) if isinstance(factor, tuple) else factor)
    assert len(compiles) == nb13.expected_compiles()


# ---- 13.6 graph_act ----------------------------------------------------------------------------
class IdentityOrRelu(nn.Cell):
    def __init__(self, use_relu):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.act = nn.ReLU() if use_relu else nn.Identity()

    def construct(self, x):
        return self.act(self.dense(x))


def identity(t):
    return t


class WithIfStatement(nn.Cell):
    def __init__(self, use_relu):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        if use_relu:
            self.act = nn.ReLU()
        else:
            self.act = identity

    def construct(self, x):
        return self.act(self.dense(x))


class LambdaInExpression(nn.Cell):  # the notebook's broken original
    def __init__(self, use_relu):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.act = nn.ReLU() if use_relu else lambda t: t

    def construct(self, x):
        return self.act(self.dense(x))


class AlwaysRelu(nn.Cell):
    def __init__(self, use_relu):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.act = nn.ReLU()

    def construct(self, x):
        return self.act(self.dense(x))


class RenamedLayer(nn.Cell):
    def __init__(self, use_relu):
        super().__init__()
        self.fc = nn.Dense(1, 1)

    def construct(self, x):
        return self.fc(x)


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("solution", [IdentityOrRelu, WithIfStatement])
def test_graph_act_accepts_solutions_and_restores_the_mode(pynative, solution):
    result = nb13.graph_act.evaluate(solution)
    assert result.status == CORRECT, result.message
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


@pytest.mark.parametrize("wrong, text", [
    (LambdaInExpression, "fails in graph mode: TypeError: Parse Lambda Function Fail"),
    (AlwaysRelu, "expected dense(x) unchanged"),
    (RenamedLayer, "self.dense = nn.Dense(1, 1)"),
    (IdentityOrRelu(True), "a Cell class (not an instance)"),
    ("WithAct", "a Cell class"),
])
def test_graph_act_rejects_typical_mistakes(pynative, wrong, text):
    result = nb13.graph_act.evaluate(wrong)
    assert result.status == INCORRECT and text in result.message, result.message
    assert ms.get_context("mode") == ms.PYNATIVE_MODE, "the check must restore the learner's mode"


def test_graph_act_restores_graph_mode_too():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert nb13.graph_act.evaluate(IdentityOrRelu).status == CORRECT
        assert ms.get_context("mode") == ms.GRAPH_MODE
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


# ---- course_utils.timing -----------------------------------------------------------------------
class FakeTensor:
    def __init__(self, log):
        self.log = log

    def asnumpy(self):
        self.log.append("fetched")
        return np.zeros(1)


def test_time_calls_counts_calls_and_fetches_results_inside_the_timing():
    log = []

    def step(a, b):
        log.append(("call", a, b))
        return FakeTensor(log)

    seconds = time_calls(step, 1, 2, repeat=3)
    assert seconds.shape == (3,) and seconds.dtype == np.float64 and np.all(seconds >= 0)
    assert log == [("call", 1, 2), "fetched"] * 3


def test_time_calls_fetches_every_tensor_of_a_tuple():
    log = []
    time_calls(lambda: (FakeTensor(log), [FakeTensor(log), 3]), repeat=2)
    assert log == ["fetched"] * 4


def test_time_calls_measures_the_wait():
    import time

    seconds = time_calls(time.sleep, 0.02, repeat=2)
    assert np.all(seconds >= 0.02)


def test_time_calls_on_a_real_train_step():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = nn.Dense(1, 1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    x = Tensor(np.ones((4, 1), np.float32))
    assert time_calls(step, x, x, repeat=2).shape == (2,)


@pytest.mark.parametrize("kwargs, error, text", [
    ({"fn": "step", "repeat": 1}, TypeError, "fn must be callable"),
    ({"fn": print, "repeat": 0}, ValueError, "repeat must be an int from 1 to"),
    ({"fn": print, "repeat": -3}, ValueError, "repeat must be an int from 1 to"),
    ({"fn": print, "repeat": 10**15}, ValueError, "repeat must be an int from 1 to 1000000"),
    ({"fn": print, "repeat": 2.0}, TypeError, "repeat must be an int"),
    ({"fn": print, "repeat": True}, TypeError, "repeat must be an int"),
])
def test_time_calls_rejects_bad_arguments(kwargs, error, text):
    with pytest.raises(error, match=text):
        time_calls(kwargs["fn"], repeat=kwargs["repeat"])


def test_time_calls_requires_repeat_by_keyword():
    with pytest.raises(TypeError):
        time_calls(print)  # repeat is keyword-only and required


# ---- 13.5 a learning-rate schedule compiled once ---------------------------------------------------
def _schedule_trainer(mistake=None):
    """train_with_schedule written here, with one typical mistake or none."""
    from mindspore import ops

    def train_with_schedule(net, loss_fn, x, y, schedule):
        params = net.trainable_params()

        def forward(x, y):
            return loss_fn(net(x), y)

        grad_fn = ms.value_and_grad(forward, None, params)

        def sgd_step(x, y, lr):
            loss, grads = grad_fn(x, y)
            for p, g in zip(params, grads):
                ops.assign(p, p + lr * g if mistake == "ascent" else p - lr * g)
            return loss

        step = sgd_step if mistake == "eager" else ms.jit(sgd_step)
        losses = []
        for lr in schedule:
            if mistake == "float":
                losses.append(step(x, y, lr))
            elif mistake == "first lr":
                losses.append(step(x, y, Tensor(schedule[0], ms.float32)))
            else:
                losses.append(step(x, y, Tensor(lr, ms.float32)))
        return None if mistake == "no return" else losses

    return train_with_schedule


def test_schedule_oracle_is_one_step_per_rate():
    x, y, w0 = nb13._schedule_data()
    losses, w, b = nb13.schedule_oracle([0.0, 0.0])
    assert losses[0] == losses[1] and np.allclose(w, w0.ravel()) and b == 0.0  # lr 0: nothing moves
    assert nb13.SCHEDULE != [0.5 * 0.8 ** k for k in range(len(nb13.SCHEDULE))]  # not the lesson's schedule


def test_schedule_train_accepts_the_reference():
    result = nb13.schedule_train.evaluate(_schedule_trainer())
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("mistake, text", [
    ("float", "pass Tensor(lr, ms.float32)"),  # recompiles for every value
    ("eager", "decorate it with @ms.jit"),  # never compiled
    ("ascent", "the loss before step 1 should be"),
    ("first lr", "the loss before step 2 should be"),
    ("no return", "return the list of the 6 losses"),
])
def test_schedule_train_rejects(mistake, text):
    result = nb13.schedule_train.evaluate(_schedule_trainer(mistake))
    assert result.status == INCORRECT and text in result.message, result.message


def test_schedule_train_is_not_fooled_by_constants_or_inputs():
    oracle_losses = nb13.schedule_oracle()[0].tolist()
    for answer in (lambda net, loss_fn, x, y, schedule: schedule,
                   lambda net, loss_fn, x, y, schedule: [0.0] * 6,
                   lambda net, loss_fn, x, y, schedule: oracle_losses,  # right losses, weights never trained
                   "train_with_schedule"):
        assert nb13.schedule_train.evaluate(answer).status == INCORRECT


def _schedule_stub(net, loss_fn, x, y, schedule):
    grad_fn = ...
    return grad_fn


def test_schedule_train_scaffold_is_not_attempted():
    assert nb13.schedule_train.evaluate(_schedule_stub).status == NOT_ATTEMPTED


# ---- predictions ----------------------------------------------------------------------------------
@pytest.mark.parametrize("prediction, right", [(nb13.same_weights, "a"), (nb13.rebound_optimizer, "b")])
def test_predictions_explain_every_option(prediction, right):
    assert prediction.evaluate(right).status == CORRECT
    for letter, (_text, why) in prediction.options.items():
        if letter != right:
            result = prediction.evaluate(letter)
            assert result.status == INCORRECT and why in result.message
