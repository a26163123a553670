"""Everything the app's views read, computed once at start-up from the admitted board.

Per edition: each ranked board (the models run under the same conditions, with their
bootstrap intervals and rank ranges: docs/leaderboard.md states the rule), the files whose
scores could not be re-checked (kept apart, never ranked), the cue-only floors and chance
levels, and the reported results of that edition. Nothing here changes after :func:`prepare`,
so one instance is shared, read-only, by every visitor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from yoxla.admission.verdict import Verdict
from yoxla.board.bootstrap import Boot
from yoxla.board.breakdown import Field, RowValues, fields, row_values
from yoxla.board.floors import Reference, reference
from yoxla.board.loading import Board, SuiteMeta, headline
from yoxla.board.published import Publication, for_edition
from yoxla.views.texts import code

GROUPS = ("standard", "thinking", "non-standard")
GROUP_TITLES = {
    "standard": "Standard: reasoning off",
    "thinking": "Reasoning on (thinking)",
    "non-standard": "Changed temperature or system prompt",
}
BLOCK_TITLES = {
    "understanding": "Understanding",
    "language": "Language",
    "knowledge": "Knowledge",
    "rag": "RAG",
}
SIZE_BANDS = (
    ("under 4B", 0, 4e9),
    ("4–15B", 4e9, 15e9),
    ("15–40B", 15e9, 40e9),
    ("40–100B", 40e9, 100e9),
    ("over 100B", 100e9, float("inf")),
)
UNKNOWN = "unknown"
RANK_RULE = (
    "Rank: a range such as 1–3 means the 95% intervals cannot order the model more finely (from 1 + "
    "the models whose interval lies wholly above it, to the number of models minus those wholly below it)."
)
SUITE_SCORE = "Suite score"  # the headline's name where the suite gives none
ANNOTATIONS_ENV = "YOXLA_ANNOTATIONS_DIR"


def default_annotations_root(root: str | os.PathLike[str] | None = None) -> Path:
    """``$YOXLA_ANNOTATIONS_DIR``, else ``annotations/`` of the repository ``root`` (docs/annotation.md)."""
    from yoxla.contract.registry import repo_root

    env = os.environ.get(ANNOTATIONS_ENV)
    return Path(env) if env else repo_root(root) / "annotations"


def group_score(v: Verdict, group: str) -> float:
    """A file's score of a group: a benchmark file's block, a suite file's group (NaN when absent)."""
    found = v.scores.get("blocks") or v.scores.get("groups") or {}
    value = found.get(group)
    return float(value) if isinstance(value, int | float) else float("nan")


def block_title(block: str) -> str:
    return BLOCK_TITLES.get(block, block)


def rank_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank of every model from its interval and the others'."""
    m = len(lo)
    best = np.array([1 + int(np.sum(lo > hi[i])) for i in range(m)], dtype=int)
    worst = np.array([m - int(np.sum(hi < lo[i])) for i in range(m)], dtype=int)
    return best, worst


def rank_text(best: int, worst: int) -> str:
    return str(best) if best == worst else f"{best}–{worst}"


# Model metadata, as the file states it ------------------------------------------------------


def parameters(v: Verdict) -> int | None:
    md = v.model_info.metadata if v.model_info is not None else None
    return md.parameters if md is not None else None


def size_band(v: Verdict) -> str:
    n = parameters(v)
    if n is None:
        return UNKNOWN
    return next((name for name, lo, hi in SIZE_BANDS if lo <= n < hi), UNKNOWN)


def weights(v: Verdict) -> str:
    md = v.model_info.metadata if v.model_info is not None else None
    if md is None or md.open_weights is None:
        return UNKNOWN
    return "open" if md.open_weights else "closed"


def licence(v: Verdict) -> str:
    md = v.model_info.metadata if v.model_info is not None else None
    return " ".join(md.licence.split())[:80] if md is not None and md.licence else UNKNOWN


def size_text(v: Verdict) -> str:
    n = parameters(v)
    if n is None:
        return ""
    if n >= 1e9:
        return f"{n / 1e9:.3g}B"
    return f"{n / 1e6:.3g}M"


# Ranked boards ---------------------------------------------------------------------------------


