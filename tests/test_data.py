import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from course_utils import oracles
from course_utils.data import check_xy, make_linear_data, make_moons, make_spirals


def test_defaults_reproduce_the_articles_recipe():
    np.random.seed(0)
    x_ref = np.random.rand(100, 1).astype(np.float32)
    y_ref = 2 * x_ref + np.random.normal(0, 0.01, size=(100, 1)).astype(np.float32)
    x, y = make_linear_data()
    assert x.dtype == y.dtype == np.float32 and x.shape == y.shape == (100, 1)
    np.testing.assert_array_equal(x, x_ref)
    np.testing.assert_array_equal(y, y_ref)


def test_seed_and_parameters_change_the_data():
    x0, y0 = make_linear_data(seed=0)
    x1, _ = make_linear_data(seed=1)
    assert not np.array_equal(x0, x1)
    x, y = make_linear_data(n=500, w=-3.0, b=1.5, noise=0.0, seed=3)
    assert x.shape == (500, 1)
    np.testing.assert_allclose(y, -3.0 * x + 1.5, rtol=1e-6, atol=1e-6)


def test_least_squares_recovers_slope_for_any_seed():
    for seed in range(5):
        x, y = make_linear_data(n=1000, seed=seed)
        w, b = oracles.least_squares(x, y)
        assert abs(w - 2) < 0.005 and abs(b) < 0.005


@pytest.mark.parametrize("kwargs, error, text", [
    ({"n": 0}, ValueError, "must be an int from 1 to"),
    ({"n": -5}, ValueError, "must be an int from 1 to"),
    ({"n": 2.5}, TypeError, "must be an int"),
    ({"n": True}, TypeError, "must be an int"),
    ({"w": float("nan")}, ValueError, "finite"),
    ({"b": "1"}, TypeError, "must be a number"),
    ({"noise": -0.1}, ValueError, ">= 0"),
    ({"noise": float("inf")}, ValueError, "finite"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": 1.0}, TypeError, "seed"),
])
def test_bad_arguments_are_rejected_clearly(kwargs, error, text):
    with pytest.raises(error, match=text):
        make_linear_data(**kwargs)


def test_check_xy():
    x, y = make_linear_data(n=10)
    check_xy(x, y)
    with pytest.raises(ValueError, match=r"float32 array of shape \(n, 1\), got float64 \(10, 1\)"):
        check_xy(x.astype(np.float64))
    with pytest.raises(ValueError, match=r"got float32 \(10,\)"):
        check_xy(x.ravel())
    with pytest.raises(ValueError, match="same shape"):
        check_xy(x, y[:5])
    with pytest.raises(TypeError, match="numpy array"):
        check_xy([[1.0]])
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        check_xy(bad)


# ---- 2-D classification data: make_moons, make_spirals --------------------------------------------------
@pytest.mark.parametrize("maker, kwargs, classes", [
    (make_moons, {"n": 201, "noise": 0.1, "seed": 3}, 2),
    (make_spirals, {"n": 301, "classes": 3, "noise": 0.1, "seed": 3}, 3),
    (make_spirals, {"n": 40, "classes": 4, "noise": 0.0, "seed": 0}, 4),
])
def test_classification_data_types_shapes_balance(maker, kwargs, classes):
    points, labels = maker(**kwargs)
    n = kwargs["n"]
    assert points.dtype == np.float32 and points.shape == (n, 2) and points.flags.c_contiguous
    assert labels.dtype == np.int32 and labels.shape == (n,)
    counts = np.bincount(labels, minlength=classes)
    assert counts.size == classes and counts.max() - counts.min() <= 1, counts
    assert np.all(np.isfinite(points))
    # shuffled: the first half already holds every class (a mini-batch or a split gets all of them)
    assert set(labels[: n // 2].tolist()) == set(range(classes))


@pytest.mark.parametrize("maker", [make_moons, make_spirals])
def test_classification_data_is_seeded(maker):
    a, la = maker(seed=5)
    b, lb = maker(seed=5)
    c, _ = maker(seed=6)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(la, lb)
    assert not np.array_equal(a, c)


def test_moons_without_noise_lie_on_their_circles():
    points, labels = make_moons(n=100, noise=0.0, seed=1)
    upper, lower = points[labels == 0], points[labels == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1.0, lower[:, 1] - 0.5), 1.0, atol=1e-6)
    assert upper[:, 1].min() >= 0 and lower[:, 1].max() <= 0.5 + 1e-6


def test_spirals_without_noise_follow_their_arms():
    points, labels = make_spirals(n=90, classes=3, noise=0.0, seed=2)
    radii = np.hypot(*points.T)
    angles = np.arctan2(points[:, 1], points[:, 0])
    expected = 4.0 * radii + 2 * np.pi * labels / 3
    np.testing.assert_allclose(np.cos(angles - expected), 1.0, atol=1e-4)
    assert radii.max() < 1.0


@pytest.mark.parametrize("call, error, text", [
    (lambda: make_moons(n=1), ValueError, "n \\(number of points\\) must be an int from 2 to"),
    (lambda: make_moons(n=10**12), ValueError, "from 2 to 10000000"),
    (lambda: make_moons(n=100.0), TypeError, "must be an int"),
    (lambda: make_moons(noise=-0.1), ValueError, "noise must be a number >= 0"),
    (lambda: make_moons(noise=float("nan")), ValueError, "finite"),
    (lambda: make_moons(noise=1e308), ValueError, "<= 10"),
    (lambda: make_moons(noise="0.1"), TypeError, "noise must be a number"),
    (lambda: make_moons(seed=-1), ValueError, "seed"),
    (lambda: make_moons(seed=None), TypeError, "seed"),
    (lambda: make_spirals(n=2, classes=3), ValueError, "from 3 to"),
    (lambda: make_spirals(classes=1), ValueError, "classes must be an int from 2 to 10"),
    (lambda: make_spirals(classes=2.0), TypeError, "classes must be an int"),
    (lambda: make_spirals(classes=True), TypeError, "classes must be an int"),
    (lambda: make_spirals(seed=2**40), ValueError, "seed"),
])
def test_classification_data_bad_arguments(call, error, text):
    with pytest.raises(error, match=text):
        call()


# no example database (database=None below); Hypothesis's caches go to the temporary folder, not the repository
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"course-hypothesis-{os.getuid()}")
anything = st.one_of(st.none(), st.booleans(), st.text(max_size=4), st.floats(),
                     st.integers(min_value=-10**30, max_value=10**30), st.lists(st.integers(), max_size=2))


@settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(maker=st.sampled_from([make_moons, make_spirals]), n=st.one_of(anything, st.integers(0, 500)),
       noise=st.one_of(anything, st.floats(0, 20)), seed=st.one_of(anything, st.integers(0, 2**32 + 5)),
       classes=st.one_of(anything, st.integers(-1, 12)))
def test_classification_data_hostile_arguments(maker, n, noise, seed, classes):
    """Any argument gives finite float32 points and int32 labels, or a TypeError/ValueError naming it."""
    kwargs = {"n": n, "noise": noise, "seed": seed}
    if maker is make_spirals:
        kwargs["classes"] = classes
    try:
        points, labels = maker(**kwargs)
    except (TypeError, ValueError) as exc:
        assert any(name in str(exc) for name in kwargs), str(exc)
        return
    assert points.dtype == np.float32 and labels.dtype == np.int32 and np.all(np.isfinite(points))
    assert points.shape == (n, 2) and labels.shape == (n,)
