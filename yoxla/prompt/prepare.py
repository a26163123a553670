"""From a task to its items: rows -> preprocessed rows -> ids, targets and the exact messages.

:func:`prepare_task` loads the task's dataset (and a separate few-shot dataset), runs the
preprocessor in a worker process (a failure fails the task before any model call and names
the row), assigns ids, renders targets and messages (few-shot examples first, chosen as
docs/suites.md, *Few-shot*, says), and returns a :class:`PreparedTask` with the data
fingerprints and the task hash.

Item ids: the rows' own ``id`` when every row has a distinct text or integer one, else the
1-based position after preprocessing.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from yoxla.contract.canonical import canonical_json, sha256_text
from yoxla.contract.errors import DatasetError, PreprocessError, TemplateError
from yoxla.contract.hashing import FrozenHashes, prepared_hashes, task_hash
from yoxla.contract.loader import SuiteManifest, SuiteTask
from yoxla.data.datasets import LoadedDataset, load_dataset
from yoxla.data.editions import fingerprint
from yoxla.prompt.space import item_space, row_dependent, space_problem, template_extra
from yoxla.prompt.templates import MAX_RENDERED, too_long
from yoxla.score.worker import WorkerPool

ROW_FUNCTIONS = ("transform_row", "transform", "process_doc")
BATCH_FUNCTIONS = ("transform_batch", "process_docs")
MAX_ID = 200

Message = dict[str, str]


@dataclass(frozen=True)
class Item:
    """One evaluated row: its id, the row after preprocessing, target and messages."""

    index: int  # position among the task's items (after preprocessing)
    id: str
    row: dict[str, Any]
    target: str
    messages: tuple[Message, ...]
    fewshot: tuple[int, ...] = ()  # positions of the examples in the few-shot pool
    choices: tuple[str, ...] | None = None  # the item's own answer space; None: the task's choices

    def grader_item(self, choices: Sequence[str]) -> dict[str, Any]:
        """The ``item`` a Python grader receives (its own choices where the space depends on the row)."""
        return {
            "id": self.id,
            "index": self.index,
            "row": self.row,
            "target": self.target,
            "choices": list(self.choices if self.choices is not None else choices),
        }

    @property
    def prompt_hash(self) -> str:
        return sha256_text(canonical_json(list(self.messages)))


@dataclass(frozen=True)
class PreparedTask:
    """A task ready to run or re-score: items, the datasets read and their fingerprints."""

    task: SuiteTask
    items: tuple[Item, ...]
    datasets: dict[str, LoadedDataset]  # "dataset", and "fewshot" for a separate few-shot dataset
    rows_total: int  # items before a run's limit

    @property
    def fingerprints(self) -> dict[str, str]:
        return {role: ds.fingerprint for role, ds in self.datasets.items()}

    @property
    def commits(self) -> dict[str, dict[str, str]]:
        """The Hugging Face commit each Hub dataset was read at (role -> repo -> commit)."""
        return {role: dict(ds.commits) for role, ds in self.datasets.items() if ds.commits}

    @cached_property
    def task_hash(self) -> str:
        """The task's definition and the fingerprints of the data it read."""
        return task_hash(self.task, self.fingerprints)

    @cached_property
    def items_fingerprint(self) -> str:
        """Fingerprint of the items' rows and targets (keys the score cache)."""
        return fingerprint([{"id": i.id, "row": i.row, "target": i.target} for i in self.items])