@dataclass
class Ranked:
    """One ranked board: the re-checked models of an edition (or a suite) run under the same
    conditions, and what its suite says of its scores: the groups, their titles, the headline."""

    edition: str
    group: str
    models: list[Verdict]
    task_ids: list[str]
    blocks: list[str]  # the suite's groups (the benchmark's blocks) with a task here, in suite order
    headline: str = SUITE_SCORE  # the headline score's name (the suite's; the benchmark's: YOXLA)
    headline_rule: str = "mean_of_tasks"  # mean_of_groups | mean_of_tasks
    group_titles: dict[str, str] = field(default_factory=dict)  # group id -> its column title
    group_tasks: dict[str, list[str]] = field(default_factory=dict)  # group id -> its tasks here
    boot: Boot | None = None
    yoxla_lo: np.ndarray = field(default_factory=lambda: np.zeros(0))
    yoxla_hi: np.ndarray = field(default_factory=lambda: np.zeros(0))
    block_lo: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (m, len(boot.blocks))
    block_hi: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    task_lo: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (m, t)
    task_hi: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    rank_best: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    rank_worst: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    task_rank_best: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=int))
    task_rank_worst: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=int))
    by_key: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.models

    def index(self, key: str) -> int | None:
        return self.by_key.get(key)

    def rank(self, i: int) -> str:
        return rank_text(int(self.rank_best[i]), int(self.rank_worst[i]))

    def group_title(self, group: str) -> str:
        return self.group_titles.get(group, group)

    def yoxla_interval(self, i: int) -> tuple[float, float]:
        return float(self.yoxla_lo[i]), float(self.yoxla_hi[i])

    def task_rank(self, i: int, task_id: str) -> str:
        ti = self.task_ids.index(task_id)
        return rank_text(int(self.task_rank_best[i, ti]), int(self.task_rank_worst[i, ti]))

    def block_interval(self, i: int, block: str) -> tuple[float, float]:
        """A block's (or a suite group's) 95% interval; NaN where it was not resampled."""
        blocks = self.boot.blocks if self.boot is not None else []
        if block not in blocks or self.block_lo.shape[1] != len(blocks):
            return float("nan"), float("nan")
        bi = blocks.index(block)
        return float(self.block_lo[i, bi]), float(self.block_hi[i, bi])

    def task_interval(self, i: int, task_id: str) -> tuple[float, float]:
        ti = self.task_ids.index(task_id)
        return float(self.task_lo[i, ti]), float(self.task_hi[i, ti])


def rank_board(board: Board, board_id: str, group: str) -> Ranked:
    """One board under one run condition: its models in the order its suite declares
    (:meth:`Board.ranked`), intervals where the tasks resample (:meth:`Board.boot`).

    A task without an interval (lower is better, batch-graded, grader errors) has NaN bounds;
    the headline has an interval only when every task it averages has one (a task's fixed
    score would make it look narrower than it is). Without intervals, ranks come from the
    scores themselves (equal scores share a range): a lower-is-better task ranks by its raw
    value, lowest first.
    """
    meta = board.meta(board_id)
    tids = list(meta.tasks)
    found = {g: [t for t in tasks if t in tids] for g, tasks in meta.groups.items()}
    group_tasks = {g: tasks for g, tasks in found.items() if tasks}
    groups = list(group_tasks)
    models = board.ranked(board_id, group)
    headline_name = meta.headline_name or SUITE_SCORE
    # the benchmark's blocks keep their English titles; a committed suite's groups, their names
    titles = {g: block_title(g) if meta.edition else meta.group_names.get(g, g) for g in groups}
    r = Ranked(board_id, group, models, tids, groups, headline_name, meta.headline_rule)
    r.group_titles, r.group_tasks = titles, group_tasks
    r.by_key = {v.key: i for i, v in enumerate(models)}
    if not models:
        return r
    boot = _follow(board.boot(board_id, group), board.shown(board_id, group), models)
    resampled = board.interval_tasks(board_id, group)
    r.boot = boot
    m, t = len(models), len(tids)
    every = bool(boot.task_ids) and all(tid in resampled for tid in boot.task_ids)
    if every:
        r.yoxla_lo, r.yoxla_hi = Boot.interval(boot.yoxla_reps)
        r.rank_best, r.rank_worst = rank_ranges(r.yoxla_lo, r.yoxla_hi)
    else:
        r.yoxla_lo, r.yoxla_hi = np.full(m, np.nan), np.full(m, np.nan)
        points = _rankable(np.array([headline(v) for v in models], dtype=float))
        r.rank_best, r.rank_worst = rank_ranges(points, points)
    if every and boot.blocks and set(boot.blocks) <= set(meta.groups):
        r.block_lo, r.block_hi = Boot.interval(boot.block_reps)  # the groups, resampled
    else:
        r.block_lo, r.block_hi = np.zeros((m, 0)), np.zeros((m, 0))
    r.task_lo, r.task_hi = np.full((m, t), np.nan), np.full((m, t), np.nan)
    for bi, tid in enumerate(boot.task_ids):
        if tid in resampled:
            lo, hi = Boot.interval(boot.task_reps[:, bi, :])
            r.task_lo[:, tids.index(tid)], r.task_hi[:, tids.index(tid)] = lo, hi
    tb = np.zeros((m, t), dtype=int)
    tw = np.zeros_like(tb)
    for ti, tid in enumerate(tids):
        if np.isfinite(r.task_lo[:, ti]).all():
            tb[:, ti], tw[:, ti] = rank_ranges(r.task_lo[:, ti], r.task_hi[:, ti])
            continue
        recs = [v.tasks.get(tid) for v in models]
        points = _rankable(
            np.array(
                [np.nan if x is None else (x.score if x.higher_is_better else -x.primary_raw) for x in recs],
                dtype=float,
            )
        )
        tb[:, ti], tw[:, ti] = rank_ranges(points, points)
    r.task_rank_best, r.task_rank_worst = tb, tw
    return r


