"""The speed bench: every figure with a goal, measured in one run (``python -m bench``)."""
