"""Cue-only answers to suite items: the floors a model has to beat, and an offline provider.

A strategy reads nothing of the model, only what a prepared item carries: its answer space
(the item's own ``choices``, else the task's choices or ``label_set`` labels), its row fields
(the prompt template's field references, in order; ``{{field | numbered}}`` ones are lists),
its rendered prompt, and the task's strict extraction (mode, numeric range, abstention
phrase). The benchmark's eleven tasks are suite tasks too (:func:`yoxla.contract.benchmark.prepare_rows`),
so these are the benchmark's baselines as well (:func:`benchmark_answers` and
:func:`benchmark_floors` over an edition's rows).

Each task has one *shape*, read once:

* **choice**: a closed answer space (numbered options from ``answer_space.options_field``
  are answered ``1`` … ``n``, its fixed labels follow);
* **numeric**: strict extraction with ``mode: numeric`` and its ``range``;
* **span**: strict ``text``/``text_or_abstain`` extraction with a passage (the ``passage_field``
  of the ``span``/``abstention`` grader): answers quote one sentence of the passage;
* **open**: anything else; a strategy whose cue does not apply answers as ``first`` does.

The strategies:

* ``first``: the first answer of the space; numeric: the range's low end; span: the passage's
  first sentence; open: the first number in the prompt, else its first line;
* ``majority``: the most frequent target of the task's scored items (controls, rows marked
  by ``metadata.control_field``, left out; ties: the first seen), the majority-class floor;
  numeric: the targets' mean (2 decimals); span: as ``first``;
* ``random``: one draw per item from a generator seeded by (seed, task), drawn over the
  task's items in order (so any order of sending gives the same answers): a valid answer
  of the item's space; numeric: uniform over the range; span: a sentence or the abstention
  phrase; open: one of the prompt's numbers or lines;
* ``overlap``: the answer sharing most words with the rest of the input (ties: the first):
  the option closest to the other fields, the passage sentence closest to the question, the
  label whose description (the prompt's ``- label: description`` line, or the answer
  space's) is closest to the inputs; numeric: the range scaled by the word overlap of the
  first two fields; open, or numeric with one field: as ``first``;
* ``longest``: the longest option, sentence or label; numeric: the range's high end; a
  space of exactly ``A``/``B`` over two fields: the letter of the longer field; open: as ``first``;
* ``most_linked``: the option with the most links (a row field ``sitelinks`` aligned with the
  options), else as ``first``;
* ``none_of_them``: the first fixed label after numbered options (``HEÇ BİRİ``), else the
  abstention phrase, else as ``first``;
* ``abstain``: the abstention phrase, else as ``none_of_them``;
* ``echo`` (suites only, not a benchmark strategy): the last number in the prompt, else its last line.

:class:`yoxla.providers.baseline.SuiteBaselineProvider` serves them like a model
(``--provider suite-baseline --model first``), so a suite runs end to end offline.
"""

from __future__ import annotations

import random
import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from yoxla.contract import spec as S
from yoxla.contract.spec_base import STRATEGIES, SUITE_STRATEGIES
from yoxla.extract.text import flatten, tokens
from yoxla.prompt.prepare import Item, PreparedTask
from yoxla.prompt.templates import Numbered, Template, lookup
from yoxla.score.spans import sentence_bounds

SEED = 20260101
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
_Path = tuple[str, ...]


def sentences(text: str) -> list[str]:
    """The sentences of a passage (flattened), the unit the span strategies quote."""
    flat = flatten(text)
    return [flat[s:e] for s, e in sentence_bounds(flat) if e > s]


def _overlap(a: str, b: str) -> float:
    ta, tb = set(tokens(a)), set(tokens(b))
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def _pick(options: Sequence[str], key: Callable[[str], float]) -> int:
    """Index of the best option; the first wins ties."""
    scores = [key(o) for o in options]
    return scores.index(max(scores))


def answer_space(prepared: PreparedTask) -> tuple[str, ...]:
    """The task's closed answer space: its choices, else its label_set labels (may be empty)."""
    task = prepared.task
    if task.choices:
        return task.choices
    ex = task.spec.output_extraction
    return tuple(ex.labels) if isinstance(ex, S.LabelSet) else ()


