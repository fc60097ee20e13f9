"""The reference solutions of every exercise, one file per notebook (``nb03.py`` for 03).

They are not in the notebooks: a learner sees one only by calling ``.solution()`` on the exercise, the
instructor edition (``make instructor``) shows them inline, and the test suite runs each one after its
exercise cell (tests/plugins/two_pass.py), so a solution that stops passing its check fails the build.

A file is a sequence of sections, each headed ``# %% <key>``, the exercise's attribute name in its checks
module (``# %% train_loop`` for ``nb03.train_loop``); the section's code is what the solution cell runs, in the
notebook's namespace, and ends by checking its answer. A prediction has no section: its solution is generated
from its answer (:meth:`course_utils.exercises.Prediction.solution_code`).
"""

import importlib
import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = re.compile(r"^# %% (\w+)\s*$", re.M)
ASKED = ("exercise", "prediction")  # tags of the cells whose answer a learner writes
SOLUTION_TAG = "solution"
CHECK_CALL = re.compile(r"\b(nb\d\d\.\w+)\.check\(")


def sections(number):
    """``{key: code}`` of notebook ``number`` ("03"), in file order; {} if it has no file."""
    if not (isinstance(number, str) and re.fullmatch(r"\d\d", number)):
        raise ValueError(f"number must be a notebook number such as '03', got {number!r}")
    folder = Path(os.environ.get("COURSE_SOLUTIONS_DIR") or HERE)  # another folder: for testing the mechanism
    path = folder / f"nb{number}.py"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    heads = list(HEADER.finditer(text))
    return {head.group(1): text[head.end():nxt.start() if nxt else len(text)].strip("\n") + "\n"
            for head, nxt in zip(heads, heads[1:] + [None])}


def code(exercise):
    """The code of the reference solution of ``exercise`` (an object of course_utils.checks.nbNN)."""
    if hasattr(exercise, "solution_code"):
        return exercise.solution_code()
    if exercise.notebook is None:
        raise LookupError(f"{exercise!r} belongs to no notebook (bind() numbers a checks module's exercises)")
    found = sections(exercise.notebook).get(exercise.key)
    if found is None:
        raise LookupError(f"course_utils/solutions/nb{exercise.notebook}.py has no section '# %% {exercise.key}'")
    return found


def source(exercise):
    """What ``.solution()`` shows: :func:`code` without its trailing newline."""
    return code(exercise).rstrip("\n")


def exercise(expression):
    """The exercise object named by ``"nb03.train_loop"``."""
    match = re.fullmatch(r"nb(\d\d)\.(\w+)", expression)
    if not match:
        raise LookupError(f"exercises are named like 'nb03.train_loop', got {expression!r}")
    module = importlib.import_module(f"course_utils.checks.nb{match.group(1)}")
    found = getattr(module, match.group(2), None)
    if found is None or getattr(found, "key", None) != match.group(2):
        raise LookupError(f"course_utils/checks/nb{match.group(1)}.py defines no exercise {match.group(2)}")
    return found


def asked_expression(cell):
    """``"nb03.learning_rate"`` for an exercise or prediction cell, else None."""
    if cell.cell_type != "code" or not set(cell.metadata.get("tags", [])) & set(ASKED):
        return None
    match = CHECK_CALL.search(cell.source)
    if not match:
        raise ValueError(f"an exercise/prediction cell must call nbNN.<name>.check(...): {cell.source[:80]!r}")
    return match.group(1)


def code_for(expression):
    """The solution code of the exercise a notebook calls ``expression`` ("nb03.train_loop"): its section, or
    for a prediction the generated cell."""
    match = re.fullmatch(r"nb(\d\d)\.(\w+)", expression)
    if not match:
        raise LookupError(f"exercises are named like 'nb03.train_loop', got {expression!r}")
    found = sections(match.group(1)).get(match.group(2))
    return found if found is not None else code(exercise(expression))


def solution_cells(nb):
    """``[(index of the asked cell, solution code cell)]`` of a notebook (an nbformat notebook)."""
    import nbformat

    out = []
    for i, cell in enumerate(nb.cells):
        expression = asked_expression(cell)
        if expression is not None:
            text = code_for(expression).rstrip("\n")
            out.append((i, nbformat.v4.new_code_cell(text, metadata={"tags": [SOLUTION_TAG]})))
    return out
