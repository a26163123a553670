"""Loading: every result file under a folder, admitted once, with per-edition views.

``load_board`` reads ``results/**/*.json``, runs admission on each (cached by the digest of
the file's bytes) and keeps the verdicts. Per edition the board hands out the models that
are shown, their bootstrap replicates (computed once, lazily) and, for the error explorer,
the full document of one file (re-read on demand and checked against the admitted digest,
so the explorer never shows bytes that were not admitted).
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import MAX_BYTES, admit, load_trusted_keys
from yoxla.admission.verdict import TaskRecord, Verdict
from yoxla.board.bootstrap import B_DEFAULT, Boot, TaskInput, run_bootstrap
from yoxla.data.editions import EDITIONS, Edition, load_edition
from yoxla.safe.strictjson import loads_strict, read_regular_file
from yoxla.safe.walk import walk_files

if TYPE_CHECKING:
    from yoxla.contract.loader import SuiteManifest

RESULTS_ENV = "YOXLA_RESULTS_DIR"


def default_results_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """``$YOXLA_RESULTS_DIR``, else ``results/`` of the repository ``root``
    (:func:`yoxla.contract.registry.repo_root`: given, else ``$YOXLA_ROOT``, else the working
    directory)."""
    from yoxla.contract.registry import repo_root

    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env)
    return repo_root(root) / "results"


MAX_FILES = 10_000
MAX_DEPTH = 8


def find_result_files(folder: str | os.PathLike[str]) -> list[Path]:
    """Every ``*.json`` entry under ``folder``, whatever it is (admission says what is wrong with it);
    links are not followed, ``partial/`` is skipped (partial runs never reach the board)."""
    return walk_files(
        Path(folder),
        max_depth=MAX_DEPTH,
        max_files=MAX_FILES,
        enter=lambda entry, depth: not (depth == 0 and entry.name == "partial"),
        keep=lambda entry: entry.name.endswith(".json"),
    )


SUITE_PREFIX = "suite:"


def suite_board_id(suite_id: str) -> str:
    """The board id of a suite (the picker's value): ``suite:<id>``, never an edition's name."""
    return SUITE_PREFIX + suite_id


def suite_of(board_id: str | None) -> str | None:
    """The suite id of a suite board's id, else None."""
    return board_id[len(SUITE_PREFIX) :] if board_id and board_id.startswith(SUITE_PREFIX) else None


@dataclass
class Board:
    """The admitted files and, per board, what is shown on it. A board is named by its id: a
    benchmark edition's name (``v1``, ``sample``: its package suite's board) or ``suite:<id>``
    (a committed suite's); every accessor takes that id (:meth:`board_of` names a file's)."""

    verdicts: list[Verdict]
    data: DataSource
    results_dir: str = ""
    B: int = B_DEFAULT
    editions: dict[str, Edition] = field(default_factory=dict)
    _boot: dict[str, tuple[Boot, set[str]]] = field(default_factory=dict, repr=False)
    _docs: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict, repr=False)
    _metas: dict[str, SuiteMeta] = field(default_factory=dict, repr=False)

    # Views ----------------------------------------------------------------------------
    @staticmethod
    def board_of(v: Verdict) -> str | None:
        """The board a file is on: its suite's (``suite:<id>``), else its edition's (None: neither)."""
        return suite_board_id(v.suite) if v.suite is not None else v.edition

    def boards(self) -> list[str]:
        """Every board of the app: the editions, then :meth:`suite_boards` as ``suite:<id>``."""
        return [*EDITIONS, *(suite_board_id(sid) for sid in self.suite_boards())]

    def _on(self, board: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.shown and self.board_of(v) == board]

    def shown(self, board: str, group: str = "standard") -> list[Verdict]:
        """Ranked models of one board: admitted, re-checked, not superseded, under the same
        run conditions (``standard``: reasoning off, the contract's prompts and temperature);
        best headline score (YOXLA, a suite's suite score) first (ties by name)."""

        def key(v: Verdict) -> tuple[float, str, str]:
            score = headline(v)
            return (-score if not math.isnan(score) else math.inf, v.name, v.key)

        return sorted((v for v in self._on(board) if v.rechecked and v.group == group), key=key)

    def unchecked(self, board: str) -> list[Verdict]:
        """Admitted files whose scores could not be re-checked here (the rows or Hub data are
        not available): listed apart, never ranked with re-checked ones."""
        return sorted((v for v in self._on(board) if not v.rechecked), key=lambda v: (v.name, v.key))

    def groups(self, board: str) -> list[str]:
        """The run conditions of a board that have ranked models (standard first)."""
        found = {v.group for v in self._on(board) if v.rechecked}
        return [g for g in ("standard", "thinking", "non-standard") if g in found]

    def excluded(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.shown]

    def listed(self, board: str | None = None) -> list[Verdict]:
        """The files listed with a board: its own, and a file that names no board here
        (unreadable, an unknown edition or suite) with every board. None: every file."""
        if board is None:
            return list(self.verdicts)
        known = set(self.boards())
        return [
            v for v in self.verdicts if self.board_of(v) in (board, None) or self.board_of(v) not in known
        ]

    def admission_line(self, board: str | None = None) -> str:
        """How many files of a board (default: all) are admitted, excluded and superseded."""
        vs = self.listed(board)
        shown = [v for v in vs if v.shown]
        rechecked = sum(v.rechecked for v in shown)
        excluded = sum(v.status == "excluded" for v in vs)
        superseded = sum(v.status == "superseded" for v in vs)
        return (
            f"{len(shown)} admitted ({rechecked} re-checked, {len(shown) - rechecked} not re-checked), "
            f"{excluded} excluded, {superseded} superseded"
        )

    def default_edition(self) -> str:
        """The published benchmark (the first edition) fills the first screen."""
        return EDITIONS[0]

    def edition(self, name: str) -> Edition:
        return self.editions.get(name) or load_edition(name)

    def model(self, board: str, key: str) -> Verdict | None:
        return next((v for v in self._on(board) if v.key == key), None)

    def rows(self, board: str) -> dict[str, list[dict[str, Any]]] | None:
        """A benchmark board's rows (None: not here, or a committed suite's board)."""
        edition = self.meta(board).edition
        return self.data.rows(self.edition(edition)).rows if edition is not None else None

    def task_ids(self, board: str) -> list[str]:
        return list(self.meta(board).tasks)

    def meta(self, board: str) -> SuiteMeta:
        """The suite a board shows: a committed suite, or an edition's package suite (its tasks and
        groups in the edition's order). One that does not load leaves its files' task ids (an
        edition: its own), no groups and the generic headline (the app still starts)."""
        if board not in self._metas:
            self._metas[board] = self._load_meta(board)
        return self._metas[board]

    def _load_meta(self, board: str) -> SuiteMeta:
        from yoxla.contract.errors import ManifestError
        from yoxla.contract.loader import load_manifest
        from yoxla.contract.registry import manifest_path, repo_path

        shown = self._on(board)
        sid = suite_of(board)
        if sid is not None:
            suite, _ = self.data.suites.get(sid)
            if suite is None:
                tids = list(dict.fromkeys(t for v in shown for t in v.tasks))
                return _meta(sid, None, "", shown, None, tids)
            return _meta(sid, suite.manifest, suite.repo_path, shown, None, None)
        tids = list(self.edition(board).tasks)
        try:
            path = manifest_path(board)
            manifest = load_manifest(path)
        except ManifestError:
            return _meta(board, None, "", shown, board, tids)
        return _meta(board, manifest, repo_path(path), shown, board, tids)

    def items(self, board: str, task_id: str) -> dict[str, Any]:
        """A committed suite's task items by id (``row``, ``target``, the exact ``messages`` a
        model was sent, few-shot included) for the error explorer; {} when the suite is not
        usable, and on a benchmark board (its explorer shows the edition's rows, :meth:`rows`)."""
        source, sid = self.data.suites, suite_of(board)
        suite = source.get(sid)[0] if sid is not None else None
        if suite is None or source.prepare(suite) is not None or suite.prepared is None:
            return {}
        prepared = suite.prepared.get(task_id)
        return {} if prepared is None else {item.id: item for item in prepared.items}

    # Suites: one board per committed suite ---------------------------------------------------
    def suites(self) -> list[str]:
        """Suite ids that have ranked (admitted, re-checked, shown) files, sorted."""
        return sorted({v.suite for v in self.verdicts if v.shown and v.rechecked and v.suite is not None})

    def suite_boards(self) -> list[str]:
        """Every suite committed under ``suites/`` (an empty board until a file of it is admitted) and
        any suite with ranked files, sorted; the package's suites' files are on their editions' boards."""
        from yoxla.contract.registry import package_suites_dir

        try:
            suites = self.data.suites
            package = package_suites_dir()
            committed = [sid for sid in suites.ids() if not _under(suites.get(sid)[0], package)]
        except Exception:  # an unreadable suites folder leaves the suites with files
            committed = []
        return sorted(set(self.suites()) | set(committed))

    # Ranking order ----------------------------------------------------------------------
    def ranking(self, board: str) -> tuple[str, ...]:
        """The ranking order the board's suite declares, else the suite score (an edition made in
        code with its own analysis section: its order, else the default order)."""
        from yoxla.score.calibration.ranking import DEFAULT_ORDER, SUITE_ORDER

        own = getattr(self.editions.get(board), "analysis", None)
        if own is not None:
            return tuple(own.ranking) if own.ranking is not None else DEFAULT_ORDER
        return self.meta(board).ranking or SUITE_ORDER

    def explain_order(self, board: str) -> str:
        """The board's ranking rule in one sentence, for its caption (a committed suite names
        its score the suite score)."""
        from yoxla.score.calibration.ranking import SUITE_WORDS, explain_order

        return explain_order(self.ranking(board), None if self.meta(board).edition else SUITE_WORDS)

    def ranked(self, board: str, group: str = "standard", task_id: str | None = None) -> list[Verdict]:
        """The models of one board in the declared order, best first (ties: :meth:`shown`'s order);
        with ``task_id``, by that task's entries."""
        from yoxla.score.calibration.ranking import rank

        models = self.shown(board, group)
        entries = [{**m.ranking_entry(task_id), "_i": i} for i, m in enumerate(models)]
        return [models[e["_i"]] for e in rank(entries, self.ranking(board))]

    # Bootstrap ------------------------------------------------------------------------
    def boot(self, board: str, group: str = "standard") -> Boot:
        """Bootstrap replicates of one board (``group``: its run conditions), computed once: per
        task, and the headline as their mean (``mean_of_groups``: of the group means). The rule
        (docs/leaderboard.md, "Eval suites") holds where every model has a finite score on the same
        examples with the same controls; a task some model lacks, or lower-is-better (NaN score),
        is left out, as from the headline. :meth:`interval_tasks` names the resampled tasks."""
        key = f"{board}/{group}"
        if key not in self._boot:
            self._boot[key] = self._run_boot(board, group)
        return self._boot[key][0]

    def interval_tasks(self, board: str, group: str = "standard") -> set[str]:
        """The tasks of a board whose replicates resample examples (the others have no interval)."""
        self.boot(board, group)
        return set(self._boot[f"{board}/{group}"][1])

    def _run_boot(self, board: str, group: str) -> tuple[Boot, set[str]]:
        meta = self.meta(board)
        by_groups = meta.headline_rule == "mean_of_groups"
        group_of = {tid: gid for gid, tids in meta.groups.items() for tid in tids}
        models = self.shown(board, group)
        inputs: list[TaskInput] = []
        resampled: set[str] = set()
        for tid in self.task_ids(board):
            found = [m.tasks.get(tid) for m in models]
            recs = [r for r in found if r is not None and np.isfinite(r.score)]
            if not recs or len(recs) != len(models):
                continue
            block = group_of.get(tid, "") if by_groups else "suite"  # "": in no group, not in the headline
            task = TaskInput(tid, block, np.array([r.score for r in recs], dtype=float), None)
            if all(r.ids == recs[0].ids and _same(r.control, recs[0].control) for r in recs):
                if meta.primary.get(tid) in CORRELATIONS:
                    task = self._correlation(board, task, recs)
                elif all(_mean_based(r) for r in recs):
                    task.scores = np.vstack([r.scored_scores for r in recs])
            if task.scores is not None:
                resampled.add(tid)
            inputs.append(task)
        blocks = list(meta.groups) if by_groups else ["suite"]
        return run_bootstrap(inputs, blocks, len(models), B=self.B), resampled

    def _correlation(self, board: str, task: TaskInput, recs: list[TaskRecord]) -> TaskInput:
        """``task`` with every model's predictions and the rows' gold values (controls left out)."""
        from yoxla.contract.benchmark import gold_field

        rows = self.rows(board)
        preds = [r.prediction for r in recs]
        if rows is None or any(p is None for p in preds):
            return task
        keep = recs[0].control
        gold = np.array([float(r[gold_field(task.task_id)]) for r in rows[task.task_id]], dtype=float)
        stacked = np.vstack(preds)  # type: ignore[arg-type]
        if keep is not None:
            gold, stacked = gold[~keep], stacked[:, ~keep]
        scores = np.vstack([r.scored_scores for r in recs])
        return replace(task, scores=scores, prediction=stacked, gold=gold)

    # Documents for the explorer ---------------------------------------------------------
    def document(self, v: Verdict, keep: int = 4) -> dict[str, Any]:
        if v.path in self._docs:
            self._docs.move_to_end(v.path)
            return self._docs[v.path]
        raw, _ = read_regular_file(v.path, MAX_BYTES, self.results_dir or None)
        if raw is None or "sha256:" + hashlib.sha256(raw).hexdigest() != v.sha256:
            raise RuntimeError(f"{v.key} changed since it was admitted; restart the app to re-check it")
        doc = loads_strict(raw)
        self._docs[v.path] = doc
        while len(self._docs) > keep:
            self._docs.popitem(last=False)
        return doc


