"""Reference solutions of notebook 13 (see course_utils/solutions/__init__.py)."""


# %% faster_mode
def faster_mode(n_steps, compile_s, pynative_step_s, graph_step_s):
    return "graph" if compile_s + n_steps * graph_step_s < n_steps * pynative_step_s else "pynative"


answer = faster_mode

nb13.faster_mode.check(answer)


# %% compiles
answer = 4  # 0.5 (new), 0.5 (seen), 0.25 (new value), first Tensor (new), Tensor (same shape), new shape

nb13.compiles.check(answer)


# %% schedule_train
def train_with_schedule(net, loss_fn, x, y, schedule):
    params = net.trainable_params()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, params)

    @ms.jit
    def sgd_step(x, y, lr):
        loss, grads = grad_fn(x, y)
        for p, g in zip(params, grads):
            ops.assign(p, p - lr * g)
        return loss

    losses = []
    for lr in schedule:
        losses.append(sgd_step(x, y, Tensor(lr, ms.float32)))  # a Tensor: one compile for every value
    return losses


answer = train_with_schedule

nb13.schedule_train.check(answer)


# %% graph_act
class WithAct(nn.Cell):
    def __init__(self, use_relu):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.act = nn.ReLU() if use_relu else nn.Identity()  # or an if statement with the lambda on its own line

    def construct(self, x):
        return self.act(self.dense(x))


answer = WithAct

nb13.graph_act.check(answer)
assert ms.get_context("mode") == ms.PYNATIVE_MODE, "the check should restore the mode"
