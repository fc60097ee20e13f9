"""Notebook 13's checks: their oracles, the named mistakes and regressions (the contract test covers the rest);
the timing helper counts asynchronous work and checks its arguments."""

import os

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, nn, ops  # noqa: E402
from reference_solutions import reference  # noqa: E402

from course_utils.checks import nb13  # noqa: E402
from course_utils.exercises import CORRECT, INCORRECT  # noqa: E402
from course_utils.timing import time_calls  # noqa: E402


def _rejects(exercise, answer, text):
    result = exercise.evaluate(answer)
    assert result.status == INCORRECT and text in result.message, result.message
    return result.message


# ---- 13.2 faster_mode --------------------------------------------------------------------------
def via_break_even(n_steps, n_shapes, compile_s, pynative_step_s, graph_step_s):
    """Another correct formulation: compare with the break-even point."""
    if graph_step_s >= pynative_step_s:
        return "pynative"
    return "graph" if n_steps > n_shapes * compile_s / (pynative_step_s - graph_step_s) else "pynative"


def test_faster_mode_accepts_correct_formulations():
    reference_faster_mode, printed = reference(nb13.faster_mode)
    assert printed.startswith("[ok]") and nb13.faster_mode.evaluate(via_break_even).status == CORRECT
    assert {reference_faster_mode(*case) for case in nb13._MODE_CASES} == {"graph", "pynative"}
    assert (4, 2, 0.5, 0.5, 0.25) in nb13._MODE_CASES and 2 * 0.5 + 4 * 0.25 == 4 * 0.5  # an exact tie
    # a case where one compile and n_shapes compiles disagree, so that forgetting n_shapes is caught
    assert any(nb13._faster_oracle(*case) != nb13._faster_oracle(case[0], 1, *case[2:]) for case in nb13._MODE_CASES)


@pytest.mark.parametrize("wrong, text", [
    (lambda n, k, c, p, g: "graph" if g < p else "pynative", "expected 'pynative'"),         # ignores the compile
    (lambda n, k, c, p, g: "graph" if c + n * g < n * p else "pynative", "compiles 3 times"),  # one compile only
    (lambda n, k, c, p, g: "graph" if k * c + n * g <= n * p else "pynative", "strictly"),    # a tie counts as a win
    (lambda n, k, c, p, g: "graph" if k * c + g < p else "pynative", "expected 'graph'"),     # one step only
    (lambda n, k, c, p, g: "pynative" if k * c + n * g < n * p else "graph", "expected"),     # reversed
    (lambda n, k, c, p, g: "GRAPH", "return the string"),
    (lambda n, k, c, p, g: None, "faster_mode(...) returned None"),
    ("graph", "expected your function faster_mode(n_steps, n_shapes, compile_s, pynative_step_s, graph_step_s)"),
])
def test_faster_mode_names_the_mistake(wrong, text):
    _rejects(nb13.faster_mode, wrong, text)


# ---- 13.4 make_scale: one compile per shape, whatever the factor ----------------------------------
def _scale_maker(mistake=None):
    """A make_scale written here, with one typical mistake or none."""

    def make_scale(on_compile):
        def body(x, factor):
            if mistake != "no counter":
                on_compile()
            if mistake == "cast inside":
                factor = factor.astype(ms.float32)
            return x * factor

        scaled = body if mistake == "eager" else ms.jit(body)

        def scale(x, factor):
            if mistake == "as given":
                return scaled(x, factor)
            if mistake == "mutable":
                return scaled(x, factor.astype(ms.float32) if isinstance(factor, Tensor) else ms.mutable(factor))
            if mistake in ("no cast", "cast inside"):
                return scaled(x, factor if isinstance(factor, Tensor) else Tensor(factor, ms.float32))
            if mistake == "numpy":
                return Tensor(x.asnumpy() * float(factor.asnumpy() if isinstance(factor, Tensor) else factor))
            if mistake == "float64 out":
                return scaled(x, factor.astype(ms.float32) if isinstance(factor, Tensor)
                              else Tensor(factor, ms.float32)).astype(ms.float64)
            return scaled(x, factor.astype(ms.float32) if isinstance(factor, Tensor) else Tensor(factor, ms.float32))

        return scale

    return make_scale


def test_make_scale_accepts_the_reference():
    answer, printed = reference(nb13.scale_once)
    assert printed.startswith("[ok]"), printed
    assert nb13.scale_once.evaluate(_scale_maker()).status == CORRECT


