"""plot_decision_boundary: what it draws, and what it refuses."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_utils.data import make_moons, make_spirals  # noqa: E402
from course_utils.plots import plot_decision_boundary  # noqa: E402

X, LABELS = make_moons(60, noise=0.1, seed=0)


def above_line(points):
    """Class 1 below the line x2 = 0.25: a classifier given as classes."""
    return (points[:, 1] < 0.25).astype(np.int32)


def logits_of_three(points):
    """Three classes as logits (m, 3), by angle around the origin."""
    angle = np.arctan2(points[:, 1], points[:, 0])
    return np.stack([np.cos(angle), np.cos(angle - 2.1), np.cos(angle + 2.1)], axis=1)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_colours_the_plane_by_predicted_class_and_draws_the_points():
    calls = []

    def predict(points):
        calls.append(points)
        return above_line(points)

    _, ax = plt.subplots()
    assert plot_decision_boundary(predict, X, LABELS, ax=ax, title="a line", resolution=40) is ax
    grid = calls[0]
    assert grid.dtype == np.float32 and grid.shape == (1600, 2)
    # the grid covers every point with a margin
    assert np.all(grid.min(axis=0) < X.min(axis=0)) and np.all(grid.max(axis=0) > X.max(axis=0))
    assert ax.get_title() == "a line" and len(ax.collections) >= 2
    assert ax.collections[-1].get_offsets().shape == (60, 2)


def test_accepts_logits_tensors_and_several_classes():
    points, labels = make_spirals(90, classes=3, noise=0.05, seed=1)
    ax = plot_decision_boundary(logits_of_three, points, labels, resolution=20)
    assert ax.figure is not None

    class FakeTensor:  # what a MindSpore network returns: something with .asnumpy()
        def __init__(self, value):
            self.value = value

        def asnumpy(self):
            return self.value

    plot_decision_boundary(lambda p: FakeTensor(logits_of_three(p)), points, labels, resolution=20)


@pytest.mark.parametrize("predict, x, labels, kwargs, error, text", [
    ("not a function", X, LABELS, {}, TypeError, "predict must be a function"),
    (above_line, X.astype(np.int32), LABELS, {}, ValueError, r"x must be a float array of 2-D points, shape \(n, 2\)"),
    (above_line, X[:, :1], LABELS, {}, ValueError, r"shape \(n, 2\)"),
    (above_line, X.tolist(), LABELS, {}, ValueError, "x must be a float array"),
    (above_line, np.full((3, 2), np.nan, np.float32), np.zeros(3, np.int32), {}, ValueError, "NaN or inf"),
    (above_line, X, LABELS.astype(np.float32), {}, ValueError, "labels must be an int array of shape"),
    (above_line, X, LABELS[:10], {}, ValueError, r"shape \(60,\)"),
    (above_line, X, LABELS - 1, {}, ValueError, "classes 0 to 9"),
    (above_line, X, LABELS, {"resolution": 5}, ValueError, "resolution must be an int from 10 to 1000"),
    (above_line, X, LABELS, {"resolution": 50.0}, TypeError, "resolution must be an int"),
    (above_line, X, LABELS, {"ax": "axes"}, TypeError, "ax must be a matplotlib Axes"),
    (lambda p: None, X, LABELS, {}, ValueError, "predict\\(points\\) must return classes"),
    (lambda p: p[:5, 0], X, LABELS, {}, ValueError, "must return classes of shape"),
    (lambda p: np.full(len(p), np.nan), X, LABELS, {}, ValueError, "NaN or inf"),
    (lambda p: np.full(len(p), 0.5), X, LABELS, {}, ValueError, "whole classes 0 to 9"),
    (lambda p: np.full(len(p), 12), X, LABELS, {}, ValueError, "whole classes 0 to 9"),
    (lambda p: np.array(["a"] * len(p)), X, LABELS, {}, ValueError, "must return classes"),
])
def test_bad_arguments_are_refused_clearly(predict, x, labels, kwargs, error, text):
    with pytest.raises(error, match=text):
        plot_decision_boundary(predict, x, labels, **{"resolution": 20, **kwargs})
