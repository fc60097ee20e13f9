"""The exercises of each notebook, one module per notebook (``nb03`` belongs to ``03_*.ipynb``).

Each checker is independent of the code the notebook teaches: it compares a learner's answer with an
oracle (numpy, closed-form formulas) and says what is wrong in words a learner can act on.
"""