def _rows_from(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return list(value)
    found = type(value).__name__ if not isinstance(value, list) else "a list with non-objects"
    raise PreprocessError(
        f"{where}: returned {found}; a preprocessor returns a dict, a list of dicts, or None"
    )


def _row_name(index: int, row: Mapping[str, Any]) -> str:
    rid = row.get("id")
    return f"row {index + 1}" + (f" (id {rid!r})" if isinstance(rid, str | int) else "")


def preprocess(
    task: SuiteTask, rows: Sequence[dict[str, Any]], pool: WorkerPool, what: str
) -> list[dict[str, Any]]:
    """Rows after the task's preprocessor (unchanged without one); PreprocessError names the row."""
    spec, code = task.spec.preprocess, task.preprocess_code
    if spec is None or code is None:
        return [dict(r) for r in rows]
    worker = pool.get(code.source, code.filename, task.base_dir)
    where = f"{task.where}: preprocess ({what})"
    if spec.contract == "batch":
        res = worker.call(BATCH_FUNCTIONS, [list(rows)], spec.timeout_seconds)
        if not res.ok:
            raise PreprocessError(f"{where} failed: {res.error}")
        out = _rows_from(res.value, where)
    else:
        out = []
        results = worker.map(ROW_FUNCTIONS, [[r] for r in rows], spec.timeout_seconds, stop_on_error=True)
        for i, (row, res) in enumerate(zip(rows, results, strict=False)):
            name = f"{where} failed on {_row_name(i, row)}"
            if not res.ok:
                raise PreprocessError(f"{name}: {res.error}")
            out.extend(_rows_from(res.value, name))
    if not out:
        raise PreprocessError(f"{where}: no rows are left after preprocessing")
    return out


def item_ids(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    ids = [r.get("id") for r in rows]
    ok = all(isinstance(i, str | int) and not isinstance(i, bool) for i in ids)
    texts = [str(i).strip() for i in ids] if ok else []
    if ok and all(texts) and all(len(t) <= MAX_ID for t in texts) and len(set(texts)) == len(texts):
        return texts
    return [str(i + 1) for i in range(len(rows))]


def _seeded(seed: int, index: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def select_examples(
    pool_size: int, count: int, exclude: set[int], strategy: str, seed: int, index: int
) -> list[int]:
    """Positions of the few-shot examples for the item at ``index`` (never one in ``exclude``)."""
    allowed = pool_size - len({e for e in exclude if 0 <= e < pool_size})
    count = min(count, allowed)
    if count <= 0:
        return []
    if strategy == "first":
        out = []
        for j in range(pool_size):
            if j not in exclude:
                out.append(j)
                if len(out) == count:
                    break
        return out
    rng = _seeded(seed, index)
    if count * 2 >= allowed:  # draw most of the pool: shuffle the allowed positions
        order = [j for j in range(pool_size) if j not in exclude]
        for i in range(len(order) - 1, 0, -1):
            k = int(rng.random() * (i + 1))
            order[i], order[k] = order[k], order[i]
        return order[:count]
    chosen: list[int] = []
    seen: set[int] = set()
    while len(chosen) < count:
        j = int(rng.random() * pool_size)
        if j in exclude or j in seen:
            continue
        seen.add(j)
        chosen.append(j)
    return chosen


class _Fewshot:
    """Renders few-shot prefixes for one task (examples rendered once each)."""

    def __init__(self, task: SuiteTask, pool: Sequence[dict[str, Any]], same_list: bool) -> None:
        fs = task.spec.fewshot_settings
        assert fs is not None
        self.task, self.fs, self.pool, self.same_list = task, fs, pool, same_list
        self._rendered: dict[int, str] = {}
        self._by_content: dict[str, list[int]] = {}
        for j, row in enumerate(pool):
            self._by_content.setdefault(canonical_json(row), []).append(j)

    def example(self, j: int) -> str:
        if j not in self._rendered:
            t, row = self.task, self.pool[j]
            choices, extra = render_choices(t, row), template_extra(t.spec)
            prompt = (t.fewshot_prompt or t.prompt).render(row, choices, extra)
            target = (t.fewshot_target or t.target).render(row, choices, extra)
            assert t.fewshot_example is not None
            self._rendered[j] = t.fewshot_example.render(
                row, choices, {**(extra or {}), "prompt": prompt, "target": target}
            )
        return self._rendered[j]

    def choose(self, index: int, row: Mapping[str, Any]) -> list[int]:
        exclude = set(self._by_content.get(canonical_json(row), ()))
        if self.same_list:
            exclude.add(index)
        return select_examples(len(self.pool), self.fs.count, exclude, self.fs.strategy, self.fs.seed, index)


def render_choices(task: SuiteTask, row: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The choices templates insert for ``row``: the row's own space, else the task's (None: none)."""
    if row_dependent(task.spec):
        return item_space(task.spec, row)
    return task.choices or None


def render_messages(task: SuiteTask, prompt: str) -> tuple[Message, ...]:
    messages: list[Message] = []
    if task.instructions:
        messages.append({"role": "system", "content": task.instructions})
    messages.append({"role": "user", "content": prompt})
    return tuple(messages)


def prepare_task(
    task: SuiteTask,
    pool: WorkerPool | None = None,
    *,
    limit: int | None = None,
    data: LoadedDataset | None = None,
) -> PreparedTask:
    """Load, preprocess and render a task. ``limit`` keeps the first N items (a run's sample cap).

    ``data``: rows already read (the benchmark's editions read theirs through
    :mod:`yoxla.data.files`); the task's dataset is then not read again.
    """
    own = pool is None
    workers = pool or WorkerPool()
    try:
        if data is None:
            data = load_dataset(task.spec.dataset, task.base_dir, "test", f"{task.where}, dataset")
        datasets = {"dataset": data}
        rows = preprocess(task, data.rows, workers, "dataset")
        fs = task.spec.fewshot_settings
        fewshot: _Fewshot | None = None
        if fs is not None:
            if fs.dataset is not None:
                shots = load_dataset(fs.dataset, task.base_dir, "train", f"{task.where}, fewshot.dataset")
                datasets["fewshot"] = shots
                fewshot = _Fewshot(task, preprocess(task, shots.rows, workers, "few-shot dataset"), False)
            else:
                fewshot = _Fewshot(task, rows, same_list=True)
    finally:
        if own:
            workers.close()
    ids = item_ids(rows)
    if task.spec.has_groups or task.spec.has_controls:
        from yoxla.score.tally import analysis_problems, control_marks  # scoring imports this module

        for unfit in analysis_problems(task.spec, rows)[:1]:
            raise DatasetError(f"{task.where}: {unfit}")
        if rows and all(control_marks(task.spec, rows)):
            field = task.spec.control_field
            how = f"control_field {field!r}" if field is not None else "control_ids"
            raise DatasetError(f"{task.where}: every row is a control ({how}); nothing would be scored")
    dependent = row_dependent(task.spec)
    if dependent:
        for i, row in enumerate(rows):
            if (problem := space_problem(task.spec, row)) is not None:
                raise DatasetError(f"{task.where}: {_row_name(i, row)}: {problem}")
    extra = template_extra(task.spec)
    n = len(rows) if limit is None else min(limit, len(rows))
    items = []
    for i in range(n):
        row = rows[i]
        choices = render_choices(task, row)
        what = "prompt"
        try:
            prompt = task.prompt.render(row, choices, extra)
            shots_used: list[int] = []
            if fewshot is not None:
                shots_used = fewshot.choose(i, row)
                parts = [*(fewshot.example(j) for j in shots_used), prompt]
                size = sum(map(len, parts)) + len(fewshot.fs.separator) * (len(parts) - 1)
                if size > MAX_RENDERED:
                    raise TemplateError(
                        f"with its {len(shots_used)} few-shot example(s) {too_long(size, MAX_RENDERED)}"
                    )
                prompt = fewshot.fs.separator.join(parts)
            what = "target"
            target = task.target.render(row, choices, extra)
        except TemplateError as exc:
            raise TemplateError(f"{task.where}: item {ids[i]}: the {what} {exc}") from None
        items.append(
            Item(
                index=i,
                id=ids[i],
                row=row,
                target=target,
                messages=render_messages(task, prompt),
                fewshot=tuple(shots_used),
                choices=choices if dependent else None,
            )
        )
    return PreparedTask(task, tuple(items), datasets, len(rows))


def current_hashes(manifest: SuiteManifest, pool: WorkerPool | None = None) -> dict[str, FrozenHashes]:
    """Hashes of every task of a manifest (reads each task's data, runs preprocessors, and
    renders every item, so that a prompt over the size limit fails here too)."""
    return {tid: prepared_hashes(prepare_task(task, pool)) for tid, task in manifest.tasks.items()}


def messages_text(messages: Sequence[Message]) -> str:
    """Messages as a reader sees them (``yoxla suite render``)."""
    return "\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)