@pytest.mark.parametrize("mistake, text", [
    ("as given", "the Python float -1.25) compiled a new graph"),  # every float value compiles
    ("mutable", "the Python int 2) compiled a new graph"),  # ms.mutable: an int after a float
    ("no cast", "an int32 Tensor 3) compiled a new graph"),  # a new dtype
    ("cast inside", "a new dtype compiles a new graph"),  # the input dtype still differs
    ("eager", "not compiled. Decorate it with @ms.jit"),
    ("no counter", "on_compile() never ran"),
    ("numpy", "on_compile() never ran"),  # numpy did the work
    ("float64 out", "must be float32"),
])
def test_make_scale_names_the_mistake(mistake, text):
    _rejects(nb13.scale_once, _scale_maker(mistake), text)


def test_make_scale_checks_the_values():
    def make_scale(on_compile):
        @ms.jit
        def scaled(x, factor):
            on_compile()
            return x * factor + 1

        return lambda x, factor: scaled(x, Tensor(float(factor.asnumpy()) if isinstance(factor, Tensor) else factor,
                                                  ms.float32))

    _rejects(nb13.scale_once, make_scale, "is not x * factor")
    _rejects(nb13.scale_once, lambda on_compile: 3, "return the function scale(x, factor)")


# ---- 13.6 power_sum ---------------------------------------------------------------------------
# Graph mode compiles a Cell from its source file, so these classes live here, not in exec'd text.
class PowerSum(nn.Cell):
    """The reference solution: the powers taken in construct, from a Python int."""

    def __init__(self, power):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.power = power

    def construct(self, x):
        y = self.dense(x)
        out = y
        for k in range(2, self.power + 1):
            out = out + y ** k
        return out


class WithOps(PowerSum):
    """Another right answer: ops.pow in a loop from zero."""

    def construct(self, x):
        y = self.dense(x)
        out = ops.zeros_like(y)
        for k in range(self.power):
            out = out + ops.pow(y, k + 1)
        return out


class Lambdas(nn.Cell):
    """The notebook's PowerSum: fine in PyNative, refused by graph mode."""

    def __init__(self, power):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.powers = [lambda t, k=k: t ** k for k in range(1, power + 1)]

    def construct(self, x):
        y = self.dense(x)
        out = ops.zeros_like(y)
        for f in self.powers:
            out = out + f(y)
        return out


class OneShort(PowerSum):
    """Stops a power early (range(2, power))."""

    def construct(self, x):
        y = self.dense(x)
        out = y
        for k in range(2, self.power):
            out = out + y ** k
        return out


class TopOnly(PowerSum):
    """Only the highest power."""

    def construct(self, x):
        return self.dense(x) ** self.power


class Renamed(nn.Cell):
    def __init__(self, power):
        super().__init__()
        self.fc = nn.Dense(1, 1)
        self.power = power

    def construct(self, x):
        return self.fc(x)


class Banner(nn.Cell):
    """Raises what MindSpore raises for a framework error: banners first, the meaningful line after them."""

    def __init__(self, power):
        super().__init__()
        self.dense = nn.Dense(1, 1)

    def __call__(self, x):
        raise RuntimeError("----------------------------------------------------\n- Framework Unexpected Exception "
                           "Raised:\n----------------------------------------------------\nThe pointer is null.\n\n"
                           "- C++ Call Stack: (For framework developers)\nparse.cc:581 ParseFuncGraph\n(See file "
                           "'rank_0/om/analyze_fail.ir' for more details.)")


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_power_sum_accepts_solutions_and_restores_the_mode(pynative):
    assert nb13.power_sum.evaluate(PowerSum).status == CORRECT
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    ms.set_context(mode=ms.GRAPH_MODE)
    assert nb13.power_sum.evaluate(WithOps).status == CORRECT
    assert ms.get_context("mode") == ms.GRAPH_MODE


def test_the_notebooks_power_sum_runs_in_pynative_only(pynative):
    x = ms.Tensor(np.array([[0.5], [2.0]], np.float32))
    net = Lambdas(3)
    y = net.dense(x).asnumpy()
    assert np.allclose(net(x).asnumpy(), y + y ** 2 + y ** 3, rtol=1e-5)  # the scaffold is right in PyNative
    assert nb13.power_sum.evaluate(Lambdas).status == INCORRECT


