"""course_utils.diagrams: the drawings say what the lessons say, and bad arguments are refused plainly."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_utils.diagrams import with_loss_cell_flow  # noqa: E402


def test_the_with_loss_cell_flow_names_each_stage_in_order():
    ax = with_loss_cell_flow()
    texts = {t.get_text(): t.get_position() for t in ax.texts}
    try:
        stages = ["x\n(data)", "net", "loss_fn(logits, y)", "loss\n(one number)"]
        assert all(s in texts for s in stages), sorted(texts)
        xs = [texts[s][0] for s in stages]
        assert xs == sorted(xs), "the stages must run left to right: x, net, loss_fn, loss"
        assert any("WithLossCell(net, loss_fn)" in t for t in texts)
        assert ax.figure.get_size_inches()[0] * ax.figure.dpi <= 900  # readable in a 900-pixel column
    finally:
        plt.close(ax.figure)


def test_it_draws_on_a_given_axes_and_refuses_anything_else():
    fig, ax = plt.subplots()
    try:
        assert with_loss_cell_flow(ax) is ax
    finally:
        plt.close(fig)
    with pytest.raises(TypeError, match="matplotlib Axes"):
        with_loss_cell_flow("not an axes")
