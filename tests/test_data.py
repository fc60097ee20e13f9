import numpy as np
import pytest

from course_utils.data import check_xy, make_linear_data


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
        design = np.hstack([x, np.ones_like(x)]).astype(np.float64)
        (w, b), *_ = np.linalg.lstsq(design, y.astype(np.float64), rcond=None)
        assert abs(w[0] - 2) < 0.005 and abs(b[0]) < 0.005


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
