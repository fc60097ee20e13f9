"""course_utils.plots.plot_hook_timeline: one bar per begin/end pair of recorded callback hooks."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_utils.plots import plot_hook_timeline  # noqa: E402

EPOCH = (["on_train_epoch_begin", "on_train_step_begin", "on_train_step_end", "on_eval_begin",
          "on_eval_epoch_begin", "on_eval_step_begin", "on_eval_step_end", "on_eval_epoch_end", "on_eval_end",
          "on_train_epoch_end"])


def test_one_bar_per_pair_spanning_its_calls():
    calls = ["on_train_begin", *EPOCH, *EPOCH, "on_train_end"]
    ax = plot_hook_timeline(calls)
    bars = [(round(p.get_x()), round(p.get_width())) for p in ax.patches]
    assert len(bars) == 1 + 2 * 5  # the run; per epoch: epoch, step, validation, its epoch and step
    assert (0, len(calls) - 1) in bars and (1, 9) in bars and (11, 9) in bars
    assert {"validation 2", "epoch 2", "the whole run 1"} <= {t.get_text() for t in ax.texts}
    plt.close("all")


@pytest.mark.parametrize("calls, error, message", [
    ([], TypeError, "non-empty list"),
    ("on_train_begin", TypeError, "non-empty list"),
    (["on_train_begin", "epoch_end"], ValueError, "is not a hook"),
    (["on_train_end"], ValueError, "has no train begin"),
])
def test_bad_calls_are_refused(calls, error, message):
    with pytest.raises(error, match=message):
        plot_hook_timeline(calls)
