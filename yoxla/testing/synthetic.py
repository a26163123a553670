"""Result documents built with the core, for tests, the browser test and the start-up bench.

:func:`build_result` writes a ``yoxla-result`` version 2 file (the old format, still read) of the
benchmark over rows of its own, each task's answers replayed exactly as admission replays a
stored v2 file (:func:`yoxla.admission.v2.prepared_for`, :func:`~yoxla.admission.v2.legacy_task`),
so admission treats it like a real file. Files of the format runs write are built by
:mod:`yoxla.testing.synthetic_v3`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yoxla import __version__
from yoxla.data.editions import Edition, load_edition, load_rows
from yoxla.record.base import FORMAT, LEGACY_FORMAT_VERSION, DatasetInfo, ModelMetadata, Usage
from yoxla.record.derive import sealed
from yoxla.record.signing import model_slug
from yoxla.record.v2 import ResultFileV2, RunConditionsV2, RunInfoV2, TaskResultV2

if TYPE_CHECKING:
    from yoxla.testing.synthetic_v3 import Answers


def build_result(
    answers: Answers,
    *,
    edition: str | Edition = "sample",
    provider: str = "baseline",
    model: str = "first",
    display_name: str | None = None,
    rows: Mapping[str, list[dict[str, Any]]] | None = None,
    errors: Mapping[str, list[str | None]] | None = None,
    finish_reasons: Mapping[str, list[str | None]] | None = None,
    created_at: str | None = None,
    sign_key: str | Path | None = None,
    thinking: bool = False,
    distributions: Mapping[str, list[dict[str, Any] | None]] | None = None,
    metadata: ModelMetadata | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A v2 result document. ``answers``: each task's raw outputs in dataset order, a function of
    (task id, rows) giving them, or a baseline strategy's name; ``distributions``: each task's
    stored answer distributions in dataset order (``LabelDistribution.to_dict()`` or None)."""
    ed = edition if isinstance(edition, Edition) else load_edition(edition)
    now = created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    tasks = _replayed_tasks(answers, ed, rows, errors, finish_reasons, distributions)
    from yoxla.testing.synthetic_v3 import synthetic_model

    model_info = synthetic_model(provider, model, display_name, metadata)
    run = RunInfoV2(
        run_id=f"synthetic-{model_slug(provider)}-{model_slug(model)}",
        framework_version=__version__,
        started_at=now,
        finished_at=now,
        workers=1,
        batch_size=1,
        dataset=DatasetInfo(source=ed.source, revision=ed.revision),
        chat_template_hash=None,
        command="synthetic",
        conditions=RunConditionsV2(
            thinking=thinking, thinking_budget=None, temperature=None, system_prompt="contract", limit=None
        ),
    )
    body = {
        "format": FORMAT,
        "format_version": LEGACY_FORMAT_VERSION,
        "edition": ed.name,
        "model": model_info.model_dump(mode="json", exclude_unset=True),
        "run": run.model_dump(mode="json", exclude_unset=True),
        "suite_hash": ed.suite_hash(),
        "tasks": {tid: t.model_dump(mode="json", exclude_unset=True) for tid, t in tasks.items()},
        "scores": summary_scores(tasks).model_dump(mode="json"),
        "usage": Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0).model_dump(
            mode="json", exclude_unset=True
        ),
        "generation_errors": sum(p.error is not None for t in tasks.values() for p in t.predictions),
        "created_at": now,
    }
    return sealed(body, sign_key, ResultFileV2)


def _replayed_tasks(
    answers: Answers,
    ed: Edition,
    rows: Mapping[str, list[dict[str, Any]]] | None,
    errors: Mapping[str, list[str | None]] | None,
    finish_reasons: Mapping[str, list[str | None]] | None,
    distributions: Mapping[str, list[dict[str, Any] | None]] | None,
) -> dict[str, TaskResultV2]:
    """Each task's v2 record: its answers replayed through the one suite path."""
    from yoxla.admission.gold import DataSource
    from yoxla.admission.v2 import legacy_task, prepared_for
    from yoxla.baselines.strategies import benchmark_answers
    from yoxla.contract.loader import load_manifest
    from yoxla.contract.registry import manifest_path
    from yoxla.record.derive import derive_suite_task
    from yoxla.testing.synthetic_v3 import answers_for

    manifest = load_manifest(manifest_path(ed.name))
    blocks = {tid: g.id for g in manifest.groups for tid in g.tasks}
    data = DataSource()
    tasks: dict[str, TaskResultV2] = {}
    try:
        for tid, entry in ed.tasks.items():
            task_rows = list(rows[tid]) if rows is not None else load_rows(ed, tid)
            n = len(task_rows)
            fr = list((finish_reasons or {}).get(tid) or ["stop"] * n)
            er = list((errors or {}).get(tid) or [None] * n)
            dists = (distributions or {}).get(tid)
            if dists is not None and len(dists) != n:
                raise ValueError(f"{tid}: {n} rows but {len(dists)} distributions")
            given = answers_for(answers, tid, task_rows, partial(benchmark_answers, task=tid, rows=task_rows))
            raws = [None if e else r for r, e in zip(given, er, strict=True)]
            prepared = prepared_for(data, ed, manifest.tasks[tid], task_rows)
            stored = []
            for i, item in enumerate(prepared.items):
                line: dict[str, Any] = {"id": item.id, "raw": raws[i], "finish_reason": fr[i], "error": er[i]}
                if dists is not None and dists[i] is not None and er[i] is None:
                    line["distribution"] = dists[i]
                stored.append(line)
            derived = derive_suite_task(prepared, stored, pool=data.suites.pool)
            doc = legacy_task(prepared, derived, entry, blocks[tid])
            tasks[tid] = TaskResultV2.model_validate(doc)
    finally:
        data.suites.close()
    return tasks


