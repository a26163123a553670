"""The JSON Schema that admission checks a result file against.

The published schema is ``yoxla/schema/result.schema.json``, shipped in the package.
Counts are non-negative integers and scores finite numbers; NaN and infinities are rejected
by the JSON parser before the schema is consulted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
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


# A fast check for the keywords the result schema uses. ``jsonschema`` walks 1,443
# predictions per file at ~100 ms; the compiled check takes a few ms. It only ever says
# "valid" or "look closer": any doubt (a failed check, or a keyword it does not know) goes
# to jsonschema, which gives the verdict and the message. So it can never admit more.

_ANNOTATIONS = {"description", "title", "$id", "$schema", "$defs", "$comment", "examples", "default"}
_SUPPORTED = {
    "$ref", "additionalProperties", "anyOf", "const", "enum", "items", "maximum", "minimum",
    "minLength", "minProperties", "pattern", "properties", "propertyNames", "required", "type",
}  # fmt: skip
Check = Callable[[Any], bool]


class _Unsupported(Exception):
    pass


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "number":
        return isinstance(value, int | float)
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise _Unsupported(name)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _compile(node: Any, root: dict[str, Any], memo: dict[str, Check]) -> Check:
    if node is True:
        return lambda v: True
    if node is False:
        return lambda v: False
    if not isinstance(node, dict):
        raise _Unsupported(repr(node))
    unknown = set(node) - _SUPPORTED - _ANNOTATIONS
    if unknown:
        raise _Unsupported(", ".join(sorted(unknown)))
    checks: list[Check] = []
    if "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/$defs/"):
            raise _Unsupported(ref)
        name = ref.removeprefix("#/$defs/")
        if name not in memo:
            memo[name] = lambda v: True  # placeholder for recursion
            target = _compile(root["$defs"][name], root, memo)
            memo[name] = target
        checks.append(lambda v, n=name: memo[n](v))
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        for t in types:
            _is_type(None, t)  # raises on an unknown type name
        checks.append(lambda v, ts=tuple(types): any(_is_type(v, t) for t in ts))
    if "const" in node:
        checks.append(lambda v, c=node["const"]: _same(v, c))
    if "enum" in node:
        checks.append(lambda v, e=tuple(node["enum"]): any(_same(v, x) for x in e))
    if "minimum" in node:
        checks.append(lambda v, m=node["minimum"]: not _is_type(v, "number") or v >= m)
    if "maximum" in node:
        checks.append(lambda v, m=node["maximum"]: not _is_type(v, "number") or v <= m)
    if "minLength" in node:
        checks.append(lambda v, m=node["minLength"]: not isinstance(v, str) or len(v) >= m)
    if "pattern" in node:
        rx = re.compile(node["pattern"])
        checks.append(lambda v, r=rx: not isinstance(v, str) or r.search(v) is not None)
    if "anyOf" in node:
        subs = [_compile(x, root, memo) for x in node["anyOf"]]
        checks.append(lambda v, ss=tuple(subs): any(c(v) for c in ss))
    if "items" in node:
        item = _compile(node["items"], root, memo)
        checks.append(lambda v, c=item: not isinstance(v, list) or all(c(x) for x in v))
    if "required" in node:
        req = tuple(node["required"])
        checks.append(lambda v, r=req: not isinstance(v, dict) or all(k in v for k in r))
    if "minProperties" in node:
        checks.append(lambda v, m=node["minProperties"]: not isinstance(v, dict) or len(v) >= m)
    if "propertyNames" in node:
        names = _compile(node["propertyNames"], root, memo)
        checks.append(lambda v, c=names: not isinstance(v, dict) or all(c(k) for k in v))
    props = {k: _compile(x, root, memo) for k, x in (node.get("properties") or {}).items()}
    if props or "additionalProperties" in node:
        extra = _compile(node.get("additionalProperties", True), root, memo)

        def obj(v: Any, props: dict[str, Check] = props, extra: Check = extra) -> bool:
            if not isinstance(v, dict):
                return True
            for k, x in v.items():
                c = props.get(k)
                if not (c(x) if c is not None else extra(x)):
                    return False
            return True

        checks.append(obj)
    return lambda v, cs=tuple(checks): all(c(v) for c in cs)


@cache
def fast_check() -> Check | None:
    schema, _ = load_schema()
    try:
        return _compile(schema, schema, {})
    except _Unsupported:
        return None


def schema_errors(doc: Any, limit: int = 5) -> list[str]:
    """Plain-words schema violations, at most ``limit`` (the first few are enough to act on)."""
    quick = fast_check()
    if quick is not None and quick(doc):
        return []
    out: list[str] = []
    for err in validator().iter_errors(doc):
        where = ".".join(str(p) for p in err.absolute_path) or "the top level"
        out.append(f"does not match the result format's JSON Schema at {where}: {err.message}")
        if len(out) >= limit:
            break
    return out
