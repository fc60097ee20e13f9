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
- ``payload``: what the page needs to draw a setting (the sweep and, per learning rate, what the lab says);
- ``web/lab.js``: the lab drawn in the browser (loss per step, the path over the contours with the Hessian's
  directions, the sweep with the stability bounds, the fitted line, faded earlier tries); ``web/host.js``: its
  model where no kernel runs (the website, the classroom's page);
- ``widget``: ``LabWidget``, the anywidget that carries lab.js into JupyterLab, Voila and VS Code;
- ``app``: ``LearningRateLab``, the settings, tries, presets, the challenge and what a release does;
- ``export``: the lab as a page with no kernel (sweeps for a grid of settings computed now);
- ``figure``: ``LabFigure`` (the picture a saved notebook keeps) and ``side_by_side`` for notebooks.

How a move stays free: each setting (optimizer, beta, steps, start) is trained once for all 401 slider
positions as one batch and sent to the page as one payload; the page draws every move of a drag from it
and tells the kernel only where the learner let go (one action: pick the column, judge it, a millisecond).
``benchmarks/lab_update_speed.py`` measures the page's time per move and the kernel's per release.
"""

from course_utils.lab.app import CSS_PREFIX, PRESETS, LearningRateLab, Try, learning_rate_lab
from course_utils.lab.runs import Run, Sweep
from course_utils.lab.trainers import LR_GRID, OPTIMIZERS, MindSporeTrainer, NumpyTrainer, check_settings
from course_utils.lab.verdicts import KINDS, Verdict, describe_run

__all__ = ["CSS_PREFIX", "KINDS", "LR_GRID", "OPTIMIZERS", "PRESETS", "LearningRateLab", "MindSporeTrainer",
           "NumpyTrainer", "Run", "Sweep", "Try", "Verdict", "check_settings", "describe_run", "learning_rate_lab"]
