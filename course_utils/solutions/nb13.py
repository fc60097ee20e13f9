"""Reference solutions of notebook 13 (see course_utils/solutions/__init__.py)."""


# %% faster_mode
def faster_mode(n_steps, n_shapes, compile_s, pynative_step_s, graph_step_s):
    graph_total = n_shapes * compile_s + n_steps * graph_step_s  # one compile per batch shape
    return "graph" if graph_total < n_steps * pynative_step_s else "pynative"


answer = faster_mode

nb13.faster_mode.check(answer)


# %% scale_once
def make_scale(on_compile):
    @ms.jit
    def scaled(x, factor):
        on_compile()
        return x * factor

    def scale(x, factor):
        # always the same kind of input: a float32 Tensor, whatever the caller passes
        factor = factor.astype(ms.float32) if isinstance(factor, Tensor) else Tensor(factor, ms.float32)
        return scaled(x, factor)

    return scale


answer = make_scale

nb13.scale_once.check(answer)


# %% schedule_train
def train_with_schedule(net, loss_fn, x, y, schedule):
    params = net.trainable_params()
    velocities = [ms.Parameter(ops.zeros_like(p), name="velocity_" + p.name) for p in params]  # state between steps

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, params)

    @ms.jit
    def momentum_step(x, y, lr):
        loss, grads = grad_fn(x, y)
        for p, v, g in zip(params, velocities, grads):
            ops.assign(v, 0.9 * v + g)
            ops.assign(p, p - lr * v)
        return loss

    return [momentum_step(x, y, Tensor(lr, ms.float32)) for lr in schedule]  # a Tensor: one compile


answer = train_with_schedule

nb13.schedule_train.check(answer)


# %% power_sum
class PowerSum(nn.Cell):  # the powers taken in construct, not by lambdas made in __init__
    def __init__(self, power):
        super().__init__()
        self.dense = nn.Dense(1, 1)
        self.power = power  # a Python int: graph mode unrolls the loop when it compiles

    def construct(self, x):
        y = self.dense(x)
        out = y
        for k in range(2, self.power + 1):
            out = out + y ** k
        return out


answer = PowerSum

nb13.power_sum.check(answer)
assert ms.get_context("mode") == ms.PYNATIVE_MODE, "the check should restore the mode"
