"""Reference solutions of notebook 16 (see course_utils/solutions/__init__.py)."""


# %% mlp_class
class MLP(nn.Cell):
    def __init__(self, hidden=32, classes=3):
        super().__init__()
        self.first = nn.Dense(2, hidden)
        self.middle = nn.Dense(hidden, hidden)
        self.last = nn.Dense(hidden, classes)
        self.relu = nn.ReLU()

    def construct(self, x):
        h = self.relu(self.first(x))
        h = h + self.relu(self.middle(h))  # the skip: the block adds to its input
        return self.last(h)


answer = MLP

nb16.mlp_class.check(answer)


# %% loss_and_metrics
loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
metrics = {"accuracy", "loss"}

answer = (loss_fn, metrics)

nb16.loss_and_metrics.check(answer)


# %% train_function
def train_model(net, loss_fn, x, y, lr, epochs, batch_size):
    optimizer = nn.Adam(net.trainable_params(), learning_rate=lr)

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


answer = train_model

nb16.train_function.check(answer)


# %% accuracy_function
def accuracy(net, x, y):
    scores = net(Tensor(x)).asnumpy()
    return float(np.mean(scores.argmax(axis=1) == y))


answer = accuracy

nb16.accuracy_function.check(answer)
