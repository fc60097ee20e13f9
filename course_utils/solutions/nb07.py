"""Reference solutions of notebook 07 (see course_utils/solutions/__init__.py)."""


# %% global_norm
def clip_by_hand(grads, max_norm=1.0):
    norm = ops.sqrt(ops.addn([ops.reduce_sum(g * g) for g in grads]))  # one norm for all the gradients
    scale = ops.clamp(max_norm / norm, max=1.0)  # min(1, max_norm / norm): never scale up
    return tuple(g * scale for g in grads)


answer = clip_by_hand

nb07.global_norm.check(answer)


# %% clip_step
class ClipAndReturn(nn.TrainOneStepCell):
    def __init__(self, network, optimizer, max_norm):
        super().__init__(network, optimizer)
        self.max_norm = max_norm

    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad_no_sens(self.network, self.weights)(x, label)
        norm = ops.sqrt(ops.addn([ops.reduce_sum(ops.square(g)) for g in grads]))
        grads = ops.clip_by_global_norm(grads, self.max_norm)
        loss = ops.depend(loss, self.optimizer(grads))
        return loss, norm


answer = ClipAndReturn

nb07.clip_step.check(answer)


# %% mae_loss
class MAE(nn.LossBase):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def construct(self, logits, labels):
        return self.get_loss(ops.abs(logits - labels))


answer = MAE

nb07.mae_loss.check(answer)
