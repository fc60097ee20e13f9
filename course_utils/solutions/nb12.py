"""Reference solutions of notebook 12 (see course_utils/solutions/__init__.py)."""

# %% 12.1 nb12.mlp_class
class MLP(nn.Cell):
    def __init__(self, hidden=32):
        super().__init__()
        self.body = nn.SequentialCell(
            nn.Dense(1, hidden), nn.Tanh(),
            nn.Dense(hidden, hidden), nn.Tanh(),
            nn.Dense(hidden, 1),
        )

    def construct(self, x):
        return self.body(x)


answer = MLP
nb12.mlp_class.check(answer)


# %% 12.2 nb12.trained_net
trained, _ = fit(lr=0.01, epochs=40)
answer = trained

nb12.trained_net.check(answer)
