"""Reference solutions of notebook 07 (see course_utils/solutions/__init__.py)."""

# %% 07.1 nb07.keep_best
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

nb07.keep_best.check(answer)


# %% 07.2 nb07.stop_below
class StopBelow(Callback):
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def on_train_epoch_begin(self, run_context):
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))

    def on_train_epoch_end(self, run_context):
        if np.mean(self.losses) < self.threshold:
            run_context.request_stop()


answer = StopBelow

nb07.stop_below.check(answer)


# %% 07.3 nb07.rmse_metric
class RMSE(Metric):
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._n, self._squared = 0, 0.0

    def update(self, *inputs):
        error = self._convert_data(inputs[0]).astype(np.float64) - self._convert_data(inputs[1])
        self._n += error.size
        self._squared += np.sum(error ** 2)

    def eval(self):
        return float(np.sqrt(self._squared / self._n))


answer = RMSE

nb07.rmse_metric.check(answer)


# %% 07.4 nb07.eval_loss_meaning
answer = "c"  # a new loss accumulator for every validation batch: only the last batch's loss is left

nb07.eval_loss_meaning.check(answer)


# %% 07.5 nb07.plateau_under_train
answer = "c"  # no validation under model.train: eval_loss never appears, a hidden warning each epoch

nb07.plateau_under_train.check(answer)
