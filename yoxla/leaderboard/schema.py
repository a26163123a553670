"""The JSON Schema that admission checks a result file against.

The published schema is ``yoxla/schema/result.schema.json``, shipped in the package.
Counts are non-negative integers and scores finite numbers; NaN and infinities are rejected
by the JSON parser before the schema is consulted.

Two validators read the same schema: ``fastjsonschema`` compiles it to Python and answers
"valid" in a few milliseconds for a full v1 file (1,443 predictions); only a file it
rejects goes to ``jsonschema``, which gives every violation in plain words. Tests check
that both reject the broken copies of a committed file.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


def published_schema_text() -> str:
    return resources.files("yoxla").joinpath("schema", "result.schema.json").read_text(encoding="utf-8")


@cache
def load_schema() -> tuple[dict[str, Any], str]:
    """(schema, where it came from): the published file shipped in the package."""
    return json.loads(published_schema_text()), "yoxla/schema/result.schema.json"


@cache
def validator() -> Any:
    import jsonschema

    schema, _ = load_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@cache
def fast_validator() -> Any:
    import fastjsonschema

    schema, _ = load_schema()
    return fastjsonschema.compile(schema)


def schema_errors(doc: Any, limit: int = 5) -> list[str]:
    """Plain-words schema violations, at most ``limit`` (the first few are enough to act on)."""
    import fastjsonschema

    try:
        fast_validator()(doc)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    out: list[str] = []
    for err in validator().iter_errors(doc):
        where = ".".join(str(p) for p in err.absolute_path) or "the top level"
        out.append(f"does not match the result format's JSON Schema at {where}: {err.message}")
        if len(out) >= limit:
            break
    return out
