"""The frozen benchmark's tasks as suite tasks: one contract, read through the suite path.

The eleven built-in tasks are written as manifest entries by :func:`yoxla.suites.bridge.builtin_task_entry`
and compiled by the suite loader once per process. Their rows come from the benchmark's own
reader (:mod:`yoxla.datafiles`, for any edition), so :func:`prepare_rows` turns an edition's
rows into the suite path's prepared items (messages, per-item answer space, targets) without
reading a dataset again. What the suite path derives from these items is what the benchmark
derives: ``tests/suites/test_suites_parity.py`` and the golden oracle pin it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from yoxla.editions import fingerprint as rows_fingerprint
from yoxla.suites.datasets import LoadedDataset
from yoxla.suites.loader import SuiteManifest, SuiteTask, load_document
from yoxla.suites.paths import shipped_data
from yoxla.suites.prepare import PreparedTask, prepare_task

# The contracts do not depend on where the rows are; this path only names them for the loader.
_DATA = "sample/{task}/test.jsonl"


@lru_cache(maxsize=1)
def benchmark_manifest() -> SuiteManifest:
    """The eleven benchmark tasks, compiled as a suite (no data is read)."""
    from yoxla.suite import load_suite
    from yoxla.suites.bridge import PARITY_TASKS, builtin_task_entry

    suite = load_suite()
    raw: dict[str, Any] = {
        "schema_version": "2026-05-27",
        "metadata": {"name": "yoxla-benchmark", "description": "The frozen benchmark's eleven tasks"},
        "tasks": [builtin_task_entry(suite.task(t), _DATA.format(task=t)) for t in PARITY_TASKS],
    }
    base = shipped_data()
    return load_document(raw, base, "yoxla benchmark tasks", base / "yoxla-benchmark.yaml")


def benchmark_task(task_id: str) -> SuiteTask:
    """The suite task of one benchmark task (KeyError for an id the benchmark does not have)."""
    return benchmark_manifest().tasks[task_id]


def prepare_rows(
    task_id: str, rows: Sequence[Mapping[str, Any]], *, fingerprint: str | None = None
) -> PreparedTask:
    """The prepared items of a benchmark task over ``rows`` (an edition's rows, in order).

    ``fingerprint``: the rows' fingerprint when the caller has it (else it is computed).
    """
    task = benchmark_task(task_id)
    listed = tuple(dict(r) for r in rows)
    fp = fingerprint if fingerprint is not None else rows_fingerprint(list(listed))
    data = LoadedDataset(listed, fp, {"source": "yoxla-edition"}, (), {})
    return prepare_task(task, data=data)
