"""course_utils.claims (one line per verified claim) and course_utils.oracles (numpy references)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils.claims import ClaimFailed, claim
from course_utils.data import make_linear_data
from course_utils.oracles import gradient_descent, hessian, lambda_max, least_squares

ROOT = Path(__file__).resolve().parents[1]


def test_claim_prints_one_line_when_true(capsys):
    assert claim("two is more than one", 2 > 1) is None
    assert capsys.readouterr().out == "✓ two is more than one\n"


def test_claim_fails_with_the_measured_values():
    with pytest.raises(ClaimFailed, match=r"✗ w is near 2\n  measured: w = 1.5, steps = 100"):
        claim("w is near 2", abs(1.5 - 2) < 0.05, w=1.5, steps=100)


@pytest.mark.parametrize("holds", [np.array([True, False]), 1, 0.0, None, "yes"])
def test_claim_refuses_what_is_not_a_bool(holds):
    with pytest.raises(TypeError, match="must be True or False"):
        claim("a claim", holds)


@pytest.mark.parametrize("text", ["", "  ", None, 3])
def test_claim_needs_a_sentence(text):
    with pytest.raises(TypeError, match="non-empty sentence"):
        claim(text, True)


def test_claim_shows_non_finite_and_arrays():
    with pytest.raises(ClaimFailed, match=r"loss = nan, w = \[1\., 2\.\]"):
        claim("the loss is finite", False, loss=float("nan"), w=np.array([1.0, 2.0]))


def test_claim_fills_in_the_values_its_sentence_names(capsys):
    claim("seed {seed}: the gap is {gap:.1e}", True, seed=3, gap=0.000123, other=1)
    assert capsys.readouterr().out == "✓ seed 3: the gap is 1.2e-04\n"
    with pytest.raises(ClaimFailed, match=r"✗ seed 4: fails\n  measured: seed = 4"):
        claim("seed {seed}: fails", False, seed=4)
    claim("a literal {{brace}}", True)
    assert capsys.readouterr().out == "✓ a literal {brace}\n"


@pytest.mark.parametrize("text, match", [("seed {seed}", r"names \{seed\}: pass seed=\.\.\. too"),
                                         ("a {", "unbalanced braces"), ("a }", "unbalanced braces"),
                                         ("{}", "has no name"), ("w {0}", "has no name")])
def test_claim_says_what_its_sentence_misses(text, match):
    with pytest.raises(TypeError, match=match):
        claim(text, True)


@pytest.mark.parametrize("text", ["{v:zz}", "{v[0]}", "{v.nothing}"])
def test_claim_says_when_its_sentence_cannot_show_the_value(text):
    with pytest.raises(TypeError, match=r"claim\(.*cannot show the values passed"):
        claim(text, True, v=1.5)


@given(text=st.text(min_size=1, max_size=40).filter(str.strip), holds=st.booleans(),
       value=st.one_of(st.integers(), st.floats(), st.text(max_size=10), st.none()))
@settings(max_examples=200, deadline=None)
def test_claim_either_prints_raises_claimfailed_or_a_clear_typeerror(text, holds, value):
    try:
        claim(text, holds, v=value)
    except ClaimFailed:
        assert not holds
    except TypeError as error:
        assert "{" in text or "}" in text, error
        assert "claim(" in str(error)


def test_claim_speaks_chinese_in_the_chinese_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh")
    table = json.loads((ROOT / "course_utils" / "messages" / "zh" / "lesson.00.json").read_text(encoding="utf-8"))
    sentence = next(iter(table))  # any sentence the Chinese table translates
    claim(sentence, True)
    out = capsys.readouterr().out
    assert out.startswith("✓ ") and re.search(r"[\u4e00-\u9fff]", out), out
    with pytest.raises(ClaimFailed, match="实测"):
        claim(sentence, False, dtype="float16")
    claim("a sentence with no translation", True)  # shown in English: a learner never sees an error for it
    assert capsys.readouterr().out == "✓ a sentence with no translation\n"


def _mindspore_sgd(x, y, lr, steps, momentum):
    import mindspore as ms
    from mindspore import nn

    ms.set_seed(0)
    net = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")
    opt = nn.Momentum(net.trainable_params(), lr, momentum) if momentum else nn.SGD(net.trainable_params(), lr)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    xs, ys = ms.Tensor(x), ms.Tensor(y)
    losses = [float(step(xs, ys).asnumpy()) for _ in range(steps)]
    return float(net.weight.asnumpy().ravel()[0]), float(net.bias.asnumpy()[0]), np.array(losses)


@pytest.mark.parametrize("lr, momentum", [(0.1, 0.0), (0.5, 0.0), (0.2, 0.9), (0.9, 0.0)])
def test_gradient_descent_is_what_mindspore_does(lr, momentum):
    x, y = make_linear_data()
    w, b, losses = _mindspore_sgd(x, y, lr, 30, momentum)
    ws, bs, ref = gradient_descent(x, y, lr, 30, momentum=momentum)
    assert np.allclose(losses, ref, rtol=1e-4, atol=1e-5)
    assert np.isclose(w, ws[-1], rtol=1e-4, atol=1e-5) and np.isclose(b, bs[-1], rtol=1e-4, atol=1e-5)


def test_gradient_descent_converges_to_least_squares_and_diverges_past_the_bound():
    x, y = make_linear_data()
    bound = 2 / lambda_max(x)
    ws, bs, _ = gradient_descent(x, y, 0.9 * bound, 5000)
    assert np.allclose((ws[-1], bs[-1]), least_squares(x, y), atol=1e-9)
    ws, _, losses = gradient_descent(x, y, 1.05 * bound, 2000)
    assert not np.isfinite(losses[-1]) or losses[-1] > 1e6


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=3, max_size=30, unique=True), st.floats(-5, 5), st.floats(-5, 5))
def test_least_squares_recovers_an_exact_line_and_matches_the_normal_equations(xs, w, b):
    x = np.array(xs)
    if np.ptp(x) < 1e-3:
        return
    assert np.allclose(least_squares(x, w * x + b), (w, b), atol=1e-6 * (1 + abs(w) + abs(b)) * (1 + np.abs(x).max()))
    h = hessian(x)
    assert np.allclose(h, h.T) and np.all(np.linalg.eigvalsh(h) >= -1e-9)
    g = np.array([[np.sum(x * x), np.sum(x)], [np.sum(x), len(x)]])
    assert np.allclose(h, 2 * g / len(x))


@pytest.mark.parametrize("call, match", [
    (lambda: least_squares([1, 1, 1], [1, 2, 3]), "two different values"),
    (lambda: least_squares([1, 2], [1]), "same positive number"),
    (lambda: gradient_descent([1, 2], [1, 2], float("nan"), 3), "finite"),
    (lambda: gradient_descent([1, 2], [1, 2], 0.1, 3, momentum=1.0), "momentum"),
    (lambda: gradient_descent([1, float("inf")], [1, 2], 0.1, 3), "finite"),
    (lambda: gradient_descent([1, 2], [1, 2], 0.1, 2.5), "steps"),
])
def test_oracles_refuse_bad_input(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()
