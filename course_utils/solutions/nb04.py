"""Reference solutions of notebook 04 (see course_utils/solutions/__init__.py)."""


# %% pipeline
x3, y3 = nb04.pipeline_data()
answer = ds.NumpySlicesDataset({"x": x3, "y": y3}, shuffle=True).batch(16, drop_remainder=True)

nb04.pipeline.check(answer)


# %% minibatch_loop
def train_minibatch(net, x, y, lr, batch_size, epochs):
    losses = []
    dataset = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(batch_size)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                    nn.SGD(net.trainable_params(), learning_rate=lr))
    train_net.set_train()
    iterator = dataset.create_tuple_iterator(num_epochs=epochs)  # one iterator: a new order every epoch
    for _epoch in range(epochs):
        for data in iterator:
            losses.append(train_net(*data).asnumpy().item())  # the loss before this step's update
    return losses


answer = train_minibatch
nb04.minibatch_loop.check(answer)
