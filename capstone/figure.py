"""The report's figure: the model's decision regions over the held-out points, and the training curves."""

import matplotlib

matplotlib.use("Agg")  # a file, no window: the project runs from a terminal or under msrun
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402


def save_report_figure(net, test, history, path):
    """Two panels, readable at 900 pixels: decision regions + test points, loss and validation accuracy."""
    import mindspore as ms

    x, y = test
    lo, hi = x.min(0) - 0.2, x.max(0) + 0.2
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
    grid = np.stack([g0.ravel(), g1.ravel()], axis=1).astype(np.float32)
    regions = net(ms.Tensor(grid)).asnumpy().argmax(1).reshape(g0.shape)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    classes = int(max(y.max(), regions.max())) + 1
    colours = ListedColormap(plt.get_cmap("tab10").colors[:classes])
    left.contourf(g0, g1, regions, levels=np.arange(classes + 1) - 0.5, cmap=colours, alpha=0.25)
    left.scatter(x[:, 0], x[:, 1], c=y, cmap=colours, vmin=-0.5, vmax=classes - 0.5, s=8, edgecolors="none")
    left.set(title="held-out points over the model's regions", xlabel="x1", ylabel="x2", aspect="equal")
    epochs = [row["epoch"] for row in history]
    right.plot(epochs, [row["train_loss"] for row in history], label="training loss (mean of the epoch)")
    right.plot(epochs, [row["val_loss"] for row in history], label="validation loss")
    right.plot(epochs, [row["val_accuracy"] for row in history], label="validation accuracy")
    right.set(title="training curves", xlabel="epoch", ylim=(0, max(1.2, *(r["train_loss"] for r in history[:1]))))
    right.legend(fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
