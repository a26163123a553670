"""Loading: every result file under a folder, admitted once, with per-edition views.

``load_board`` reads ``results/**/*.json``, runs admission on each (cached by the digest of
the file's bytes) and keeps the verdicts. Per edition the board hands out the models that
are shown, their bootstrap replicates (computed once, lazily) and, for the error explorer,
the full document of one file (re-read on demand and checked against the admitted digest,
so the explorer never shows bytes that were not admitted).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from yoxla.editions import EDITIONS, Edition, load_edition
from yoxla.leaderboard.admission import Verdict, admit, load_trusted_keys
from yoxla.leaderboard.bootstrap import B_DEFAULT, Boot, TaskInput, run_bootstrap
from yoxla.leaderboard.data import DataSource
from yoxla.suite import load_suite

RESULTS_ENV = "YOXLA_RESULTS_DIR"


def default_results_dir() -> Path:
    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "results"


def find_result_files(folder: str | os.PathLike[str]) -> list[Path]:
    root = Path(folder)
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.json") if p.is_file())


@dataclass
class Board:
    verdicts: list[Verdict]
    data: DataSource
    results_dir: str = ""
    B: int = B_DEFAULT
    editions: dict[str, Edition] = field(default_factory=dict)
    _boot: dict[str, Boot] = field(default_factory=dict, repr=False)
    _docs: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict, repr=False)

    # Views ----------------------------------------------------------------------------
    def shown(self, edition: str) -> list[Verdict]:
        """Admitted, not superseded, best YOXLA score first (ties by name)."""
        rows = [v for v in self.verdicts if v.shown and v.edition == edition]
        return sorted(rows, key=lambda v: (-float(v.scores.get("yoxla", 0.0)), v.name, v.path))

    def excluded(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.shown]

    def default_edition(self) -> str:
        for ed in EDITIONS:
            if self.shown(ed):
                return ed
        return "sample"

    def edition(self, name: str) -> Edition:
        return self.editions.get(name) or load_edition(name)

    def model(self, edition: str, key: str) -> Verdict | None:
        return next((v for v in self.shown(edition) if model_key(v) == key), None)

    def rows(self, edition: str) -> dict[str, list[dict[str, Any]]] | None:
        return self.data.rows(self.edition(edition)).rows

    def task_ids(self, edition: str) -> list[str]:
        return list(self.edition(edition).tasks)

    # Bootstrap ------------------------------------------------------------------------
    def boot(self, edition: str) -> Boot:
        if edition not in self._boot:
            self._boot[edition] = self._run_boot(edition)
        return self._boot[edition]

    def _run_boot(self, edition: str) -> Boot:
        suite = load_suite()
        models = self.shown(edition)
        rows = self.rows(edition)
        inputs: list[TaskInput] = []
        for tid in self.task_ids(edition):
            task = suite.task(tid)
            point = np.array([m.tasks[tid].score if tid in m.tasks else 0.0 for m in models], dtype=float)
            recs = [m.tasks.get(tid) for m in models]
            aligned = bool(recs) and all(r is not None and r.ids == recs[0].ids for r in recs)  # type: ignore[union-attr]
            if not aligned:
                inputs.append(TaskInput(tid, task.block, point, None))
                continue
            scores = np.vstack([r.scores for r in recs])  # type: ignore[union-attr]
            if task.evaluator == "correlation":
                preds = [r.prediction for r in recs]  # type: ignore[union-attr]
                if rows is None or any(p is None for p in preds):
                    inputs.append(TaskInput(tid, task.block, point, None))
                    continue
                gold = np.array([float(r[task.gold]) for r in rows[tid]], dtype=float)
                inputs.append(TaskInput(tid, task.block, point, scores, np.vstack(preds), gold))  # type: ignore[arg-type]
            else:
                inputs.append(TaskInput(tid, task.block, point, scores))
        return run_bootstrap(inputs, list(suite.blocks), len(models), B=self.B)

    # Documents for the explorer ---------------------------------------------------------
    def document(self, v: Verdict, keep: int = 4) -> dict[str, Any]:
        if v.path in self._docs:
            self._docs.move_to_end(v.path)
            return self._docs[v.path]
        raw = Path(v.path).read_bytes()
        if "sha256:" + hashlib.sha256(raw).hexdigest() != v.sha256:
            raise RuntimeError(
                f"{Path(v.path).name} changed since it was admitted; restart the app to re-check it"
            )
        doc = json.loads(raw)
        self._docs[v.path] = doc
        while len(self._docs) > keep:
            self._docs.popitem(last=False)
        return doc


def model_key(v: Verdict) -> str:
    """Stable id of a shown model within an edition: its file name."""
    return Path(v.path).name


def load_board(
    results_dir: str | os.PathLike[str] | None = None,
    *,
    data_dir: str | None = None,
    trusted_keys: str | os.PathLike[str] | None = None,
    allow_hub: bool = True,
    data: DataSource | None = None,
    B: int = B_DEFAULT,
    editions: dict[str, Edition] | None = None,
) -> Board:
    folder = Path(results_dir) if results_dir else default_results_dir()
    data = data or DataSource(data_dir=data_dir, allow_hub=allow_hub)
    verdicts = admit(
        find_result_files(folder), trusted=load_trusted_keys(trusted_keys), data=data, editions=editions
    )
    return Board(verdicts=verdicts, data=data, results_dir=str(folder), B=B, editions=dict(editions or {}))
