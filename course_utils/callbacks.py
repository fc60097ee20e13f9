"""Reusable callbacks for ``mindspore.train.Model``: a history recorder, a live loss plot, a progress bar.

They use only the MindSpore 2.x hooks (``on_train_step_end``, ``on_train_epoch_end``, ``on_eval_end``...),
so they work in ``Model.train``, ``Model.fit`` (which refuses callbacks with the old ``epoch_end`` style)
and ``Model.eval``. This module imports MindSpore: set ``GLOG_v`` before importing it.

    from course_utils.callbacks import HistoryRecorder, LiveLossPlot, ProgressBar
    model.fit(10, train_ds, valid_ds, callbacks=[HistoryRecorder(), LiveLossPlot(), ProgressBar()])
"""

import warnings

import numpy as np
from mindspore import Parameter, Tensor
from mindspore.train import Callback

from course_utils.figure_text import text
from course_utils.messages import lazy, t
from course_utils.plots import LOSS_TITLE, plot_loss

PROGRESS_KINDS = ("auto", "notebook", "text")


def loss_value(net_outputs):
    """The loss in ``cb_params.net_outputs`` as a float: a Tensor's mean, or the first item of a tuple."""
    if isinstance(net_outputs, (tuple, list)):
        if not net_outputs:
            raise ValueError(t("net_outputs is an empty tuple: the train network returned no loss"))
        net_outputs = net_outputs[0]
    if isinstance(net_outputs, Tensor):
        net_outputs = net_outputs.asnumpy()
    if isinstance(net_outputs, (np.ndarray, np.generic, float, int)) and not isinstance(net_outputs, bool):
        return float(np.mean(net_outputs))
    raise TypeError(t("cannot read a loss from net_outputs of type {kind}; the train network should return the "
                      "loss as a Tensor (or a tuple starting with it)", kind=type(net_outputs).__name__))


def _scalar_lr(optimizer):
    """The optimizer's learning rate as a float, or None when it is a schedule or per-group."""
    lr = getattr(optimizer, "learning_rate", None)
    if isinstance(lr, Parameter) and lr.size == 1:
        return float(lr.asnumpy().reshape(()))
    return None


def _eval_results(cb_params):
    """Validation results: ``eval_results`` inside fit (with ``eval_loss``), ``metrics`` in Model.eval."""
    results = cb_params.get("eval_results")
    if results is None:
        results = cb_params.get("metrics")
    return dict(results or {})


def _monitored(callback, cb_params, training):
    """The value ``callback.monitor`` names in this evaluation, or None. During training, a name the
    evaluation does not have (a typo such as "eval_los") is said once per run, as a warning, instead of
    showing nothing silently."""
    results = _eval_results(cb_params)
    if callback.monitor in results:
        return results[callback.monitor]
    if training and results and not callback._warned:
        callback._warned = True
        warnings.warn(t("{callback}: monitor={monitor!r} is not a value of this evaluation, which has {names}; "
                        "nothing is shown for validation. Pass one of those names as monitor.",
                        callback=type(callback).__name__, monitor=callback.monitor, names=sorted(results)),
                      UserWarning, stacklevel=2)
    return None


def _check_monitor(monitor):
    if not isinstance(monitor, str):
        raise TypeError(f"monitor must be the name of a validation value such as 'eval_loss' or 'mse', "
                        f"got {type(monitor).__name__} {monitor!r}")
    if not monitor:
        raise ValueError("monitor must be a non-empty name such as 'eval_loss' or 'mse'")


