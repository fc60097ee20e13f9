"""The course's commands, for any system with Python 3.11 or 3.12 (Windows and macOS need no `make`).

    python course.py lab           open the course in JupyterLab (127.0.0.1, with a token)
    python course.py lab --zh      the Chinese edition (中文版), menus and course messages in Chinese
    python course.py check         the setup check for workshop attendees
    python course.py test          the whole test suite (a contributor's; 2 workers)
    python course.py test --quick  lint, unit and hygiene tests only
    python course.py app [--zh]    the learning-rate lab alone (Voila on 127.0.0.1)
    python course.py classroom [--zh] [--ip IP] [--room N] [--port P]   the lab for a whole room
    python course.py execute [NOTEBOOK ...]   re-run notebooks and store their outputs (authors)
    python course.py site          the course as a website, English and Chinese, in build/site/ (offline)
    python course.py site-serve [--port P]   serve build/site/ on 127.0.0.1 (builds it first if missing)
    python course.py venv [--dev]  only create or update .venv
    python course.py wheelhouse FOLDER   every pinned wheel for Linux, Windows and macOS, Python 3.11 and 3.12,
                                   downloaded once; COURSE_WHEELHOUSE=FOLDER then installs with no internet
    python course.py test-matrix [VERSION ...] [--jobs N]   every notebook on each tested MindSpore (2.7.2 2.8.0
                                   2.9.0 2.10.0), one fresh venv under /tmp each: docs/version-matrix.md

Each command first creates the virtual environment .venv from the pinned versions when it is missing or
older than the pin files (requirements.txt for a learner; requirements-dev.txt too for test and execute),
with the Python that runs this script. The Makefile calls this script, so `make lab` and
`python course.py lab` are the same code. Standard library only: it runs before anything is installed.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
SUPPORTED = ((3, 11), (3, 12))
LEARNER_PINS = ("requirements.txt", "pyproject.toml")
DEV_PINS = ("requirements-dev.txt",)
# What a room's machines may be: pip's platform tags for MindSpore 2.10's wheels (Linux x86_64, Windows x86_64,
# macOS on Apple silicon and on Intel), several per system because each package names the oldest system it suits.
PLATFORMS = {
    "linux": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64",
              "linux_x86_64"],
    "windows": ["win_amd64"],
    "macos": ["macosx_14_0_arm64", "macosx_13_0_arm64", "macosx_12_0_arm64", "macosx_11_0_arm64",
              "macosx_10_9_universal2"],
    "macos-intel": ["macosx_14_0_x86_64", "macosx_13_0_x86_64", "macosx_12_0_x86_64", "macosx_11_0_x86_64",
                    "macosx_10_15_x86_64", "macosx_10_9_x86_64", "macosx_10_9_universal2"],
}
# COURSE_WHEELHOUSE=<folder>: install from a folder `python course.py wheelhouse` filled, with no internet.
WHEELHOUSE = "COURSE_WHEELHOUSE"


def venv_python(venv=None):
    """The venv's python: Scripts\\python.exe on Windows, bin/python elsewhere."""
    venv = VENV if venv is None else venv
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _stale(stamp, pins):
    return not stamp.exists() or any((ROOT / pin).stat().st_mtime > stamp.stat().st_mtime for pin in pins)


def run(command, **kwargs):
    """Run one command, showing it first; exit with its code if it fails."""
    print("+", " ".join(str(part) for part in command), flush=True)
    code = subprocess.call([str(part) for part in command], cwd=kwargs.pop("cwd", ROOT), **kwargs)
    if code:
        raise SystemExit(code)


def pip_source():
    """pip's options for where packages come from: PyPI, or the wheelhouse COURSE_WHEELHOUSE names (no index)."""
    folder = os.environ.get(WHEELHOUSE)
    if not folder:
        return []
    if not Path(folder).is_dir() or not any(Path(folder).glob("mindspore-*.whl")):
        raise SystemExit(f"{WHEELHOUSE}={folder}: no wheelhouse there (no mindspore wheel); fill one with"
                         " `python course.py wheelhouse <folder>` on a machine with internet, or unset it")
    return ["--no-index", "--find-links", str(Path(folder).resolve())]


