"""Reference solutions of notebook 09 (see course_utils/solutions/__init__.py)."""


# %% keep_best
class KeepBest(Callback):
    """In model.fit: keep the weights of the epoch with the lowest validation mse; put them back at the end."""

    def on_train_begin(self, run_context):
        self.best_mse, self.best_weights = float("inf"), None

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        mse = cb_params.eval_results["mse"]  # over the whole validation set (eval_loss is its last batch's)
        if mse < self.best_mse:
            self.best_mse = mse
            # copies: asnumpy() may share memory with the Parameter, which goes on changing
            self.best_weights = {p.name: p.asnumpy().copy() for p in cb_params.network.trainable_params()}

    def on_train_end(self, run_context):
        for p in run_context.original_args().network.trainable_params():
            ops.assign(p, Tensor(self.best_weights[p.name]))


answer = KeepBest

nb09.keep_best.check(answer)


# %% warmup
class Warmup(Callback):
    """Raise the learning rate linearly over the first `steps` steps: step s runs at base * min(1, s / steps)."""

    def __init__(self, steps):
        super().__init__()
        self.steps = steps

    def on_train_begin(self, run_context):
        self.base = float(run_context.original_args().optimizer.learning_rate.asnumpy())

    def on_train_step_begin(self, run_context):
        cb_params = run_context.original_args()
        rate = self.base * min(1.0, cb_params.cur_step_num / self.steps)  # cur_step_num: 1 in the first step
        ops.assign(cb_params.optimizer.learning_rate, Tensor(rate, ms.float32))  # set_data would be ignored


answer = Warmup

nb09.warmup.check(answer)


# %% correlation_metric
class Correlation(Metric):
    """Pearson's r between predictions and labels, from sums over all samples."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._n, self._p, self._y, self._pp, self._yy, self._py = 0, 0.0, 0.0, 0.0, 0.0, 0.0

    def update(self, *inputs):
        p = inputs[0].asnumpy().astype(np.float64).ravel()
        y = inputs[1].asnumpy().astype(np.float64).ravel()
        self._n += p.size
        self._p, self._y = self._p + p.sum(), self._y + y.sum()
        self._pp, self._yy, self._py = self._pp + p @ p, self._yy + y @ y, self._py + p @ y

    def eval(self):
        n = self._n
        cov = self._py / n - (self._p / n) * (self._y / n)
        var_p, var_y = self._pp / n - (self._p / n) ** 2, self._yy / n - (self._y / n) ** 2
        return float(cov / np.sqrt(var_p * var_y))


answer = Correlation

nb09.correlation_metric.check(answer)