def headline(v: Verdict) -> float:
    """The board's headline score of a file: YOXLA, or a suite board's suite score (NaN when absent)."""
    value = v.scores.get("yoxla") if "yoxla" in v.scores else v.scores.get("suite")
    return float(value) if isinstance(value, int | float) else float("nan")


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _mean_based(r: TaskRecord) -> bool:
    """Is the task score the mean of the per-sample scores (so resampling samples is right)?"""
    scores = r.scored_scores
    if not len(scores) or not np.isfinite(scores).all():
        return False
    return bool(abs(min(1.0, max(0.0, float(scores.mean()))) * 100.0 - r.score) < 1e-6)


@dataclass(frozen=True)
class SuiteMeta:
    """The suite a board shows, as the board presents it: a committed suite, or the package
    suite of a benchmark edition (``edition`` set)."""

    id: str
    name: str
    description: str
    path: str  # the manifest in the repository ("" when the suite is not committed here)
    tasks: dict[str, str]  # task id -> name, in manifest order (a benchmark board: the edition's)
    breakdowns: dict[str, list[str]]  # task id -> row fields of metadata.breakdowns
    judge_scored_tasks: list[str]  # tasks whose shown results were scored with a judge model
    judge_models: list[str]
    types: dict[str, str] = field(default_factory=dict)  # task id -> the manifest's type label
    primary: dict[str, str] = field(default_factory=dict)  # task id -> its primary (first) metric
    choices: dict[str, list[str]] = field(default_factory=dict)  # task id -> its choices, if any
    # The manifest's groups (YOXLA): group id -> its task ids, in order; names; the headline.
    groups: dict[str, list[str]] = field(default_factory=dict)
    group_names: dict[str, str] = field(default_factory=dict)
    headline_name: str | None = None
    headline_rule: str = "mean_of_tasks"
    edition: str | None = None  # the benchmark edition whose package suite this is (None: a committed suite)
    ranking: tuple[str, ...] | None = None  # the order the suite declares (None: none)


