"""Reading a spec: its pydantic models, the YAML loader with node positions, `extends`
and `--set`, located validation, the Keras catalog and the JSON Schema."""
