"""Small explanatory drawings for the lessons (matplotlib only, no data): what a picture says faster than prose.

``with_loss_cell_flow()`` draws what ``nn.WithLossCell(net, loss_fn)(x, y)`` computes (notebook 02): the data
goes through the network, the labels go straight to the loss function, one number comes out.
"""

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

INK, BOX, WRAPPER, NOTE = "0.15", "#dbe9f6", "tab:blue", "0.35"


def _box(ax, x, y, text, width, height=0.9, color=BOX):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.05",
                                facecolor=color, edgecolor=INK, linewidth=1.2))
    ax.text(x, y, text, ha="center", va="center", fontsize=12, color=INK)


def _arrow(ax, start, end, label=None, label_at=None):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, linewidth=1.4, color=INK,
                                 shrinkA=0, shrinkB=0))
    if label:
        ax.text(*label_at, label, ha="center", va="bottom", fontsize=11, color=INK)


def with_loss_cell_flow(ax=None):
    """Draw the data flow of ``nn.WithLossCell(net, loss_fn)(x, y)`` on ``ax`` (a new 8.7 x 2.9 inch figure when
    None): x -> net -> logits -> loss_fn(logits, y) -> loss. Returns the axes."""
    if ax is None:
        import matplotlib.pyplot as plt

        _fig, ax = plt.subplots(figsize=(8.7, 2.9), layout="constrained")
    elif not hasattr(ax, "add_patch"):
        raise TypeError(f"ax must be a matplotlib Axes (or None for a new figure), got {type(ax).__name__}")
    ax.set_xlim(0, 10.4)
    ax.set_ylim(-0.35, 3.35)
    ax.axis("off")
    ax.add_patch(FancyBboxPatch((1.75, 0.2), 6.55, 2.65, boxstyle="round,pad=0.08", facecolor="none",
                                edgecolor=WRAPPER, linewidth=1.6, linestyle="--"))
    ax.text(5.02, 3.05, "loss_net = nn.WithLossCell(net, loss_fn):  loss_net(x, y) runs what is in the dashed box",
            ha="center", va="bottom", fontsize=11.5, color=WRAPPER)
    ax.text(0.55, 2.0, "x\n(data)", ha="center", va="center", fontsize=12, color=INK)
    ax.text(0.55, 0.75, "y\n(labels)", ha="center", va="center", fontsize=12, color=INK)
    _box(ax, 3.0, 2.0, "net", width=1.3)
    _box(ax, 6.8, 1.35, "loss_fn(logits, y)", width=2.3)
    ax.text(9.55, 1.35, "loss\n(one number)", ha="center", va="center", fontsize=12, color=INK,
            fontweight="bold")
    _arrow(ax, (1.05, 2.0), (2.3, 2.0))
    _arrow(ax, (3.7, 2.0), (5.62, 1.6), label="logits = net(x)", label_at=(4.6, 1.95))
    _arrow(ax, (1.15, 0.75), (5.62, 1.1), label="y goes straight to the loss", label_at=(3.4, 1.02))
    _arrow(ax, (7.98, 1.35), (8.85, 1.35))
    ax.text(5.2, -0.3, "Pass the data x, not net(x): the cell runs the net itself.", ha="center", va="bottom",
            fontsize=11, color=NOTE, style="italic")
    return ax