CORRELATIONS = ("spearman", "pearson")  # primary metrics that are a correlation over the task, not a mean


def _meta(
    board_id: str,
    m: SuiteManifest | None,
    path: str,
    shown: list[Verdict],
    edition: str | None,
    order: list[str] | None,
) -> SuiteMeta:
    """A board's :class:`SuiteMeta` from its manifest (None: ``order``'s task ids alone);
    ``order`` (an edition's task ids) orders the tasks and each group's."""
    judged = sorted({tid for v in shown for tid, t in v.tasks.items() if t.judge_scored})
    judges = sorted({v.judge for v in shown if v.judge})
    if m is None:
        tids = list(order or ())
        return SuiteMeta(
            board_id, board_id, "", "", {t: t for t in tids}, {}, judged, judges, edition=edition
        )
    tids = [t for t in order if t in m.tasks] if order is not None else list(m.tasks)

    def ordered(members: Sequence[str]) -> list[str]:
        return [t for t in tids if t in members] if order is not None else list(members)

    groups = {g.id: ordered(g.tasks) for g in m.groups}
    groups = {g: ts for g, ts in groups.items() if ts or order is None}
    tasks = {tid: m.tasks[tid] for tid in tids}
    return SuiteMeta(
        id=m.metadata.get("name", board_id) if edition is not None else board_id,
        name=m.metadata.get("name", board_id),
        description=m.metadata.get("description", ""),
        path=path,
        tasks={tid: t.spec.name or tid for tid, t in tasks.items()},
        breakdowns={tid: list(t.spec.breakdowns) for tid, t in tasks.items() if t.spec.breakdowns},
        judge_scored_tasks=judged,
        judge_models=judges,
        types={tid: t.spec.type for tid, t in tasks.items()},
        primary={tid: t.primary for tid, t in tasks.items() if t.primary},
        choices={tid: list(t.choices) for tid, t in tasks.items() if t.choices},
        groups=groups,
        group_names={g.id: g.name or g.id for g in m.groups if g.id in groups},
        headline_name=m.headline_name,
        headline_rule=m.headline_rule,
        edition=edition,
        ranking=m.ranking,
    )


