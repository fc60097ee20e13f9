"""What the browser needs to draw a setting of the lab, computed once by MindSpore and then only looked up.

A *setting* is (optimizer, beta, steps) from the lab's start. Its payload holds the sweep (every slider
learning rate's (w, b) path and losses, float32) and, per learning rate, what the lab says about it: the
verdict's kind and sentence (``verdicts.describe_run``, in the learner's language), the step from which it
converges, the step at which it meets the challenge; and per setting the snap target and the presets. The
page (``web/lab.js``) draws a slider move from it with no kernel and no server.

The format is one binary blob, the same in a notebook (the widget's ``payload`` trait), on the classroom's
page (served over HTTP) and on the website (a file)::

    b"LRLAB1" | uint32 little-endian n | n bytes of UTF-8 JSON header
              | float32 paths (K, steps+1, 2) | float32 losses (K, steps)

``surface_info`` is what does not depend on the setting (the data, the bowl's exact shape, the view).
"""

import json
import re
import struct

import numpy as np

from course_utils.lab.figure import LOSS_LIMITS, LR_LIMITS, PATH_WINDOW, bounds_of
from course_utils.lab.trainers import MOMENTUM, OPTIMIZERS
from course_utils.lab.verdicts import KINDS, describe_run
from course_utils.messages import t

MAGIC = b"LRLAB1"
CHALLENGE_EXCESS = 1e-6  # the challenge: the loss within 1e-6 of its minimum ...
CHALLENGE_STEPS = 30  # ... within 30 steps
PRESETS = ("too small", "good", "oscillating", "diverging")


def setting_key(optimizer, momentum, steps):
    """A setting's name, safe as a file name and a URL part: ``SGD-s100``, ``Momentum-b0.90-s100``."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {optimizer!r}")
    beta = f"-b{float(momentum):.2f}" if optimizer == "Momentum" else ""
    return f"{optimizer}{beta}-s{int(steps)}"


def parse_key(key):
    """(optimizer, beta, steps) from a ``setting_key``; a ValueError that says the form otherwise."""
    form = "OPTIMIZER[-bBETA]-sSTEPS, e.g. SGD-s100 or Momentum-b0.90-s100"
    parts = key.split("-") if isinstance(key, str) else []
    try:
        optimizer, steps = parts[0], int(parts[-1][1:]) if parts[-1].startswith("s") else None
        beta = float(parts[1][1:]) if len(parts) == 3 and parts[1].startswith("b") else MOMENTUM
    except (IndexError, ValueError):
        raise ValueError(f"a setting is named {form}; got {key!r}") from None
    if optimizer not in OPTIMIZERS or steps is None or len(parts) != (3 if optimizer == "Momentum" else 2) \
            or setting_key(optimizer, beta, steps) != key:
        raise ValueError(f"a setting is named {form}; got {key!r}")
    return optimizer, beta, steps


def surface_info(surface):
    """The bowl, the data and the view: everything the page draws that no setting changes."""
    return {"x": [round(float(v), 6) for v in surface.x], "y": [round(float(v), 6) for v in surface.y],
            "optimum": [float(v) for v in surface.optimum], "min_loss": float(surface.min_loss),
            "hessian": surface.hessian.tolist(), "eigenvalues": surface.eigenvalues.tolist(),
            "eigenvectors": surface.eigenvectors.tolist(), "window": [list(PATH_WINDOW[0]), list(PATH_WINDOW[1])],
            "loss_limits": list(LOSS_LIMITS), "lr_limits": list(LR_LIMITS),
            "challenge": {"excess": CHALLENGE_EXCESS, "steps": CHALLENGE_STEPS}}


def preset_lr(name, optimizer, momentum, surface, lr_range=(1e-3, 10.0)):
    """The learning rate a preset button asks for (before it is moved to the nearest slider position)."""
    s = surface
    if optimizer == "SGD":
        lrs = {"too small": 0.1 / s.lambda_max, "oscillating": 0.93 * s.stability_bound(),
               "diverging": 1.1 * s.stability_bound()}
    elif optimizer == "Momentum":
        lrs = {"too small": 0.02 / s.lambda_max, "oscillating": 0.93 * s.stability_bound(momentum),
               "diverging": 1.1 * s.stability_bound(momentum)}
    else:
        lrs = {"too small": 0.002, "oscillating": 1.0, "diverging": lr_range[1]}
    return float(min(max(lrs[name], lr_range[0]), lr_range[1]))


def snap_target(sweep, surface):
    """(column, message): the learning rate that converges in the fewest steps, else the lowest final loss."""
    needed = sweep.steps_to_converge(surface.optimum)
    if np.isfinite(needed).any():
        best = int(np.nanargmin(needed))
        return best, t("snapped to the fastest learning rate: converged from step {step}", step=int(needed[best]))
    final = np.where(np.isfinite(sweep.final_losses()), sweep.final_losses(), np.inf)
    return int(np.argmin(final)), t("snapped to the lowest final loss (no learning rate converges in {steps} "
                                    "steps)", steps=sweep.steps)


def good_index(sweep, surface, verdicts=None):
    """The "good" preset: the fastest-converging learning rate whose path does not zig-zag across the valley
    (calm, and nearly as fast as the best); the snap target if every converging one zig-zags."""
    if verdicts is None:
        verdicts = [describe_run(sweep.run(i), surface) for i in range(len(sweep.lrs))]
    needed = sweep.steps_to_converge(surface.optimum)
    calm = np.array([np.isfinite(n) and not v.zigzag for n, v in zip(needed, verdicts)])
    if calm.any():
        return int(np.nanargmin(np.where(calm, needed, np.nan)))
    return snap_target(sweep, surface)[0]


def challenge_steps(paths, surface, steps=CHALLENGE_STEPS, excess=CHALLENGE_EXCESS):
    """Per column of ``paths`` (steps+1, 2, K): the first step within ``excess`` of the minimum loss (at most
    ``steps``), or -1; and the closest any step up to ``steps`` came (inf if none is finite)."""
    head = np.asarray(paths, dtype=np.float64)[:steps + 1]
    with np.errstate(all="ignore"):
        gap = surface.loss(head[:, 0], head[:, 1]) - surface.min_loss
    met = gap < excess
    first = np.where(met.any(axis=0), np.argmax(met, axis=0), -1)
    closest = np.where(np.isfinite(gap), gap, np.inf).min(axis=0)
    return first.astype(int), closest


def sweep_payload(sweep, surface):
    """The payload of one setting's sweep (see the module): bytes."""
    runs = [sweep.run(i) for i in range(len(sweep.lrs))]
    verdicts = [describe_run(run, surface) for run in runs]
    needed = sweep.steps_to_converge(surface.optimum)
    met, closest = challenge_steps(sweep.paths, surface)
    snap, snap_note = snap_target(sweep, surface)
    lrs = np.asarray(sweep.lrs)
    presets = {}
    for name in PRESETS:
        if name == "good":
            presets[name] = good_index(sweep, surface, verdicts)
        else:
            lr = preset_lr(name, sweep.optimizer, sweep.momentum or 0.0, surface)
            presets[name] = int(np.argmin(np.abs(np.log(lrs) - np.log(lr))))
    header = {
        "key": setting_key(sweep.optimizer, sweep.momentum if sweep.momentum is not None else MOMENTUM, sweep.steps),
        "optimizer": sweep.optimizer, "momentum": sweep.momentum, "steps": sweep.steps, "label": sweep.label,
        "start": list(sweep.start), "lrs": [float(v) for v in lrs],
        "labels": [run.label for run in runs],
        "kinds": [KINDS.index(v.kind) for v in verdicts], "texts": [v.text for v in verdicts],
        "headlines": [re.split("[:：]", v.text, maxsplit=1)[0] for v in verdicts],  # the figure's note
        "converge": [int(v) if np.isfinite(v) else -1 for v in needed],
        "challenge": [int(v) for v in met], "closest": [float(v) if np.isfinite(v) else None for v in closest],
        "snap": snap, "snap_note": snap_note, "presets": presets,
        "adam_diverging_note": t("Adam does not diverge on this bowl: its steps are about lr long whatever the "
                                 "gradient; the largest learning rate overshoots instead")
        if sweep.optimizer == "Adam" else "",
        "bounds": [[float(lr), label, color] for lr, label, color in
                   bounds_of(surface, sweep.optimizer, sweep.momentum or 0.0)],
    }
    paths = np.ascontiguousarray(np.moveaxis(np.asarray(sweep.paths, dtype=np.float32), 2, 0))  # (K, steps+1, 2)
    losses = np.ascontiguousarray(np.asarray(sweep.losses, dtype=np.float32).T)  # (K, steps)
    return encode(header, [paths, losses])


