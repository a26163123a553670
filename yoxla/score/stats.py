"""The statistics the scores are made of: means, rank and linear correlation, macro F1, and the
block and YOXLA averages of task scores.

Pure functions of their numbers (``block_scores`` also reads which tasks each block holds).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; 0.0 for no values."""
    return float(sum(values) / len(values)) if values else 0.0


def _rank(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing the mean of their positions."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + ends - 1) / 2.0 + 1.0)[inverse]


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson correlation; 0 when it is undefined (fewer than two points or no variance)."""
    if len(x) < 2 or len(set(map(float, x))) < 2 or len(set(map(float, y))) < 2:
        return 0.0
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a - a.mean(), b - b.mean()
    denom = math.sqrt(float((a * a).sum()) * float((b * b).sum()))
    if denom == 0.0:
        return 0.0
    return float((a * b).sum() / denom)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation (Pearson of the tie-averaged ranks); 0 when undefined."""
    if len(x) < 2:
        return 0.0
    return pearson(_rank(np.asarray(x, dtype=float)), _rank(np.asarray(y, dtype=float)))


def macro_f1(gold: Sequence[str | None], pred: Sequence[str | None]) -> float:
    """Mean F1 over the classes in ``gold`` and ``pred`` (None is no class); one pass over the pairs."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for g, p in zip(gold, pred, strict=True):
        if g == p:
            if g is not None:
                tp[g] += 1
            continue
        if p is not None:
            fp[p] += 1
        if g is not None:
            fn[g] += 1
    classes = sorted({g for g in gold if g is not None} | {p for p in pred if p is not None})
    if not classes:
        return 0.0
    return mean([2 * tp[c] / d if (d := 2 * tp[c] + fp[c] + fn[c]) else 0.0 for c in classes])


def block_scores(blocks: Mapping[str, Sequence[str]], task_scores: Mapping[str, float]) -> dict[str, float]:
    """Macro average of task scores within each block (``blocks``: block id -> its task ids, in
    order) that has any scored task; the tasks are averaged in ``task_scores``' order."""
    out: dict[str, float] = {}
    for block, ids in blocks.items():
        members = set(ids)
        vals = [s for tid, s in task_scores.items() if tid in members]
        if vals:
            out[block] = mean(vals)
    return out


def yoxla_score(blocks: dict[str, float]) -> float:
    """Mean of the block scores."""
    return mean(list(blocks.values()))
