"""Reference solutions of notebook 05 (see course_utils/solutions/__init__.py)."""

# %% 05.1 nb05.divergence_threshold
answer = 2 / eigenvalues.max()

nb05.divergence_threshold.check(answer)


# %% 05.2 nb05.fastest_sgd_lr
answer = 2 / (eigenvalues.min() + eigenvalues.max())

nb05.fastest_sgd_lr.check(answer)


# %% 05.3 nb05.momentum_threshold
answer = 2 * (1 + 0.9) / eigenvalues.max()

nb05.momentum_threshold.check(answer)


# %% 05.4 nb05.fastest_of_four
answer = "b"

nb05.fastest_of_four.check(answer)


# %% 05.5 nb05.article_recipe
answer = "b"

nb05.article_recipe.check(answer)


# %% 05.6 nb05.momentum_step
def mse(theta, a, y):  # the model y = a @ theta, with a = [x, 1] and theta = [[w], [b]]
    return ((ops.matmul(a, theta) - y) ** 2).mean()


@ms.jit
def momentum_step(theta, velocity, a, y, lr):
    loss, grad = ms.value_and_grad(mse)(theta, a, y)  # the gradient with respect to theta
    velocity = 0.9 * velocity + grad
    return theta - lr * velocity, velocity, loss


answer = momentum_step
nb05.momentum_step.check(answer)


# %% 05.7 nb05.larger_is_faster
answer = "b"

nb05.larger_is_faster.check(answer)


# %% 05.8 nb05.adam_never_diverges
answer = "b"

nb05.adam_never_diverges.check(answer)
