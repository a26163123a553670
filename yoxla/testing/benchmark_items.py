"""The sample edition's examples as the runner sends them, for tests that script a model.

Each example is a benchmark task id, its prepared item from the package suite (the rendered
messages the runner sends, the row, the item's own answer space) and the key a scripted server
answers it by (the user message). :func:`gold_answer` is the answer a perfect model gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from yoxla.contract.benchmark import gold_field, prepare_rows, strict_rule
from yoxla.data.editions import load_edition, load_rows
from yoxla.prompt.prepare import Item


@dataclass(frozen=True)
class Example:
    task: str  # the benchmark task id
    item: Item

    @property
    def row(self) -> dict[str, Any]:
        return self.item.row

    @property
    def key(self) -> str:
        """The user message: what a scripted server answers the example by."""
        return self.item.messages[-1]["content"]


@lru_cache(maxsize=4)
def examples(edition: str = "sample") -> tuple[Example, ...]:
    """Every example of a bundled edition, in run order (its tasks in order, their rows in order)."""
    ed = load_edition(edition)
    out: list[Example] = []
    for tid in ed.tasks:
        out.extend(Example(tid, item) for item in prepare_rows(tid, load_rows(ed, tid)).items)
    return tuple(out)


def gold_answer(task_id: str, row: dict[str, Any]) -> str:
    """The gold answer as a model writes it: the abstention phrase where the gold is null."""
    gold = row[gold_field(task_id)]
    if gold is None:
        abstain = strict_rule(task_id).abstain
        assert abstain is not None, f"{task_id}: a null gold in a task without abstention"
        return abstain
    return str(gold)
