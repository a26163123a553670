"""Synthetic full-size ``yoxla-result`` 3 files of the package suite ``yoxla-v1``, offline.

The v1 rows live on the Hugging Face Hub; here the bundled sample rows stand in for them,
cycled under new ids to v1's frozen item counts (1,443 items in all) and read through the one
loading path as ``--data-dir`` reads a local copy (:func:`yoxla.data.datasets.hub_override`).
A file is written by the runner's own writer (:func:`yoxla.record.derive.derive_suite_task`,
:func:`yoxla.record.derive.build_suite_document`) from answers that are right with probability
``skill`` and otherwise a cue-only strategy's answer or a decorated one, so admission parses
and scores every kind of answer a model gives. :func:`committed_source` is the
:class:`~yoxla.admission.committed.CommittedSuites` that admits such files: the package manifest
with the synthetic rows prepared (their fingerprints are not v1's frozen ones).

Used by ``bench/bench_admission.py``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from yoxla import __version__
from yoxla.baselines.strategies import suite_answers
from yoxla.contract.hashing import hash_file_path
from yoxla.contract.loader import SuiteManifest, load_manifest
from yoxla.contract.registry import package_suites_dir
from yoxla.data.datasets import hub_override, load_dataset
from yoxla.prompt.prepare import PreparedTask, prepare_task
from yoxla.record.base import ModelInfo, ModelMetadata, Usage
from yoxla.record.derive import build_suite_document, build_suite_task_result
from yoxla.record.result import RunConditions, RunInfo, SuiteInfo, TaskResult
from yoxla.record.signing import model_slug
from yoxla.run.plan import PlannedTask, RunPlan

SUITE_ID = "yoxla-v1"
CREATED = "2026-01-01T00:00:00Z"


def manifest_file(edition: str) -> Path:
    """The package manifest of a benchmark edition (``yoxla/editions/yoxla-<edition>.yaml``)."""
    return package_suites_dir() / f"yoxla-{edition}.yaml"


def v1_items() -> dict[str, int]:
    """v1's item count per task, as its frozen hash file records them."""
    doc = json.loads(hash_file_path(manifest_file("v1")).read_text(encoding="utf-8"))
    return {tid: int(entry["items"]) for tid, entry in doc["tasks"].items()}


def write_v1_rows(folder: Path, seed: int = 0) -> Path:
    """A local copy of v1's dataset (``<folder>/<task>/test.jsonl``): each task's sample rows
    cycled under new ids to its v1 item count. Returns ``folder``."""
    sample = load_manifest(manifest_file("sample"))
    for tid, n in v1_items().items():
        task = sample.tasks[tid]
        base = load_dataset(task.spec.dataset, task.base_dir).rows
        out = folder / tid / "test.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for i in range(n):
                row = dict(base[i % len(base)])
                row["id"] = f"{row['id']}-{seed}-{i:04d}"
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return folder


def prepare_v1(folder: Path, pool: Any = None) -> tuple[SuiteManifest, dict[str, PreparedTask]]:
    """The package ``yoxla-v1`` manifest and its tasks prepared from the rows in ``folder``."""
    manifest = load_manifest(manifest_file("v1"))
    with hub_override(None, folder):
        prepared = {tid: prepare_task(task, pool) for tid, task in manifest.tasks.items()}
    return manifest, prepared


def random_raws(prepared: PreparedTask, seed: int, skill: float) -> list[str]:
    """A model's answers to every item: the target with probability ``skill``, else the
    ``random`` strategy's answer, now and then decorated (a prefix, a full stop, other case)
    so that extraction meets near-misses and invalid answers too."""
    rng = random.Random(f"{seed}:{prepared.task.id}")
    guesses = suite_answers("random", prepared, seed)
    out: list[str] = []
    for item, guess in zip(prepared.items, guesses, strict=True):
        answer = item.target if rng.random() < skill else guess
        roll = rng.random()
        if roll < 0.05:
            answer = f"Cavab: {answer}."
        elif roll < 0.08:
            answer = answer.lower()
        elif roll < 0.10:
            answer = f"{answer}\n\nİzah: mətnə görə belədir."
        out.append(answer)
    return out


def suite_id(edition: str) -> str:
    """The package suite id of a benchmark edition (``sample`` -> ``yoxla-sample``)."""
    return f"yoxla-{edition}"


def synthetic_model(
    provider: str, model: str, display_name: str | None, metadata: ModelMetadata | Mapping[str, Any] | None
) -> ModelInfo:
    """The model block of a synthetic file: the model as its own reported name, no server."""
    extra = {} if metadata is None else {"metadata": ModelMetadata.model_validate(metadata)}
    return ModelInfo(
        provider=provider,
        model=model,
        reported_model=model,
        base_url=None,
        display_name=display_name or model,
        **extra,
    )


