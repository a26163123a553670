"""The frozen task contracts, read from the bundled suite file.

Everything that defines *what is asked and how it is judged* lives in ``suite/yoxla.yaml``.
This module only parses it into typed records, hashes it, and renders prompts.

Hashes are taken over canonical JSON of the *parsed* content, so reformatting the YAML
changes nothing while any change of meaning changes the hash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from typing import Any

import yaml

from yoxla.canonical import canonical_json, sha256_text
from yoxla.suites.errors import SuiteError

MODES = ("choice", "numeric", "text", "text_or_abstain")
EVALUATORS = ("classification", "span", "abstention", "correlation")
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True)
class Label:
    value: str
    description: str


@dataclass(frozen=True)
class AnswerSpace:
    mode: str
    labels: tuple[Label, ...] = ()
    options_field: str | None = None
    options_description: str | None = None
    abstain: Label | None = None
    range: tuple[float, float] | None = None
    rubric: tuple[tuple[float, str], ...] = ()

    @cached_property
    def label_values(self) -> tuple[str, ...]:
        return tuple(label.value for label in self.labels)

    def values_for(self, row: dict[str, Any] | None) -> tuple[str, ...]:
        """All valid answers for one row (numbered options depend on the row's list length)."""
        if not self.options_field:
            return self.label_values
        options = row.get(self.options_field) if row is not None else None
        n = len(options) if isinstance(options, list) else 0
        return _numbers(n) + self.label_values


@cache
def _numbers(n: int) -> tuple[str, ...]:
    """``("1", …, "n")``: the valid answers of n numbered options."""
    return tuple(str(i) for i in range(1, n + 1))


@dataclass(frozen=True)
class Generation:
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    thinking: bool = False


@dataclass(frozen=True)
class Task:
    id: str
    block: str
    title: str
    summary: str
    config: str
    rows: int
    id_field: str
    inputs: tuple[str, ...]
    list_inputs: tuple[str, ...]
    gold: str
    metadata: tuple[str, ...]
    breakdown: str | None
    prompt_version: int
    system_template: str
    user_template: str
    answer: AnswerSpace
    generation: Generation
    evaluator: str
    primary: str
    diagnostics: tuple[str, ...]
    raw: dict[str, Any] = field(repr=False, compare=False, hash=False, default_factory=dict)

    @cached_property
    def contract_hash(self) -> str:
        return sha256_text(canonical_json(self.raw))

    @property
    def columns(self) -> tuple[str, ...]:
        cols = [self.id_field, *self.inputs, self.gold, *self.metadata]
        return tuple(dict.fromkeys(cols))

    # Prompt rendering ---------------------------------------------------------
    def render_answer_space(self) -> str:
        a = self.answer
        lines: list[str] = []
        if a.options_field and a.options_description:
            lines.append(f"- {a.options_description}")
        lines.extend(f"- {label.value}: {label.description}" for label in a.labels)
        if a.abstain is not None:
            lines.append(f"- {a.abstain.value}: {a.abstain.description}")
        lines.extend(f"- {_fmt_level(level)}: {desc}" for level, desc in a.rubric)
        return "\n".join(lines)

    @cached_property
    def system_prompt(self) -> str:
        space = self.render_answer_space()
        if not space:  # span tasks list no answers: drop the placeholder's line
            return re.sub(r"\n?\{answer_space\}", "", self.system_template)
        return self.system_template.replace("{answer_space}", space)

    @cached_property
    def prompt_hash(self) -> str:
        return sha256_text(self.system_prompt)

    def render_user(self, row: dict[str, Any]) -> str:
        def value(name: str) -> str:
            v = row[name]
            if v is None:
                raise ValueError(f"input field {name} is null")
            if name in self.list_inputs:
                return "\n".join(f"{i}. {item}" for i, item in enumerate(v, start=1))
            return str(v)

        return _PLACEHOLDER.sub(lambda m: value(m.group(1)), self.user_template)

    def messages(self, row: dict[str, Any]) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": self.render_user(row)},
        ]


def _fmt_level(level: float) -> str:
    return str(int(level)) if float(level).is_integer() else str(level)


