"""The reference solutions of every exercise and prediction, one file per notebook (``nb03.py`` for 03).

They are not in the notebooks: a learner sees one only by calling ``.solution()`` on the exercise, the
instructor edition (``make instructor``) shows them inline, and the test suite runs each one after its
exercise cell (conftest.py), so a solution that stops passing its check fails the build.

A file is a sequence of sections, each headed ``# %% <name> <expression>``: the exercise's name ("03.1")
and the expression a learner calls ``.check`` on ("nb03.learning_rate"); the section's code is what the
solution cell runs, in the notebook's namespace.
"""

import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = re.compile(r"^# %% (\d\d\.\d+) (nb\d\d\.\w+)\s*$", re.M)


def sections(number):
    """``{name: (expression, code)}`` of notebook ``number`` ("03"), in file order; {} if it has no file."""
    if not (isinstance(number, str) and re.fullmatch(r"\d\d", number)):
        raise ValueError(f"number must be a notebook number such as '03', got {number!r}")
    folder = Path(os.environ.get("COURSE_SOLUTIONS_DIR") or HERE)  # another folder: for testing the mechanism
    path = folder / f"nb{number}.py"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    heads = list(HEADER.finditer(text))
    out = {}
    for head, nxt in zip(heads, heads[1:] + [None]):
        code = text[head.end():nxt.start() if nxt else len(text)].strip("\n")
        out[head.group(1)] = (head.group(2), code + "\n")
    return out


def source(name):
    """The code of the reference solution of exercise ``name`` ("03.1")."""
    if not (isinstance(name, str) and re.fullmatch(r"\d\d\.\d+", name)):
        raise LookupError(f"exercise names look like '03.1', got {name!r}")
    found = sections(name[:2]).get(name)
    if found is None:
        raise LookupError(f"course_utils/solutions/nb{name[:2]}.py has no section for {name}")
    return found[1].rstrip("\n")


def for_expression(number, expression):
    """The solution code whose section is headed with ``expression`` ("nb03.learning_rate"), or None."""
    for _name, (expr, code) in sections(number).items():
        if expr == expression:
            return code
    return None