def model_key(v: Verdict) -> str:
    """Stable id of a model on the board: its file's path under the results folder."""
    return v.key


def load_board(
    results_dir: str | os.PathLike[str] | None = None,
    *,
    data_dir: str | None = None,
    trusted_keys: str | os.PathLike[str] | None = None,
    allow_hub: bool = True,
    data: DataSource | None = None,
    B: int = B_DEFAULT,
    editions: dict[str, Edition] | None = None,
    log: Callable[[str], None] | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Board:
    """Admit every result file under ``results_dir``; ``log`` hears what is being done, and
    ``progress(done, total)`` each file checked (files not cached are checked in ``workers``
    processes: :func:`yoxla.admission.workers.admission_workers`)."""
    say = log or (lambda _msg: None)
    folder = Path(results_dir) if results_dir else default_results_dir()
    if data is None:
        from yoxla.admission.committed import CommittedSuites

        data = DataSource(data_dir=data_dir, allow_hub=allow_hub, suites=CommittedSuites(allow_hub=allow_hub))
    files = find_result_files(folder)
    from yoxla.admission import cache as disk

    say(f"found {len(files)} result file(s) under {folder}; checking them ({disk.describe()})")
    t0 = time.perf_counter()
    last = [t0]

    def heard(done: int, total: int) -> None:
        now = time.perf_counter()
        if progress is not None:
            progress(done, total)
        if done == total or now - last[0] >= 5.0:
            last[0] = now
            say(f"checked {done} of {total} file(s)")

    verdicts = admit(
        files,
        trusted=load_trusted_keys(trusted_keys),
        data=data,
        editions=editions,
        root=folder,
        workers=workers,
        progress=heard,
    )
    board = Board(verdicts=verdicts, data=data, results_dir=str(folder), B=B, editions=dict(editions or {}))
    say(board.admission_line() + f" ({time.perf_counter() - t0:.1f} s)")
    return board


def _under(suite: Any, folder: Path) -> bool:
    """Whether a committed suite's manifest lies in ``folder``."""
    path = getattr(suite, "path", None)
    return path is not None and Path(path).resolve().parent == folder.resolve()