def summary_scores(tasks: Mapping[str, TaskResultV2]) -> Any:
    """Task scores, block macro averages and YOXLA of a v2 file, from its task results."""
    from yoxla.contract.benchmark import benchmark_groups
    from yoxla.record.v2 import ScoresV2
    from yoxla.score.stats import block_scores, yoxla_score

    task_scores = {tid: t.score for tid, t in tasks.items()}
    blocks = block_scores(benchmark_groups(), task_scores)
    return ScoresV2.model_construct(yoxla=yoxla_score(blocks), blocks=blocks, tasks=task_scores)


# Hostile answers: the app must show every one of them as text.
PLANTED = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "[click me](javascript:window.__pwned=3)",
    "<b unterminated",
    "**bold** <i>italic",
)


def planted_answers(tid: str, rows: list[dict[str, Any]]) -> list[str | None]:
    """Every answer is one of :data:`PLANTED`, the first row always the ``<script>`` one."""
    return [PLANTED[i % len(PLANTED)] for i in range(len(rows))]


def synthetic_rows(edition: Edition, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Rows of the edition's size made by cycling the bundled sample rows under new ids."""
    sample = load_edition("sample")
    out: dict[str, list[dict[str, Any]]] = {}
    for tid, entry in edition.tasks.items():
        base = load_rows(sample, tid)
        rows = []
        for i in range(entry.rows):
            row = dict(base[i % len(base)])
            row["id"] = f"{row['id']}-{seed}-{i:04d}"
            rows.append(row)
        out[tid] = rows
    return out


def edition_for_rows(name: str, rows: Mapping[str, list[dict[str, Any]]], analysis: Any = None) -> Edition:
    """An edition whose manifest matches these rows (same tasks and contract as ``name``),
    with its own analysis section (a :class:`~yoxla.contract.spec.Analysis`) when given."""
    from yoxla.data.editions import ManifestEntry, fingerprint

    base = load_edition(name)
    tasks = {
        tid: ManifestEntry(config=entry.config, rows=len(rows[tid]), fingerprint=fingerprint(rows[tid]))
        for tid, entry in base.tasks.items()
    }
    return Edition(
        name=base.name,
        source=base.source,
        revision=base.revision,
        tasks=tasks,
        description="synthetic",
        analysis=analysis,
    )


def random_answers(seed: int, skill: float = 0.6) -> Callable[[str, list[dict[str, Any]]], list[str | None]]:
    """A model that is right with probability ``skill`` and otherwise answers something plausible:
    another label of the row's answer space, a number in the task's range, the abstain label or
    a sentence of the passage (the benchmark's suite task says which, :mod:`yoxla.contract.benchmark`)."""
    import random

    from yoxla.contract.benchmark import benchmark_task, choice_space, gold_field
    from yoxla.contract.spec_answers import StrictExtraction
    from yoxla.contract.spec_grading import BuiltinGrader
    from yoxla.data.gold import gold_in
    from yoxla.extract.text import flatten
    from yoxla.score.spans import sentence_bounds

    def answer(tid: str, rows: list[dict[str, Any]]) -> list[str | None]:
        spec = benchmark_task(tid).spec
        ex, field = spec.output_extraction, gold_field(tid)
        strict = ex if isinstance(ex, StrictExtraction) else None
        graders = [g for g in spec.graders if isinstance(g, BuiltinGrader) and g.passage_field]
        passage = graders[0].passage_field if graders else None
        rng = random.Random(f"{seed}:{tid}")
        out: list[str | None] = []
        for row in rows:
            right = rng.random() < skill
            if spec.strict_mode == "choice":
                values = choice_space(tid, row) or ()
                gold = gold_in(row, field, "choice")
                out.append(gold if right and gold is not None else rng.choice(values))
            elif spec.strict_mode == "numeric":
                lo, hi = (strict.range if strict else None) or (0.0, 5.0)
                g = float(row[field])
                out.append(
                    f"{min(hi, max(lo, g + rng.uniform(-1, 1))):.1f}"
                    if right
                    else f"{rng.uniform(lo, hi):.1f}"
                )
            else:
                gold = row.get(field)
                if right and gold is not None:
                    out.append(str(gold))
                elif strict is not None and strict.abstain is not None and rng.random() < 0.3:
                    out.append(strict.abstain)
                else:
                    flat = flatten(str(row[passage or field]))
                    s, e = rng.choice(sentence_bounds(flat))
                    out.append(flat[s:e])
        return out

    return answer
