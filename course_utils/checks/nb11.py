"""Exercises of notebook 11 (checkpoints).

11.2 ``load_or_fail(net, path)``: load a .ckpt into ``net`` and raise ValueError naming every parameter of
     the net that was not loaded from an entry of exactly its name. Checked on checkpoint files the
     checker writes itself (complete, missing a key, with optimizer state, under another prefix).
11.3 ``resume(path, steps)``: continue a Momentum training run from a train-cell checkpoint. Checked
     against plain-numpy momentum gradient descent started from the state the checker wrote.
11.1, 11.4 predictions: what load_param_into_net does with a missing key; whether a flipped bit in a .ckpt saved
     without a checksum is noticed.
"""

import os
import tempfile

import numpy as np

from course_utils.data import make_linear_data
from course_utils.exercises import NONE_HINT, Exercise, Prediction, bind
from course_utils.messages import lazy, t

LR, MOMENTUM = 0.1, 0.9  # the optimizer of notebook 11's resume section
CASE_NAMES = {  # 11.2's checkpoint files, as a message names them (the keys are what the code compares)
    "complete": lazy("complete"),
    "with optimizer state": lazy("with optimizer state"),
    "missing dense.bias": lazy("missing dense.bias"),
    "saved under another prefix (backbone.dense.*)": lazy("saved under another prefix (backbone.dense.*)"),
}


def _one_dense_net():
    from mindspore import nn

    class _OneDense(nn.Cell):  # the checker's own net: same parameter names as the notebook's MinimalNet
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(1, 1, weight_init="zeros", bias_init="zeros")

        def construct(self, x):
            return self.dense(x)

    return _OneDense()


def _save(path, entries):
    import mindspore as ms

    ms.save_checkpoint([{"name": k, "data": ms.Tensor(v)} for k, v in entries.items()], path)


def _weights(net):
    params = net.parameters_dict()
    return float(params["dense.weight"].asnumpy().ravel()[0]), float(params["dense.bias"].asnumpy().ravel()[0])


def _check_load_or_fail(answer):
    if not callable(answer):
        return t("expected a function load_or_fail(net, path), got {kind}", kind=type(answer).__name__)
    w, b = np.array([[1.5]], np.float32), np.array([-0.25], np.float32)
    optimizer_state = {"moments.dense.weight": np.array([[0.1]], np.float32),
                       "moments.dense.bias": np.array([0.2], np.float32),
                       "global_step": np.array([7], np.int32)}
    with tempfile.TemporaryDirectory(prefix="nb11-check-") as folder:
        cases = {
            "complete": {"dense.weight": w, "dense.bias": b},
            "with optimizer state": {"dense.weight": w, "dense.bias": b, **optimizer_state},
            "missing dense.bias": {"dense.weight": w},
            "saved under another prefix (backbone.dense.*)": {"backbone.dense.weight": w, "backbone.dense.bias": b},
        }
        paths = {}
        for name, entries in cases.items():
            paths[name] = os.path.join(folder, name.split(" ")[0] + ".ckpt")
            _save(paths[name], entries)
        for name in ("complete", "with optimizer state"):
            net = _one_dense_net()
            try:
                answer(net, paths[name])
            except Exception as exc:
                return t("loading the checkpoint '{name}' raised {error}: {exc}. Entries of the file that the net "
                         "does not need (ckpt_not_loaded) are fine; only params_not_loaded matters",
                         name=t(CASE_NAMES[name]), error=type(exc).__name__, exc=exc)
            if _weights(net) != (1.5, -0.25):
                return t("after loading the checkpoint '{name}' the net holds {weights}, not (1.5, -0.25)",
                         name=t(CASE_NAMES[name]), weights=_weights(net))
        for name, missing in (("missing dense.bias", ["dense.bias"]),
                              ("saved under another prefix (backbone.dense.*)", ["dense.weight", "dense.bias"])):
            try:
                answer(_one_dense_net(), paths[name])
            except ValueError as exc:
                absent = [m for m in missing if m not in str(exc)]
                if absent:
                    return t("for the checkpoint '{name}', the ValueError should name {absent}; it says: {exc}",
                             name=t(CASE_NAMES[name]), absent=absent, exc=exc)
            except Exception as exc:
                return t("for the checkpoint '{name}', raise ValueError, not {error}: {exc}",
                         name=t(CASE_NAMES[name]), error=type(exc).__name__, exc=exc)
            else:
                if "prefix" in name:
                    return t("the checkpoint '{name}' loaded without an error (without strict_load=True, names are "
                             "matched by suffix)", name=t(CASE_NAMES[name]))
                return t("the checkpoint '{name}' loaded without an error", name=t(CASE_NAMES[name]))
    return None


