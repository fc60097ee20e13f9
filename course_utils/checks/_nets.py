"""Networks the checks build for themselves (never the learner's): one place, so the checks agree."""


def one_neuron(w, b):
    """A one-neuron net shaped like the lessons' MinimalNet (its layer is ``net.dense``), starting at (w, b).

    The values are written with ``ops.assign`` before any optimizer step, which is safe in PyNative (FACTS).
    """
    import mindspore as ms
    from mindspore import nn, ops

    class OneNeuron(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1)

        def construct(self, x):
            return self.dense(x)

    net = OneNeuron()
    ops.assign(net.dense.weight, ms.Tensor([[w]], ms.float32))
    ops.assign(net.dense.bias, ms.Tensor([b], ms.float32))
    return net
