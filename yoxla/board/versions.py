"""When a board was last updated and which code and data it shows (one line each, our words)."""

from __future__ import annotations

from yoxla import __version__
from yoxla.board.prepared import Prepared
from yoxla.views.texts import code


def last_updated(prepared: Prepared, board_id: str) -> str | None:
    """The creation time of the newest admitted file of a board (its ``created_at``), else None."""
    ed = prepared.edition(board_id)
    stamps = [v.created_at for v in ed.all_models() if v.created_at]
    return max(stamps) if stamps else None


def data_version(prepared: Prepared, board_id: str) -> str:
    """The data a board is scored on: its suite definition, and the edition's rows (source and
    revision) where the suite is a benchmark edition's package suite."""
    ed = prepared.edition(board_id)
    suite = f"the suite definition {code(ed.suite.path or ed.suite.id)}"
    if ed.suite.edition is None:  # a committed suite names its own data
        return f"{suite} as committed"
    edition = prepared.board.edition(ed.suite.edition)
    if edition.bundled:
        return f"{suite} over edition `{ed.suite.edition}`, bundled with the code"
    revision = (
        f"revision {code(edition.revision)}"
        if edition.revision
        else "the revision whose row fingerprints match the manifest"
    )
    return f"{suite} over edition `{ed.suite.edition}`: {code(edition.source)}, {revision}"


def board_versions(prepared: Prepared, board_id: str) -> str:
    """Last updated, code and data of one board, as Markdown bullet lines."""
    when = last_updated(prepared, board_id)
    ed = prepared.edition(board_id)
    reported = [f"{p.source}, {p.date}" for p in ed.publications]
    lines = [
        f"* **Last updated:** {code(when)} (the newest admitted file)"
        if when
        else "* **Last updated:** no admitted file yet"
        + (f"; reported results from {'; '.join(reported)}" if reported else ""),
        f"* **Code:** yoxla {__version__}",
        f"* **Data:** {data_version(prepared, board_id)}",
    ]
    return "\n".join(lines)
