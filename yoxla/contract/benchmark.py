"""The frozen benchmark's tasks as suite tasks: the committed package suites, read through the suite path.

The eleven built-in tasks are written, once and for all, in the committed package suites
``yoxla/editions/yoxla-sample.yaml`` and ``yoxla-v1.yaml`` (identical task contracts; only the
``dataset`` differs), frozen by their hash files next to them. :func:`prepare_rows` turns an
edition's rows (read by :mod:`yoxla.data.files`) into prepared items without reading a dataset
again, tallying only the breakdowns its caller asks for (each costs time on every replay).

A module the suite path imports (``yoxla.score.calibration`` and its metrics) must not call the
per-task-id helpers here, not even inside a function: that closes an import circle (test_core_imports).
``python -m yoxla.contract.benchmark`` runs :func:`frozen_problems` on both package suites (CI does).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from yoxla.contract.canonical import sha256_text
from yoxla.contract.hashing import (
    FrozenHashes,
    aggregation,
    analysis_hash,
    compare,
    hash_file_path,
    read_hash_file,
    suite_hash,
    task_hash,
)
from yoxla.contract.loader import SuiteManifest, SuiteTask, load_document, load_manifest
from yoxla.contract.registry import BENCHMARK_EDITIONS, manifest_path
from yoxla.contract.spec_answers import StrictExtraction
from yoxla.data.datasets import LoadedDataset
from yoxla.data.editions import fingerprint as rows_fingerprint
from yoxla.data.editions import load_edition
from yoxla.extract.parsing import Parsed, parse
from yoxla.prompt.prepare import PreparedTask, prepare_task


@lru_cache(maxsize=1)
def benchmark_manifest() -> SuiteManifest:
    """The eleven benchmark tasks: the committed package suite ``yoxla-sample`` (no data is read)."""
    return load_manifest(manifest_path("sample"))


def task_ids() -> tuple[str, ...]:
    """The benchmark's task ids, in the order its package suites list them."""
    return tuple(benchmark_manifest().tasks)


def benchmark_groups() -> dict[str, tuple[str, ...]]:
    """The benchmark's blocks (the package suite's groups, in order): block id -> its task ids."""
    return {g.id: tuple(g.tasks) for g in benchmark_manifest().groups}


def benchmark_task(task_id: str) -> SuiteTask:
    """The suite task of one benchmark task (KeyError for an id the benchmark does not have)."""
    return benchmark_manifest().tasks[task_id]


@lru_cache(maxsize=32)
def _task_with(task_id: str, breakdowns: tuple[str, ...]) -> SuiteTask:
    """The benchmark task broken down by ``breakdowns`` only (the analysis section, which no task
    hash covers, rewritten for it: its hashes stay those of the committed suite)."""
    manifest = benchmark_manifest()
    task = manifest.tasks[task_id]
    if task.spec.breakdowns == breakdowns:
        return task
    raw = copy.deepcopy(manifest.raw)
    tasks = raw.setdefault("analysis", {}).setdefault("tasks", {})
    tasks.setdefault(task_id, {})["breakdowns"] = list(breakdowns)
    return load_document(raw, manifest.path.parent, str(manifest.path), manifest.path).tasks[task_id]


def prepare_rows(
    task_id: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    fingerprint: str | None = None,
    breakdowns: Sequence[str] = (),
) -> PreparedTask:
    """The prepared items of a benchmark task over ``rows`` (an edition's rows, in order).

    ``fingerprint``: the rows' fingerprint when the caller has it (else it is computed).
    ``breakdowns``: the row fields its scores are broken down by (none unless asked).
    """
    task = _task_with(task_id, tuple(breakdowns))
    listed = tuple(dict(r) for r in rows)
    fp = fingerprint if fingerprint is not None else rows_fingerprint(list(listed))
    data = LoadedDataset(listed, fp, {"source": "yoxla-edition"}, (), {})
    return prepare_task(task, data=data)


@lru_cache(maxsize=64)
def strict_rule(task_id: str) -> StrictExtraction:
    """A benchmark task's strict extraction rule, its mode resolved (KeyError for an unknown id)."""
    spec = benchmark_task(task_id).spec
    rule = spec.output_extraction
    assert isinstance(rule, StrictExtraction), task_id  # every benchmark task is read strictly
    return rule if rule.mode is not None else rule.model_copy(update={"mode": spec.strict_mode})


def parse_answer(task_id: str, raw: str | None, row: Mapping[str, Any] | None = None) -> Parsed:
    """One answer to one row of a benchmark task, read as its strict extractor reads it (the
    row's own answer space: numbered options depend on the row's list)."""
    from yoxla.prompt.space import item_space

    spec = benchmark_task(task_id).spec
    return parse(strict_rule(task_id), raw, item_space(spec, row or {}))


@lru_cache(maxsize=64)
def gold_field(task_id: str) -> str:
    """The row field holding a benchmark task's gold (the one its target template names)."""
    return benchmark_task(task_id).target.fields[0][0]


def choice_space(task_id: str, row: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """The closed answer space of one row of a benchmark task (its option numbers, then its
    fixed labels); None when the task's answer is open (a number, a span)."""
    from yoxla.prompt.space import item_space

    if strict_rule(task_id).mode != "choice":
        return None
    return item_space(benchmark_task(task_id).spec, row or {})


def frozen_problems(edition: str) -> list[str]:
    """What in the package suite ``yoxla-<edition>`` disagrees with its frozen hash file or its
    edition's published fingerprints and row counts (an item is a row: no preprocessor), or with
    the prompt hash each task records ([] = nothing), its rows never read; ManifestError when the
    manifest or its hash file does not load."""
    path = manifest_path(edition)
    manifest, ed = load_manifest(path), load_edition(edition)
    frozen = read_hash_file(hash_file_path(path))
    problems = []
    if set(manifest.tasks) != set(ed.tasks):
        problems.append(f"its tasks are not the edition's: {sorted(set(manifest.tasks) ^ set(ed.tasks))}")
    now = {}
    for tid, task in manifest.tasks.items():
        entry = ed.tasks.get(tid)
        if entry is not None:
            data = {"dataset": entry.fingerprint}
            now[tid] = FrozenHashes(task_hash(task, data), task.definition_hash, data, entry.rows)
        if sha256_text(task.instructions or "") != task.spec.metadata.get("prompt_hash"):
            problems.append(f"{tid}: its instructions are not the system prompt its prompt_hash records")
    problems += [
        f"{c.task}: {c.status} {c.detail}".rstrip() for c in compare(now, frozen) if c.status != "unchanged"
    ]
    doc = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    if doc.get("suite_hash") != suite_hash({t: h.hash for t, h in now.items()}, aggregation(manifest)):
        problems.append("its suite hash (tasks, groups and headline) is not the frozen one")
    if doc.get("analysis_hash") != analysis_hash(manifest):
        problems.append("its analysis section is not the frozen one")
    return [f"{path.name}: {p}" for p in problems]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m yoxla.contract.benchmark``: exit 1 naming each disagreement of a package suite
    with its frozen hashes (2: one does not load)."""
    import sys

    from yoxla.contract.errors import ManifestError

    if list(sys.argv[1:] if argv is None else argv):
        print("usage: python -m yoxla.contract.benchmark", file=sys.stderr)
        return 2
    try:
        problems = [p for edition in BENCHMARK_EDITIONS for p in frozen_problems(edition)]
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in problems:
        print(f"error: {line}")
    if not problems:
        names = ", ".join(manifest_path(e).name for e in BENCHMARK_EDITIONS)
        print(f"ok: {names} match their frozen hashes over their editions' published fingerprints")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
