"""Reference levels of every task: the cue-only floors and the chance level.

* **Floors** (:mod:`yoxla.baselines`): the score of each strategy that reads nothing or only
  a surface cue, on the edition's rows, through the same parser and evaluators as a model.
  The best of them is the floor a model has to beat. They need the edition's rows; on a
  full-size edition they take a few seconds, so they are kept on disk next to the admission
  cache, keyed by the rows' fingerprints and the code.
* **Chance**: the expected score of a uniform guess over the answer space (choice tasks:
  the mean over rows of 1 / the number of valid answers; a correlation: 0). Span tasks have
  no closed answer space, so no chance level; their random-sentence floor stands in.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yoxla.baselines.strategies import STRATEGIES
from yoxla.baselines.strategies import benchmark_floors as baseline_floors
from yoxla.data.editions import load_edition, load_rows

CHANCE_NOTES = {
    "classification": "a uniform guess over the answer space",
    "correlation": "random ratings are uncorrelated with the gold",
    "span": "no closed answer space (a quote from the passage): see the random-sentence floor",
    "abstention": "no closed answer space (a quote or the abstention): see the random floor",
}


@dataclass(frozen=True)
class TaskFloor:
    task_id: str
    strategies: dict[str, float]  # score (0-100) of every cue-only strategy

    @property
    def best(self) -> float:
        return max(self.strategies.values()) if self.strategies else float("nan")

    @property
    def best_strategy(self) -> str:
        return max(self.strategies, key=lambda s: self.strategies[s]) if self.strategies else ""


@dataclass(frozen=True)
class Reference:
    """Floors and chance levels of one edition."""

    edition: str
    floors: dict[str, TaskFloor] = field(default_factory=dict)  # empty when the rows are not here
    chance: dict[str, float | None] = field(default_factory=dict)
    problem: str | None = None  # why there are no floors

    @property
    def available(self) -> bool:
        return bool(self.floors)

    def best(self, task_id: str) -> float | None:
        f = self.floors.get(task_id)
        return None if f is None else f.best

    def summary(self, blocks: Mapping[str, list[str]]) -> dict[str, Any] | None:
        """The best floor per task, averaged like a model's scores: {"blocks": {...}, "yoxla": x}."""
        if not self.floors:
            return None
        out: dict[str, float] = {}
        for block, tids in blocks.items():
            vals = [self.floors[t].best for t in tids if t in self.floors]
            if vals:
                out[block] = sum(vals) / len(vals)
        return {"blocks": out, "yoxla": sum(out.values()) / len(out) if out else float("nan")}


def chance_level(task_id: str, rows: list[dict[str, Any]]) -> float | None:
    """Expected score (0-100) of a uniform guess, or None when the answer space is open."""
    from yoxla.contract.benchmark import choice_space, strict_rule

    mode = strict_rule(task_id).mode  # choice: a closed space; numeric: a rating (correlated)
    if mode == "choice":
        sizes = [len(choice_space(task_id, r) or ()) for r in rows]
        sizes = [n for n in sizes if n > 0]
        return 100.0 * sum(1.0 / n for n in sizes) / len(sizes) if sizes else None
    if mode == "numeric":
        return 0.0
    return None


def _cache_path(token: str) -> Any:
    from yoxla.admission import cache as disk

    folder = disk.cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(f"floors-1:{disk.code_token()}:{token}".encode()).hexdigest()
    return folder.parent / "floors" / f"{key}.json"


def _load_cached(token: str) -> dict[str, dict[str, float]] | None:
    path = _cache_path(token)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {str(t): {str(s): float(v) for s, v in d.items()} for t, d in data.items()}


def _store(token: str, scores: dict[str, dict[str, float]]) -> None:
    path = _cache_path(token)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(scores), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # only slower next time


def reference(
    edition: str,
    rows: Mapping[str, list[dict[str, Any]]] | None,
    *,
    token: str = "",
    problem: str | None = None,
) -> Reference:
    """Floors (when ``rows`` are given) and chance levels of an edition's tasks.

    ``token`` names the rows (their fingerprints) for the disk cache. Chance levels need only
    the answer space's shape, so without the edition's rows the bundled sample rows of the
    same task are used.
    """
    chance: dict[str, float | None] = {}
    sample = load_edition("sample")
    task_ids = list(rows) if rows is not None else list(load_edition(edition).tasks)
    for tid in task_ids:
        task_rows = rows[tid] if rows is not None else load_rows(sample, tid)
        chance[tid] = chance_level(tid, list(task_rows))
    if rows is None:
        return Reference(edition, {}, chance, problem or f"the {edition} rows are not available here")
    scores = _load_cached(token) if token else None
    if scores is None or set(scores) != set(rows):
        scores = baseline_floors({t: list(r) for t, r in rows.items()}, task_ids, STRATEGIES)
        if token:
            _store(token, scores)
    return Reference(edition, {t: TaskFloor(t, dict(s)) for t, s in scores.items()}, chance)