def build_v3(
    manifest: SuiteManifest,
    prepared: Mapping[str, PreparedTask],
    raws: Mapping[str, Sequence[str | None]],
    *,
    model: str,
    edition: str = "v1",
    provider: str = "synthetic",
    display_name: str | None = None,
    errors: Mapping[str, Sequence[str | None]] | None = None,
    finish_reasons: Mapping[str, Sequence[str | None]] | None = None,
    distributions: Mapping[str, Sequence[Mapping[str, Any] | None]] | None = None,
    thinking: bool = False,
    created_at: str = CREATED,
    metadata: Mapping[str, Any] | None = None,
    sign_key: Any = None,
    pool: Any = None,
) -> dict[str, Any]:
    """The ``yoxla-result`` 3 document a complete run of ``manifest`` (the package suite of
    ``edition``) with these answers writes. Per task and in item order, ``errors`` are the
    generation errors (the answer is then None), ``finish_reasons`` the finish reasons (``stop``
    when not given) and ``distributions`` the stored answer distributions
    (``LabelDistribution.to_dict()`` or None); ``metadata`` is the model's optional metadata."""
    tasks: dict[str, TaskResult] = {}
    for tid, p in prepared.items():
        n = len(p.items)
        err = list((errors or {}).get(tid) or [None] * n)
        fin = list((finish_reasons or {}).get(tid) or ["stop"] * n)
        dist = list((distributions or {}).get(tid) or [None] * n)
        stored: list[dict[str, Any]] = []
        for k, (item, raw) in enumerate(zip(p.items, raws[tid], strict=True)):
            line: dict[str, Any] = {
                "id": item.id,
                "raw": None if err[k] else raw,
                "finish_reason": None if err[k] else fin[k],
                "error": err[k],
                "judgements": [],
            }
            d = dist[k]
            if d is not None and not err[k]:
                line["distribution"] = dict(d)
            stored.append(line)
        tasks[tid] = build_suite_task_result(p, stored, pool=pool)
    path = f"yoxla/editions/{manifest_file(edition).name}"
    planned = {tid: PlannedTask(p) for tid, p in prepared.items()}
    suite = SuiteInfo.model_validate(RunPlan(manifest, suite_id(edition), path, planned).record())
    generation = {  # as the runner states them (yoxla.run.plan.run_conditions)
        tid: t.generation.model_dump(mode="json", exclude_none=True, exclude={"instructions"})
        for tid, t in planned.items()
    }
    run = RunInfo.model_validate(
        {
            "run_id": f"synthetic-{model_slug(provider)}-{model_slug(model)}",
            "framework_version": __version__,
            "started_at": created_at,
            "finished_at": created_at,
            "workers": 1,
            "batch_size": 1,
            "command": "synthetic",
            "conditions": RunConditions.model_validate(
                {"thinking": thinking, "limit": None, "tasks": None, "generation": generation}
            ).model_dump(mode="json", exclude_unset=True),
        }
    )
    return build_suite_document(
        suite=suite,
        model=synthetic_model(provider, model, display_name, metadata),
        run=run,
        tasks=tasks,
        usage=Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0),
        created_at=created_at,
        sign_key=sign_key,
    )


Answers = Mapping[str, Sequence[str | None]] | Callable[[str, list[dict[str, Any]]], list[str | None]] | str


def answers_for(
    answers: Answers, tid: str, rows: list[dict[str, Any]], by_strategy: Callable[[str], Sequence[str]]
) -> list[str | None]:
    """A task's raw outputs from ``answers``: a cue-only strategy's name (``by_strategy`` answers
    it), a function of the task id and its rows, or a mapping of task id to outputs."""
    if isinstance(answers, str):
        return list(by_strategy(answers))
    return list(answers(tid, rows) if callable(answers) else answers[tid])


def sample_result(
    answers: Answers,
    *,
    provider: str = "baseline",
    model: str = "first",
    display_name: str | None = None,
    errors: Mapping[str, Sequence[str | None]] | None = None,
    thinking: bool = False,
    created_at: str = CREATED,
    sign_key: Any = None,
) -> dict[str, Any]:
    """A ``yoxla-result`` 3 file of the package suite ``yoxla-sample`` over its committed rows, as
    a run writes it (admitted against the committed suite, nothing to stand in). ``answers``
    gives each task's raw outputs in item order, a function of the task id and its rows, or a
    cue-only strategy's name (:func:`yoxla.baselines.strategies.suite_answers`)."""
    manifest = load_manifest(manifest_file("sample"))
    prepared = {tid: prepare_task(task) for tid, task in manifest.tasks.items()}
    raws = {
        tid: answers_for(answers, tid, [dict(i.row) for i in p.items], partial(suite_answers, prepared=p))
        for tid, p in prepared.items()
    }
    return build_v3(
        manifest,
        prepared,
        raws,
        model=model,
        edition="sample",
        provider=provider,
        display_name=display_name,
        errors=errors,
        thinking=thinking,
        created_at=created_at,
        sign_key=sign_key,
    )


def prepare_rows(
    edition: str, rows: Mapping[str, Sequence[Mapping[str, Any]]], pool: Any = None
) -> tuple[SuiteManifest, dict[str, PreparedTask]]:
    """The package suite of ``edition`` and its tasks prepared over rows of one's own (per task,
    in order), as a run of a local copy of the data prepares them (their fingerprints are the
    rows', not the frozen ones)."""
    from yoxla.data.datasets import LoadedDataset, fingerprint

    manifest = load_manifest(manifest_file(edition))
    prepared = {}
    for tid, task in manifest.tasks.items():
        plain = [dict(r) for r in rows[tid]]
        loaded = LoadedDataset(tuple(plain), fingerprint(plain), {"source": "synthetic"}, ())
        prepared[tid] = prepare_task(task, pool, data=loaded)
    return manifest, prepared


def committed_source(
    manifest: SuiteManifest, prepared: Mapping[str, PreparedTask], edition: str = "v1"
) -> Any:
    """A :class:`~yoxla.admission.committed.CommittedSuites` whose package suite of ``edition``
    (``yoxla-v1`` by default) is already prepared from these tasks (what a committed suite is
    after ``prepare``); every other committed suite is found as usual."""
    from yoxla.admission.committed import CommittedSuite, CommittedSuites

    path = manifest_file(edition)
    sid = suite_id(edition)
    suite = CommittedSuite(
        sid, path, hash_file_path(path), f"yoxla/editions/{path.name}", manifest, prepared=dict(prepared)
    )
    source = CommittedSuites()
    source._suites = {**source._discover(), sid: suite}
    return source
