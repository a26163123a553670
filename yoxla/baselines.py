"""Cue-only baselines: strategies that read nothing, or only a surface cue.

They answer in the task's own answer format, so they go through the same parser and
evaluators as a model. Their scores are the floors a model has to beat; a task where a
cue-only strategy scores high measures the cue, not the skill.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from yoxla.spans import sentence_bounds
from yoxla.suite import Task
from yoxla.text import flatten, tokens

STRATEGIES = ("first", "majority", "random", "overlap", "longest", "most_linked", "none_of_them", "abstain")
SEED = 20260101


class Context:
    """What a strategy may look at besides the row: the task and all rows (for majority)."""

    def __init__(self, task: Task, rows: list[dict[str, Any]], seed: int = SEED) -> None:
        self.task = task
        self.rows = rows
        self.rng = random.Random(f"{seed}:{task.id}")
        golds = Counter(str(r[task.gold]) for r in rows if r[task.gold] is not None)
        self.majority = golds.most_common(1)[0][0] if golds else None
        numeric = [float(r[task.gold]) for r in rows if task.answer.mode == "numeric"]
        self.mean_gold = sum(numeric) / len(numeric) if numeric else None


def _sentences(text: str) -> list[str]:
    flat = flatten(text)
    return [flat[s:e] for s, e in sentence_bounds(flat) if e > s]


def _overlap(a: str, b: str) -> float:
    ta, tb = set(tokens(a)), set(tokens(b))
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def _question(task: Task, row: dict[str, Any], skip: str | None) -> str:
    return " ".join(str(row[f]) for f in task.inputs if f != skip and f not in task.list_inputs)


def _first(ctx: Context, row: dict[str, Any]) -> str:
    a = ctx.task.answer
    if a.mode == "numeric":
        assert a.range is not None
        return str(a.range[0])
    if a.mode in ("text", "text_or_abstain"):
        return _sentences(row[ctx.task.inputs[0]])[0]
    return a.values_for(row)[0]


def _majority(ctx: Context, row: dict[str, Any]) -> str:
    if ctx.task.answer.mode == "numeric" and ctx.mean_gold is not None:
        return f"{ctx.mean_gold:.2f}"
    if ctx.task.answer.mode == "choice" and ctx.majority is not None:
        return ctx.majority
    return _first(ctx, row)


def _random(ctx: Context, row: dict[str, Any]) -> str:
    a = ctx.task.answer
    if a.mode == "numeric":
        assert a.range is not None
        return f"{ctx.rng.uniform(*a.range):.2f}"
    if a.mode in ("text", "text_or_abstain"):
        options = _sentences(row[ctx.task.inputs[0]])
        if a.abstain is not None:
            options.append(a.abstain.value)
        return ctx.rng.choice(options)
    return ctx.rng.choice(a.values_for(row))


def _pick(options: list[str], key: Callable[[str], float]) -> int:
    """Index of the best option; the first wins ties."""
    best = max(key(o) for o in options)
    return next(i for i, o in enumerate(options) if key(o) == best)


def _ab_inputs(ctx: Context) -> bool:
    return ctx.task.answer.label_values == ("A", "B") and len(ctx.task.inputs) == 2


def _overlap_strategy(ctx: Context, row: dict[str, Any]) -> str:
    t, a = ctx.task, ctx.task.answer
    if a.options_field:
        q = _question(t, row, a.options_field)
        return str(_pick(list(row[a.options_field]), lambda o: _overlap(o, q)) + 1)
    if a.mode in ("text", "text_or_abstain"):
        q = _question(t, row, t.inputs[0])
        sents = _sentences(row[t.inputs[0]])
        return sents[_pick(sents, lambda s: _overlap(s, q))]
    if a.mode == "numeric":
        assert a.range is not None
        lo, hi = a.range
        return f"{lo + (hi - lo) * _overlap(str(row[t.inputs[0]]), str(row[t.inputs[1]])):.2f}"
    # Labels: the label whose description shares most words with the inputs.
    text = _question(t, row, None)
    return a.labels[_pick([lb.description for lb in a.labels], lambda d: _overlap(d, text))].value


def _longest(ctx: Context, row: dict[str, Any]) -> str:
    t, a = ctx.task, ctx.task.answer
    if a.options_field:
        return str(_pick(list(row[a.options_field]), len) + 1)
    if a.mode in ("text", "text_or_abstain"):
        sents = _sentences(row[t.inputs[0]])
        return sents[_pick(sents, len)]
    if a.mode == "numeric":
        assert a.range is not None
        return str(a.range[1])
    if _ab_inputs(ctx):
        return "AB"[_pick([str(row[f]) for f in t.inputs], len)]
    return a.labels[_pick([lb.value for lb in a.labels], len)].value


def _most_linked(ctx: Context, row: dict[str, Any]) -> str:
    links = row.get("sitelinks")
    if ctx.task.answer.options_field and isinstance(links, list) and links:
        return str(_pick([str(i) for i in range(len(links))], lambda i: float(links[int(i)])) + 1)
    return _first(ctx, row)


def _none_of_them(ctx: Context, row: dict[str, Any]) -> str:
    a = ctx.task.answer
    if a.options_field and a.labels:
        return a.labels[0].value
    if a.abstain is not None:
        return a.abstain.value
    return _first(ctx, row)


def _abstain(ctx: Context, row: dict[str, Any]) -> str:
    return ctx.task.answer.abstain.value if ctx.task.answer.abstain else _none_of_them(ctx, row)


_FUNCS: dict[str, Callable[[Context, dict[str, Any]], str]] = {
    "first": _first,
    "majority": _majority,
    "random": _random,
    "overlap": _overlap_strategy,
    "longest": _longest,
    "most_linked": _most_linked,
    "none_of_them": _none_of_them,
    "abstain": _abstain,
}


def answers(strategy: str, task: Task, rows: list[dict[str, Any]], seed: int = SEED) -> list[str]:
    """The strategy's raw answer for every row of a task, in row order."""
    if strategy not in _FUNCS:
        raise ValueError(f"unknown baseline strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    ctx = Context(task, rows, seed)
    return [_FUNCS[strategy](ctx, row) for row in rows]


def floors(
    task_rows: dict[str, list[dict[str, Any]]],
    tasks: dict[str, Task],
    strategies: tuple[str, ...] = STRATEGIES,
) -> dict[str, dict[str, float]]:
    """Score of every strategy on every task: {task_id: {strategy: score}}."""
    from yoxla.evaluators import evaluate_task

    out: dict[str, dict[str, float]] = {}
    for tid, rows in task_rows.items():
        task = tasks[tid]
        out[tid] = {s: evaluate_task(task, rows, list(answers(s, task, rows)))[2] for s in strategies}
    return out
