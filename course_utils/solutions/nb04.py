"""Reference solutions of notebook 04 (see course_utils/solutions/__init__.py)."""


# %% pipeline
x3, y3 = nb04.pipeline_data()
answer = ds.NumpySlicesDataset({"x": x3, "y": y3}, shuffle=True).batch(16, drop_remainder=True)

nb04.pipeline.check(answer)


# %% held_out_curve
def train_and_validate(net, x, y, x_val, y_val, lr, batch_size, epochs):
    train_losses, val_losses = [], []
    dataset = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(batch_size)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    train_net = nn.TrainOneStepCell(loss_net, nn.SGD(net.trainable_params(), learning_rate=lr))
    held_out = (ms.Tensor(x_val), ms.Tensor(y_val))
    iterator = dataset.create_tuple_iterator(num_epochs=epochs)  # one iterator: a new order every epoch
    for _epoch in range(epochs):
        train_net.set_train()
        total, rows = 0.0, 0
        for x_batch, y_batch in iterator:
            total += train_net(x_batch, y_batch).asnumpy().item() * x_batch.shape[0]  # loss before the step
            rows += x_batch.shape[0]
        train_losses.append(total / rows)  # the mean over the epoch's samples
        loss_net.set_train(False)
        val_losses.append(loss_net(*held_out).asnumpy().item())  # a loss, no step
    return train_losses, val_losses


answer = train_and_validate
nb04.held_out_curve.check(answer)
