"""From a valid spec to files: the decisions, the typed view, the templates, rendering,
the checks every generated file passes, and writing them all or none."""
