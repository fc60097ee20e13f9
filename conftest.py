"""The suite's pytest plugins (tests/plugins/, on the path through pyproject's ``pythonpath``):

* ``two_pass``: each lesson notebook runs in one kernel in two passes under strict nbval, the student's notebook
  and then the instructor edition of its Chinese edition (every reference solution must pass its check);
* ``suite_guards``: markers, the longest-first schedule, each notebook's time and the "checked nothing"
  guard, and the check that a run writes nothing into the repository.
"""

pytest_plugins = ["two_pass", "suite_guards"]
