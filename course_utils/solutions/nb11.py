"""Reference solutions of notebook 11 (see course_utils/solutions/__init__.py)."""


# %% load_or_fail
def load_or_fail(net, path):
    params_not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)
    if params_not_loaded:
        raise ValueError(f"{path}: no value for {params_not_loaded}")


answer = load_or_fail

nb11.load_or_fail.check(answer)


# %% resume
def resume(path, steps):
    net, _, train_step = make_training(seed=0)  # any seed: every value is overwritten by the load
    ms.load_param_into_net(train_step, ms.load_checkpoint(path))
    train(train_step, steps)
    return net


answer = resume

nb11.resume.check(answer)
