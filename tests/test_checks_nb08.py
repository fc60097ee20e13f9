"""Notebook 08's checks: the simulated runs show their cause, the named mistakes are named, the oracle's facts."""

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from reference_solutions import reference

from course_utils import oracles
from course_utils.checks import nb08
from course_utils.data import make_linear_data
from course_utils.diagnostics import DIVERGED, FROZEN, HEALTHY, NO_PROGRESS, health_report
from course_utils.exercises import CORRECT, INCORRECT


def _limit(x):
    return 2 / oracles.lambda_max(x)


NOTEBOOK = {"mystery": nb08.mystery_runs(), "stable_lr_limit": _limit,  # what the solutions take from the notebook
            "report_of": lambda run, baseline: health_report(run["loss"], run["grad_norm"], run["params"],
                                                           baseline_loss=baseline)}
DIAGNOSIS = reference(nb08.diagnosis, **NOTEBOOK)[0]
X_RAW, Y_RAW = nb08.broken_data()
FIX = reference(nb08.fixed_setup, x_raw=X_RAW, y_raw=Y_RAW, **NOTEBOOK)[0]


def message(exercise, answer, status=INCORRECT):
    result = exercise.evaluate(answer)
    assert result.status == status, result.message
    return result.message


def test_mystery_runs_show_the_symptoms_of_their_cause():
    runs = nb08.mystery_runs()
    symptom = {nb08.TOO_LARGE: DIVERGED, nb08.TOO_SMALL: NO_PROGRESS, nb08.BADLY_SCALED: NO_PROGRESS,
               nb08.WRONG_SHAPE: NO_PROGRESS, nb08.FROZEN: FROZEN, nb08.HEALTHY: HEALTHY}
    for name, cause in DIAGNOSIS.items():
        run = runs[name]
        assert run["params"].shape == (101, 2) and run["loss"].shape == run["grad_norm"].shape == (100,)
        np.testing.assert_array_equal(run["loss"], NOTEBOOK["mystery"][name]["loss"])  # the same every time
        report = NOTEBOOK["report_of"](run, float(np.var(run["y"])))
        assert report.verdict == symptom[cause], (name, cause, str(report))
    # the clues the exercise relies on
    assert runs["C"]["lr"] > _limit(runs["C"]["x"])
    assert runs["F"]["lr"] < 0.01 * _limit(runs["F"]["x"]) and runs["F"]["loss"][-1] < runs["F"]["loss"][-10]
    assert 0.5 * _limit(runs["A"]["x"]) < runs["A"]["lr"] < _limit(runs["A"]["x"]) and runs["A"]["x"].max() > 100
    assert runs["E"]["y"].shape == (100,) and runs["E"]["loss"][-1] == pytest.approx(np.var(runs["E"]["y"]), rel=1e-3)


@pytest.mark.parametrize("answer, text", [
    ({k: nb08.HEALTHY for k in DIAGNOSIS}, "5 of 6 causes are wrong"),
    ({**DIAGNOSIS, "A": nb08.TOO_SMALL, "F": nb08.BADLY_SCALED}, "run A: look at the range of its x"),
    ({**DIAGNOSIS, "C": nb08.BADLY_SCALED}, "1 of 6 causes are wrong. run C"),
    ({**DIAGNOSIS, "A": "bad scaling"}, "use the names in nb08.CAUSES"),
    ({**DIAGNOSIS, "G": nb08.HEALTHY}, "there is no run"),
    ({"A": nb08.BADLY_SCALED}, "missing: B, C, D, E, F"),
    ([nb08.HEALTHY] * 6, "expected a dict"),
])
def test_diagnosis_names_the_mistake(answer, text):
    assert text in message(nb08.diagnosis, answer)


def test_broken_data_is_broken_and_a_rescaling_in_metres_is_a_fix_too():
    assert X_RAW.dtype == np.float64 and X_RAW.shape == (100,) and 900 < X_RAW.max() <= 1000
    assert _limit(X_RAW) < 1e-5, "at the usual learning rates the raw inputs diverge"
    metres = (X_RAW / 1000).reshape(-1, 1).astype(np.float32)
    message(nb08.fixed_setup, (metres, FIX[1], 0.5), CORRECT)


X, Y, LR = FIX
AS_IS = X_RAW.reshape(-1, 1).astype(np.float32)


@pytest.mark.parametrize("answer, text", [
    ((X.astype(np.float64), Y, LR), "float32 of shape (100, 1)"), ((X.ravel(), Y, LR), "float32 of shape (100, 1)"),
    ((AS_IS, Y, LR), "above 2/λmax"), ((AS_IS, Y, 0.9 * _limit(AS_IS)), "the loss is still"),
    ((X, Y, 1.5), "above 2/λmax"),
    ((X, Y, -0.1), "positive number"), ((X, Y, "0.5"), "lr must be a number, not text"),
    ((X, Y / 2, LR), "same targets"), ((X[::-1].copy(), Y, LR), "rescaled"), ((list(X), Y, LR), "numpy array"),
    ((X, Y), "tuple (x_fixed, y_fixed, lr)"),
])
def test_fixed_setup_names_the_mistake(answer, text):
    assert text in message(nb08.fixed_setup, answer)


