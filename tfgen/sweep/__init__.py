"""`tfgen sweep`: hyperparameter search over a spec, one ordinary tfgen run per trial (docs/sweeps.md)."""
