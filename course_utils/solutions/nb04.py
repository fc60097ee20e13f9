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