def _prompt(item: Item) -> str:
    return item.messages[-1]["content"]


def _cues(item: Item) -> list[str]:
    """Numbers of the prompt, else its non-empty lines."""
    text = _prompt(item)
    return _NUMBER.findall(text) or [line.strip() for line in text.splitlines() if line.strip()] or [""]


def scored_items(prepared: PreparedTask) -> list[Item]:
    """The items that count in the task's metrics: controls (``metadata.control_field``) left out."""
    from yoxla.score.tally import control_marks

    marks = control_marks(prepared.task.spec, [i.row for i in prepared.items])
    return [i for i, marked in zip(prepared.items, marks, strict=True) if not marked]


def majority_target(items: Sequence[Item]) -> str:
    counts = Counter(i.target for i in items)
    return counts.most_common(1)[0][0] if counts else ""


@dataclass(frozen=True)
class Shape:
    """What the strategies read of a task, once (see the module docstring)."""

    kind: str  # "choice", "numeric", "span" or "open"
    inputs: tuple[_Path, ...]  # plain fields of the prompt template, in order
    lists: tuple[_Path, ...]  # fields rendered as numbered lists
    range: tuple[float, float] | None = None
    abstain: str | None = None
    passage: _Path | None = None
    options: _Path | None = None  # answer_space.options_field
    labels: tuple[str, ...] = ()  # answer_space labels (after the numbered options)
    descriptions: tuple[tuple[str, str], ...] = ()  # answer_space label -> description

    @classmethod
    def of(cls, prepared: PreparedTask) -> Shape:
        spec = prepared.task.spec
        parts = Template.parse(spec.prompt_template or "").parts
        fields: list[_Path] = []
        lists: list[_Path] = []
        for part in parts:
            path = part.path if isinstance(part, Numbered) else part
            if isinstance(path, str) or path in fields:
                continue
            fields.append(path)
            if isinstance(part, Numbered):
                lists.append(path)
        ex = spec.output_extraction
        mode = ex.mode if isinstance(ex, S.StrictExtraction) else None
        space = spec.answer_space
        named = [g.passage_field for g in spec.graders if isinstance(g, S.BuiltinGrader) and g.passage_field]
        passage = tuple(named[0].split(".")) if named else None
        closed = bool(answer_space(prepared)) or any(i.choices for i in prepared.items)
        bounds = ex.range if isinstance(ex, S.StrictExtraction) else None
        kind = "open"
        if closed:
            kind = "choice"
        elif mode == "numeric" and bounds is not None:
            kind = "numeric"
        elif mode in ("text", "text_or_abstain") and passage is not None:
            kind = "span"
        return cls(
            kind=kind,
            inputs=tuple(f for f in fields if f not in lists),
            lists=tuple(lists),
            range=(float(bounds[0]), float(bounds[1])) if kind == "numeric" and bounds else None,
            abstain=ex.abstain if isinstance(ex, S.StrictExtraction) else None,
            passage=passage,
            options=tuple(space.options_field.split(".")) if space and space.options_field else None,
            labels=space.label_values if space is not None else (),
            descriptions=tuple((x.value, x.description) for x in space.labels) if space is not None else (),
        )


