"""The capstone model: MinimalNet grown into a small multi-layer perceptron."""

from mindspore import nn


class MLP(nn.Cell):
    """1 -> hidden -> hidden -> 1 with tanh activations."""

    def __init__(self, hidden=32):
        super().__init__()
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
            raise ValueError(f"hidden must be a positive int, got {hidden!r}")
        self.body = nn.SequentialCell(
            nn.Dense(1, hidden), nn.Tanh(),
            nn.Dense(hidden, hidden), nn.Tanh(),
            nn.Dense(hidden, 1),
        )

    def construct(self, x):
        return self.body(x)
