"""The capstone as a small training project: configuration, data, model and a training script.

    python -m capstone.train --ckpt-dir runs/first            # default configuration
    python -m capstone.train --config my.yaml --ckpt-dir DIR  # your own

This is notebook 16's solution, laid out the way a team would keep it (article 000, section 8.1).
"""