class HistoryRecorder(Callback):
    """Record a Model run: every step's loss, each epoch's mean loss, validation results, the learning rate.

    The built-in ``History`` keeps only the *last* step's loss of each epoch. ``params`` optionally names
    parameters (e.g. ``["dense.weight", "dense.bias"]``) whose values are copied at every epoch end into
    ``self.params[name]``. Each training run starts a new record.
    """

    def __init__(self, params=None):
        super().__init__()
        if params is not None:
            if isinstance(params, str) or not isinstance(params, (list, tuple)):
                raise TypeError(f"params must be a list of parameter names such as ['dense.weight'], "
                                f"got {type(params).__name__} {params!r}")
            for name in params:
                if not isinstance(name, str) or not name:
                    raise TypeError(f"every entry of params must be a non-empty string, got {name!r}")
            if len(set(params)) != len(params):
                raise ValueError(f"params has duplicate names: {list(params)}")
        self.param_names = list(params or [])
        self._reset()

    def _reset(self):
        self.step_losses = []
        self.epoch_losses = []
        self.learning_rates = []
        self.eval_epochs = []
        self.eval_results = []
        self.params = {name: [] for name in self.param_names}
        self._epoch_start = 0

    def on_train_begin(self, run_context):
        self._reset()
        if self.param_names:
            cb_params = run_context.original_args()
            available = {p.name for p in cb_params.train_network.get_parameters()}
            missing = [name for name in self.param_names if name not in available]
            if missing:
                raise ValueError(t("HistoryRecorder: no parameter named {missing} in the network; available: "
                                   "{available}", missing=missing, available=sorted(available)))

    def on_train_step_end(self, run_context):
        self.step_losses.append(loss_value(run_context.original_args().net_outputs))

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        steps = self.step_losses[self._epoch_start:]
        self._epoch_start = len(self.step_losses)
        self.epoch_losses.append(float(np.mean(steps)) if steps else float("nan"))
        self.learning_rates.append(_scalar_lr(cb_params.optimizer))
        if self.param_names:
            values = {p.name: p for p in cb_params.train_network.get_parameters()}
            for name in self.param_names:
                self.params[name].append(values[name].asnumpy().copy())

    def on_eval_end(self, run_context):
        cb_params = run_context.original_args()
        self.eval_epochs.append(cb_params.get("cur_epoch_num"))
        self.eval_results.append(_eval_results(cb_params))

    def __repr__(self):
        return (f"HistoryRecorder({len(self.epoch_losses)} epochs, {len(self.step_losses)} steps, "
                f"{len(self.eval_results)} evaluations)")

    def __str__(self):  # what print() shows a learner, in the course's language
        return t("HistoryRecorder({epochs} epochs, {steps} steps, {evaluations} evaluations)",
                 epochs=len(self.epoch_losses), steps=len(self.step_losses), evaluations=len(self.eval_results))


class LiveLossPlot(Callback):
    """Draw the training loss of every step (log scale) and, in fit, the validation value ``monitor`` of every
    epoch, redrawn in place every ``every`` epochs while training runs. ``live=False`` only draws into
    ``self.figure``. On MindSpore 2.10 ``eval_loss`` is the loss of the *last* validation batch: validate
    with one batch, or pass the name of a metric of the Model (``monitor="mse"``).
    """

    def __init__(self, every=1, live=True, title=LOSS_TITLE, monitor="eval_loss"):
        super().__init__()
        _check_monitor(monitor)
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)):
            raise TypeError(f"every (epochs between redraws) must be an int, got {type(every).__name__} {every!r}")
        if every < 1:
            raise ValueError(f"every (epochs between redraws) must be >= 1, got {every}")
        if not isinstance(live, bool):
            raise TypeError(f"live must be True or False, got {live!r}")
        if not isinstance(title, str):
            raise TypeError(f"title must be a string, got {type(title).__name__}")
        self.every, self.live, self.title, self.monitor = int(every), live, title, monitor
        self.figure, self.redraws, self._handle, self._drawn, self._epoch = None, 0, None, None, (0, 0)
        self.step_losses, self.val_steps, self.val_losses, self._warned = [], [], [], False

    def on_train_begin(self, run_context):
        from matplotlib.figure import Figure  # not pyplot: an inline backend would show the figure twice

        self.step_losses, self.val_steps, self.val_losses, self._warned = [], [], [], False
        self.figure, self.redraws, self._handle, self._drawn = Figure(figsize=(5, 3.2)), 0, None, None
        self.figure.add_subplot()

    def on_train_step_end(self, run_context):
        self.step_losses.append(loss_value(run_context.original_args().net_outputs))

    def on_eval_end(self, run_context):
        value = _monitored(self, run_context.original_args(), training=bool(self.step_losses))
        if value is not None and self.step_losses:  # Model.eval alone has no training curve to add to
            self.val_steps.append(len(self.step_losses) - 1)  # the x of the last step drawn (0-based)
            self.val_losses.append(float(value))

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        self._epoch = (cb_params.cur_epoch_num, cb_params.epoch_num)
        if cb_params.cur_epoch_num % self.every == 0:
            self._draw()

    def on_train_end(self, run_context):
        self._draw()  # the last epochs, unless already drawn

    def _draw(self):
        state = (len(self.step_losses), len(self.val_losses))
        if not self.step_losses or state == self._drawn:
            return
        ax = self.figure.axes[0]
        ax.clear()
        title = text(lazy("{title}, epoch {epoch}/{total}"), title=text(self.title), epoch=self._epoch[0],
                     total=self._epoch[1])
        plot_loss(self.step_losses, ax=ax, label=lazy("train (each step)"), title=title)
        if self.val_losses:
            ax.plot(self.val_steps, self.val_losses, "o-",
                    label=text(lazy("validation {monitor} (each epoch)"), monitor=self.monitor))
            ax.legend()
        self.redraws, self._drawn = self.redraws + 1, state
        if self.live:
            self._show()

    def _show(self):
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is None:  # plain Python: nowhere to show it; self.figure has the plot
            return
        if self._handle is None:  # the first draw shows the figure, later ones replace it in place
            self._handle = display(self.figure, display_id=True)
        else:
            self._handle.update(self.figure)


