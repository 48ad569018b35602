"""A step module for custom_step_function_missing.yaml: it defines another function than the one named."""


def other_step(networks, features, targets, ctx):
    return {}
