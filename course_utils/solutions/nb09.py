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


# %% stop_below
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

nb09.stop_below.check(answer)


# %% rmse_metric
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

nb09.rmse_metric.check(answer)