def ensure_venv(dev=False, python=sys.executable):
    """Create .venv and install the pins when missing or older than the pin files; return the venv's python."""
    if tuple(sys.version_info[:2]) not in SUPPORTED and not venv_python().exists():
        raise SystemExit(f"this is Python {sys.version.split()[0]}; the course needs 3.11 or 3.12 (its pins do not"
                         " install on others): run this script with one, e.g. `py -3.11 course.py lab` on Windows"
                         " or `python3.11 course.py lab` elsewhere")
    py = venv_python()
    if not py.exists():
        run([python, "-m", "venv", VENV])
    learner, contributor = VENV / ".installed", VENV / ".installed-dev"
    source = pip_source()
    if _stale(learner, LEARNER_PINS):
        if not source:
            run([py, "-m", "pip", "install", "--upgrade", "--quiet", "pip"])
        run([py, "-m", "pip", "install", "--quiet", *source, "-r", "requirements.txt"])
        # setuptools for the course's own editable install: a Python 3.12 venv has none, and a wheelhouse no index
        run([py, "-m", "pip", "install", "--quiet", *source, "--no-deps", "-e", ".", "setuptools==80.9.0"]
            if source else [py, "-m", "pip", "install", "--quiet", "--no-deps", "-e", "."])
        learner.touch()
    if dev and (_stale(contributor, DEV_PINS) or contributor.stat().st_mtime < learner.stat().st_mtime):
        run([py, "-m", "pip", "install", "--quiet", *source, "-r", "requirements-dev.txt"])
        contributor.touch()
    return py


def _root_flag():
    # JupyterLab refuses to start as root unless told; a root user is common in containers and CI.
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def wheelhouse(args):
    """Download every pinned wheel once, for each system and Python a room may bring, into one folder."""
    folder = Path(args.folder).resolve()
    systems = list(PLATFORMS) if args.system == "all" else [args.system]
    pythons = SUPPORTED if args.python == "all" else [tuple(int(n) for n in args.python.split("."))]
    pins = ["-r", "requirements.txt", "setuptools==80.9.0"] + (["-r", "requirements-dev.txt"] if args.dev else [])
    for system in systems:
        for major, minor in pythons:
            tags = [arg for tag in PLATFORMS[system] for arg in ("--platform", tag)]
            run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", *tags,
                 "--python-version", f"{major}.{minor}", "--dest", folder, *pins])
    wheels = sorted(folder.glob("*.whl"))
    size = sum(w.stat().st_size for w in wheels) / 2**20
    print(f"{len(wheels)} wheels, {size:.0f} MB in {folder}. On each machine, with no internet:\n"
          f"  {WHEELHOUSE}={folder} python course.py lab        (Linux, macOS)\n"
          f"  set {WHEELHOUSE}={folder}  then  py -3.11 course.py lab   (Windows)")


def venv(args):
    print(ensure_venv(dev=args.dev))


def lab(args):
    py = ensure_venv()
    folder, settings = ("zh/notebooks", "settings-zh") if args.zh else ("notebooks", "settings")
    env = dict(os.environ, COURSE_LANG="zh") if args.zh else None
    run([py, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={folder}",
         f"--LabApp.app_settings_dir=app/jupyterlab/{settings}", *_root_flag()], env=env)


def check(args):
    run([ensure_venv(), "-m", "course_utils.setup_check", *(["--contributor"] if args.contributor else [])])


def test(args):
    py = ensure_venv(dev=True)
    quick = ["tests", "-m", "not browser and not msrun"] if args.quick else []
    run([py, "-m", "pytest", "-n", str(args.jobs), *quick, *args.pytest_args])


MATRIX_VERSIONS = ("2.7.2", "2.8.0", "2.9.0", "2.10.0")  # tools/matrix.py's VERSIONS (tests keep them equal)


def test_matrix(args):
    """Every notebook on each MindSpore version, one fresh venv (outside the repository) at a time: the table in
    docs/version-matrix.json and .md (tools/matrix.py). Measured per version on 2 cores, -n 2: 2-3 min to install and
    7-10 min of notebooks when idle, up to 19 + 45 min when shared; 3.3 GB of /tmp while it runs."""
    py = ensure_venv(dev=True)
    run([py, "tools/matrix.py", "run", *args.versions, "--jobs", str(args.jobs)])


def app(args):
    run([ensure_venv(), "app/serve.py", *(["--lang", "zh"] if args.zh else [])])


def classroom(args):
    run([ensure_venv(), "app/classroom.py", "--ip", args.ip, "--room", str(args.room), "--port", str(args.port),
         *(["--lang", "zh"] if args.zh else [])])


