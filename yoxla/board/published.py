"""Results reported elsewhere (release notes), kept as data under ``published/``.

They come without predictions, so nothing in them can be re-checked: the app shows them in a
labelled "reported" section of their edition, never ranked with admitted files, and next to
an admitted file of the same model when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from yoxla.contract.benchmark import benchmark_groups


@dataclass(frozen=True)
class Reported:
    model: str  # the model id as the source wrote it
    blocks: dict[str, float]
    yoxla: float


@dataclass(frozen=True)
class Publication:
    source: str
    date: str
    edition: str
    conditions: str
    models: tuple[Reported, ...]

    def label(self) -> str:
        return f"{self.source}, {self.date}: {self.conditions}"


def _parse(data: dict[str, Any]) -> Publication:
    models = []
    for m in data["models"]:  # the blocks in the package suite's order (its groups)
        blocks = {b: float(m[b]) for b in benchmark_groups() if b in m}
        models.append(Reported(str(m["model"]), blocks, float(m["yoxla"])))
    return Publication(
        source=str(data["source"]),
        date=str(data["date"]),
        edition=str(data["edition"]),
        conditions=str(data["conditions"]),
        models=tuple(models),
    )


@cache
def publications() -> tuple[Publication, ...]:
    """Every bundled publication, in file-name order."""
    folder = resources.files("yoxla").joinpath("board", "published")
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            out.append(_parse(yaml.safe_load(entry.read_text(encoding="utf-8"))))
    return tuple(out)


def for_edition(edition: str) -> list[Publication]:
    return [p for p in publications() if p.edition == edition]


def same_model(reported: str, ids: list[str | None]) -> bool:
    """Whether an admitted file's model ids (asked, reported, Hub repo) name the reported model."""
    want = reported.strip().casefold()
    return any(i is not None and i.strip().casefold() == want for i in ids)
