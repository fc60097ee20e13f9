"""Reference solutions of notebook 04 (see course_utils/solutions/__init__.py)."""

# %% 04.1 nb04.divergence_threshold
answer = 2 / eigenvalues.max()

nb04.divergence_threshold.check(answer)


# %% 04.2 nb04.fastest_sgd_lr
answer = 2 / (eigenvalues.min() + eigenvalues.max())

nb04.fastest_sgd_lr.check(answer)


# %% 04.3 nb04.momentum_threshold
answer = 2 * (1 + 0.9) / eigenvalues.max()

nb04.momentum_threshold.check(answer)


# %% 04.4 nb04.fastest_of_four
answer = "b"

nb04.fastest_of_four.check(answer)


# %% 04.5 nb04.article_recipe
answer = "b"

nb04.article_recipe.check(answer)


# %% 04.6 nb04.momentum_step
def mse(theta, a, y):  # the model y = a @ theta, with a = [x, 1] and theta = [[w], [b]]
    return ((ops.matmul(a, theta) - y) ** 2).mean()


@ms.jit
def momentum_step(theta, velocity, a, y, lr):
    loss, grad = ms.value_and_grad(mse)(theta, a, y)  # the gradient with respect to theta
    velocity = 0.9 * velocity + grad
    return theta - lr * velocity, velocity, loss


answer = momentum_step
nb04.momentum_step.check(answer)
