"""A tiny linear template renderer: field references, nothing else.

The forms (``{{field}}``, ``{{nested.field}}``, ``{{row}}``, ``{{choices}}``, ``{{choice_list}}``,
YOXLA's ``{{field | numbered}}`` and ``{{answer_space}}``) and how values render are tabled in
docs/suites.md, *Templates*. Anything else between ``{{`` and ``}}`` (other filters, expressions,
Jinja statements ``{% %}``) is refused when the manifest is loaded: templates are not a
programming language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from yoxla.contract.errors import TemplateError

_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_STATEMENT = re.compile(r"\{%.*?%\}", re.DOTALL)
_PATH = re.compile(r"^\s*([\w\-]+(?:\.[\w\-]+)*)\s*(\|\s*numbered\s*)?$")
SPECIAL = ("row", "choices", "choice_list")
_FORMS = "({{field}}, {{nested.field}}, {{field | numbered}}, {{row}}, {{choices}}, {{choice_list}})"

Path = tuple[str, ...]
MAX_RENDERED = 1_000_000  # characters of one rendered text (a prompt with its few-shot examples)


def too_long(size: int, limit: int) -> str:
    return (
        f"renders more than {limit:,} characters (at least {size:,}); a rendered prompt "
        f"or target is at most {limit:,} characters"
    )


@dataclass(frozen=True)
class Numbered:
    """``{{path | numbered}}``: a list as ``1. item`` lines."""

    path: Path


def numbered(value: Any) -> str:
    """A list as numbered lines (``1. first``); anything else as :func:`render_value` shows it."""
    if not isinstance(value, list):
        return render_value(value)
    return "\n".join(f"{i}. {render_value(item)}" for i, item in enumerate(value, start=1))


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def render_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return to_json(value)


def lookup(row: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` in ``row`` (objects by key, lists by position), or None."""
    node = row
    for part in path:
        if isinstance(node, Mapping):
            if part not in node:
                return None
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text and field paths, in order."""

    text: str
    parts: tuple[str | Path | Numbered, ...]

    @classmethod
    def parse(cls, text: str, where: str = "template") -> Template:
        statement = _STATEMENT.search(text)
        if statement:
            raise TemplateError(
                f"{where}: {statement.group(0)[:60]!r} is a template statement; templates only insert "
                f"fields {_FORMS}"
            )
        parts: list[str | Path | Numbered] = []
        pos = 0
        for m in _TAG.finditer(text):
            if m.start() > pos:
                parts.append(text[pos : m.start()])
            path = _PATH.match(m.group(1))
            if path is None:
                raise TemplateError(
                    f"{where}: {m.group(0)[:60]!r} is not a field reference; templates only insert "
                    f"fields {_FORMS}"
                )
            fields = tuple(path.group(1).split("."))
            parts.append(Numbered(fields) if path.group(2) else fields)
            pos = m.end()
        if pos < len(text):
            parts.append(text[pos:])
        return cls(text, tuple(parts))

    @property
    def fields(self) -> tuple[Path, ...]:
        return tuple(p.path if isinstance(p, Numbered) else p for p in self.parts if not isinstance(p, str))

    def render(
        self,
        row: Mapping[str, Any],
        choices: Sequence[str] | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> str:
        """Render over ``row``; ``extra`` (e.g. prompt and target of a few-shot example) wins.

        TemplateError once the text passes MAX_RENDERED characters (rendering stops there)."""
        out: list[str] = []
        size = 0
        for part in self.parts:
            if isinstance(part, str):
                text = part
            elif isinstance(part, Numbered):
                text = numbered(lookup(row, part.path))
            else:
                text = self._value(part, row, choices, extra)
            size += len(text)
            if size > MAX_RENDERED:
                raise TemplateError(too_long(size, MAX_RENDERED))
            out.append(text)
        return "".join(out)

    @staticmethod
    def _value(
        path: Path, row: Mapping[str, Any], choices: Sequence[str] | None, extra: Mapping[str, str] | None
    ) -> str:
        head = path[0]
        if extra is not None and len(path) == 1 and head in extra:
            return extra[head]
        if head == "row":
            return to_json(dict(row)) if len(path) == 1 else render_value(lookup(row, path[1:]))
        if len(path) == 1 and head in ("choices", "choice_list"):
            # The task's choices; a task without them falls back to the row's own list.
            own = row.get("choices")
            source = choices if choices is not None else own if isinstance(own, list) else None
            if source is not None:
                return to_json(list(source)) if head == "choices" else "\n".join(map(render_value, source))
        return render_value(lookup(row, path))

    def missing_fields(self, rows: Sequence[Mapping[str, Any]], extra: Sequence[str] = ()) -> list[str]:
        """Field references that no row among ``rows`` has (probably a misspelt field)."""
        out = []
        for path in self.fields:
            if path[0] in SPECIAL or (len(path) == 1 and path[0] in extra):
                continue
            if rows and all(lookup(r, path) is None for r in rows):
                out.append(".".join(path))
        return out
