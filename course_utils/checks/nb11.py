"""Exercises of notebook 11 (checkpoints).

11.2 ``load_or_fail(net, path)``: load a .ckpt into ``net``, raise ValueError naming every parameter of the net
     not loaded from an entry of exactly its name; checked on files the checker writes (complete, with optimizer
     state, missing a key, under another prefix). 11.3 ``resume(path, x, y, total_steps)``: continue a Momentum run on
     mini-batches, stopped mid-epoch, from a train-cell checkpoint; checked on the checker's own data against
     numpy momentum gradient descent on the same batches, from the state the checker wrote.
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
                raise Incorrect(t("loading the checkpoint '{name}' raised {error}: {exc}, though the file has an "
                                  "entry for every parameter of the net (ckpt_not_loaded lists the entries the net "
                                  "does not need)", name=t(name), error=type(exc).__name__, exc=brief_error(exc)))
            if _weights(net) != (1.5, -0.25):
                raise Incorrect(t("after loading the checkpoint '{name}' the net holds {weights}, not (1.5, -0.25)",
                                  name=t(name), weights=_weights(net)))
        for name, entries, missing in (
                (lazy("missing dense.bias"), {"dense.weight": [[1.5]]}, ["dense.bias"]),
                (lazy("saved under another prefix (backbone.dense.*)"), {f"backbone.{k}": v for k, v in full.items()},
                 ["dense.weight", "dense.bias"])):
            exc = _raised(answer, _one_dense_net(), path, entries)
            if exc is None:
                raise Incorrect(t("the checkpoint '{name}' loaded without an error: how does load_param_into_net "
                                  "match the file's names to the net's?", name=t(name)) if "prefix" in name
                                else t("the checkpoint '{name}' loaded without an error", name=t(name)))
            if not isinstance(exc, ValueError):
                raise Incorrect(t("for the checkpoint '{name}', raise ValueError, not {error}: {exc}", name=t(name),
                                  error=type(exc).__name__, exc=brief_error(exc)))
            absent = [m for m in missing if m not in str(exc)]
            if absent:
                raise Incorrect(t("for the checkpoint '{name}', the ValueError should name {absent}; it says: {exc}",
                                  name=t(name), absent=absent, exc=brief_error(exc)))


BATCH = 20  # 11.3: mini-batches of 20 rows in order, the last one shorter
RESUME_DATA = {"n": 70, "w": -1.5, "b": 0.8, "seed": 13}  # the checker's own data: 4 batches (20, 20, 20, 10)
RESUME_START = (0.3, 0.1)  # the interrupted run's initial (w, b)
RESUME_DONE, RESUME_TOTAL = 6, 15  # it stopped after step 6 (in epoch 2, before its third batch), of 15


def _resume_data():
    return make_linear_data(n=RESUME_DATA["n"], w=RESUME_DATA["w"], b=RESUME_DATA["b"], noise=0.05,
                            seed=RESUME_DATA["seed"])


def _oracle(w, b, vw, vb, steps, first=0, x=None, y=None, batch=None):
    """Momentum gradient descent on the MSE, in float64 numpy: (w, b, vw, vb) after ``steps`` steps, the first on
    mini-batch number ``first`` (counted from 0 over the epochs); full batch of the course data by default."""
    if x is None:
        x, y = make_linear_data()
    x, y = (a.astype(np.float64).ravel() for a in (x, y))
    batch = batch or len(x)
    starts = list(range(0, len(x), batch))
    for step in range(first, first + steps):
        i = starts[step % len(starts)]
        xb, yb = x[i:i + batch], y[i:i + batch]
        r = w * xb + b - yb
        vw = MOMENTUM * vw + 2 * np.mean(r * xb)
        vb = MOMENTUM * vb + 2 * np.mean(r)
        w, b = w - LR * vw, b - LR * vb
    return w, b, vw, vb


def resume_oracle(**mistake):
    """(w, b) after the checker's run is resumed; ``mistake`` changes what the resumed part does."""
    x, y = _resume_data()
    w, b, vw, vb = _oracle(*RESUME_START, 0.0, 0.0, RESUME_DONE, x=x, y=y, batch=BATCH)
    kept = {"vw": vw, "vb": vb, "steps": RESUME_TOTAL - RESUME_DONE, "first": RESUME_DONE, **mistake}
    return _oracle(w, b, kept["vw"], kept["vb"], kept["steps"], first=kept["first"], x=x, y=y, batch=BATCH)[:2]