class ProgressBar(Callback):
    """A tqdm progress bar over all training steps, with the epoch and the loss (and validation loss in fit).

    ``kind``: "auto" (a widget in Jupyter, text elsewhere), "notebook" (always the widget) or "text".
    ``timings=False`` leaves out elapsed time and speed, so a text bar prints the same text on every run.
    ``monitor`` is the validation value shown in fit (see LiveLossPlot about ``eval_loss``). ``desc`` labels the
    bar ("train" by default, in the course's language; its steps, epoch and losses are too).
    """

    def __init__(self, kind="auto", timings=True, desc=None, file=None, monitor="eval_loss"):
        super().__init__()
        _check_monitor(monitor)
        if not isinstance(kind, str) or kind not in PROGRESS_KINDS:
            raise ValueError(f"kind must be one of {PROGRESS_KINDS}, got {kind!r}")
        if not isinstance(timings, bool):
            raise TypeError(f"timings must be True or False, got {timings!r}")
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"desc must be a string (or None: 'train', in the course's language), got "
                            f"{type(desc).__name__}")
        if file is not None:
            if not callable(getattr(file, "write", None)):
                raise TypeError(f"file must have a write() method (e.g. sys.stdout), got {type(file).__name__}")
            if kind == "notebook":
                raise ValueError("file is only for text bars; a notebook bar is a widget. Use kind='text'.")
        self.kind, self.timings, self.desc, self.file, self.monitor = kind, timings, desc, file, monitor
        self.bar, self._warned = None, False
        self._step, self._val = "", ""  # "epoch 2/5, loss 0.1234" and ", val_loss 0.1234"

    def _tqdm_class(self):
        if self.kind == "text":
            from tqdm.std import tqdm
        elif self.kind == "notebook":
            from tqdm.notebook import tqdm
        else:
            from tqdm.auto import tqdm
        return tqdm

    def on_train_begin(self, run_context):
        cb_params = run_context.original_args()
        options = {"total": cb_params.epoch_num * cb_params.batch_num, "leave": True, "file": self.file,
                   "desc": t("train") if self.desc is None else self.desc, "unit": t("step")}
        if not self.timings:  # no time, no rate, and a refresh at every step: the same text every run
            options.update(bar_format="{desc}: {percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt}{postfix}",
                           mininterval=0, miniters=1)
        self.close()
        self._step, self._val, self._warned = "", "", False
        self.bar = self._tqdm_class()(**options)

    def on_train_step_end(self, run_context):
        cb_params = run_context.original_args()
        loss = loss_value(cb_params.net_outputs)
        self._step = t("epoch {epoch}/{total}, loss {loss:.4f}", epoch=cb_params.cur_epoch_num,
                       total=cb_params.epoch_num, loss=loss)
        self.bar.set_postfix_str(self._step + self._val, refresh=False)
        self.bar.update(1)

    def on_eval_end(self, run_context):  # in fit: keep the last validation loss on the bar
        value = _monitored(self, run_context.original_args(), training=self.bar is not None)
        if self.bar is not None and value is not None:
            name = self.monitor.replace("eval_", "")
            self._val = (t(", val_loss {value:.4f}", value=float(value)) if name == "loss"
                         else t(", val_{name} {value:.4f}", name=name, value=float(value)))
            self.bar.set_postfix_str(self._step + self._val)

    def on_train_end(self, run_context):
        self.close()

    def close(self):
        """Close the bar; Model also calls this through ``__exit__`` when training stops with an error."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __exit__(self, exc_type, exc_value, traceback):
        # Model enters and leaves every callback around each validation inside fit, too: close only on errors.
        if exc_type is not None:
            self.close()
