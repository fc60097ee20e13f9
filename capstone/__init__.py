"""The capstone as a small training project: configuration, data, model, figure and a training script.

    python -m capstone.train --ckpt-dir runs/first               # default configuration
    python -m capstone.train --config my.yaml --ckpt-dir DIR     # your own
    python -m capstone.train --resume DIR                        # continue an interrupted run exactly
    python -m capstone.train --ckpt-dir DIR --workers 2          # data-parallel with msrun
    python -m capstone.train --rubric                            # the challenge's rules

Notebook 16 builds the same pieces; its section "From notebook to project" maps each onto these files.
"""
