"""Reference solutions of notebook 02 (see course_utils/solutions/__init__.py)."""

# %% 02.1 nb02.l1_by_hand
answer = np.mean(np.abs(nb02.PREDICTIONS - nb02.LABELS))

nb02.l1_by_hand.check(answer)
print("nn.L1Loss agrees:", nn.L1Loss()(Tensor(nb02.PREDICTIONS), Tensor(nb02.LABELS)))


# %% 02.2 nb02.l1_loss_cell
answer = nn.WithLossCell(net, nn.L1Loss())

nb02.l1_loss_cell.check(answer)