def _oracle(w, b, vw, vb, steps):
    """Momentum gradient descent on the MSE of the course data, in float64 numpy."""
    x, y = (a.astype(np.float64).ravel() for a in make_linear_data())
    for _ in range(steps):
        r = w * x + b - y
        vw = MOMENTUM * vw + 2 * np.mean(r * x)
        vb = MOMENTUM * vb + 2 * np.mean(r)
        w, b = w - LR * vw, b - LR * vb
    return w, b, vw, vb


def _check_resume(answer):
    if not callable(answer):
        return t("expected a function resume(path, steps), got {kind}", kind=type(answer).__name__)
    k, steps = 9, 12
    w, b, vw, vb = _oracle(0.3, 0.1, 0.0, 0.0, k)  # the state after k steps, moments included
    entries = {"dense.weight": np.array([[w]], np.float32), "dense.bias": np.array([b], np.float32),
               "moments.dense.weight": np.array([[vw]], np.float32), "moments.dense.bias": np.array([vb], np.float32),
               "global_step": np.array([k], np.int32), "learning_rate": np.array(LR, np.float32),
               "momentum": np.array(MOMENTUM, np.float32)}
    with tempfile.TemporaryDirectory(prefix="nb11-check-") as folder:
        path = os.path.join(folder, "step9.ckpt")
        _save(path, entries)
        net = answer(path, steps)
    if not hasattr(net, "parameters_dict"):
        if net is None:
            return t("resume should return the trained net (a Cell), got {kind}. {hint}", kind=type(net).__name__,
                     hint=t(NONE_HINT))
        return t("resume should return the trained net (a Cell), got {kind}", kind=type(net).__name__)
    names = net.parameters_dict()
    if "dense.weight" not in names or "dense.bias" not in names:
        return t("the returned cell has no dense.weight/dense.bias parameters, only {names}", names=sorted(names))
    got = np.array(_weights(net))
    expected = np.array(_oracle(w, b, vw, vb, steps)[:2])
    if np.allclose(got, expected, rtol=0, atol=1e-5):
        return None
    if np.allclose(got, _oracle(w, b, 0.0, 0.0, steps)[:2], rtol=0, atol=1e-5):
        return t("you restored the weights but not the optimizer's moments: load the checkpoint into the "
                 "train cell (it holds the optimizer), not only into the net")
    if np.allclose(got, [w, b], rtol=0, atol=1e-6):
        return t("the weights are those of the checkpoint: did you train `steps` more steps?")
    return t("after {steps} more steps, expected w={want_w:.5f}, b={want_b:.5f}, got w={got_w:.5f}, b={got_b:.5f} "
             "(lr {lr}, momentum {momentum}, full batch of the course data?)", steps=steps, want_w=expected[0],
             want_b=expected[1], got_w=got[0], got_b=got[1], lr=LR, momentum=MOMENTUM)


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
load_or_fail = Exercise(_check_load_or_fail, hints=[
    lazy("load_param_into_net does not raise for a missing key: look at what it returns"),
    lazy("ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True) returns (params_not_loaded, "
         "ckpt_not_loaded); only the first list means the net is incomplete"),
])
resume = Exercise(_check_resume, hints=[
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