class _Task:
    """A prepared task with its shape and the answers computed over all its items."""

    def __init__(self, prepared: PreparedTask, seed: int) -> None:
        self.prepared = prepared
        self.shape = Shape.of(prepared)
        self.rng = random.Random(f"{seed}:{prepared.task.id}")
        self.space = answer_space(prepared)
        self._majority: str | None = None

    def choices(self, item: Item) -> tuple[str, ...]:
        return item.choices if item.choices is not None else self.space

    def text(self, item: Item, path: _Path) -> str:
        value = lookup(item.row, list(path))
        return "" if value is None else str(value)

    def question(self, item: Item, skip: _Path | None) -> str:
        return " ".join(self.text(item, f) for f in self.shape.inputs if f != skip)

    def passage(self, item: Item) -> list[str]:
        assert self.shape.passage is not None
        return sentences(self.text(item, self.shape.passage)) or [""]

    def options(self, item: Item) -> list[str] | None:
        if self.shape.options is None:
            return None
        value = lookup(item.row, list(self.shape.options))
        return [str(v) for v in value] if isinstance(value, list) and value else None

    def describe(self, item: Item, label: str) -> str:
        """A label's description: the answer space's, else the prompt's ``- label: description``."""
        found = dict(self.shape.descriptions).get(label)
        if found is not None:
            return found
        head = f"- {label}: "
        for message in item.messages:
            for line in message["content"].splitlines():
                if line.startswith(head):
                    return line[len(head) :]
        return label

    def majority(self) -> str:
        if self._majority is None:
            items = scored_items(self.prepared)
            if self.shape.kind == "numeric":
                try:
                    values = [float(i.target) for i in items]
                except ValueError:
                    values = []
                self._majority = f"{sum(values) / len(values):.2f}" if values else majority_target(items)
            else:
                self._majority = majority_target(items)
        return self._majority


def _first(t: _Task, item: Item) -> str:
    kind = t.shape.kind
    if kind == "choice" and t.choices(item):
        return t.choices(item)[0]
    if kind == "numeric":
        assert t.shape.range is not None
        return str(t.shape.range[0])
    if kind == "span":
        return t.passage(item)[0]
    return _cues(item)[0]


def _majority(t: _Task, item: Item) -> str:
    return _first(t, item) if t.shape.kind == "span" else t.majority()


def _random(t: _Task, item: Item) -> str:
    kind = t.shape.kind
    if kind == "numeric":
        assert t.shape.range is not None
        return f"{t.rng.uniform(*t.shape.range):.2f}"
    if kind == "span":
        options = t.passage(item)
        if t.shape.abstain is not None:
            options.append(t.shape.abstain)
        return t.rng.choice(options)
    return t.rng.choice(list(t.choices(item)) or _cues(item))


def _overlap_answer(t: _Task, item: Item) -> str:
    kind, shape = t.shape.kind, t.shape
    options = t.options(item)
    if kind == "choice" and options is not None:
        q = t.question(item, shape.options)
        return str(_pick(options, lambda o: _overlap(o, q)) + 1)
    if kind == "span":
        q = t.question(item, shape.passage)
        sents = t.passage(item)
        return sents[_pick(sents, lambda s: _overlap(s, q))]
    if kind == "numeric" and len(shape.inputs) >= 2:
        assert shape.range is not None
        lo, hi = shape.range
        share = _overlap(t.text(item, shape.inputs[0]), t.text(item, shape.inputs[1]))
        return f"{lo + (hi - lo) * share:.2f}"
    labels = t.choices(item) if kind == "choice" else ()
    if not labels:
        return _first(t, item)
    text = t.question(item, None)
    return labels[_pick([t.describe(item, x) for x in labels], lambda d: _overlap(d, text))]


def _longest(t: _Task, item: Item) -> str:
    kind, shape = t.shape.kind, t.shape
    options = t.options(item)
    if kind == "choice" and options is not None:
        return str(_pick(options, len) + 1)
    if kind == "span":
        sents = t.passage(item)
        return sents[_pick(sents, len)]
    if kind == "numeric":
        assert shape.range is not None
        return str(shape.range[1])
    labels = t.choices(item) if kind == "choice" else ()
    if not labels:
        return _first(t, item)
    if tuple(labels) == ("A", "B") and len(shape.inputs) == 2:
        return "AB"[_pick([t.text(item, f) for f in shape.inputs], len)]
    return labels[_pick(labels, len)]


def _most_linked(t: _Task, item: Item) -> str:
    links = item.row.get("sitelinks")
    if t.options(item) is not None and isinstance(links, list) and links:
        try:
            counts = [float(x) for x in links]
        except (TypeError, ValueError):
            return _first(t, item)
        return str(_pick([str(i) for i in range(len(counts))], lambda i: counts[int(i)]) + 1)
    return _first(t, item)


