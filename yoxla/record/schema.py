"""The published JSON Schema of the result file, generated from :mod:`yoxla.record.result`.

Admission validates with the typed record itself (pydantic); the schema file is for other
tools. ``python -m yoxla.record.result`` rewrites it, and a test fails when the committed file and
the generated schema differ.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def published_schema_text() -> str:
    return resources.files("yoxla").joinpath("schema", "result.schema.json").read_text(encoding="utf-8")


def published_schema() -> dict[str, Any]:
    return dict(json.loads(published_schema_text()))
