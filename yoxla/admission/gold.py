"""Where admission gets an edition's rows (the gold) for re-scoring.

``sample`` is bundled. ``v1`` comes from an explicit folder (``--data-dir`` or
``$YOXLA_DATA_DIR``), else from the Hub when it answers quickly; when neither works the
rows are ``None`` and admission says why ("scores not re-checked"). Rows are used only when
they match the edition's manifest (row count and fingerprint), so a wrong local copy can
never make a file pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from yoxla.admission.committed import CommittedSuites
from yoxla.data.editions import DATA_DIR_ENV, DataUnavailable, Edition, fingerprint, load_rows
from yoxla.data.hub import hub_reachable


@dataclass
class EditionRows:
    rows: dict[str, list[dict[str, Any]]] | None
    source: str
    problem: str | None = None  # why rows is None


@dataclass
class DataSource:
    """Loads and remembers each edition's rows once per process."""

    data_dir: str | None = None
    allow_hub: bool = True
    _cache: dict[str, EditionRows] = field(default_factory=dict)
    verdicts: dict[tuple[Any, ...], Any] = field(default_factory=dict)  # admission's cache
    _tokens: dict[tuple[str, int], str] = field(default_factory=dict, repr=False)
    suites: CommittedSuites = field(default_factory=CommittedSuites)  # the committed eval suites
    # the package suite's tasks prepared over an edition's rows, for v2 files (admission.v2)
    prepared: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False)

    def rows(self, edition: Edition) -> EditionRows:
        if edition.name not in self._cache:
            self._cache[edition.name] = self._load(edition)
        return self._cache[edition.name]

    def token(self, edition: Edition) -> str:
        """What re-scoring an edition's files rests on: its rows' fingerprints, or why there are none.

        Computed once per edition: the rows a DataSource holds never change.
        """
        got = self.rows(edition)
        key = (edition.name, id(got))
        if key not in self._tokens:
            if got.rows is None:
                self._tokens[key] = f"none:{edition.name}:{got.problem}"
            else:
                fps = ",".join(f"{tid}={fingerprint(r)}" for tid, r in sorted(got.rows.items()))
                self._tokens[key] = f"rows:{edition.name}:{fps}"
        return self._tokens[key]

    def _load(self, edition: Edition) -> EditionRows:
        explicit = self.data_dir or (None if edition.bundled else os.environ.get(DATA_DIR_ENV))
        if edition.bundled:
            where = "the bundled copy"
        elif explicit:
            where = f"the local copy at {explicit}"
        else:
            where = f"the Hub ({edition.source})"
            if not self.allow_hub:
                return EditionRows(None, where, f"no local copy of {edition.name} and the Hub is not used")
            ok, why = hub_reachable(edition.source, edition.revision)
            if not ok:
                return EditionRows(
                    None, where, f"no local copy of {edition.name} (set {DATA_DIR_ENV}) and {why}"
                )
        out: dict[str, list[dict[str, Any]]] = {}
        for tid, entry in edition.tasks.items():
            try:
                rows = load_rows(edition, tid, explicit if not edition.bundled else None)
            except DataUnavailable as exc:
                return EditionRows(None, where, str(exc))
            if len(rows) != entry.rows or fingerprint(rows) != entry.fingerprint:
                return EditionRows(
                    None, where, f"{where} of task {tid} does not match the {edition.name} manifest"
                )
            out[tid] = rows
        return EditionRows(out, where)
