"""Reference solutions of notebook 07 (see course_utils/solutions/__init__.py)."""

# %% 07.1 nb07.train_monitor
answer = "loss"

nb07.train_monitor.check(answer)


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
