"""A built-in YOXLA task written as a manifest task, where the manifest format can say it.

:func:`builtin_task_entry` turns a frozen task of ``yoxla/suite/yoxla.yaml`` into a manifest
task (instructions = the task's rendered system prompt, prompt template = its user template,
``strict`` extraction over its answer space, the built-in graders of its evaluator), reading
the bundled ``sample`` rows. A row-dependent space (numbered options from a row field, plus
fixed labels) is a YOXLA ``answer_space`` and its list renders with ``{{field | numbered}}``;
STS scores each example with the ``spearman`` grader's ``closeness`` and ``correct_within``.
``suites/yoxla/sample_parity.yaml`` is its output for all eleven tasks
(:data:`PARITY_TASKS`), with the four blocks as ``groups`` and the YOXLA headline (mean of the
block scores); a parity test holds that they score identically to the built-in evaluators.

:func:`obstacles` says, per task, what the manifest format still cannot express.
"""

from __future__ import annotations

import re
from typing import Any

from yoxla.evaluators import STS_CORRECT_WITHIN
from yoxla.suite import Task

GRADERS: dict[str, list[dict[str, Any]]] = {
    "classification": [{"type": "builtin", "name": "accuracy"}, {"type": "builtin", "name": "macro_f1"}],
    "span": [{"type": "builtin", "name": "span"}],
    "abstention": [{"type": "builtin", "name": "abstention"}],
    "correlation": [{"type": "builtin", "name": "spearman"}],
}


class NotExpressible(ValueError):
    """The task uses something the manifest format cannot say (the message lists what)."""


def obstacles(task: Task) -> list[str]:
    """What keeps this built-in task from being an equivalent manifest task ([] = nothing)."""
    out = []
    if task.generation.thinking:
        out.append("it asks for reasoning, which has no provider-neutral manifest field")
    return out


def _template(task: Task) -> str:
    """The user template with ``{{field}}`` references (list inputs as numbered lines)."""

    def field(m: re.Match[str]) -> str:
        name = m.group(1)
        return "{{" + name + (" | numbered" if name in task.list_inputs else "") + "}}"

    return re.sub(r"\{([a-z_][a-z0-9_]*)\}", field, task.user_template)


def builtin_task_entry(task: Task, data_path: str, *, check: bool = True) -> dict[str, Any]:
    """The manifest entry for ``task`` reading rows from ``data_path``; NotExpressible otherwise.

    ``check=False`` writes the entry even where :func:`obstacles` names something the format
    cannot say (today only reasoning, which no benchmark task asks for).
    """
    problems = obstacles(task)
    if problems and check:
        raise NotExpressible(f"{task.id}: " + "; ".join(problems))
    a = task.answer
    extraction: dict[str, Any] = {"type": "strict", "mode": a.mode}
    if a.mode == "numeric":
        assert a.range is not None
        extraction["range"] = [a.range[0], a.range[1]]
    if a.abstain is not None:
        extraction["abstain"] = a.abstain.value
    graders = [dict(g) for g in GRADERS[task.evaluator]]
    if task.evaluator in ("span", "abstention"):
        graders[0].update(passage_field=task.inputs[0], answer_start_field="answer_start")
    if task.evaluator == "correlation":
        graders[0].update(closeness=True, correct_within=STS_CORRECT_WITHIN)
    metrics = [{"id": task.primary}]
    metrics += [{"id": d} for d in task.diagnostics if d in ("macro_f1", "span_precision", "token_f1")]
    entry: dict[str, Any] = {
        "id": task.id,
        "name": task.title,
        "type": {"classification": "classification", "correlation": "semantic_similarity"}.get(
            task.evaluator, "qa"
        ),
        "dataset": {"path": data_path},
        "prompt_template": _template(task),
        "target_template": "{{" + task.gold + "}}",
    }
    if a.options_field:
        space: dict[str, Any] = {"options_field": a.options_field}
        if a.options_description:
            space["options_description"] = a.options_description
        space["labels"] = [{"value": x.value, "description": x.description} for x in a.labels]
        entry["answer_space"] = space
    elif a.mode == "choice":
        entry["choices"] = list(a.label_values)
    entry.update(
        output_extraction=extraction,
        metrics=metrics,
        grader=graders,
        generation={
            "instructions": task.system_prompt,
            "temperature": task.generation.temperature,
            "top_p": task.generation.top_p,
            "max_output_tokens": task.generation.max_tokens,
        },
        metadata={
            "block": task.block,
            "contract_hash": task.contract_hash,
            **({"breakdowns": task.breakdown} if task.breakdown else {}),
        },
    )
    return entry


PARITY_TASKS = (
    "extractive_qa_v1",
    "qa_abstention_v1",
    "nli_v1",
    "sentiment_v1",
    "intent_v1",
    "minimal_pairs_v1",
    "az_tr_interference_v1",
    "rag_verification_v1",
    "knowledge_choice_v1",
    "rag_selection_v1",
    "sts_v1",
)


def parity_manifest() -> dict[str, Any]:
    """The manifest of ``suites/yoxla/sample_parity.yaml`` (built-in tasks on the sample rows)."""
    from yoxla.suite import load_suite

    suite = load_suite()
    return {
        "schema_version": "2026-05-27",
        "metadata": {
            "name": "yoxla-sample-parity",
            "description": "Built-in YOXLA tasks written as manifest tasks, on the bundled sample rows",
        },
        "tasks": [
            builtin_task_entry(suite.task(t), f"../../yoxla/editions/sample/{t}/test.jsonl")
            for t in PARITY_TASKS
        ],
        "groups": [
            {
                "id": b,
                "name": suite.block_names[b],
                "tasks": [t for t in PARITY_TASKS if suite.task(t).block == b],
            }
            for b in suite.blocks
        ],
        "headline": {"name": "YOXLA", "rule": "mean_of_groups"},
    }


if __name__ == "__main__":  # python -m yoxla.suites.bridge: rewrite the parity manifest
    from pathlib import Path

    import yaml

    target = Path(__file__).resolve().parents[2] / "suites" / "yoxla" / "sample_parity.yaml"
    header = "# Generated by `python -m yoxla.suites.bridge` from yoxla/suite/yoxla.yaml; do not edit.\n"

    class _Dumper(yaml.SafeDumper):
        pass

    def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _text)
    text = yaml.dump(parity_manifest(), Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(header + text, encoding="utf-8")
    print(f"wrote {target}")
