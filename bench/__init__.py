"""The speed bench: every figure issue 15 sets a goal for, measured in one run (``python -m bench``)."""
