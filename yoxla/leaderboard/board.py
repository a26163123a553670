"""Loading: every result file under a folder, admitted once, with per-edition views.

``load_board`` reads ``results/**/*.json``, runs admission on each (cached by the digest of
the file's bytes) and keeps the verdicts. Per edition the board hands out the models that
are shown, their bootstrap replicates (computed once, lazily) and, for the error explorer,
the full document of one file (re-read on demand and checked against the admitted digest,
so the explorer never shows bytes that were not admitted).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from yoxla.editions import EDITIONS, Edition, load_edition
from yoxla.leaderboard.admission import MAX_BYTES, admit, load_trusted_keys
from yoxla.leaderboard.bootstrap import B_DEFAULT, Boot, TaskInput, run_bootstrap
from yoxla.leaderboard.data import DataSource
from yoxla.leaderboard.verdict import TaskRecord, Verdict
from yoxla.strictjson import loads_strict, read_regular_file
from yoxla.walk import walk_files

if TYPE_CHECKING:
    from yoxla.suites.loader import SuiteManifest

RESULTS_ENV = "YOXLA_RESULTS_DIR"


def default_results_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """``$YOXLA_RESULTS_DIR``, else ``results/`` of the repository ``root``
    (:func:`yoxla.suites.registry.repo_root`: given, else ``$YOXLA_ROOT``, else the working
    directory)."""
    from yoxla.suites.registry import repo_root

    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env)
    return repo_root(root) / "results"


MAX_FILES = 10_000
MAX_DEPTH = 8


def find_result_files(folder: str | os.PathLike[str]) -> list[Path]:
    """Every ``*.json`` entry under ``folder``, whatever it is (admission says what is wrong with it).

    Directories are walked without following symbolic links (no loops), at most
    :data:`MAX_DEPTH` levels and :data:`MAX_FILES` entries; ``partial/`` is skipped (partial
    runs never reach the board).
    """
    return walk_files(
        Path(folder),
        max_depth=MAX_DEPTH,
        max_files=MAX_FILES,
        enter=lambda entry, depth: not (depth == 0 and entry.name == "partial"),
        keep=lambda entry: entry.name.endswith(".json"),
    )


@dataclass
class Board:
    verdicts: list[Verdict]
    data: DataSource
    results_dir: str = ""
    B: int = B_DEFAULT
    editions: dict[str, Edition] = field(default_factory=dict)
    _boot: dict[str, Boot] = field(default_factory=dict, repr=False)
    _docs: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict, repr=False)
    _resampled: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _metas: dict[str, SuiteMeta] = field(default_factory=dict, repr=False)

    # Views ----------------------------------------------------------------------------
    def shown(self, edition: str, group: str = "standard") -> list[Verdict]:
        """Ranked models of one board: admitted, re-checked, not superseded, under the same
        run conditions (``standard``: reasoning off, the contract's prompts and temperature);
        best YOXLA score first (ties by name)."""
        rows = [
            v for v in self.verdicts if v.shown and v.rechecked and v.edition == edition and v.group == group
        ]
        return sorted(rows, key=lambda v: (-float(v.scores.get("yoxla", 0.0)), v.name, v.key))

    def unchecked(self, edition: str) -> list[Verdict]:
        """Admitted files whose scores could not be re-checked here (the edition's rows are not
        available): listed apart, never ranked with re-checked ones."""
        rows = [v for v in self.verdicts if v.shown and not v.rechecked and v.edition == edition]
        return sorted(rows, key=lambda v: (v.name, v.key))

    def groups(self, edition: str) -> list[str]:
        """The boards of an edition that have ranked models (standard first)."""
        found = {v.group for v in self.verdicts if v.shown and v.rechecked and v.edition == edition}
        return [g for g in ("standard", "thinking", "non-standard") if g in found]

    def excluded(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.shown]

    def listed(self, edition: str | None = None, suite: str | None = None) -> list[Verdict]:
        """The files listed with the board of ``edition`` (or of ``suite``): a benchmark file with
        its edition's, a suite file with its suite's, and a file that names no board here
        (unreadable, an unknown edition or suite) with every board. Neither given: every file."""
        if edition is None and suite is None:
            return list(self.verdicts)
        boards = set(self.suite_boards())

        def belongs(v: Verdict) -> bool:
            if v.suite is not None:
                return v.suite == suite or v.suite not in boards
            if v.edition is not None and v.edition in EDITIONS:
                return v.edition == edition
            return True

        return [v for v in self.verdicts if belongs(v)]

    def admission_line(self, edition: str | None = None, suite: str | None = None) -> str:
        """One line: how many files of a board (of all, by default) are admitted (re-checked or
        not), excluded and superseded."""
        vs = self.listed(edition, suite)
        shown = [v for v in vs if v.shown]
        rechecked = sum(v.rechecked for v in shown)
        excluded = sum(v.status == "excluded" for v in vs)
        superseded = sum(v.status == "superseded" for v in vs)
        return (
            f"{len(shown)} admitted ({rechecked} re-checked, {len(shown) - rechecked} not re-checked), "
            f"{excluded} excluded, {superseded} superseded"
        )

    def default_edition(self) -> str:
        """The published benchmark (the first edition): its re-checked files, or until there
        are any the results its authors reported, fill the first screen."""
        return EDITIONS[0]

    def edition(self, name: str) -> Edition:
        return self.editions.get(name) or load_edition(name)

    def model(self, edition: str, key: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.shown and v.edition == edition and v.key == key), None)

    def rows(self, edition: str) -> dict[str, list[dict[str, Any]]] | None:
        return self.data.rows(self.edition(edition)).rows

    def task_ids(self, edition: str) -> list[str]:
        return list(self.edition(edition).tasks)

    # Ranking order ----------------------------------------------------------------------
    def ranking(self, edition: str) -> tuple[str, ...]:
        """The ranking order the edition declares (declarations ``ranking``)."""
        from yoxla.leaderboard.legacy_v2 import edition_ranking

        return edition_ranking(self.edition(edition))

    def explain_order(self, edition: str) -> str:
        """The board's ranking rule in one sentence, for its caption."""
        from yoxla.calibration.ranking import explain_order

        return explain_order(self.ranking(edition))

    def ranked(self, edition: str, group: str = "standard", task_id: str | None = None) -> list[Verdict]:
        """The models of one board sorted by the declared order, best first (ties: :meth:`shown`'s order).

        For the whole edition the entries are the YOXLA score and the calibration pooled over
        its tasks; with ``task_id``, that task's score and calibration.
        """
        from yoxla.calibration.ranking import rank

        models = self.shown(edition, group)
        entries = [{**m.ranking_entry(task_id), "_i": i} for i, m in enumerate(models)]
        return [models[e["_i"]] for e in rank(entries, self.ranking(edition))]

    # Bootstrap ------------------------------------------------------------------------
    def boot(self, edition: str, group: str = "standard") -> Boot:
        """Bootstrap replicates of one board (edition and run conditions), computed once."""
        key = f"{edition}/{group}"
        if key not in self._boot:
            self._boot[key] = self._run_boot(edition, group)
        return self._boot[key]

    def _run_boot(self, edition: str, group: str = "standard") -> Boot:
        from yoxla.suites.benchmark import gold_field

        meta = self.benchmark_meta(edition)
        by_groups = meta.headline_rule == "mean_of_groups"
        group_of = {tid: gid for gid, tids in meta.groups.items() for tid in tids}
        models = self.shown(edition, group)
        rows = self.rows(edition)
        inputs: list[TaskInput] = []
        for tid in self.task_ids(edition):
            block = group_of.get(tid, "") if by_groups else "suite"
            point = np.array([m.tasks[tid].score if tid in m.tasks else 0.0 for m in models], dtype=float)
            found = [m.tasks.get(tid) for m in models]
            recs = [r for r in found if r is not None]
            aligned = bool(recs) and len(recs) == len(found) and all(r.ids == recs[0].ids for r in recs)
            # Controls (declared, run but not scored) are left out, as from the task score.
            keep = recs[0].control if recs else None
            same_controls = all(
                (r.control is None and keep is None)
                or (r.control is not None and keep is not None and np.array_equal(r.control, keep))
                for r in recs
            )
            if not aligned or not same_controls:
                inputs.append(TaskInput(tid, block, point, None))
                continue
            scores = np.vstack([r.scored_scores for r in recs])
            if meta.primary.get(tid) in CORRELATIONS:  # a rank correlation over the task: resampled as one
                preds = [r.prediction for r in recs]
                if rows is None or any(p is None for p in preds):
                    inputs.append(TaskInput(tid, block, point, None))
                    continue
                gold = np.array([float(r[gold_field(tid)]) for r in rows[tid]], dtype=float)
                stacked = np.vstack(preds)  # type: ignore[arg-type]
                if keep is not None:
                    gold, stacked = gold[~keep], stacked[:, ~keep]
                inputs.append(TaskInput(tid, block, point, scores, stacked, gold))
            else:
                inputs.append(TaskInput(tid, block, point, scores))
        blocks = list(meta.groups) if by_groups else ["suite"]
        return run_bootstrap(inputs, blocks, len(models), B=self.B)

    def benchmark_meta(self, edition: str) -> SuiteMeta:
        """What an edition's board shows about its package suite (``yoxla/editions/yoxla-<edition>.yaml``,
        :func:`~yoxla.suites.registry.manifest_path`), as :meth:`suite_meta` for a committed suite:
        its tasks and groups in the edition's task order. A package suite that does not load
        leaves the edition's task ids, no groups and the generic headline (the app still starts)."""
        if edition not in self._metas:
            from yoxla.suites.errors import ManifestError
            from yoxla.suites.loader import load_manifest
            from yoxla.suites.registry import manifest_path, repo_path

            shown = [v for v in self.verdicts if v.shown and v.edition == edition]
            tids = self.task_ids(edition)
            try:
                path = manifest_path(edition)
                manifest = load_manifest(path)
            except ManifestError:
                self._metas[edition] = _meta(edition, None, "", shown, edition, tids)
            else:
                self._metas[edition] = _meta(edition, manifest, repo_path(path), shown, edition, tids)
        return self._metas[edition]

    # Suites: one board per committed suite -------------------------------------------------
    # The same accessors as the editions', keyed by suite id; a suite file's verdict has
    # ``edition`` None and ``suite`` set, its tasks are TaskRecord.from_suite records.
    def suites(self) -> list[str]:
        """Suite ids that have ranked (admitted, re-checked, shown) files, sorted."""
        return sorted({v.suite for v in self.verdicts if v.shown and v.rechecked and v.suite is not None})

    def suite_boards(self) -> list[str]:
        """Every suite with a board in the app: each suite committed under ``suites/`` (an empty
        board until a file of it is admitted) and any suite with ranked files, sorted. The
        package's benchmark suites (``yoxla-sample``, ``yoxla-v1``) have none: their files are
        admitted onto their editions' boards (:func:`~yoxla.suites.registry.edition_of`)."""
        from yoxla.suites.registry import package_suites_dir

        try:
            suites = self.data.suites
            package = package_suites_dir()
            committed = [sid for sid in suites.ids() if not _under(suites.get(sid)[0], package)]
        except Exception:  # an unreadable suites folder leaves the suites with files
            committed = []
        return sorted(set(self.suites()) | set(committed))

    def suite_shown(self, suite_id: str, group: str = "standard") -> list[Verdict]:
        """Ranked models of one suite board: best suite score first (ties by name)."""
        rows = [
            v for v in self.verdicts if v.shown and v.rechecked and v.suite == suite_id and v.group == group
        ]

        def key(v: Verdict) -> tuple[float, str, str]:
            score = v.scores.get("suite")
            return (-float(score) if score is not None else float("inf"), v.name, v.key)

        return sorted(rows, key=key)

    def suite_ranking(self, suite_id: str) -> tuple[str, ...]:
        """The order a suite declares (its manifest's ``metadata.ranking``), else the suite score."""
        from yoxla.calibration.ranking import SUITE_ORDER

        suite, _ = self.data.suites.get(suite_id)
        declared = suite.manifest.ranking if suite is not None else None
        return declared or SUITE_ORDER

    def suite_explain_order(self, suite_id: str) -> str:
        """A suite board's ranking rule in one sentence, for its caption."""
        from yoxla.calibration.ranking import SUITE_WORDS, explain_order

        return explain_order(self.suite_ranking(suite_id), SUITE_WORDS)

    def suite_ranked(self, suite_id: str, group: str = "standard") -> list[Verdict]:
        """The models of a suite board in the suite's declared order, best first (ties:
        :meth:`suite_shown`'s order)."""
        from yoxla.calibration.ranking import rank

        models = self.suite_shown(suite_id, group)
        entries = [{**m.ranking_entry(), "_i": i} for i, m in enumerate(models)]
        return [models[e["_i"]] for e in rank(entries, self.suite_ranking(suite_id))]

    def suite_unchecked(self, suite_id: str) -> list[Verdict]:
        """Admitted files of a suite whose Hub data could not be read here: listed apart, never ranked."""
        rows = [v for v in self.verdicts if v.shown and not v.rechecked and v.suite == suite_id]
        return sorted(rows, key=lambda v: (v.name, v.key))

    def suite_groups(self, suite_id: str) -> list[str]:
        """The boards of a suite that have ranked models (standard first)."""
        found = {v.group for v in self.verdicts if v.shown and v.rechecked and v.suite == suite_id}
        return [g for g in ("standard", "thinking", "non-standard") if g in found]

    def suite_model(self, suite_id: str, key: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.shown and v.suite == suite_id and v.key == key), None)

    def suite_meta(self, suite_id: str) -> SuiteMeta:
        """What a suite board shows about the suite: name, description, tasks, breakdowns, judge."""
        suite, _ = self.data.suites.get(suite_id)
        shown = [v for v in self.verdicts if v.shown and v.suite == suite_id]
        if suite is None:
            tids = list(dict.fromkeys(t for v in shown for t in v.tasks))
            return _meta(suite_id, None, "", shown, None, tids)
        return _meta(suite_id, suite.manifest, suite.repo_path, shown, None, None)

    def suite_task_ids(self, suite_id: str) -> list[str]:
        return list(self.suite_meta(suite_id).tasks)

    def suite_items(self, suite_id: str, task_id: str) -> dict[str, Any]:
        """The committed task's items by id (``row``, ``target``, the exact ``messages`` a model
        was sent, few-shot included) for the error explorer; {} when the suite is not usable."""
        source = self.data.suites
        suite, _ = source.get(suite_id)
        if suite is None or source.prepare(suite) is not None or suite.prepared is None:
            return {}
        prepared = suite.prepared.get(task_id)
        return {} if prepared is None else {item.id: item for item in prepared.items}

    def suite_boot(self, suite_id: str, group: str = "standard") -> Boot:
        """Bootstrap replicates of a suite board (``group``: its run conditions): per task, and
        the suite score as their mean, or, under the headline rule ``mean_of_groups``, as the
        mean of the group means (the manifest's ``groups`` as blocks). A task without per-sample
        scores of its mean primary metric (batch graders, grader errors) gets no interval (its
        replicates are its score); a lower-is-better task is left out, as in the score."""
        key = f"suite:{suite_id}/{group}"
        if key not in self._boot:
            meta = self.suite_meta(suite_id)
            by_groups = meta.headline_rule == "mean_of_groups"
            group_of = {tid: gid for gid, tids in meta.groups.items() for tid in tids}
            models = self.suite_shown(suite_id, group)
            inputs: list[TaskInput] = []
            resampled: set[str] = set()
            for tid in self.suite_task_ids(suite_id):
                found = [m.tasks.get(tid) for m in models]
                recs = [r for r in found if r is not None and np.isfinite(r.score)]
                if not recs or len(recs) != len(models):
                    continue
                point = np.array([r.score for r in recs], dtype=float)
                aligned = all(r.ids == recs[0].ids and _mean_based(r) for r in recs)
                # controls (the task's metadata.control_field) are left out, as from the task score
                scores = np.vstack([r.scored_scores for r in recs]) if aligned else None
                if aligned:
                    resampled.add(tid)
                block = (
                    group_of.get(tid, "") if by_groups else "suite"
                )  # "": in no group, not in the headline
                inputs.append(TaskInput(tid, block, point, scores))
            blocks = list(meta.groups) if by_groups else ["suite"]
            self._boot[key] = run_bootstrap(inputs, blocks, len(models), B=self.B)
            self._resampled[key] = resampled
        return self._boot[key]

    def suite_interval_tasks(self, suite_id: str, group: str = "standard") -> set[str]:
        """The tasks of a suite board whose replicates resample examples (the others have no interval)."""
        self.suite_boot(suite_id, group)
        return set(self._resampled[f"suite:{suite_id}/{group}"])

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


CORRELATIONS = ("spearman", "pearson")  # primary metrics that are a correlation over the task, not a mean


def _meta(
    board_id: str,
    m: SuiteManifest | None,
    path: str,
    shown: list[Verdict],
    edition: str | None,
    order: list[str] | None,
) -> SuiteMeta:
    """A board's :class:`SuiteMeta` from its manifest (None: it is not here; ``order``'s task ids
    alone); ``order`` (a benchmark edition's task ids) orders the tasks and each group's."""
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
    processes: :func:`yoxla.leaderboard.workers.admission_workers`)."""
    say = log or (lambda _msg: None)
    folder = Path(results_dir) if results_dir else default_results_dir()
    if data is None:
        from yoxla.leaderboard.committed import CommittedSuites

        data = DataSource(data_dir=data_dir, allow_hub=allow_hub, suites=CommittedSuites(allow_hub=allow_hub))
    files = find_result_files(folder)
    from yoxla.leaderboard import cache as disk

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
