"""Reference solutions of notebook 03 (see course_utils/solutions/__init__.py)."""


# %% least_squares
A = np.hstack([x, np.ones_like(x)]).astype(np.float64)
(w_fit, b_fit), *_ = np.linalg.lstsq(A, y.astype(np.float64).ravel(), rcond=None)
answer = (w_fit, b_fit)

nb03.least_squares.check(answer)


# %% learning_rate
x2, y2 = nb03.exercise_data()
fit2 = least_squares(x2, y2)
converging = []
for lr in (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7):  # section 5's sweep, on the new data, 150 steps
    ms.set_seed(0)
    history = train(MinimalNet(), x2, y2, lr, steps=150)
    k = steps_to_converge(history["params"], fit2)
    print(f"lr {lr:4.2f}: w = {history['params'][-1, 0]:9.4f}  b = {history['params'][-1, 1]:9.4f}  converged: {k}")
    if k is not None:
        converging.append(lr)
print("converged within 150 steps:", converging)
answer = converging[len(converging) // 2]  # one from the middle of the window

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
