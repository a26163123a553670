"""Bootstrap intervals over examples, paired differences and McNemar's test.

Every model of an edition is resampled with the *same* indices (per task, fixed seed), so
one set of replicates gives each model's interval and, by subtraction, the paired interval
of any two models' difference. Mean-based task scores (accuracy, span recall, overall
score) are resampled as one matrix product of per-example scores with resample counts.
Spearman (STS) is recomputed per replicate with vectorised average ranks; it uses the
same B. Replicates are clamped to [0, 1] and scaled to 100 like the task score itself;
block and YOXLA replicates are the same macro averages taken per replicate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

B_DEFAULT = 1000
SEED = 20260101
ALPHA = 0.05


@dataclass
class TaskInput:
    """One task's per-example data for every model, columns aligned on the same examples."""

    task_id: str
    block: str
    point: np.ndarray  # (m,) stored task scores, 0-100
    scores: np.ndarray | None  # (m, n) per-example scores, or None (no interval)
    prediction: np.ndarray | None = None  # (m, n) for correlation tasks
    gold: np.ndarray | None = None  # (n,) for correlation tasks


@dataclass
class Boot:
    task_ids: list[str]
    blocks: list[str]
    task_reps: np.ndarray  # (m, t, B)
    block_reps: np.ndarray  # (m, k, B)
    yoxla_reps: np.ndarray  # (m, B)
    B: int

    @staticmethod
    def interval(reps: np.ndarray, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
        lo = np.percentile(reps, 100 * alpha / 2, axis=-1)
        hi = np.percentile(reps, 100 * (1 - alpha / 2), axis=-1)
        return lo, hi


def resample_counts(n: int, B: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(indices (B, n), counts (B, n)): how often each example is drawn in each replicate."""
    idx = rng.integers(0, n, size=(B, n))
    flat = (idx + (np.arange(B) * n)[:, None]).ravel()
    counts = np.bincount(flat, minlength=B * n).reshape(B, n).astype(float)
    return idx, counts


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share their mean rank) along the last axis, vectorised."""
    shape = x.shape
    n = shape[-1]
    flat = x.reshape(-1, n)
    rows = flat.shape[0]
    order = np.argsort(flat, axis=1, kind="stable")
    xs = np.take_along_axis(flat, order, axis=1)
    new = np.ones_like(xs, dtype=bool)
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]
    group = np.cumsum(new.ravel()) - 1  # global group id
    pos = np.tile(np.arange(1, n + 1, dtype=float), rows)
    sums = np.bincount(group, weights=pos)
    cnts = np.bincount(group)
    avg = (sums / cnts)[group].reshape(rows, n)
    ranks = np.empty_like(avg)
    np.put_along_axis(ranks, order, avg, axis=1)
    return ranks.reshape(shape)


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    num = (a * b).sum(axis=-1)
    den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return r


def spearman_reps(pred: np.ndarray, gold: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(m, B) Spearman of each model's predictions against gold on each resample."""
    gold_r = average_ranks(gold[idx])  # (B, n)
    out = np.empty((pred.shape[0], idx.shape[0]))
    for i in range(pred.shape[0]):  # one model at a time keeps memory at B x n
        out[i] = _pearson_rows(average_ranks(pred[i][idx]), gold_r)
    return out


def inputs_digest(tasks: Sequence[TaskInput], blocks: Sequence[str], m: int, B: int, seed: int) -> str:
    """SHA-256 of everything :func:`run_bootstrap` reads (and of this package's code): its cache key."""
    import hashlib

    from yoxla.admission.cache import code_token

    h = hashlib.sha256(f"boot-1|{code_token()}|{m}|{B}|{seed}|{','.join(blocks)}".encode())
    for t in tasks:
        h.update(f"|{t.task_id}|{t.block}".encode())
        for a in (t.point, t.scores, t.prediction, t.gold):
            if a is None:
                h.update(b"|none")
            else:
                arr = np.ascontiguousarray(a, dtype=float)
                h.update(f"|{arr.shape}".encode())
                h.update(arr.tobytes())
    return h.hexdigest()


def run_bootstrap(
    tasks: Sequence[TaskInput], blocks: Sequence[str], m: int, B: int = B_DEFAULT, seed: int = SEED
) -> Boot:
    """The replicates, from the disk cache when the same inputs were resampled before (a restart)."""
    from yoxla.admission import cache

    key = inputs_digest(tasks, blocks, m, B, seed)
    names = ("task_reps", "block_reps", "yoxla_reps")
    found = cache.load_arrays("boot", key, names)
    if found is not None:
        t_reps, b_reps, y_reps = found
        return Boot([t.task_id for t in tasks], list(blocks), t_reps, b_reps, y_reps, B)
    boot = _resample(tasks, blocks, m, B, seed)
    cache.store_arrays(
        "boot", key, dict(zip(names, (boot.task_reps, boot.block_reps, boot.yoxla_reps), strict=True))
    )
    return boot


def _resample(
    tasks: Sequence[TaskInput], blocks: Sequence[str], m: int, B: int = B_DEFAULT, seed: int = SEED
) -> Boot:
    t_reps = np.empty((m, len(tasks), B))
    for ti, t in enumerate(tasks):
        if t.scores is None or t.scores.shape[1] == 0:
            t_reps[:, ti, :] = t.point[:, None]
            continue
        n = t.scores.shape[1]
        rng = np.random.default_rng([seed, ti])
        idx, counts = resample_counts(n, B, rng)
        if t.prediction is not None and t.gold is not None:
            raw = spearman_reps(t.prediction, t.gold, idx)
        else:
            raw = t.scores @ counts.T / n
        t_reps[:, ti, :] = np.clip(raw, 0.0, 1.0) * 100.0
    block_ids = list(blocks)
    b_reps = np.empty((m, len(block_ids), B))
    for bi, b in enumerate(block_ids):
        members = [ti for ti, t in enumerate(tasks) if t.block == b]
        b_reps[:, bi, :] = t_reps[:, members, :].mean(axis=1) if members else np.nan
    present = [bi for bi, b in enumerate(block_ids) if any(t.block == b for t in tasks)]
    y_reps = b_reps[:, present, :].mean(axis=1) if present else np.zeros((m, B))
    return Boot([t.task_id for t in tasks], block_ids, t_reps, b_reps, y_reps, B)


def paired_interval(reps_a: np.ndarray, reps_b: np.ndarray, alpha: float = ALPHA) -> tuple[float, float]:
    d = reps_a - reps_b
    return float(np.percentile(d, 100 * alpha / 2)), float(np.percentile(d, 100 * (1 - alpha / 2)))


def mcnemar(a_correct: np.ndarray, b_correct: np.ndarray) -> tuple[int, int, float]:
    """(A right & B wrong, A wrong & B right, exact two-sided p-value)."""
    a = np.asarray(a_correct, dtype=bool)
    b = np.asarray(b_correct, dtype=bool)
    n10 = int(np.sum(a & ~b))
    n01 = int(np.sum(~a & b))
    n = n10 + n01
    if n == 0:
        return n10, n01, 1.0
    k = min(n10, n01)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return n10, n01, min(1.0, 2.0 * tail)
