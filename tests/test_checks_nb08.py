"""The exercises of notebook 08 accept the reference solutions and reject typical wrong answers."""

import numpy as np
import pytest

from course_utils import oracles
from course_utils.checks import nb08
from course_utils.diagnostics import DIVERGED, FROZEN, HEALTHY, NO_PROGRESS, health_report
from course_utils.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED

REFERENCE = {"A": nb08.BADLY_SCALED, "B": nb08.FROZEN, "C": nb08.TOO_LARGE, "D": nb08.HEALTHY,
             "E": nb08.WRONG_SHAPE, "F": nb08.TOO_SMALL}


def _limit(x):
    return 2 / oracles.lambda_max(x)


# ---- 08.2 diagnose the runs -------------------------------------------------------------------------
def test_mystery_runs_show_the_symptoms_of_their_cause():
    runs = nb08.mystery_runs()
    assert sorted(runs) == list("ABCDEF")
    symptom = {nb08.TOO_LARGE: DIVERGED, nb08.TOO_SMALL: NO_PROGRESS, nb08.BADLY_SCALED: NO_PROGRESS,
               nb08.WRONG_SHAPE: NO_PROGRESS, nb08.FROZEN: FROZEN, nb08.HEALTHY: HEALTHY}
    for name, cause in REFERENCE.items():
        run = runs[name]
        assert run["params"].shape == (101, 2) and run["loss"].shape == run["grad_norm"].shape == (100,)
        report = health_report(run["loss"], run["grad_norm"], run["params"], baseline_loss=float(np.var(run["y"])))
        assert report.verdict == symptom[cause], (name, cause, str(report))
    # the clues the exercise relies on
    assert runs["C"]["lr"] > _limit(runs["C"]["x"])
    assert runs["F"]["lr"] < 0.01 * _limit(runs["F"]["x"]) and runs["F"]["loss"][-1] < runs["F"]["loss"][-10]
    assert 0.5 * _limit(runs["A"]["x"]) < runs["A"]["lr"] < _limit(runs["A"]["x"]) and runs["A"]["x"].max() > 100
    assert runs["E"]["y"].shape == (100,) and runs["E"]["loss"][-1] == pytest.approx(np.var(runs["E"]["y"]), rel=1e-3)


def test_mystery_runs_are_the_same_every_time():
    a, b = nb08.mystery_runs(), nb08.mystery_runs()
    for name in a:
        np.testing.assert_array_equal(a[name]["loss"], b[name]["loss"])


def test_diagnosis_accepts_the_reference():
    assert nb08.diagnosis.evaluate(dict(REFERENCE)).status == CORRECT
    assert nb08.diagnosis.evaluate(...).status == NOT_ATTEMPTED


@pytest.mark.parametrize("answer, text", [
    ({k: nb08.HEALTHY for k in REFERENCE}, "5 of 6 causes are wrong"),
    ({**REFERENCE, "A": nb08.TOO_SMALL, "F": nb08.BADLY_SCALED}, "run A: its lr is close to 2/λmax"),
    ({**REFERENCE, "C": nb08.BADLY_SCALED}, "1 of 6 causes are wrong. run C"),
    ({**REFERENCE, "A": "bad scaling"}, "use the names in nb08.CAUSES"),
    ({"A": nb08.BADLY_SCALED}, "missing: B, C, D, E, F"),
    ([nb08.HEALTHY] * 6, "expected a dict"),
])
def test_diagnosis_rejects_wrong_answers(answer, text):
    result = nb08.diagnosis.evaluate(answer)
    assert result.status == INCORRECT and text in result.message, result.message


# ---- 08.3 fix the broken set-up -----------------------------------------------------------------------
def _reference_fix():
    x_raw, y_raw = nb08.broken_data()
    x_fixed = ((x_raw - x_raw.mean()) / x_raw.std()).reshape(-1, 1).astype(np.float32)
    return x_fixed, y_raw.reshape(-1, 1).astype(np.float32), 0.5


def test_broken_data_is_broken():
    x_raw, y_raw = nb08.broken_data()
    assert x_raw.dtype == np.float64 and x_raw.shape == (100,) and 900 < x_raw.max() <= 1000
    assert _limit(x_raw) < 1e-5, "at the usual learning rates the raw inputs diverge"


def test_fixed_setup_accepts_standardised_and_rescaled_inputs():
    assert nb08.fixed_setup.evaluate(_reference_fix()).status == CORRECT
    x_raw, y_raw = nb08.broken_data()
    metres = (x_raw / 1000).reshape(-1, 1).astype(np.float32)
    assert nb08.fixed_setup.evaluate((metres, y_raw.reshape(-1, 1).astype(np.float32), 0.5)).status == CORRECT


