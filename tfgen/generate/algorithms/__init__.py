"""The step algorithms' planning, one module an algorithm; registry.py: PLANS, one line an
algorithm (docs/algorithms.md: how to add one)."""
