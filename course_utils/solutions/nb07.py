"""Reference solutions of notebook 07 (see course_utils/solutions/__init__.py)."""


# %% clip_each
def clip_each(grads, max_norm=1.0):
    clipped = []
    for g in grads:
        norm = ops.sqrt(ops.reduce_sum(g * g))  # this tensor's own norm
        clipped.append(g * ops.clamp(max_norm / norm, max=1.0))  # min(1, max_norm / norm): never scale up
    return tuple(clipped)


answer = clip_each

nb07.clip_each.check(answer)


# %% accumulate
class AccumulateStep(nn.TrainOneStepCell):
    def __init__(self, network, optimizer, k):
        super().__init__(network, optimizer)
        self.k = k
        self.sums = self.weights.clone(prefix="sum", init="zeros")  # one zero Parameter per weight
        self.calls = ms.Parameter(Tensor(0, ms.int32), name="calls", requires_grad=False)

    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        for total, g in zip(self.sums, grads):
            ops.assign_add(total, g)
        ops.assign_add(self.calls, 1)
        if self.calls % self.k == 0:  # a tensor condition: decided in the graph, at every call
            self.optimizer(tuple(total / self.k for total in self.sums))
            for total in self.sums:
                ops.assign(total, ops.zeros_like(total))
        return loss


answer = AccumulateStep

nb07.accumulate.check(answer)


# %% pinball_loss
class Pinball(nn.LossBase):
    def __init__(self, tau=0.5, reduction="mean"):
        super().__init__(reduction)
        self.tau = tau

    def construct(self, logits, labels):
        error = labels - logits
        return self.get_loss(ops.maximum(self.tau * error, (self.tau - 1) * error))


answer = Pinball

nb07.pinball_loss.check(answer)