@pytest.mark.parametrize("wrong, text", [
    (Lambdas, "Lambdas(1) fails in graph mode: TypeError: Parse Lambda Function Fail"),
    (OneShort, "OneShort(3) compiles, but returns"),
    (TopOnly, "expected y + y**2 + ... + y**3 with y = dense(x)"),
    (Renamed, "self.dense = nn.Dense(1, 1)"),
    (nn.Dense(1, 1), "expected your class PowerSum(power) (answer = PowerSum, the class itself, not an instance)"),
    (int, "is not a Cell: subclass nn.Cell, as PowerSum does"),
    (Banner, "fails in graph mode: RuntimeError: The pointer is null."),  # regression: the banner was quoted
])
def test_power_sum_names_the_mistake(pynative, wrong, text):
    message = _rejects(nb13.power_sum, wrong, text)
    assert "C++" not in message and "----" not in message and "analyze_fail" not in message, message
    assert ms.get_context("mode") == ms.PYNATIVE_MODE, "the check must restore the learner's mode"


def test_power_sum_gives_a_clue_not_the_rewrite(pynative):
    """MindSpore's message goes on to spell out a rewrite; the check quotes its first sentence, which names what
    failed, and says where graph mode looks."""
    message = _rejects(nb13.power_sum, Lambdas,
                       "Parse Lambda Function Fail. Graph mode parses the source of construct and of everything it "
                       "calls, the attributes set in __init__ included")
    assert "rewritten" not in message and "separate line" not in message and "if y < 1" not in message, message


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


@pytest.mark.parametrize("fn, repeat, error, text", [
    ("step", 1, TypeError, "fn must be callable"), (print, 0, ValueError, "repeat must be an int from 1 to"),
    (print, -3, ValueError, "repeat must be an int from 1 to"),
    (print, 10**15, ValueError, "repeat must be an int from 1 to 1000000"),
    (print, 2.0, TypeError, "repeat must be an int"), (print, True, TypeError, "repeat must be an int"),
])
def test_time_calls_rejects_bad_arguments(fn, repeat, error, text):
    with pytest.raises(error, match=text):
        time_calls(fn, repeat=repeat)
    with pytest.raises(TypeError):
        time_calls(print)  # repeat is keyword-only and required


# ---- 13.5 a learning-rate schedule compiled once ---------------------------------------------------
def _schedule_trainer(mistake=None):
    """train_with_schedule with momentum written here, with one typical mistake or none."""
    from mindspore import ops

    def train_with_schedule(net, loss_fn, x, y, schedule):
        params = net.trainable_params()
        velocities = [ms.Parameter(ops.zeros_like(p), name="v_" + p.name) for p in params]

        def forward(x, y):
            return loss_fn(net(x), y)

        grad_fn = ms.value_and_grad(forward, None, params)

        def momentum_step(x, y, lr):
            loss, grads = grad_fn(x, y)
            for p, v, g in zip(params, velocities, grads):
                if mistake == "no momentum":
                    ops.assign(p, p - lr * g)
                    continue
                ops.assign(v, 0.9 * v + g)
                ops.assign(p, p + lr * v if mistake == "ascent" else p - lr * v)
            return loss

        step = momentum_step if mistake == "eager" else ms.jit(momentum_step)
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


def test_schedule_train_accepts_the_reference():  # typed here, eager: exec'd text gives @ms.jit no source file
    assert nb13.schedule_train.evaluate(_schedule_trainer()).status == CORRECT


@pytest.mark.parametrize("answer, text", [
    (_schedule_trainer("float"), "a Python float is baked into the graph as a constant"),  # recompiles for every value
    (_schedule_trainer("eager"), "decorate it with @ms.jit"),  # never compiled
    (_schedule_trainer("ascent"), "the loss before step 1 should be"),
    (_schedule_trainer("no momentum"), "plain gradient descent"),
    (_schedule_trainer("first lr"), "the loss before step 2 should be"),
    (_schedule_trainer("no return"), "train_with_schedule(...) returned None"),
    (lambda net, loss_fn, x, y, schedule: schedule, "the loss before step 0 should be"),  # echoes its input
    (lambda net, loss_fn, x, y, schedule: [0.0] * 6, "the loss before step 0 should be"),
    (lambda net, loss_fn, x, y, schedule: nb13.schedule_oracle()[0].tolist(),  # right losses, untrained net
     "update the net's own parameters"),
    (lambda net, loss_fn, x, y, schedule: 0.5, "return the list of the 6 losses"),
])
def test_schedule_train_names_the_mistake(answer, text):
    _rejects(nb13.schedule_train, answer, text)
