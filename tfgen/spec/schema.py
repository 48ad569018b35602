"""The JSON Schema of the spec, for editors (`tfgen schema`)."""

from __future__ import annotations

import json

from tfgen.spec.models import Spec


def schema() -> dict:
    result = Spec.model_json_schema()
    result["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    result["title"] = "tfgen spec"
    return result


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"
