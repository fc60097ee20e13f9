"""Reference solutions of notebook 05 (see course_utils/solutions/__init__.py)."""


# %% divergence_threshold
answer = 2 / eigenvalues.max()

nb05.divergence_threshold.check(answer)


# %% fastest_sgd_lr
answer = 2 / (eigenvalues.min() + eigenvalues.max())

nb05.fastest_sgd_lr.check(answer)


# %% momentum_threshold
answer = 2 * (1 + 0.9) / eigenvalues.max()

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
