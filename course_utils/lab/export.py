"""The lab as a page with no kernel: sweeps for a grid of settings computed by MindSpore now, drawn later.

    python -m course_utils.lab.export OUTDIR [--lang en|zh] [--steps 50 100] [--betas 0.5 0.9]
    python -m course_utils.lab.export EN_DIR ZH_DIR --lang en zh    # both, from one computation

writes OUTDIR/index.html (the lab alone), lab.js, host.js, lab.css, manifest.json and payloads/<setting>.bin.
The website embeds the folder (``embed_html`` gives the tags); serve it over HTTP (the page fetches its
payloads: a browser refuses that from file://). The same bytes come out of the same MindSpore every time.
"""

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from course_utils.lab.payload import setting_key, surface_info, sweep_payload
from course_utils.lab.trainers import LR_GRID, MOMENTUM, OPTIMIZERS
from course_utils.lab.widget import WEB
from course_utils.messages import LANGUAGES, language, lazy, t

DEFAULT_STEPS = (50, 100)
DEFAULT_BETAS = (0.5, 0.9)
LIVE = lazy("This lab was computed by MindSpore when this page was built, for {n} settings; a live lab with any "
            "setting is one command away: make lab")
PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="stylesheet" href="lab.css"><link rel="icon" href="data:,"></head>
<body style="margin: 12px">
{embed}
</body></html>
"""
EMBED = """<div class="lr-lab-host" data-lab-base="{base}"></div>
<script type="module">
import {{ mount }} from "{base}lab.js";
import {{ hostModel }} from "{base}host.js";
for (const el of document.querySelectorAll(".lr-lab-host[data-lab-base='{base}']")) {{
  const manifest = await (await fetch("{base}manifest.json")).json();
  const fetchPayload = (key) => fetch(`{base}payloads/${{key}}.bin`);
  const model = await hostModel({{ manifest, live: manifest.live, fetchPayload }});
  mount(model, el);
}}
</script>"""


def embed_html(base="./"):
    """The tags that show the exported lab in a page; ``base``: the folder's URL relative to the page ("./lab/")."""
    if not isinstance(base, str) or not base.endswith("/") or not base.startswith(("./", "../", "/")):
        raise ValueError(f"base must be a folder URL starting with ./, ../ or / and ending in /, got {base!r}")
    return EMBED.format(base=base)


def export(outdir, steps=DEFAULT_STEPS, betas=DEFAULT_BETAS, trainer=None, lr=0.1, langs=None):
    """Compute every setting's payload and write the folder; returns the manifest.

    ``langs`` ({language: folder}) writes the lab in each language from the same sweeps (MindSpore computes
    them once); then ``outdir`` is ignored and the last manifest is returned."""
    from course_utils.data import make_linear_data
    from course_utils.landscape import LossSurface

    steps = sorted({int(s) for s in steps})
    betas = sorted({round(float(b), 2) for b in betas})
    if not steps or any(s < 10 or s > 500 or s % 10 for s in steps):
        raise ValueError(f"steps must be multiples of 10 in 10..500, got {steps}")
    if not betas or any(not 0.0 <= b < 1.0 for b in betas):
        raise ValueError(f"betas must be in [0, 1), got {betas}")
    if langs is not None and (not isinstance(langs, dict) or not langs or set(langs) - set(LANGUAGES)):
        raise ValueError(f"langs must be {{language: folder}} with languages from {LANGUAGES}, got {langs!r}")
    x, y = make_linear_data()
    if trainer is None:
        from course_utils.lab.trainers import MindSporeTrainer

        trainer = MindSporeTrainer(x, y)
    surface = LossSurface(x, y)
    sweeps = {(optimizer, beta): trainer.sweep(optimizer, None, max(steps), (0.0, 0.0), beta)
              for optimizer in OPTIMIZERS for beta in (betas if optimizer == "Momentum" else [MOMENTUM])}
    saved = os.environ.get("COURSE_LANG")
    langs = {language(): outdir} if langs is None else langs
    try:
        for lang, folder in langs.items():
            os.environ["COURSE_LANG"] = lang
            manifest = _write(folder, sweeps, surface, steps, betas, lr)
    finally:
        if saved is None:
            os.environ.pop("COURSE_LANG", None)
        else:
            os.environ["COURSE_LANG"] = saved
    return manifest


def _write(outdir, sweeps, surface, steps, betas, lr):
    """One language's folder from the computed sweeps ({(optimizer, beta): sweep})."""
    from course_utils.lab.app import labels

    out = Path(outdir)
    (out / "payloads").mkdir(parents=True, exist_ok=True)
    keys = []
    for (optimizer, beta), sweep in sweeps.items():
        for s in steps:
            key = setting_key(optimizer, beta, s)
            (out / "payloads" / f"{key}.bin").write_bytes(sweep_payload(sweep.truncated(s) if s < sweep.steps
                                                                        else sweep, surface))
            keys.append(key)
    start_steps = 100 if 100 in steps else steps[0]
    manifest = {"mode": "static", "keys": keys, "steps_options": steps, "momentum_options": betas,
                "surface": surface_info(surface), "labels": labels(), "live": t(LIVE, n=len(keys)),
                "state": {"optimizer": "SGD", "momentum": betas[-1], "steps": start_steps,
                          "index": int(abs(LR_GRID - lr).argmin())}}
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=0) + "\n",
                                       encoding="utf-8")
    for name in ("lab.js", "host.js", "lab.css"):
        shutil.copyfile(WEB / name, out / name)
    lang = "zh-CN" if t("learning rate") != "learning rate" else "en"
    (out / "index.html").write_text(PAGE.format(lang=lang, title=t("Learning-rate lab"), embed=embed_html()),
                                    encoding="utf-8")
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write the learning-rate lab as a page with no kernel.")
    parser.add_argument("outdir", nargs="+", help="one folder per language of --lang")
    parser.add_argument("--lang", choices=LANGUAGES, nargs="+", default=["en"],
                        help="the page's language; several (with as many folders) share one computation")
    parser.add_argument("--steps", type=int, nargs="+", default=list(DEFAULT_STEPS))
    parser.add_argument("--betas", type=float, nargs="+", default=list(DEFAULT_BETAS))
    args = parser.parse_args(argv)
    if len(args.outdir) != len(args.lang) or len(set(args.lang)) != len(args.lang):
        parser.error(f"give one folder per language: {len(args.outdir)} folder(s) for --lang {' '.join(args.lang)}")
    try:
        manifest = export(None, args.steps, args.betas, langs=dict(zip(args.lang, args.outdir)))
    except ValueError as err:
        parser.error(str(err))
    print(f"{len(manifest['keys'])} settings written to {', '.join(args.outdir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