def run_payload(run, surface):
    """The payload of one run that no sweep holds (a typed learning rate between slider positions)."""
    from course_utils.lab.runs import Sweep

    sweep = Sweep(run.optimizer, [run.lr], run.losses[:, None], run.path[:, :, None], momentum=run.momentum)
    return sweep_payload(sweep, surface)


def encode(header, arrays):
    """MAGIC, the JSON header's length and the header, then each float32 array's bytes."""
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    pad = (-(len(MAGIC) + 4 + len(text))) % 4  # float32 data starts on a 4-byte boundary (Float32Array needs it)
    text += b" " * pad
    return b"".join([MAGIC, struct.pack("<I", len(text)), text] + [np.asarray(a, "<f4").tobytes() for a in arrays])


def decode(blob):
    """(header, paths (K, steps+1, 2), losses (K, steps)) from a payload; a ValueError if it is not one."""
    blob = bytes(blob)
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + 4:
        raise ValueError("not a lab payload: it must start with b'LRLAB1' (made by course_utils.lab.payload)")
    (n,) = struct.unpack_from("<I", blob, len(MAGIC))
    start = len(MAGIC) + 4
    header = json.loads(blob[start:start + n].decode("utf-8"))
    k, steps = len(header["lrs"]), header["steps"]
    data = np.frombuffer(blob, dtype="<f4", offset=start + n)
    if data.size != k * (steps + 1) * 2 + k * steps:
        raise ValueError(f"a payload of {k} learning rates x {steps} steps needs {k * (3 * steps + 2)} floats, "
                         f"got {data.size}")
    paths = data[:k * (steps + 1) * 2].reshape(k, steps + 1, 2)
    return header, paths, data[k * (steps + 1) * 2:].reshape(k, steps)
