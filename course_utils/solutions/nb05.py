"""Reference solutions of notebook 05 (see course_utils/solutions/__init__.py)."""


# %% divergence_threshold
def threshold(x):
    curvature = 2 * np.mean(np.asarray(x, np.float64) ** 2)  # d^2/dw^2 of mean((w x - y)^2)
    return 2 / curvature  # a step multiplies the distance by (1 - lr * curvature): stable while that is > -1


answer = threshold
nb05.divergence_threshold.check(answer)


# %% fastest_sgd_lr
def fastest_lr(x):
    curvature = 2 * np.mean(np.asarray(x, np.float64) ** 2)
    return 1 / curvature  # the factor (1 - lr * curvature) is 0: one step lands on the minimum


answer = fastest_lr
nb05.fastest_sgd_lr.check(answer)


# %% momentum_threshold
def momentum_threshold(x, beta):
    curvature = 2 * np.mean(np.asarray(x, np.float64) ** 2)
    # z = -1 solves z^2 - (1 + beta - lr * curvature) z + beta = 0 when 2 + 2 beta - lr * curvature = 0
    return 2 * (1 + beta) / curvature


answer = momentum_threshold
nb05.momentum_threshold.check(answer)


# %% momentum_step
def mse(theta, a, y):  # the model y = a @ theta, with a = [x, 1] and theta = [[w], [b]]
    return ((ops.matmul(a, theta) - y) ** 2).mean()


@ms.jit
def momentum_step(theta, velocity, a, y, lr):
    loss, grad = ms.value_and_grad(mse)(theta, a, y)  # the gradient with respect to theta
    velocity = 0.9 * velocity + grad
    return theta - lr * velocity, velocity, loss


answer = momentum_step
nb05.momentum_step.check(answer)