def _follow(boot: Boot, shown: list[Verdict], models: list[Verdict]) -> Boot:
    """``boot`` (one row per model of ``shown``) with its rows in the order of ``models``."""
    position = {v.key: i for i, v in enumerate(shown)}
    perm = np.array([position[v.key] for v in models], dtype=int)
    if np.array_equal(perm, np.arange(len(models))):
        return boot
    return replace(
        boot,
        task_reps=boot.task_reps[perm],
        block_reps=boot.block_reps[perm],
        yoxla_reps=boot.yoxla_reps[perm],
    )


def _rankable(points: np.ndarray) -> np.ndarray:
    """Scores to rank by (higher first): a missing one ranks below every other."""
    return np.where(np.isfinite(points), points, -np.inf)


@dataclass
class EditionData:
    """One board of the app: an edition of the benchmark (``v1``, ``sample``), or a committed eval
    suite (``suite:<id>``: no floors or reported results). The views read its headline and groups
    from its :attr:`standard` board."""

    name: str
    boards: dict[str, Ranked]  # every group; empty boards included
    unchecked: list[Verdict]
    reference: Reference
    publications: list[Publication]
    rows_problem: str | None  # why the edition's rows are not here (None: they are)
    suite: SuiteMeta  # the suite it shows: an edition's package suite, or a committed suite
    order: tuple[str, ...] = ()  # the ranking order (yoxla.score.calibration.ranking keys)
    order_text: str = ""  # the ranking rule in one sentence
    # Per task, each row's breakdown values by row id (the benchmark's rows, when here).
    row_values: dict[str, RowValues] = field(default_factory=dict)

    @property
    def breakdowns(self) -> dict[str, list[str]]:
        return self.suite.breakdowns

    @property
    def headline(self) -> str:
        return self.standard.headline

    @property
    def by_groups(self) -> bool:
        """Whether the headline is the mean of the suite's groups (the benchmark's: of its blocks)."""
        return self.standard.headline_rule == "mean_of_groups"

    def group_title(self, group: str) -> str:
        return self.standard.group_title(group)

    @property
    def has_reference(self) -> bool:
        """Whether the board has a reference to set scores against: cue-only floors or chance levels."""
        return self.reference.available or any(c is not None for c in self.reference.chance.values())

    @property
    def label(self) -> str:
        """How the board is named in text: ``v1``, or ``suite oxu``."""
        return self.name if self.suite.edition else f"suite {self.suite.id}"

    @property
    def label_md(self) -> str:
        """The board's name in Markdown: ``edition `v1```, or ``suite `oxu```."""
        return f"edition {code(self.name)}" if self.suite.edition else f"suite {code(self.suite.id)}"

    @property
    def standard(self) -> Ranked:
        return self.boards["standard"]

    def groups(self) -> list[str]:
        """Boards with ranked models, standard first (standard always, even when empty)."""
        return [g for g in GROUPS if g == "standard" or not self.boards[g].empty]

    def all_models(self) -> list[Verdict]:
        """Every shown file of the edition: ranked ones board by board, then the unchecked."""
        out = [v for g in GROUPS for v in self.boards[g].models]
        return out + list(self.unchecked)

    def find(self, key: str) -> tuple[Ranked | None, Verdict] | None:
        for g in GROUPS:
            i = self.boards[g].index(key)
            if i is not None:
                return self.boards[g], self.boards[g].models[i]
        v = next((u for u in self.unchecked if u.key == key), None)
        return (None, v) if v is not None else None

    def groups_of_tasks(self) -> dict[str, list[str]]:
        """The suite's groups (the benchmark's blocks) with their tasks on this board, in its order."""
        return {g: list(tasks) for g, tasks in self.standard.group_tasks.items()}

    def group_name(self, group: str) -> str:
        return self.suite.group_names.get(group, group)

    def breakdown_fields(self, task_id: str) -> list[Field]:
        return fields(self.suite.breakdowns, task_id)


