"""Reference solutions of notebook 06 (see course_utils/solutions/__init__.py)."""


# %% warmup_cosine
class WarmupCosine(LearningRateSchedule):
    def __init__(self, peak_lr, min_lr, warmup_steps, total_steps):
        super().__init__()
        self.warmup_steps = warmup_steps
        self.warmup = nn.WarmUpLR(peak_lr, warmup_steps)  # peak_lr * step / warmup_steps
        self.cosine = nn.CosineDecayLR(min_lr, peak_lr, total_steps - warmup_steps)  # holds min_lr at the end

    def construct(self, global_step):
        if global_step < self.warmup_steps:
            return self.warmup(global_step)
        return self.cosine(global_step - self.warmup_steps)


answer = WarmupCosine

nb06.warmup_cosine.check(answer)


# %% range_test
def range_test(net, X, Y, lr_start, factor, blowup=4.0, max_steps=200):
    optimizer = nn.SGD(net.trainable_params(), learning_rate=lr_start)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    lrs, losses, lr = [], [], lr_start
    for _ in range(max_steps):
        ops.assign(optimizer.learning_rate, ms.Tensor(lr, ms.float32))  # set_data would be ignored here
        loss = train_net(X, Y).asnumpy().item()
        lrs.append(lr)
        losses.append(loss)
        if not np.isfinite(loss) or loss > blowup * min(losses):
            break
        lr = lr * factor
    return np.array(lrs), np.array(losses)


answer = range_test

nb06.range_test.check(answer)
