"""The capstone model: MinimalNet grown into a multi-layer perceptron that outputs one score per class."""

from mindspore import nn


class MLP(nn.Cell):
    """2 -> hidden (ReLU) x layers -> classes: logits, one per class."""

    def __init__(self, hidden=32, layers=2, classes=3, features=2):
        super().__init__()
        cells, width = [], features
        for _ in range(layers):
            cells += [nn.Dense(width, hidden), nn.ReLU()]
            width = hidden
        self.body = nn.SequentialCell(*cells, nn.Dense(width, classes))

    def construct(self, x):
        return self.body(x)


def count_parameters(net):
    """The number of trainable values (what the challenge's score counts)."""
    return int(sum(p.size for p in net.trainable_params()))
