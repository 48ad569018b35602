"""tfgen: generate readable, correct, fast TensorFlow custom training loops from a YAML spec."""

__version__ = "0.1.0"
