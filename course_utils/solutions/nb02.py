"""Reference solutions of notebook 02 (see course_utils/solutions/__init__.py)."""


# %% l1_by_hand
answer = np.mean(np.abs(nb02.PREDICTIONS - nb02.LABELS))

nb02.l1_by_hand.check(answer)
print("nn.L1Loss agrees:", nn.L1Loss()(Tensor(nb02.PREDICTIONS), Tensor(nb02.LABELS)))


# %% log_cosh
class LogCoshLoss(nn.Cell):
    def construct(self, prediction, label):
        return ops.log(ops.cosh(prediction - label)).mean()


answer = LogCoshLoss
nb02.log_cosh.check(answer)


# %% loss_curve
def loss_curve(net, loss_fn, weights, x, y):
    cell = nn.WithLossCell(net, loss_fn)
    data, label = Tensor(x), Tensor(y)
    losses = []
    for w in weights:
        ops.assign(net.dense.weight, Tensor([[w]], ms.float32))
        ops.assign(net.dense.bias, Tensor([0.0], ms.float32))
        losses.append(cell(data, label).asnumpy().item())
    return np.array(losses)


answer = loss_curve
nb02.loss_curve.check(answer)
