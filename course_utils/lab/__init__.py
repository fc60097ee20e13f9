"""The learning-rate lab: move a slider, see MindSpore's training of y ~ w*x + b for that learning rate.

    from course_utils.lab import learning_rate_lab
    lab = learning_rate_lab()        # compiles the chosen optimizer once, then shows the app

One concern per module, each readable on its own:

- ``runs``: ``Run`` (one learning rate) and ``Sweep`` (every learning rate of a setting, one batch);
- ``trainers``: ``MindSporeTrainer`` (one compiled, batched ``@ms.jit`` function per optimizer; the
  learning rates, beta and state are Tensors, so a new setting never recompiles) and ``NumpyTrainer``
  (the same arithmetic in numpy, the speed reference);
- ``verdicts``: ``describe_run``, in the words of the training-health report (``course_utils.diagnostics``);
- ``inputs``: what a learner types, turned into a value and a message, never an error;
- ``figure``: ``LabFigure`` (loss per step, path over the contours with the Hessian's eigenvectors,
  the sweep with the stability bounds, the fitted line) and ``side_by_side`` for notebooks;
- ``app``: ``LearningRateLab``, the widgets and what a move does.

How a move stays fast (the engineering the lesson does not need): each setting (optimizer, beta, steps,
start) is trained once for all 401 slider positions as one batch, so a move only picks a column, judges
it (a few hundred microseconds) and draws it. The figure caches its background (axes, contours, the
sweep) and the faded earlier tries as pixels, draws only the current try on top and encodes the PNG
with fast compression. ``benchmarks/lab_update_speed.py`` measures a move against a redraw alone.
"""

from course_utils.lab.app import CSS_PREFIX, PRESETS, LearningRateLab, Try, learning_rate_lab
from course_utils.lab.runs import Run, Sweep
from course_utils.lab.trainers import LR_GRID, OPTIMIZERS, MindSporeTrainer, NumpyTrainer, check_settings
from course_utils.lab.verdicts import KINDS, Verdict, describe_run

__all__ = ["CSS_PREFIX", "KINDS", "LR_GRID", "OPTIMIZERS", "PRESETS", "LearningRateLab", "MindSporeTrainer",
           "NumpyTrainer", "Run", "Sweep", "Try", "Verdict", "check_settings", "describe_run", "learning_rate_lab"]
