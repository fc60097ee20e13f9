"""Reference solutions of notebook 04 (see course_utils/solutions/__init__.py)."""

# %% 04.1 nb04.same_order_twice
answer = "b"

nb04.same_order_twice.check(answer)


# %% 04.2 nb04.steps_in_three_epochs
answer = "b"

nb04.steps_in_three_epochs.check(answer)


# %% 04.3 nb04.pipeline
x3, y3 = nb04.pipeline_data()
answer = ds.NumpySlicesDataset({"x": x3, "y": y3}, shuffle=True).batch(16, drop_remainder=True)

nb04.pipeline.check(answer)


# %% 04.4 nb04.batch_one_near_bound
answer = "c"

nb04.batch_one_near_bound.check(answer)


# %% 04.5 nb04.minibatch_loop
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
