"""Result documents built with the core, for tests, the browser test and the start-up bench.

A document built here is what the runner writes (same layout, same evaluators, same digest),
so admission treats it exactly like a real file. ``answers`` gives each task's raw outputs in
dataset order, or a baseline strategy name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yoxla.editions import Edition, load_edition, load_rows
from yoxla.evaluators import block_scores, evaluate_task, yoxla_score
from yoxla.results import FORMAT, FORMAT_VERSION, finalize
from yoxla.suite import load_suite

Answers = Mapping[str, list[str | None]] | Callable[[str, list[dict[str, Any]]], list[str | None]] | str


def _raws(answers: Answers, tid: str, rows: list[dict[str, Any]]) -> list[str | None]:
    if isinstance(answers, str):
        from yoxla.baselines import answers as baseline_answers

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
) -> dict[str, Any]:
    suite = load_suite()
    ed = edition if isinstance(edition, Edition) else load_edition(edition)
    now = created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    tasks: dict[str, Any] = {}
    gen_errors = 0
    for tid, entry in ed.tasks.items():
        task = suite.task(tid)
        task_rows = list(rows[tid]) if rows is not None else load_rows(ed, tid)
        raws = _raws(answers, tid, task_rows)
        fr = list((finish_reasons or {}).get(tid) or ["stop"] * len(task_rows))
        er = list((errors or {}).get(tid) or [None] * len(task_rows))
        results, metrics, score = evaluate_task(task, task_rows, raws, fr, er)
        gen_errors += sum(e is not None for e in er)
        preds = []
        for res, raw, f, e in zip(results, raws, fr, er, strict=True):
            preds.append(
                {
                    "id": res.id,
                    "raw": raw,
                    "text": res.parsed.text,
                    "parsed": res.parsed.value,
                    "valid": res.parsed.valid,
                    "abstained": res.parsed.abstained,
                    "outcome": res.outcome,
                    "reason": res.parsed.reason,
                    "near_miss": res.parsed.near_miss,
                    "score": res.score,
                    "finish_reason": f,
                    "error": e,
                }
            )
        tasks[tid] = {
            "block": task.block,
            "rows": entry.rows,
            "fingerprint": entry.fingerprint,
            "contract_hash": task.contract_hash,
            "prompt_hash": task.prompt_hash,
            "primary": task.primary,
            "score": score,
            "metrics": metrics,
            "predictions": preds,
        }
    task_scores = {tid: t["score"] for tid, t in tasks.items()}
    blocks = block_scores(suite, task_scores)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "edition": ed.name,
        "model": {
            "provider": provider,
            "model": model,
            "reported_model": model,
            "base_url": None,
            "display_name": display_name or model,
        },
        "run": {
            "run_id": f"{provider}-{model}-{now}",
            "framework_version": "0.1.0",
            "started_at": now,
            "finished_at": now,
            "thinking": False,
            "workers": 1,
            "batch_size": 1,
            "dataset": {"source": ed.source, "revision": ed.revision},
            "chat_template_hash": None,
            "command": "synthetic",
        },
        "suite_hash": ed.suite_hash(suite),
        "tasks": tasks,
        "scores": {"yoxla": yoxla_score(blocks), "blocks": blocks, "tasks": task_scores},
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "generation_errors": gen_errors,
        "created_at": now,
    }
    return finalize(doc, sign_key)


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


def edition_for_rows(name: str, rows: Mapping[str, list[dict[str, Any]]]) -> Edition:
    """An edition whose manifest matches these rows (same tasks and contract as ``name``)."""
    from yoxla.editions import ManifestEntry, fingerprint

    base = load_edition(name)
    tasks = {
        tid: ManifestEntry(config=entry.config, rows=len(rows[tid]), fingerprint=fingerprint(rows[tid]))
        for tid, entry in base.tasks.items()
    }
    return Edition(
        name=base.name, source=base.source, revision=base.revision, tasks=tasks, description="synthetic"
    )


def random_answers(seed: int, skill: float = 0.6) -> Callable[[str, list[dict[str, Any]]], list[str | None]]:
    """A model that is right with probability ``skill`` and otherwise answers something plausible."""
    import random

    from yoxla.evaluators import gold_value
    from yoxla.spans import sentence_bounds
    from yoxla.text import flatten

    def answer(tid: str, rows: list[dict[str, Any]]) -> list[str | None]:
        task = load_suite().task(tid)
        rng = random.Random(f"{seed}:{tid}")
        out: list[str | None] = []
        for row in rows:
            a = task.answer
            right = rng.random() < skill
            if a.mode == "choice":
                values = a.values_for(row)
                gold = gold_value(task, row)
                out.append(gold if right and gold is not None else rng.choice(values))
            elif a.mode == "numeric":
                lo, hi = a.range or (0.0, 5.0)
                g = float(row[task.gold])
                out.append(
                    f"{min(hi, max(lo, g + rng.uniform(-1, 1))):.1f}"
                    if right
                    else f"{rng.uniform(lo, hi):.1f}"
                )
            else:
                gold = row.get(task.gold)
                if right and gold is not None:
                    out.append(str(gold))
                elif a.abstain is not None and rng.random() < 0.3:
                    out.append(a.abstain.value)
                else:
                    flat = flatten(str(row[task.inputs[0]]))
                    s, e = rng.choice(sentence_bounds(flat))
                    out.append(flat[s:e])
        return out

    return answer
