"""Exercises of notebook 02 (WithLossCell and loss functions)."""

import numpy as np

from course_utils.exercises import Exercise, as_number

# Exercise 02.1: fixed predictions and labels, so the answer does not depend on a random net.
PREDICTIONS = np.array([[0.5], [1.0], [1.5], [3.0]], dtype=np.float32)
LABELS = np.array([[1.0], [1.0], [2.0], [2.0]], dtype=np.float32)


def _check_l1_by_hand(answer):
    value, problem = as_number(answer, "your answer")
    if problem:
        return problem
    diff = PREDICTIONS.astype(np.float64) - LABELS
    mae, mse, total = np.mean(np.abs(diff)), np.mean(diff ** 2), np.sum(np.abs(diff))
    if np.isclose(value, mse):
        return f"{value:.4f} is the mean *squared* error; L1 takes the absolute difference"
    if np.isclose(value, total):
        return f"{value:.4f} is the sum; nn.L1Loss() averages over the samples (reduction='mean')"
    if np.isclose(value, np.mean(diff)):
        return "positive and negative errors cancelled out: take np.abs of the difference first"
    if not np.isclose(value, mae):
        return f"{value:.4f} is not the mean absolute difference of PREDICTIONS and LABELS"
    return None


def _check_l1_loss_cell(answer):
    import mindspore as ms
    from mindspore import nn

    if not isinstance(answer, nn.Cell):
        return f"expected a Cell instance such as nn.WithLossCell(net, loss_fn), got {type(answer).__name__}"
    params = {p.name.split(".")[-1]: p.asnumpy().astype(np.float64) for p in answer.trainable_params()}
    if set(params) != {"weight", "bias"}:
        return f"the loss cell should wrap the one-neuron net (weight and bias), it has {sorted(params)}"
    x = np.array([[0.0], [0.5], [1.0], [2.0]], dtype=np.float32)
    y = np.array([[0.1], [1.0], [2.5], [3.0]], dtype=np.float32)
    pred = x @ params["weight"].T + params["bias"]
    try:
        out = answer(ms.Tensor(x), ms.Tensor(y))
    except TypeError as exc:
        return f"calling it as loss_cell(data, label) failed: {exc}"
    got, problem = as_number(out, "loss_cell(data, label)")
    if problem:
        return problem
    if np.isclose(got, np.mean((pred - y) ** 2), rtol=1e-5):
        return "that is the MSE loss; use nn.L1Loss() as the loss function"
    mae = np.mean(np.abs(pred - y))
    if not np.isclose(got, mae, rtol=1e-5):
        return f"loss_cell(x, y) gave {got:.6f}, but the mean absolute error of the net is {mae:.6f}"
    return None


l1_by_hand = Exercise("02.1", _check_l1_by_hand, hints=[
    "L1 is the mean of the absolute errors: you need the errors first, then np.abs and a mean",
    "np.mean(np.abs(predictions - labels))",
])
l1_loss_cell = Exercise("02.2", _check_l1_loss_cell, hints=[
    "WithLossCell takes the network and a loss cell: MindSpore has a built-in L1 loss",
    "nn.WithLossCell(net, nn.L1Loss())",
])
