"""A built-in YOXLA task written as a manifest task, where the manifest format can say it.

:func:`builtin_task_entry` turns a frozen task of ``yoxla/suite/yoxla.yaml`` into a manifest
task (instructions = the task's rendered system prompt, prompt template = its user template,
``strict`` extraction over its answer space, the built-in graders of its evaluator), reading
the bundled ``sample`` rows. A row-dependent space (numbered options from a row field, plus
fixed labels) is a YOXLA ``answer_space`` and its list renders with ``{{field | numbered}}``;
STS scores each example with the ``spearman`` grader's ``closeness`` and ``correct_within``.
The frozen benchmark ships as two package suites, generated here (``python -m
yoxla.suites.bridge`` writes both and their frozen hash files, in ``yoxla/editions/``):
``yoxla-sample.yaml`` reads the bundled sample rows (paths relative to the manifest) and
``yoxla-v1.yaml`` the Hub dataset and revision of ``v1.json``. Their task contracts are
identical: all eleven tasks (:data:`PARITY_TASKS`), the four blocks as ``groups`` and the YOXLA
headline (mean of the block scores). Each task records its published ``contract_hash`` and
``prompt_hash`` in its metadata; every breakdown field the rows carry
(:data:`BREAKDOWN_FIELDS`) is declared in the ``analysis`` section, hashed apart from the tasks.
A parity test holds that ``yoxla-sample`` scores identically to the frozen benchmark's records.

:func:`obstacles` says, per task, what the manifest format still cannot express.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from yoxla.suite import Task
from yoxla.suites.registry import BENCHMARK_EDITIONS

# An STS answer within this many points of the gold is "correct" (its outcome; its score is the closeness).
STS_CORRECT_WITHIN = 1.0

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
            "prompt_hash": task.prompt_hash,
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

# Per task, the row columns (of yoxla/suite/yoxla.yaml's ``metadata``) that sort rows into a few
# named kinds, for per-value scores on the board. Left out: ids and sources (one value a row),
# copied words and entities, numbers (counts, scaled scores: the format has no bucketing; their
# buckets, where the data has one, are listed), lists, and copies of the gold answer.
BREAKDOWN_FIELDS: dict[str, tuple[str, ...]] = {
    "extractive_qa_v1": ("answer_type", "context_bucket"),
    "qa_abstention_v1": ("is_answerable", "expected_answer_type", "context_bucket"),
    "nli_v1": ("length_bucket",),
    "sentiment_v1": ("length_bucket",),
    "intent_v1": ("category", "length_bucket"),
    "minimal_pairs_v1": ("phenomenon", "domain", "difficulty"),
    "az_tr_interference_v1": ("interference_type",),
    "rag_verification_v1": ("claim_type",),
    "knowledge_choice_v1": ("category", "probe", "value_kind"),
    "rag_selection_v1": ("item_type", "category", "probe"),
    "sts_v1": ("score_band", "length_bucket"),
}

EDITIONS_DIR = Path(__file__).resolve().parents[1] / "editions"  # package data
BENCHMARKS = BENCHMARK_EDITIONS  # editions shipped as the package suites yoxla-<edition>
HEADER = "# Generated by `python -m yoxla.suites.bridge` from yoxla/suite/yoxla.yaml; do not edit.\n"


def manifest_path(edition: str) -> Path:
    """The package suite of an edition: ``yoxla/editions/yoxla-<edition>.yaml``."""
    return EDITIONS_DIR / f"yoxla-{edition}.yaml"


def _dataset(edition: str, task_id: str) -> dict[str, Any]:
    from yoxla.editions import load_edition
    from yoxla.suite import load_suite

    ed = load_edition(edition)
    config = ed.tasks[task_id].config
    if ed.bundled:  # the rows next to the manifest
        folder = ed.source.removeprefix("bundled:")
        return {"path": f"{folder}/{config}/{load_suite().split}.jsonl"}
    out: dict[str, Any] = {"path": ed.source, "name": config, "split": load_suite().split}
    if ed.revision:
        out["revision"] = ed.revision
    return out


def benchmark_manifest(edition: str) -> dict[str, Any]:
    """The manifest of the package suite ``yoxla-<edition>`` (the built-in tasks on its rows)."""
    from yoxla.editions import load_edition
    from yoxla.suite import load_suite

    suite, ed = load_suite(), load_edition(edition)
    tasks = []
    for t in PARITY_TASKS:
        entry = builtin_task_entry(suite.task(t), "")
        entry["dataset"] = _dataset(edition, t)
        entry["metadata"].pop("breakdowns", None)  # declared in the analysis section instead
        tasks.append(entry)
    return {
        "schema_version": "2026-05-27",
        "metadata": {
            "name": f"yoxla-{edition}",
            "description": ed.description,
        },
        "tasks": tasks,
        "groups": [
            {
                "id": b,
                "name": suite.block_names[b],
                "tasks": [t for t in PARITY_TASKS if suite.task(t).block == b],
            }
            for b in suite.blocks
        ],
        "headline": {"name": "YOXLA", "rule": "mean_of_groups"},
        "analysis": {"tasks": {t: {"breakdowns": list(BREAKDOWN_FIELDS[t])} for t in PARITY_TASKS}},
    }


def parity_manifest() -> dict[str, Any]:
    """The manifest of ``yoxla/editions/yoxla-sample.yaml`` (the parity test's suite)."""
    return benchmark_manifest("sample")


def manifest_text(edition: str) -> str:
    """The generated YAML of ``yoxla-<edition>`` (block scalars for text with line breaks)."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _text)
    doc = benchmark_manifest(edition)
    return HEADER + yaml.dump(doc, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


def frozen_hashes(manifest: Any, edition: str, pool: Any = None) -> dict[str, Any]:
    """Each task's hashes and item count: over the rows read (bundled), or over the fingerprints
    and row counts ``v1.json`` publishes for the Hub rows (the same fingerprint function; the rows
    are not fetched; the benchmark's tasks have no preprocessor, so an item is a row)."""
    from yoxla.editions import load_edition
    from yoxla.suites.hashing import TaskHashes, current_hashes, task_hash

    ed = load_edition(edition)
    if ed.bundled:
        return current_hashes(manifest, pool)
    out = {}
    for tid, task in manifest.tasks.items():
        data = {"dataset": ed.tasks[tid].fingerprint}
        out[tid] = TaskHashes(task_hash(task, data), task.definition_hash, data, ed.tasks[tid].rows)
    return out


def hash_file_text(edition: str, folder: Path | None = None) -> str:
    """The frozen hash file of ``yoxla-<edition>`` as generated (the manifest read from ``folder``)."""
    import tempfile

    from yoxla.suites.hashing import aggregation, analysis_hash, write_hash_file
    from yoxla.suites.loader import load_manifest

    manifest = load_manifest((folder or EDITIONS_DIR) / manifest_path(edition).name)
    tasks = frozen_hashes(manifest, edition)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hashes.json"
        write_hash_file(out, manifest.name, tasks, aggregation(manifest), analysis_hash(manifest))
        return out.read_text(encoding="utf-8")


def stale_benchmarks(folder: Path | None = None) -> list[Path]:
    """The package suite files in ``folder`` that differ from what :func:`write_benchmarks` writes."""
    from yoxla.suites.hashing import hash_file_path

    target = folder or EDITIONS_DIR
    stale = []
    for edition in BENCHMARKS:
        path = target / manifest_path(edition).name
        hashes = hash_file_path(path)
        if not path.is_file() or path.read_text(encoding="utf-8") != manifest_text(edition):
            stale.append(path)
        elif not hashes.is_file() or hashes.read_text(encoding="utf-8") != hash_file_text(edition, target):
            stale.append(hashes)
    return stale


def write_benchmarks(folder: Path | None = None) -> list[Path]:
    """Write both package suites and their hash files into ``folder`` (the package's editions)."""
    from yoxla.suites.hashing import hash_file_path

    target = folder or EDITIONS_DIR
    written = []
    for edition in BENCHMARKS:
        path = target / manifest_path(edition).name
        path.write_text(manifest_text(edition), encoding="utf-8")
        hashes = hash_file_path(path)
        hashes.write_text(hash_file_text(edition, target), encoding="utf-8")
        written += [path, hashes]
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m yoxla.suites.bridge [--check]``: rewrite the two package suites, or (``--check``)
    exit 1 naming each committed file that is not what would be written."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: python -m yoxla.suites.bridge [--check]", file=sys.stderr)
        return 2
    if args:
        stale = stale_benchmarks()
        for path in stale:
            print(f"error: {path.name} is not the generated file; run `python -m yoxla.suites.bridge`")
        if not stale:
            print(f"ok: {', '.join(manifest_path(e).name for e in BENCHMARKS)} are as generated")
        return 1 if stale else 0
    for written in write_benchmarks():
        print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
