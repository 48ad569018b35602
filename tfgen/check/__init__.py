"""Checks that run spec code: `validate --deep`, `smoke`, and how user modules are found."""