@dataclass
class Prepared:
    """The board and everything derived from it, shared read-only by all views."""

    board: Board
    editions: dict[str, EditionData]
    seconds: float = 0.0
    annotations_root: Path = field(default_factory=default_annotations_root)
    _memo: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)

    def edition(self, name: str | None) -> EditionData:
        """The board of an id (an edition, or ``suite:<id>``); the default edition's when unknown."""
        return self.editions.get(name or "") or self.editions[self.default_edition()]

    def default_edition(self) -> str:
        return self.board.default_edition()

    def board_choices(self) -> list[tuple[str, str]]:
        """(label, board id) for the board picker: the editions, then every suite board."""
        out = []
        for bid, ed in self.editions.items():
            name = " ".join(str(ed.suite.name).split())
            short = name if len(name) <= 60 else name[:59] + "…"
            out.append((bid if ed.suite.edition else f"suite · {short}", bid))
        return out

    def locate(self, key: str) -> tuple[str, Ranked | None, Verdict] | None:
        """The edition, board and verdict of a board key (a file's path under the results folder)."""
        for name, ed in self.editions.items():
            hit = ed.find(key)
            if hit is not None:
                return name, hit[0], hit[1]
        return None

    def memo(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """A value derived once from the read-only data (figures, frames) and kept."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


def prepare(board: Board, log: Callable[[str], None] | None = None, *, floors: bool = True) -> Prepared:
    """Intervals, ranks, floors and reported results of every edition (the start-up work).

    ``floors=False`` leaves the cue-only floors out (chance levels stay): for benches that
    time the tables alone."""
    say = log or (lambda _m: None)
    t0 = time.perf_counter()

    editions: dict[str, EditionData] = {}
    for bid in board.boards():
        boards = {g: rank_board(board, bid, g) for g in GROUPS}
        meta = board.meta(bid)
        rows, ref, problem = _edition_rows(board, bid, meta, floors)
        if meta.edition is not None and not meta.path:
            say(f"edition {bid}: its package suite does not load (no groups, no breakdowns)")
        editions[bid] = ed = EditionData(
            name=bid,
            boards=boards,
            unchecked=board.unchecked(bid),
            reference=ref,
            publications=for_edition(bid),
            rows_problem=problem,
            suite=meta,
            order=board.ranking(bid),
            order_text=board.explain_order(bid),
            row_values=row_values({t: fields(meta.breakdowns, t) for t in meta.tasks}, rows),
        )
        n = sum(len(b.models) for b in boards.values())
        say(f"{ed.label_md.replace('`', '')}: {n} ranked model(s), {len(ed.unchecked)} not re-checked")
    return Prepared(board=board, editions=editions, seconds=time.perf_counter() - t0)


def _edition_rows(
    board: Board, bid: str, meta: SuiteMeta, floors: bool
) -> tuple[dict[str, list[dict[str, Any]]] | None, Reference, str | None]:
    """(rows, floors and chance levels, why the rows are not here) of a benchmark board; a
    committed suite's board has none of them here (its baselines are result files)."""
    if meta.edition is None:
        return (
            None,
            Reference(bid, problem="suites have no cue-only floors here: see the suite-baseline files"),
            None,
        )
    got, token, problem = None, "", None
    try:
        edition = board.edition(meta.edition)
        got = board.data.rows(edition)
        token = board.data.token(edition)
        problem = got.problem
    except Exception as exc:  # a broken data source leaves the floors out, never the app
        problem = f"{type(exc).__name__}: {exc}"
    rows = got.rows if got is not None else None
    why = problem if floors else "floors left out"
    return rows, reference(meta.edition, rows if floors else None, token=token, problem=why), problem
