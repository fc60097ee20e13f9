"""Reference solutions of notebook 16 (see course_utils/solutions/__init__.py)."""

# %% 16.1 nb16.mlp_class
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
nb16.mlp_class.check(answer)


# %% 16.2 nb16.train_function
def train_mlp(net, x, y, lr, epochs, batch_size):
    optimizer = nn.Adam(net.trainable_params(), learning_rate=lr)
    loss_fn = nn.MSELoss()

    def forward(data, label):
        return loss_fn(net(data), label)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    for _ in range(epochs):
        for start in range(0, len(x), batch_size):  # in order; the last batch may be smaller
            train_step(Tensor(x[start:start + batch_size]), Tensor(y[start:start + batch_size]))
    return net


answer = train_mlp

nb16.train_function.check(answer)


# %% 16.3 nb16.best_lr
answer = "c"

nb16.best_lr.check(answer)


# %% 16.4 nb16.reload_exact
answer = "a"

nb16.reload_exact.check(answer)