def _variant(**change):
    x, y, lr = _reference_fix()
    x_raw, y_raw = nb08.broken_data()
    as_is = x_raw.reshape(-1, 1).astype(np.float32)
    options = {"float64": (x.astype(np.float64), y, lr), "flat": (x.ravel(), y, lr),
               "raw_lr_05": (as_is, y, lr), "raw_stable_lr": (as_is, y, 0.9 * _limit(as_is)),
               "lr_too_big": (x, y, 1.5), "lr_negative": (x, y, -0.1), "lr_string": (x, y, "0.5"),
               "y_scaled": (x, y / 2, lr), "x_shuffled": (x[::-1].copy(), y, lr), "tensor": (list(x), y, lr),
               "pair": (x, y)}
    return options[change["case"]]


@pytest.mark.parametrize("case, text", [
    ("float64", "float32 of shape (100, 1)"), ("flat", "float32 of shape (100, 1)"),
    ("raw_lr_05", "above 2/λmax"), ("raw_stable_lr", "standardise"), ("lr_too_big", "above 2/λmax"),
    ("lr_negative", "positive number"), ("lr_string", "lr must be a number, not text"), ("y_scaled", "same targets"),
    ("x_shuffled", "rescaled"), ("tensor", "numpy array"), ("pair", "tuple (x_fixed, y_fixed, lr)"),
])
def test_fixed_setup_rejects_typical_mistakes(case, text):
    result = nb08.fixed_setup.evaluate(_variant(case=case))
    assert result.status == INCORRECT and text in result.message, result.message


# ---- 08.5 reset the parameters so that training goes on -----------------------------------------------
def _reset_with(how):
    import mindspore as ms
    from mindspore import Tensor, ops

    def reset_parameters(net, weight, bias):
        w, b = Tensor([[weight]], ms.float32), Tensor([bias], ms.float32)
        if how == "assign":
            ops.assign(net.dense.weight, w)
            ops.assign(net.dense.bias, b)
        elif how == "copy_":
            net.dense.weight.copy_(w)
            net.dense.bias.copy_(b)
        elif how == "set_data":
            net.dense.weight.set_data(w)
            net.dense.bias.set_data(b)
        elif how == "swapped":
            ops.assign(net.dense.weight, Tensor([[bias]], ms.float32))
            ops.assign(net.dense.bias, Tensor([weight], ms.float32))
        elif how == "raises":
            raise RuntimeError("boom")

    return reset_parameters


@pytest.mark.parametrize("how", ["assign", "copy_"])
def test_reset_accepts_working_resets(how):
    result = nb08.reset.evaluate(_reset_with(how))
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("how, text", [
    ("set_data", "set_data trap"), ("swapped", "expected (0.5, -0.25)"), ("nothing", "expected (0.5, -0.25)"),
    ("raises", "RuntimeError: boom"),
])
def test_reset_rejects_broken_resets(how, text):
    result = nb08.reset.evaluate(_reset_with(how))
    assert result.status == INCORRECT and text in result.message, result.message
    assert nb08.reset.evaluate("reset").status == INCORRECT


def test_reset_check_restores_the_mode():
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        nb08.reset.evaluate(_reset_with("assign"))
        assert ms.get_context("mode") == ms.GRAPH_MODE
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


# ---- predictions 08.1, 08.4 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("prediction", [nb08.just_above_limit, nb08.set_data_after_steps])
def test_predictions_explain_every_option(prediction):
    assert prediction.evaluate(...).status == NOT_ATTEMPTED
    for letter, (_text, why) in prediction.options.items():
        result = prediction.evaluate(letter)
        assert (result.status == CORRECT) == (letter == prediction.answer) and why in result.message


def test_just_above_limit_numbers_follow_from_the_hessian():
    """The explanation's numbers: 1 - 0.85·λmax = -1.11 on the error, about 1.23 per step on the loss."""
    from course_utils.data import make_linear_data

    x = make_linear_data()[0].astype(np.float64).ravel()
    lam_max = oracles.lambda_max(x)
    assert round(2 / lam_max, 3) == 0.807 and round(1 - 0.85 * lam_max, 2) == -1.11
    assert round((1 - 0.85 * lam_max) ** 2, 2) == 1.23 and 1e8 < (1 - 0.85 * lam_max) ** 200 < 1e10


def test_reset_scaffold_left_as_it_is_is_not_attempted():
    def reset_parameters(net, weight, bias):  # the notebook's scaffold
        ...  # your code here

    assert nb08.reset.evaluate(reset_parameters).status == NOT_ATTEMPTED
