"""Exercises of notebook 11 (checkpoints).

11.2 ``load_or_fail(net, path)``: load a .ckpt into ``net``, raise ValueError naming every parameter of the net
     not loaded from an entry of exactly its name; checked on files the checker writes (complete, with optimizer
     state, missing a key, under another prefix). 11.3 ``resume(path, steps)``: continue a Momentum run from a
     train-cell checkpoint; checked against numpy momentum gradient descent from the state the checker wrote.
11.1, 11.4 predictions: load_param_into_net and a missing key; a flipped bit in a .ckpt saved without a checksum.
"""

import os
import tempfile
from collections import OrderedDict
from functools import partial

import numpy as np

from course_utils.data import make_linear_data
from course_utils.exercises import FunctionExercise, Incorrect, Prediction, bind, brief_error, close, name_the_mistake
from course_utils.messages import lazy, t

LR, MOMENTUM = 0.1, 0.9  # the optimizer of notebook 11's resume section


def _one_dense_net():
    """The checker's own net: the parameter names of the notebook's MinimalNet, zeros."""
    from mindspore import nn

    return nn.SequentialCell(OrderedDict(dense=nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")))


def _save(path, entries):
    import mindspore as ms

    ms.save_checkpoint([{"name": k, "data": ms.Tensor(np.asarray(v, np.int32 if k == "global_step" else np.float32))}
                        for k, v in entries.items()], path)


def _weights(net):
    params = net.parameters_dict()
    return float(params["dense.weight"].asnumpy().ravel()[0]), float(params["dense.bias"].asnumpy().ravel()[0])


def _raised(answer, net, path, entries):
    """The exception ``answer(net, path)`` raises on a checkpoint of ``entries`` saved at ``path``, or None."""
    _save(path, entries)
    try:
        answer(net, path)
    except Exception as exc:  # what it raised is the answer
        return exc


def _check_load_or_fail(answer):
    full = {"dense.weight": [[1.5]], "dense.bias": [-0.25]}
    moments = {"moments.dense.weight": [[0.1]], "moments.dense.bias": [0.2], "global_step": [7]}
    with tempfile.TemporaryDirectory(prefix="nb11-check-") as folder:
        path = os.path.join(folder, "net.ckpt")
        for name, entries in ((lazy("complete"), full), (lazy("with optimizer state"), {**full, **moments})):
            net = _one_dense_net()
            exc = _raised(answer, net, path, entries)
            if exc is not None:
                raise Incorrect(t("loading the checkpoint '{name}' raised {error}: {exc}. Entries of the file that the "
                                  "net does not need (ckpt_not_loaded) are fine; only params_not_loaded matters",
                                  name=t(name), error=type(exc).__name__, exc=brief_error(exc)))
            if _weights(net) != (1.5, -0.25):
                raise Incorrect(t("after loading the checkpoint '{name}' the net holds {weights}, not (1.5, -0.25)",
                                  name=t(name), weights=_weights(net)))
        for name, entries, missing in (
                (lazy("missing dense.bias"), {"dense.weight": [[1.5]]}, ["dense.bias"]),
                (lazy("saved under another prefix (backbone.dense.*)"), {f"backbone.{k}": v for k, v in full.items()},
                 ["dense.weight", "dense.bias"])):
            exc = _raised(answer, _one_dense_net(), path, entries)
            if exc is None:
                raise Incorrect(t("the checkpoint '{name}' loaded without an error (without strict_load=True, names "
                                  "are matched by suffix)", name=t(name)) if "prefix" in name
                                else t("the checkpoint '{name}' loaded without an error", name=t(name)))
            if not isinstance(exc, ValueError):
                raise Incorrect(t("for the checkpoint '{name}', raise ValueError, not {error}: {exc}", name=t(name),
                                  error=type(exc).__name__, exc=brief_error(exc)))
            absent = [m for m in missing if m not in str(exc)]
            if absent:
                raise Incorrect(t("for the checkpoint '{name}', the ValueError should name {absent}; it says: {exc}",
                                  name=t(name), absent=absent, exc=brief_error(exc)))


def _oracle(w, b, vw, vb, steps):
    """Momentum gradient descent on the MSE of the course data, in float64 numpy: (w, b, vw, vb)."""
    x, y = (a.astype(np.float64).ravel() for a in make_linear_data())
    for _ in range(steps):
        r = w * x + b - y
        vw = MOMENTUM * vw + 2 * np.mean(r * x)
        vb = MOMENTUM * vb + 2 * np.mean(r)
        w, b = w - LR * vw, b - LR * vb
    return w, b, vw, vb


RESUME_MISTAKES = [  # settings of the oracle below: moments not restored, no step trained
    ({"vw": 0.0, "vb": 0.0}, lazy("you restored the weights but not the optimizer's moments: load the checkpoint "
                                  "into the train cell (it holds the optimizer), not only into the net")),
    ({"steps": 0}, lazy("the weights are those of the checkpoint: did you train `steps` more steps?")),
]


def _check_resume(answer):
    k, steps = 9, 12
    w, b, vw, vb = _oracle(0.3, 0.1, 0.0, 0.0, k)  # the state after k steps, moments included
    with tempfile.TemporaryDirectory(prefix="nb11-check-") as folder:
        path = os.path.join(folder, "step9.ckpt")
        _save(path, {"dense.weight": [[w]], "dense.bias": [b], "moments.dense.weight": [[vw]],
                     "moments.dense.bias": [vb], "global_step": [k], "learning_rate": LR, "momentum": MOMENTUM})
        net = resume.call(answer, path, steps)
    if not hasattr(net, "parameters_dict"):
        raise Incorrect(t("resume should return the trained net (a Cell), got {kind}", kind=type(net).__name__))
    names = net.parameters_dict()
    if "dense.weight" not in names or "dense.bias" not in names:
        raise Incorrect(t("the returned cell has no dense.weight/dense.bias parameters, only {names}",
                          names=sorted(names)))
    got, same = _weights(net), partial(close, rtol=0, atol=1e-5)
    want = _oracle(w, b, vw, vb, steps)[:2]
    if not same(got, want):
        name_the_mistake(got, lambda vw=vw, vb=vb, steps=steps: _oracle(w, b, vw, vb, steps)[:2], RESUME_MISTAKES,
                         same=same)
        raise Incorrect(t("after {steps} more steps, expected w={want_w:.5f}, b={want_b:.5f}, got w={got_w:.5f}, "
                          "b={got_b:.5f} (lr {lr}, momentum {momentum}, full batch of the course data?)", steps=steps,
                          want_w=want[0], want_b=want[1], got_w=got[0], got_b=got[1], lr=LR, momentum=MOMENTUM))


# ---- in the order the notebook asks them (bind numbers them 1, 2, 3 down the page) ----
missing_key = Prediction(
    lazy("A checkpoint holds dense.weight but no dense.bias. You load it into a fresh MinimalNet with "
         "ms.load_param_into_net(net, ckpt, strict_load=True). What happens?"),
    {"a": (lazy("an error naming dense.bias: strict_load refuses an incomplete file"),
           lazy("the name promises it, but strict_load is about how names are matched (exactly, not by suffix), "
                "not about completeness. A missing parameter is only reported, in the first list returned")),
     "b": (lazy("no error: the weight is loaded, the bias keeps its initial value, and the call returns "
                "(['dense.bias'], [])"),
           lazy("load_param_into_net never raises for a missing key, strict or not: it returns (params_not_loaded, "
                "ckpt_not_loaded), and only reading the first list tells you that the bias is still its initial "
                "value. That is why exercise 11.2 checks it")),
     "c": (lazy("nothing is loaded: a file that does not cover the whole net is skipped, and both keep their "
                "initial values"),
           lazy("loading is entry by entry: every parameter that has an entry gets its value, here the weight. "
                "Only the bias is left as it was"))},
    answer="b")
load_or_fail = FunctionExercise(_check_load_or_fail, signature="load_or_fail(net, path)", hints=[
    lazy("load_param_into_net does not raise for a missing key: look at what it returns"),
    lazy("ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True) returns (params_not_loaded, "
         "ckpt_not_loaded); only the first list means the net is incomplete"),
])
resume = FunctionExercise(_check_resume, signature="resume(path, steps)", hints=[
    lazy("an exact resume needs the optimizer's state too, and the same hyper-parameters as the first run"),
    lazy("build a fresh MinimalNet, nn.Momentum(..., learning_rate=0.1, momentum=0.9) and TrainOneStepCell, load "
         "the checkpoint into the train cell before its first step, then call it `steps` times on (X, Y)"),
])
flipped_bit = Prediction(
    lazy("One bit of the stored weight in net.ckpt (saved without crc_check) is flipped: the lowest exponent bit, "
         "which doubles or halves the number. What does ms.load_checkpoint('flipped.ckpt') do?"),
    {"a": (lazy("it raises ValueError: the file may be corrupted"),
           lazy("that is what a truncated file gives, because its structure no longer parses. A flipped bit inside "
                "a number leaves the structure intact, and a .ckpt saved without a checksum has nothing to compare "
                "the value with")),
     "b": (lazy("it loads without an error or a warning, with the weight doubled or halved"),
           lazy("the file is still a valid protobuf message, and the 4 bytes of the weight are just another "
                "float32. Only a checksum, saved and checked (crc_check=True on both sides), notices the change")),
     "c": (lazy("it loads, with a warning that the checksum does not match"),
           lazy("a .ckpt has a checksum only when it was saved with crc_check=True; this one has none, so there is "
                "nothing to mismatch and nothing to warn about"))},
    answer="b")

bind(globals())
