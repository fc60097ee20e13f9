"""Re-execute notebooks in a fresh kernel and store their outputs deterministically.

    python tools/execute_notebooks.py notebooks/*.ipynb          # execute and store
    python tools/execute_notebooks.py --check notebooks/*.ipynb  # execute, store nothing, report drift

Run twice with no change, it leaves every notebook byte-identical: no timing metadata
(``record_timing=False``), stream chunks merged (how stdout is split into messages depends on timing),
no widget state or widget views (their model ids are random), no path of this machine in a stored
traceback (site-packages, the course folder, temporary folders become placeholders). Cells tagged
``nbval-ignore-output`` hold run-dependent outputs (timings): their stored outputs are kept as long as the
cell's source is unchanged, unless ``--refresh-run-dependent`` is given.
"""

import argparse
import copy
import os
import re
import sys
import sysconfig
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
RUN_DEPENDENT_TAG = "nbval-ignore-output"
HOME = os.path.expanduser("~")


def _folder(path, placeholder):
    """A pattern for ``path`` as written out or as IPython shortens it under the home folder ("~/...")."""
    forms = [re.escape(str(path))]
    if str(path).startswith(HOME + "/"):
        forms.append(re.escape("~" + str(path)[len(HOME):]))
    return re.compile("(?:" + "|".join(forms) + ")/"), placeholder + "/"


# Paths of this machine in a traceback, most specific first: (pattern, placeholder).
MACHINE_PATHS = ((re.compile(r"[^\s\"'(]*/site-packages/"), "<site-packages>/"),
                 _folder(ROOT, "<course>"),
                 (re.compile(r"/tmp/[^\s\"')]+"), "<tmpdir>"),
                 _folder(sysconfig.get_paths()["stdlib"], "<stdlib>"),
                 _folder(HOME, "~"))


def path_free(text):
    """``text`` with the paths of this machine replaced by placeholders."""
    for pattern, placeholder in MACHINE_PATHS:
        text = pattern.sub(placeholder, text)
    return text
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def merge_streams(outputs):
    merged = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1]["name"] == out["name"]):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def normalise(nb):
    """Strip everything run-dependent that is not part of what a cell shows."""
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("jupytext", None)  # authoring metadata, if a notebook was made from a .py file
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    language = nb.metadata.get("language_info", {})
    if "version" in language:  # the patch level differs between machines: keep major.minor
        language["version"] = ".".join(language["version"].split(".")[:2])
    for cell in nb.cells:
        for key in ("execution", "ExecuteTime", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        cell.outputs = merge_streams(cell.outputs)
        for out in cell.outputs:
            data = out.get("data")
            if data and WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
            if out.get("output_type") == "error":  # nbval does not compare tracebacks; learners read them
                out["traceback"] = [path_free(line) for line in out["traceback"]]
    return nb


def keep_run_dependent(new_nb, old_nb):
    """Keep stored outputs of run-dependent cells whose source did not change."""
    old = {c.source: c for c in old_nb.cells if c.cell_type == "code"
           and RUN_DEPENDENT_TAG in c.metadata.get("tags", [])}
    for cell in new_nb.cells:
        prev = old.get(cell.source)
        if cell.cell_type == "code" and prev is not None and RUN_DEPENDENT_TAG in cell.metadata.get("tags", []):
            if prev.outputs and all(o.get("output_type") != "error" for o in cell.outputs):
                cell.outputs = copy.deepcopy(prev.outputs)


def execute(path, refresh_run_dependent=False, timeout=900):
    path = Path(path)
    original_text = path.read_text(encoding="utf-8")
    old_nb = nbformat.reads(original_text, as_version=4)
    nb = copy.deepcopy(old_nb)
    env_glog = os.environ.setdefault("GLOG_v", "3")
    assert env_glog == "3", "GLOG_v must be 3 so that MindSpore log lines stay out of stored outputs"
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    client.execute()
    normalise(nb)
    if not refresh_run_dependent:
        keep_run_dependent(nb, old_nb)
    return original_text, nbformat.writes(nb) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="store nothing; exit 1 if any notebook would change")
    parser.add_argument("--refresh-run-dependent", action="store_true",
                        help="also replace the stored outputs of cells tagged nbval-ignore-output")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.notebooks if not p.is_file() or p.suffix != ".ipynb"]
    if missing:
        parser.error(f"not notebook files: {', '.join(missing)}")
    drift = []
    for path in args.notebooks:
        print(f"executing {path} ...", flush=True)
        before, after = execute(path, args.refresh_run_dependent)
        if before != after:
            drift.append(path)
            if not args.check:
                path.write_text(after, encoding="utf-8")
    verb = "would change" if args.check else "changed"
    print(f"{len(drift)} of {len(args.notebooks)} notebook(s) {verb}: {', '.join(map(str, drift)) or '-'}")
    return 1 if (args.check and drift) else 0


if __name__ == "__main__":
    sys.exit(main())
