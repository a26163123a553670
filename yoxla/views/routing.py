"""Deep links: which tab, board, model and task a page's URL query asks for.

``?model=<key>`` opens that model's page on its own board; ``?task=<id>`` a task page;
``?tab=<id>`` any tab; ``?edition=v1|sample`` an edition; ``?suite=<id>`` a suite's board
(``?suite=yoxla-sample`` the sample edition's: the package's benchmark suites are the editions).
Unknown or malformed values fall back to the defaults; the values are only ever used to look
things up, never shown as given. ``Route.edition`` is the board id (``suite:<id>`` for a suite).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from yoxla.board.loading import suite_board_id
from yoxla.board.prepared import Prepared
from yoxla.contract.registry import edition_of

TABS = (
    "leaderboard",
    "model",
    "tasks",
    "blocks",
    "breakdowns",
    "diagnostics",
    "calibration",
    "explorer",
    "compare",
    "methodology",
    "submit",
    "about",
)
MAX_PARAM = 1_000


@dataclass(frozen=True)
class Route:
    tab: str
    edition: str
    params: dict[str, str] = field(default_factory=dict)  # the (bounded) query, for the views


def resolve(prepared: Prepared, query: Mapping[str, str], tabs: tuple[str, ...] = TABS) -> Route:
    params = {str(k): str(v)[:MAX_PARAM] for k, v in query.items() if isinstance(v, str)}
    edition = params.get("edition", "")
    if params.get("suite"):  # a package benchmark suite's board is its edition's
        edition = edition_of(params["suite"]) or suite_board_id(params["suite"])
    tab = params.get("tab", "")
    model = params.get("model")
    if model:
        hit = prepared.locate(model)
        if hit is not None:
            edition = hit[0]
            tab = tab or "model"
    if params.get("task") and not tab:
        tab = "tasks"
    if edition not in prepared.editions:
        edition = prepared.default_edition()
    if tab not in tabs:
        tab = tabs[0]
    return Route(tab=tab, edition=edition, params=params)