def _none_of_them(t: _Task, item: Item) -> str:
    if t.shape.options is not None and t.shape.labels:
        return t.shape.labels[0]
    if t.shape.abstain is not None:
        return t.shape.abstain
    return _first(t, item)


def _abstain(t: _Task, item: Item) -> str:
    return t.shape.abstain if t.shape.abstain is not None else _none_of_them(t, item)


def _echo(t: _Task, item: Item) -> str:
    return _cues(item)[-1]


_FUNCS: dict[str, Callable[[_Task, Item], str]] = {
    "first": _first,
    "majority": _majority,
    "random": _random,
    "overlap": _overlap_answer,
    "longest": _longest,
    "most_linked": _most_linked,
    "none_of_them": _none_of_them,
    "abstain": _abstain,
    "echo": _echo,
}


def suite_answers(strategy: str, prepared: PreparedTask, seed: int = SEED) -> list[str]:
    """The answer of ``strategy`` to every item of ``prepared``, in item order (ValueError for an
    unknown strategy)."""
    func = _FUNCS.get(strategy)
    if func is None:
        raise ValueError(f"unknown strategy {strategy!r}; use one of: {', '.join(SUITE_STRATEGIES)}")
    t = _Task(prepared, seed)
    return [func(t, item) for item in prepared.items]


_RECENT: list[tuple[PreparedTask, str, int, dict[str, str]]] = []  # a few tasks' answers, newest last
_LOCK = threading.Lock()


def answers_by_id(strategy: str, prepared: PreparedTask, seed: int = SEED) -> dict[str, str]:
    """Item id -> the answer of ``strategy``, computed once per task, strategy and seed (the last
    few are kept; thread-safe)."""
    with _LOCK:
        for held, name, held_seed, by_id in _RECENT:
            if held is prepared and name == strategy and held_seed == seed:
                return by_id
        answers = suite_answers(strategy, prepared, seed)
        by_id = {i.id: a for i, a in zip(prepared.items, answers, strict=True)}
        _RECENT.append((prepared, strategy, seed, by_id))
        del _RECENT[:-8]
        return by_id


def suite_answer(strategy: str, prepared: PreparedTask, item: Item, seed: int = SEED) -> str:
    """The answer of ``strategy`` to ``item`` (computed once for all the task's items)."""
    return answers_by_id(strategy, prepared, seed)[item.id]


# The benchmark's rows ----------------------------------------------------------------------------

# An edition's rows of a benchmark task become the package suite task's items
# (:func:`yoxla.contract.benchmark.prepare_rows`); their answers are scored as a model's are, by
# the suite replay's built-in fast path (:func:`yoxla.score.replay.score_builtin_task`). The
# scores are the benchmark's floors (``yoxla floors``, the boards' floor rows).


class _Named(Protocol):
    @property
    def id(self) -> str: ...


def _benchmark_items(task_id: str, rows: Sequence[Mapping[str, Any]]) -> PreparedTask:
    """The task's rows as suite items, one per row, in row order."""
    from yoxla.contract.benchmark import prepare_rows

    prepared = prepare_rows(task_id, rows)
    if len(prepared.items) != len(rows):
        raise ValueError(f"{task_id}: {len(rows)} rows gave {len(prepared.items)} items")
    return prepared


def _benchmark_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown baseline strategy {strategy!r}; known: {', '.join(STRATEGIES)}")


def benchmark_answers(
    strategy: str, task: str | _Named, rows: Sequence[Mapping[str, Any]], seed: int = SEED
) -> list[str]:
    """The strategy's raw answer for every row of a benchmark task (its id, or anything with
    that ``id``), in row order."""
    _benchmark_strategy(strategy)
    return suite_answers(strategy, _benchmark_items(task if isinstance(task, str) else task.id, rows), seed)


