"""Reference solutions of notebook 03 (see course_utils/solutions/__init__.py)."""


# %% least_squares
def fit_line(x, y):
    A = np.hstack([x, np.ones_like(x)]).astype(np.float64)
    (w_fit, b_fit), *_ = np.linalg.lstsq(A, y.astype(np.float64).ravel(), rcond=None)
    return float(w_fit), float(b_fit)


answer = fit_line
nb03.least_squares.check(answer)


# %% learning_rate
x2, y2 = nb03.exercise_data()
fit2 = least_squares(x2, y2)


def converges_in_numpy(lr, steps=150):  # the numpy oracle of section 4, from w = b = 0
    ws2, bs2, _ = oracles.gradient_descent(x2, y2, lr, steps)
    return steps_to_converge(np.vstack([[0.0, 0.0], np.column_stack([ws2, bs2])]), fit2) is not None


window = [lr for lr in np.round(np.arange(0.30, 0.81, 0.01), 2) if converges_in_numpy(lr)]
print("numpy, steps of 0.01: converged within 150 steps from", window[0], "to", window[-1])
for lr in (window[0], window[-1]):  # MindSpore agrees at both ends
    ms.set_seed(0)
    k = steps_to_converge(train(MinimalNet(), x2, y2, lr, steps=150)["params"], fit2)
    print(f"MindSpore's train, lr {lr}: converged after {k} steps")
answer = (float(window[0]), float(window[-1]))

nb03.learning_rate.check(answer)


# %% train_loop
def train_momentum(net, x, y, lr, steps):
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    grad_fn = ms.value_and_grad(nn.WithLossCell(net, nn.MSELoss()), None, optimizer.parameters)
    data, label = Tensor(x), Tensor(y)
    losses, ws, bs = [], [], []
    for _ in range(steps):
        loss, grads = grad_fn(data, label)  # the loss before the update
        optimizer(grads)
        losses.append(loss.asnumpy().item())
        ws.append(net.dense.weight.asnumpy().item())  # .item(): a Python float, not a view
        bs.append(net.dense.bias.asnumpy().item())
    return losses, ws, bs


answer = train_momentum
nb03.train_loop.check(answer)