def _pull_with(how):
    def pull_towards(net, values, alpha):
        for parameter in net.trainable_params():
            saved = np.asarray(values[parameter.name], np.float32)
            new = Tensor(parameter.asnumpy() + alpha * (saved - parameter.asnumpy()))  # computed in numpy
            if how == "copy_":
                parameter.copy_(new)
            elif how == "set_data":
                parameter.set_data(new)
            elif how == "float64":  # MindSpore refuses to write float64 into a float32 Parameter
                ops.assign(parameter, Tensor(parameter.asnumpy() + alpha * (values[parameter.name]
                                                                           - parameter.asnumpy())))
            elif how == "all the way":  # 08.5's old answer: a restore
                ops.assign(parameter, Tensor(saved))
            elif how == "1 - alpha":
                ops.assign(parameter, Tensor(parameter.asnumpy() + (1 - alpha) * (saved - parameter.asnumpy())))
            elif how == "first only":
                ops.assign(parameter, new)
                break
            elif how == "swapped biases" and parameter.name.endswith("bias"):
                other = "out.bias" if parameter.name == "hidden.bias" else "hidden.bias"
                ops.assign(parameter, Tensor(np.resize(np.asarray(values[other], np.float32), parameter.shape)))
            elif how in ("assign", "swapped biases"):
                ops.assign(parameter, new)
            elif how == "tensors":  # the same in MindSpore operators
                ops.assign(parameter, parameter + alpha * (Tensor(saved) - parameter))
            elif how == "raises":
                raise RuntimeError("boom")

    return pull_towards


def test_pull_towards_accepts_the_reference_assign_and_copy_():
    assert reference(nb08.pull_towards)[1].startswith("[ok]")
    for how in ("assign", "copy_", "tensors"):
        message(nb08.pull_towards, _pull_with(how), CORRECT)


@pytest.mark.parametrize("how, text", [
    ("set_data", "set_data trap"), ("first only", "hidden.bias is not 0.3 of the way"),
    ("nothing", "still holds its trained value"), ("swapped biases", "hidden.bias is not"),
    ("all the way", "it went all the way"), ("1 - alpha", "moved 70% of the way"),
    ("raises", "RuntimeError: boom"), ("float64", "the values are float64 numpy arrays"),
])
def test_pull_towards_names_the_mistake(how, text):
    assert text in message(nb08.pull_towards, _pull_with(how))


def test_pull_towards_cuts_mindspores_call_stack_and_restores_the_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        text = message(nb08.pull_towards, _pull_with("float64"))
        assert ms.get_context("mode") == ms.GRAPH_MODE
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert "C++" not in text and "----" not in text and "\n" not in text, text


def test_pull_mistakes_differ_from_the_answer():
    """alpha = 0.3 tells a share alpha from a share 1 - alpha, all the way and none of it."""
    before = {name: np.zeros_like(value) for name, value in nb08._restore_values().items()}
    right = nb08.pull_oracle(before, nb08._restore_values())
    for settings, _message in nb08.PULL_MISTAKES:
        assert not nb08._same_values(nb08.pull_oracle(before, nb08._restore_values(), **settings), right), settings


def test_the_restore_oracle_is_what_mindspore_does():
    """The check's numpy descent of the 2-4-1 ReLU net agrees with MindSpore's on other values than the check's."""
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.hidden, self.relu, self.out = nn.Dense(2, 4), nn.ReLU(), nn.Dense(4, 1)

        def construct(self, x):
            return self.out(self.relu(self.hidden(x)))

    values = {name: value * 0.7 + 0.05 for name, value in nb08._restore_values().items()}
    net = Net()
    _pull_with("all the way")(net, values, 1.0)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    for _ in range(5):
        step(Tensor(nb08.RESTORE_X), Tensor(nb08.RESTORE_Y))
    expected = nb08._numpy_descent(values, 0.1, 5)
    for parameter in net.trainable_params():
        assert np.allclose(parameter.asnumpy(), expected[parameter.name], rtol=1e-4, atol=1e-6), parameter.name


def test_just_above_limit_numbers_follow_from_the_hessian():
    """The explanation's numbers: 1 - 0.85·λmax = -1.11 on the error, about 1.23 per step on the loss."""
    lam_max = oracles.lambda_max(make_linear_data()[0].astype(np.float64).ravel())
    assert round(2 / lam_max, 3) == 0.807 and round(1 - 0.85 * lam_max, 2) == -1.11
    assert round((1 - 0.85 * lam_max) ** 2, 2) == 1.23 and 1e8 < (1 - 0.85 * lam_max) ** 200 < 1e10