def benchmark_floors(
    task_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    tasks: Collection[str],
    strategies: tuple[str, ...] = STRATEGIES,
) -> dict[str, dict[str, float]]:
    """Score of every strategy on every task: {task_id: {strategy: score}}.

    ``tasks``: the task ids the caller's edition has (a mapping keyed by id will do); a task
    of ``task_rows`` outside it is a KeyError.
    """
    from yoxla.extract.parsing import answer_text
    from yoxla.score.replay import score_builtin_task

    for strategy in strategies:
        _benchmark_strategy(strategy)
    out: dict[str, dict[str, float]] = {}
    for tid, rows in task_rows.items():
        if tid not in tasks:
            raise KeyError(tid)
        prepared = _benchmark_items(tid, rows)  # prepared once: every strategy answers the same items
        items = prepared.items
        blank: list[str | None] = [None] * len(items)
        out[tid] = {}
        for s in strategies:
            texts: list[str | None] = [answer_text(a) for a in suite_answers(s, prepared)]
            score = score_builtin_task(prepared, items, texts, blank, blank).score
            if score is None:
                raise ValueError(f"{tid}: the task has no 0-100 score")
            out[tid][s] = score
    return out


# Floors and the shortcut gate ---------------------------------------------------------------------

# The strategies a suite gates when its analysis section declares none (random reads no cue: its
# expected score is chance; the gate itself is yoxla.baselines.gate). The other cue strategies are reported
# by ``yoxla suite floors`` but gated only where a suite names them (``analysis.gate.strategies``):
# on the shipped muraciet example ``overlap`` (query words shared with a category's description)
# scores 54.76 against a chance of 25, and gating it is a suite author's decision.
GATED = ("first", "majority", "echo")
CORRELATIONS = frozenset(("spearman", "pearson"))  # graders whose chance is 0, not a random answer's


def chance_score(prepared: PreparedTask, pool: Any = None) -> float:
    """The reference a cue must not beat by much, over the scored items (controls left out), as
    :mod:`yoxla.baselines.gate` states it; for other open answers, always giving the most common
    target (100 × its share of the items), the best score that reads nothing of the item."""
    if any(getattr(g, "name", None) in CORRELATIONS for g in prepared.task.spec.graders):
        return 0.0
    items = scored_items(prepared)
    own = [i.choices for i in items if i.choices]  # a row-dependent space: per item
    if own:
        return sum(100.0 / len(c) for c in own) / len(own)
    space = answer_space(prepared)
    if space:
        return 100.0 / len(space)
    t = _Task(prepared, SEED)
    if t.shape.kind == "span" and items:
        return _span_chance(t, items, pool)
    counts = Counter(i.target for i in items)
    return 100.0 * max(counts.values()) / len(items) if counts else 0.0


def _span_chance(t: _Task, items: list[Item], pool: Any) -> float:
    """100 × the mean over items of the mean per-sample score of every option of the item."""
    from yoxla.score.replay import score_suite_task
    from yoxla.score.samples import SampleOutput

    repeated: list[Item] = []
    outputs: list[SampleOutput] = []
    owner: list[int] = []
    for k, item in enumerate(items):
        options = t.passage(item) + ([t.shape.abstain] if t.shape.abstain is not None else [])
        repeated += [item] * len(options)
        outputs += [SampleOutput.from_raw(o) for o in options]
        owner += [k] * len(options)
    results = score_suite_task(t.prepared, outputs, items=repeated, pool=pool).results
    sums = [0.0] * len(items)
    counts = [0] * len(items)
    for k, res in zip(owner, results, strict=True):
        sums[k] += res.score or 0.0
        counts[k] += 1
    return 100.0 * sum(a / n for a, n in zip(sums, counts, strict=True) if n) / len(items)


def floor_scores(
    manifest: Any, pool: Any, strategies: Sequence[str] = SUITE_STRATEGIES
) -> dict[str, dict[str, float | None]]:
    """Per task, each strategy's task score (None where the task has no 0–100 score)."""
    from yoxla.prompt.prepare import prepare_task
    from yoxla.score.replay import score_suite_task
    from yoxla.score.samples import SampleOutput

    out: dict[str, dict[str, float | None]] = {}
    for tid, task in manifest.tasks.items():
        prepared = prepare_task(task, pool)
        out[tid] = {}
        for strategy in strategies:
            outputs = [SampleOutput.from_raw(a) for a in suite_answers(strategy, prepared)]
            out[tid][strategy] = score_suite_task(prepared, outputs, pool=pool).score
    return out
