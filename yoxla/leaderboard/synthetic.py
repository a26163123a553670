"""Result documents built with the core, for tests, the browser test and the start-up bench.

A document built here is what the runner writes (the same writer, :mod:`yoxla.record`),
so admission treats it exactly like a real file. ``answers`` gives each task's raw outputs in
dataset order, or a baseline strategy name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yoxla import __version__
from yoxla.editions import Edition, load_edition, load_rows
from yoxla.record_base import DatasetInfo, ModelInfo, ModelMetadata, Usage
from yoxla.record_derive import build_document, build_task_result
from yoxla.record_v2 import RunConditionsV2, RunInfoV2, TaskResultV2
from yoxla.results import model_slug
from yoxla.suite import load_suite

Answers = Mapping[str, list[str | None]] | Callable[[str, list[dict[str, Any]]], list[str | None]] | str


def _raws(answers: Answers, tid: str, rows: list[dict[str, Any]]) -> list[str | None]:
    if isinstance(answers, str):
        from yoxla.suites.baselines import benchmark_answers as baseline_answers

        return list(baseline_answers(answers, load_suite().task(tid), rows))
    if callable(answers):
        return answers(tid, rows)
    return list(answers[tid])


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
    """A result document written by the same writer as the runner's (:mod:`yoxla.record`).

    ``distributions`` gives a task's stored answer distributions in dataset order
    (``LabelDistribution.to_dict()`` or None); the edition's declarations (its own, or the
    bundled file) decide groups and controls, as for a run. ``metadata`` is the optional
    model metadata (parameters, open weights, licence, …).
    """
    from yoxla.declarations import edition_declarations

    suite = load_suite()
    ed = edition if isinstance(edition, Edition) else load_edition(edition)
    declarations = edition_declarations(ed)
    now = created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    tasks: dict[str, TaskResultV2] = {}
    for tid, entry in ed.tasks.items():
        task = suite.task(tid)
        task_rows = list(rows[tid]) if rows is not None else load_rows(ed, tid)
        raws = _raws(answers, tid, task_rows)
        fr = list((finish_reasons or {}).get(tid) or ["stop"] * len(task_rows))
        er = list((errors or {}).get(tid) or [None] * len(task_rows))
        raws = [None if e else r for r, e in zip(raws, er, strict=True)]
        tasks[tid] = build_task_result(
            task,
            task_rows,
            raws,
            fr,
            er,
            fingerprint=entry.fingerprint,
            distributions=(distributions or {}).get(tid),
            declarations=declarations.task(tid, task.id_field),
        )
    return build_document(
        edition=ed.name,
        model=ModelInfo(
            provider=provider,
            model=model,
            reported_model=model,
            base_url=None,
            display_name=display_name or model,
            **({} if metadata is None else {"metadata": ModelMetadata.model_validate(metadata)}),
        ),
        run=RunInfoV2(
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
                thinking=thinking,
                thinking_budget=None,
                temperature=None,
                system_prompt="contract",
                limit=None,
            ),
        ),
        suite_hash=ed.suite_hash(suite),
        tasks=tasks,
        usage=Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0),
        created_at=now,
        sign_key=sign_key,
    )


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
    suite = load_suite()
    out: dict[str, list[dict[str, Any]]] = {}
    for tid, entry in edition.tasks.items():
        task = suite.task(tid)
        base = load_rows(sample, tid)
        rows = []
        for i in range(entry.rows):
            row = dict(base[i % len(base)])
            row[task.id_field] = f"{row[task.id_field]}-{seed}-{i:04d}"
            rows.append(row)
        out[tid] = rows
    return out


def edition_for_rows(
    name: str, rows: Mapping[str, list[dict[str, Any]]], declarations: Any = None
) -> Edition:
    """An edition whose manifest matches these rows (same tasks and contract as ``name``),
    with its own declarations (an :class:`~yoxla.declarations.EditionDeclarations`) when given."""
    from yoxla.editions import ManifestEntry, fingerprint

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
        declarations=declarations,
    )


def random_answers(seed: int, skill: float = 0.6) -> Callable[[str, list[dict[str, Any]]], list[str | None]]:
    """A model that is right with probability ``skill`` and otherwise answers something plausible:
    another label of the row's answer space, a number in the task's range, the abstain label or
    a sentence of the passage (the benchmark's suite task says which, :mod:`yoxla.suites.benchmark`)."""
    import random

    from yoxla.gold import gold_in
    from yoxla.spans import sentence_bounds
    from yoxla.suites.benchmark import benchmark_task, choice_space, gold_field
    from yoxla.suites.spec_answers import StrictExtraction
    from yoxla.suites.spec_grading import BuiltinGrader
    from yoxla.text import flatten

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