RESUME_MISTAKES = [  # settings of resume_oracle: moments not restored, data from its start, too many steps, none
    ({"vw": 0.0, "vb": 0.0}, lazy("you restored the weights but not the optimizer's moments")),
    ({"first": 0}, lazy("you continued with the first batch of the data: the run had stopped after step {done}, in "
                        "the middle of an epoch")),
    ({"first": 0, "steps": RESUME_TOTAL}, lazy("you trained total_steps more steps, from the first batch: the "
                                               "checkpoint had done {done} of them already (its global_step)")),
    ({"steps": RESUME_TOTAL}, lazy("you trained total_steps more steps: the checkpoint had done {done} of them "
                                   "already (its global_step)")),
    ({"steps": 0}, lazy("the weights are those of the checkpoint: did you train the remaining steps?")),
]


def _check_resume(answer):
    x, y = _resume_data()
    w, b, vw, vb = _oracle(*RESUME_START, 0.0, 0.0, RESUME_DONE, x=x, y=y, batch=BATCH)
    with tempfile.TemporaryDirectory(prefix="nb11-check-") as folder:
        path = os.path.join(folder, "interrupted.ckpt")
        _save(path, {"dense.weight": [[w]], "dense.bias": [b], "moments.dense.weight": [[vw]],
                     "moments.dense.bias": [vb], "global_step": [RESUME_DONE], "learning_rate": LR,
                     "momentum": MOMENTUM})
        net = resume.call(answer, path, x, y, RESUME_TOTAL)
    if not hasattr(net, "parameters_dict"):
        raise Incorrect(t("resume should return the trained net (a Cell), got {kind}", kind=type(net).__name__))
    names = net.parameters_dict()
    if "dense.weight" not in names or "dense.bias" not in names:
        raise Incorrect(t("the returned cell has no dense.weight/dense.bias parameters, only {names}",
                          names=sorted(names)))
    got, same = _weights(net), partial(close, rtol=0, atol=1e-5)
    want = resume_oracle()
    if not same(got, want):
        name_the_mistake(got, resume_oracle, RESUME_MISTAKES, same=same, done=RESUME_DONE)
        raise Incorrect(t("{n} rows in batches of {batch}, stopped after step {done} of {total}: expected "
                          "w={want_w:.5f}, b={want_b:.5f}, got w={got_w:.5f}, b={got_b:.5f} (lr {lr}, momentum "
                          "{momentum}, the batches in order?)", n=len(x), batch=BATCH, done=RESUME_DONE,
                          total=RESUME_TOTAL, want_w=want[0], want_b=want[1], got_w=got[0], got_b=got[1], lr=LR,
                          momentum=MOMENTUM))


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
    lazy("it returns two lists, what the net did not get and what the file had left over, and only the first one "
         "means the net is incomplete; its strict_load argument decides how a file's names are matched to the net's "
         "(section 2)"),
])
resume = FunctionExercise(_check_resume, signature="resume(path, x, y, total_steps)", hints=[
    lazy("an exact resume needs the optimizer's state, the same hyper-parameters, and the place in the data: the "
         "file's global_step counts the steps done, so it also tells which batch comes next"),
    lazy("load the checkpoint into a fresh train cell before its first step (it holds the optimizer), and read the "
         "steps done from the optimizer's global_step; the batches come round in order, epoch after epoch, so the "
         "steps done say which batch is next"),
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
