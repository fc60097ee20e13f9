"""Reference solutions of notebook 05 (see course_utils/solutions/__init__.py)."""

# %% 05.1 nb05.global_norm
def global_norm_of(grads):
    return ops.sqrt(sum(ops.reduce_sum(g * g) for g in grads))


answer = global_norm_of

nb05.global_norm.check(answer)


# %% 05.2 nb05.clip_step
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

nb05.clip_step.check(answer)


# %% 05.3 nb05.mae_loss
class MAE(nn.LossBase):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def construct(self, logits, labels):
        return self.get_loss(ops.abs(logits - labels))


answer = MAE

nb05.mae_loss.check(answer)