@dataclass(frozen=True)
class Suite:
    name: str
    version: str
    dataset_repo: str
    split: str
    blocks: tuple[str, ...]
    block_names: dict[str, str]
    tasks: dict[str, Task]
    raw: dict[str, Any] = field(repr=False, compare=False, hash=False, default_factory=dict)

    @property
    def suite_hash(self) -> str:
        return sha256_text(canonical_json(self.raw))

    def task(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            known = ", ".join(sorted(self.tasks))
            raise SuiteError(f"unknown task {task_id!r}; known tasks: {known}") from None

    def block_tasks(self, block: str, task_ids: list[str] | None = None) -> list[Task]:
        ids = task_ids if task_ids is not None else list(self.tasks)
        return [self.tasks[t] for t in ids if self.tasks[t].block == block]


def _req(entry: dict[str, Any], key: str, where: str) -> Any:
    if key not in entry:
        raise SuiteError(f"{where}: missing key {key!r}")
    return entry[key]


def _parse_task(entry: dict[str, Any], blocks: tuple[str, ...]) -> Task:
    tid = _req(entry, "id", "task entry")
    where = f"task {tid}"
    block = _req(entry, "block", where)
    if block not in blocks:
        raise SuiteError(f"{where}: unknown block {block!r}")
    prompt = _req(entry, "prompt", where)
    ans = _req(entry, "answer", where)
    mode = _req(ans, "mode", where)
    if mode not in MODES:
        raise SuiteError(f"{where}: unknown answer mode {mode!r}")
    labels = tuple(Label(str(x["value"]), x["description"]) for x in ans.get("labels") or [])
    abstain = ans.get("abstain")
    rng = ans.get("range")
    answer = AnswerSpace(
        mode=mode,
        labels=labels,
        options_field=ans.get("options_field"),
        options_description=ans.get("options_description"),
        abstain=Label(abstain["value"], abstain["description"]) if abstain else None,
        range=(float(rng["min"]), float(rng["max"])) if rng else None,
        rubric=tuple((float(r["level"]), r["description"]) for r in ans.get("rubric") or []),
    )
    if mode == "choice" and not (labels or answer.options_field):
        raise SuiteError(f"{where}: a choice task needs labels or options_field")
    if mode == "numeric" and answer.range is None:
        raise SuiteError(f"{where}: a numeric task needs a range")
    if mode == "text_or_abstain" and answer.abstain is None:
        raise SuiteError(f"{where}: a text_or_abstain task needs an abstain value")
    gen = _req(entry, "generation", where)
    evaluator = _req(entry, "evaluator", where)
    if evaluator not in EVALUATORS:
        raise SuiteError(f"{where}: unknown evaluator {evaluator!r}")
    inputs = tuple(_req(entry, "inputs", where))
    user_template = _req(prompt, "user", where)
    for name in _PLACEHOLDER.findall(user_template):
        if name not in inputs:
            raise SuiteError(f"{where}: user template uses {{{name}}} which is not an input field")
    system = _req(prompt, "system", where)
    if system.count("{answer_space}") != 1:
        raise SuiteError(f"{where}: system prompt must contain {{answer_space}} exactly once")
    return Task(
        id=tid,
        block=block,
        title=entry.get("title", tid),
        summary=entry.get("summary", ""),
        config=entry.get("config", tid),
        rows=int(_req(entry, "rows", where)),
        id_field=entry.get("id_field", "id"),
        inputs=inputs,
        list_inputs=tuple(entry.get("list_inputs") or ()),
        gold=_req(entry, "gold", where),
        metadata=tuple(entry.get("metadata") or ()),
        breakdown=entry.get("breakdown"),
        prompt_version=int(prompt.get("version", 1)),
        system_template=system,
        user_template=user_template,
        answer=answer,
        generation=Generation(
            max_tokens=int(gen["max_tokens"]),
            temperature=float(gen.get("temperature", 0)),
            top_p=float(gen.get("top_p", 1)),
            thinking=bool(gen.get("thinking", False)),
        ),
        evaluator=evaluator,
        primary=_req(entry, "primary", where),
        diagnostics=tuple(entry.get("diagnostics") or ()),
        raw=entry,
    )


def parse_suite(data: dict[str, Any]) -> Suite:
    blocks = tuple(b["id"] for b in data["blocks"])
    tasks: dict[str, Task] = {}
    for entry in data["tasks"]:
        task = _parse_task(entry, blocks)
        if task.id in tasks:
            raise SuiteError(f"task {task.id}: declared twice")
        tasks[task.id] = task
    return Suite(
        name=data["suite"],
        version=str(data["suite_version"]),
        dataset_repo=data["dataset_repo"],
        split=data.get("split", "test"),
        blocks=blocks,
        block_names={b["id"]: b.get("name", b["id"]) for b in data["blocks"]},
        tasks=tasks,
        raw=data,
    )


@cache
def load_suite() -> Suite:
    text = resources.files("yoxla").joinpath("suite/yoxla.yaml").read_text(encoding="utf-8")
    return parse_suite(yaml.safe_load(text))
