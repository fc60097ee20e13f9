"""Serve the learning-rate lab as a classroom app: only its widgets, no code, on 127.0.0.1.

    make app                                   # the same as:
    .venv/bin/python app/serve.py [--port 8866] [--no-browser] [--lang zh]
    make app-zh                                # the Chinese edition (中文版)

Voila runs app/learning_rate_lab.ipynb in a fresh kernel for each visitor and shows its outputs (the lab)
without the code. The URL it prints carries a token. The page is rendered with the "lab-offline" template
(app/jupyter/voila/templates/lab-offline): Voila's "lab" template without the stylesheets it would load
from a CDN, so nothing is fetched from the internet at run time (tests/test_browser.py checks every
request the page makes).

For a whole room (each learner's browser with a lab of its own, a fixed number of places, pre-heated labs),
app/classroom.py (``make classroom``) runs this same command with the settings a room needs.
"""

import argparse
import os
import sys
from pathlib import Path

APP_DIR = Path(__file__).resolve().parent
NOTEBOOK = APP_DIR / "learning_rate_lab.ipynb"
NOTEBOOKS = {"en": NOTEBOOK,  # the app in each language: the Chinese edition is made by tools/zh.py (make zh)
             "zh": APP_DIR.parent / "zh" / "app" / "learning_rate_lab.ipynb"}
TEMPLATE = "lab-offline"
TEMPLATE_ROOT = APP_DIR / "jupyter"  # a Jupyter data directory: voila/templates/lab-offline/


def voila_command(port=8866, token=None, open_browser=True, python=sys.executable, lang="en"):
    """The command line and environment that serve the app. ``token=None`` lets Voila make one.

    ``lang="zh"`` serves the Chinese edition: its page in Chinese and COURSE_LANG=zh for every lab's kernel."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port must be an int in 1..65535, got {port!r}")
    if lang not in NOTEBOOKS:
        raise ValueError(f"lang must be one of {sorted(NOTEBOOKS)}, got {lang!r}")
    if token is not None and (not isinstance(token, str) or not token.isalnum()):
        raise ValueError(f"token must be letters and digits, got {token!r}")
    argv = [python, "-m", "voila", str(NOTEBOOKS[lang]), f"--template={TEMPLATE}", "--Voila.ip=127.0.0.1",
            f"--port={port}", "--Voila.port_retries=0", "--theme=light",
            # jupytext's JupyterLab extension needs JupyterLab's document manager, which Voila lacks: without
            # this, loading it logs an error in the browser console. The app needs only the widget manager.
            "--VoilaConfiguration.extension_denylist=jupyterlab-jupytext"]
    argv += [f"--Voila.token={token}"] if token else ["--token"]  # --token: Voila generates one
    if not open_browser:
        argv.append("--no-browser")
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(TEMPLATE_ROOT), env.get("JUPYTER_PATH")) if p)
    env.setdefault("GLOG_v", "3")
    env["COURSE_LANG"] = lang
    return argv, env


def main(args=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8866, help="port on 127.0.0.1 (default 8866)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    parser.add_argument("--lang", choices=sorted(NOTEBOOKS), default="en",
                        help="the app's language: en (default) or zh (中文版)")
    options = parser.parse_args(args)
    try:
        argv, env = voila_command(options.port, open_browser=not options.no_browser, lang=options.lang)
    except ValueError as err:
        parser.exit(2, f"serve: {err}\n")
    os.execve(argv[0], argv, env)


if __name__ == "__main__":
    main()
