"""Reference solutions of notebook 12 (see course_utils/solutions/__init__.py)."""


# %% smallest_update
def smallest_kept_update(w):
    weight = Tensor(w, ms.float16)
    kept = [2.0 ** k for k in range(15, -25, -1)  # from large to small: the last one that changes w
            if (weight + Tensor(2.0 ** k, ms.float16)).asnumpy() != weight.asnumpy()]
    return kept[-1]


answer = smallest_kept_update

nb12.smallest_update.check(answer)


# %% largest_scale
ms.set_seed(0)
net_zero = MinimalNet()
ops.assign(net_zero.dense.weight, ops.zeros_like(net_zero.dense.weight))


def tiny_loss(data, label):
    return loss_fn(net_zero(data), label) * TINY


x2, y2 = nb12.scale_data()
grads = ms.grad(tiny_loss, None, net_zero.trainable_params())(Tensor(x2), Tensor(y2))
k = 0
while all(np.isfinite((g * 2.0 ** (k + 1)).astype(ms.float16).asnumpy()).all() for g in grads):
    k += 1
answer = 2.0 ** k

nb12.largest_scale.check(answer)


# %% scaled_step
def make_clipped_step(net, loss_fn, optimizer, loss_scaler, max_norm):
    def forward(data, label):
        return loss_scaler.scale(loss_fn(net(data), label))

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        finite = ms.amp.all_finite(grads)  # checked on the scaled gradients
        if finite:
            grads = loss_scaler.unscale(grads)  # back to the true gradients first,
            grads = ops.clip_by_global_norm(grads, max_norm)  # then bound their norm
            optimizer(grads)
        loss_scaler.adjust(finite)
        return loss_scaler.unscale(loss), finite

    return train_step


answer = make_clipped_step

nb12.scaled_step.check(answer)


# %% fixed_scale_fix
def make_model(net, lr):
    optimizer = nn.SGD(net.trainable_params(), learning_rate=lr, loss_scale=128.0)  # divides by the same 128
    return Model(net, nn.MSELoss(), optimizer, amp_level="O2",
                 loss_scale_manager=FixedLossScaleManager(128.0, drop_overflow_update=False))


answer = make_model

nb12.fixed_scale_fix.check(answer)
