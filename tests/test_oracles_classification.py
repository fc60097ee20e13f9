"""The classification oracles of course_utils.oracles, against MindSpore and against brute force."""

import os

os.environ.setdefault("GLOG_v", "3")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_utils.data import make_moons, make_spirals  # noqa: E402
from course_utils.oracles import best_line_accuracy, confusion_matrix, knn_accuracy, softmax_cross_entropy  # noqa: E402


def test_softmax_cross_entropy_equals_mindspore_and_is_stable():
    from mindspore import Tensor, nn

    rng = np.random.RandomState(0)
    logits = rng.normal(0, 3, (17, 4)).astype(np.float32)
    labels = rng.randint(0, 4, 17).astype(np.int32)
    ms_loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")(Tensor(logits), Tensor(labels))
    assert np.isclose(softmax_cross_entropy(logits, labels), float(ms_loss.asnumpy()), rtol=1e-6)
    assert softmax_cross_entropy([[0.0, 1000.0]], np.array([0])) == pytest.approx(1000.0)
    assert softmax_cross_entropy([[0.0, 0.0]], np.array([1])) == pytest.approx(np.log(2))


def test_confusion_matrix_rows_are_truth_columns_predictions():
    predicted = np.array([0, 1, 1, 2, 2, 2])
    labels = np.array([0, 0, 1, 1, 2, 0])
    counts = confusion_matrix(predicted, labels, classes=3)
    np.testing.assert_array_equal(counts, [[1, 1, 1], [0, 1, 1], [0, 0, 1]])
    logits = np.eye(3)[predicted] * 5.0
    np.testing.assert_array_equal(confusion_matrix(logits, labels, classes=3), counts)
    assert counts.sum() == 6 and counts.dtype == np.int64


def test_confusion_matrix_equals_mindspores():
    from mindspore import Tensor, nn

    rng = np.random.RandomState(1)
    logits = rng.normal(size=(40, 3)).astype(np.float32)
    labels = rng.randint(0, 3, 40).astype(np.int32)
    metric = nn.ConfusionMatrix(num_classes=3)
    metric.clear()
    metric.update(Tensor(logits), Tensor(labels))
    np.testing.assert_array_equal(metric.eval(), confusion_matrix(logits, labels, 3))


def _best_line_by_brute_force(points, labels, directions=20000):
    """A lower bound: many directions, every threshold."""
    angles = np.linspace(0, np.pi, directions, endpoint=False)
    best = 0.0
    for angle in angles:
        s = points @ np.array([np.cos(angle), np.sin(angle)])
        for t in np.concatenate([[-np.inf], np.sort(s)]):
            correct = np.mean((s > t) == (labels == 1))
            best = max(best, correct, 1 - correct)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_line_accuracy_is_never_beaten_and_is_reached(seed):
    points, labels = make_moons(24, noise=0.3, seed=seed)
    exact = best_line_accuracy(points, labels)
    brute = _best_line_by_brute_force(points.astype(np.float64), labels, directions=720)
    assert brute <= exact + 1e-12 and exact - brute < 0.05
    # random lines never beat it
    rng = np.random.RandomState(seed)
    for _ in range(2000):
        normal, offset = rng.normal(size=2), rng.normal()
        side = points @ normal > offset
        assert max(np.mean(side == labels), np.mean(side != labels)) <= exact + 1e-12


def test_best_line_accuracy_of_separable_and_xor_data():
    separable = np.array([[0, 0], [0, 1], [2, 0], [2, 1]], dtype=np.float64)
    assert best_line_accuracy(separable, np.array([0, 0, 1, 1])) == 1.0
    assert best_line_accuracy(separable, np.array([0, 1, 1, 0])) == 0.75  # XOR: one point always wrong


def test_knn_accuracy():
    train_points, train_labels = make_spirals(300, classes=3, noise=0.05, seed=5)
    test_points, test_labels = make_spirals(150, classes=3, noise=0.05, seed=6)
    accuracy = knn_accuracy(train_points, train_labels, test_points, test_labels, k=5)
    assert 0.85 < accuracy <= 1.0
    assert knn_accuracy(train_points, train_labels, train_points, train_labels, k=1) == 1.0


@pytest.mark.parametrize("call, text", [
    (lambda: softmax_cross_entropy([[1.0, 2.0]], np.array([2])), "below the number of classes 2"),
    (lambda: softmax_cross_entropy([[1.0, 2.0]], np.array([0.0])), "labels must be a non-empty 1-D array"),
    (lambda: softmax_cross_entropy([1.0, 2.0], np.array([0])), r"logits must be a finite \(n, classes\)"),
    (lambda: softmax_cross_entropy([[1.0, np.nan]], np.array([0])), "finite"),
    (lambda: softmax_cross_entropy([[1.0, 2.0]], np.array([0, 1])), "one class per row"),
    (lambda: confusion_matrix(np.array([0, 3]), np.array([0, 1]), classes=3), "exceed every label"),
    (lambda: confusion_matrix(np.array([0, -1]), np.array([0, 1]), classes=3), "classes 0, 1"),
    (lambda: best_line_accuracy(np.zeros((3, 3)), np.array([0, 1, 0])), r"finite \(n, 2\)"),
    (lambda: best_line_accuracy(np.zeros((3, 2)), np.array([0, 1, 2])), "two classes"),
    (lambda: knn_accuracy(np.zeros((3, 2)), np.array([0, 1, 0]), np.zeros((1, 2)), np.array([0]), k=4), "k must"),
])
def test_bad_input_is_refused(call, text):
    with pytest.raises(ValueError, match=text):
        call()
