"""Beyond one machine: `tfgen launch`, `tf-config` and `manifest` (no TensorFlow)."""