def execute(args):
    py = ensure_venv(dev=True)
    notebooks = args.notebooks or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))
    if not args.notebooks:
        notebooks.append("app/learning_rate_lab.ipynb")
    missing = [nb for nb in notebooks if not (ROOT / nb).is_file()]
    if missing:
        raise SystemExit(f"no such notebook: {', '.join(missing)} (give paths like notebooks/03_train_one_step.ipynb)")
    run([py, "tools/execute_notebooks.py", *notebooks])
    run([py, "tools/zh.py", "build"])
    chinese = [str(Path("zh") / nb) for nb in notebooks if (ROOT / "zh" / nb).is_file()]
    if chinese:
        run([py, "tools/execute_notebooks.py", *chinese])


def site(args):
    run([ensure_venv(dev=True), "tools/site.py", "build"])


def site_serve(args):
    py = ensure_venv(dev=True)
    if not (ROOT / "build" / "site" / "index.html").is_file():
        run([py, "tools/site.py", "build"])
    run([py, "tools/site.py", "serve", "--port", str(args.port)])


def _port(text):
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"--port must be a port number from 1 to 65535, not {text!r}")
    return int(text)


def parser():
    p = argparse.ArgumentParser(prog="python course.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="command")
    c = sub.add_parser("wheelhouse", help="download every pinned wheel into a folder, for a room with no internet")
    c.add_argument("folder")
    c.add_argument("--system", choices=["all", *PLATFORMS], default="all")
    c.add_argument("--python", choices=["all", "3.11", "3.12"], default="all")
    c.add_argument("--dev", action="store_true", help="also the contributor's tools (requirements-dev.txt)")
    c.set_defaults(run=wheelhouse)
    c = sub.add_parser("venv", help="create or update .venv only")
    c.add_argument("--dev", action="store_true", help="also the contributor's tools (requirements-dev.txt)")
    c.set_defaults(run=venv)
    c = sub.add_parser("lab", help="open the course in JupyterLab")
    c.add_argument("--zh", action="store_true", help="the Chinese edition")
    c.set_defaults(run=lab)
    c = sub.add_parser("check", help="the setup check")
    c.add_argument("--contributor", action="store_true", help="also the tools the test suite needs")
    c.set_defaults(run=check)
    c = sub.add_parser("test", help="the test suite")
    c.add_argument("--quick", action="store_true", help="lint, unit and hygiene tests only")
    c.add_argument("--jobs", type=_jobs, default=2, help="pytest workers (default 2)")
    c.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    c.set_defaults(run=test)
    c = sub.add_parser("test-matrix", help="every notebook on each tested MindSpore version (docs/version-matrix.md)")
    c.add_argument("versions", nargs="*", type=_ms_version, default=list(MATRIX_VERSIONS), metavar="VERSION",
                   help=f"MindSpore versions (default: {' '.join(MATRIX_VERSIONS)})")
    c.add_argument("--jobs", type=_jobs, default=2, help="pytest workers (default 2)")
    c.set_defaults(run=test_matrix)
    c = sub.add_parser("app", help="the learning-rate lab alone")
    c.add_argument("--zh", action="store_true")
    c.set_defaults(run=app)
    c = sub.add_parser("classroom", help="the lab for a whole room (see INSTRUCTORS.md)")
    c.add_argument("--zh", action="store_true")
    c.add_argument("--ip", default="127.0.0.1", help="127.0.0.1 (default) or lan")
    c.add_argument("--room", default="20")
    c.add_argument("--port", default="8866")
    c.set_defaults(run=classroom)
    c = sub.add_parser("site", help="build the course website (both languages) into build/site/")
    c.set_defaults(run=site)
    c = sub.add_parser("site-serve", help="serve build/site/ on 127.0.0.1")
    c.add_argument("--port", type=_port, default=8000, help="default 8000")
    c.set_defaults(run=site_serve)
    c = sub.add_parser("execute", help="re-run notebooks and store their outputs")
    c.add_argument("notebooks", nargs="*")
    c.set_defaults(run=execute)
    return p


def _jobs(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be a whole number of workers, 1 or more, not {text!r}")
    return int(text)


def _ms_version(text):
    parts = text.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a MindSpore version: give one like 2.9.0 (tested: "
                                         f"{' '.join(MATRIX_VERSIONS)})")
    return text


def main(argv=None):
    os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ logs quiet, in every process started from here
    args = parser().parse_args(argv)
    try:
        args.run(args)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
