"""Reference solutions of notebook 08 (see course_utils/solutions/__init__.py)."""


# %% diagnosis
for name, run in mystery.items():
    verdict = report_of(run, float(np.var(run["y"]))).verdict
    print(f"{name}: {verdict:<12} lr = {run['lr']:.3g}, limit = {stable_lr_limit(run['x']):.3g}, "
          f"x up to {run['x'].max():.0f}, y shape {run['y'].shape}")
# A: no progress with lr at 90% of its limit: x reaches 1000, the inputs are badly scaled
# B: frozen after a reset; C: diverged, lr above its limit; D: healthy
# E: no progress, final loss = var(y), y of shape (100,); F: no progress, lr far below its limit
answer = {"A": nb08.BADLY_SCALED, "B": nb08.FROZEN, "C": nb08.TOO_LARGE, "D": nb08.HEALTHY,
          "E": nb08.WRONG_SHAPE, "F": nb08.TOO_SMALL}

nb08.diagnosis.check(answer)


# %% fixed_setup
x_fixed = ((x_raw - x_raw.mean()) / x_raw.std()).reshape(-1, 1).astype(np.float32)
y_fixed = y_raw.reshape(-1, 1).astype(np.float32)
lr = 0.5  # below 2/λmax of the standardised inputs, which is about 1
print(f"2/λmax of x_fixed: {stable_lr_limit(x_fixed):.3f}")
answer = (x_fixed, y_fixed, lr)

nb08.fixed_setup.check(answer)


# %% pull_towards
def pull_towards(net, values, alpha):  # noqa: F811  (replaces the exercise's empty version)
    for parameter in net.trainable_params():
        saved = Tensor(np.asarray(values[parameter.name], np.float32).reshape(parameter.shape))  # float64 in
        ops.assign(parameter, parameter + alpha * (saved - parameter))  # into the Parameter the optimizer holds


answer = pull_towards

nb08.pull_towards.check(answer)
