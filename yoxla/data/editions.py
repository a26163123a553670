"""Editions of the benchmark and the one path that loads their rows.

``v1`` is the published data on the Hugging Face Hub; ``sample`` is our own small copy,
bundled inside the package in exactly the Hub layout. Rows always come from a folder in that
layout, read by :func:`yoxla.data.files.read_config`: the bundled folder, a local copy
(``--data-dir`` or ``$YOXLA_DATA_DIR``), or a snapshot of the Hub repository at a pinned
revision that :func:`yoxla.data.hub.snapshot` puts in the Hugging Face cache (only the files of the
edition's configs' split), the same path a suite's Hugging Face datasets take. Nothing here
sets a process-wide switch such as an offline mode.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yoxla.contract.canonical import canonical_json, sha256_text
from yoxla.data.files import DataUnavailable, read_config
from yoxla.data.hub import snapshot

if TYPE_CHECKING:
    from yoxla.contract.spec import Analysis

DATA_DIR_ENV = "YOXLA_DATA_DIR"
EDITIONS = ("v1", "sample")
SPLIT = "test"  # the one split of every edition's configs
ID_FIELD = "id"  # the row id column of every benchmark task
SUITE_NAME = "yoxla"  # the name the frozen suite hash covers


@dataclass(frozen=True)
class ManifestEntry:
    config: str
    rows: int
    fingerprint: str


@dataclass(frozen=True)
class Edition:
    name: str
    source: str  # Hub repo id, or "bundled:<folder>"
    revision: str | None
    tasks: dict[str, ManifestEntry]
    description: str = ""
    # The suite analysis section (groups and controls, by field or row id; the ranking) that
    # travels with an edition made in code (tests, synthetic editions); None: the analysis
    # section of the edition's package suite (yoxla.admission.v2.edition_ranking).
    analysis: Analysis | None = None

    @property
    def bundled(self) -> bool:
        return self.source.startswith("bundled:")

    @property
    def task_ids(self) -> list[str]:
        return list(self.tasks)

    def default_source(self) -> str:
        if self.bundled:
            return str(bundled_path(self.source.removeprefix("bundled:")))
        return self.source

    def suite_hash(self) -> str:
        """Hash of the frozen contracts this edition runs: blocks plus each task's contract hash,
        as the package suite's document records them (:func:`frozen_contracts`)."""
        blocks, contracts = frozen_contracts()
        body = {
            "suite": SUITE_NAME,
            "blocks": list(blocks),
            "tasks": {tid: contracts[tid] for tid in self.tasks},
        }
        return sha256_text(canonical_json(body))


@cache
def frozen_contracts() -> tuple[tuple[str, ...], dict[str, str]]:
    """(the blocks, task id -> contract hash) as the package suite ``yoxla-sample.yaml`` records
    them (its groups, each task's ``metadata.contract_hash``).

    Read off the document, not through :mod:`yoxla.contract` (which reads rows through this module:
    an import circle); ``yoxla.contract.benchmark.frozen_problems`` checks the same file in full."""
    import yaml

    text = resources.files("yoxla").joinpath("editions", "yoxla-sample.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    blocks = tuple(str(g["id"]) for g in doc["groups"])
    return blocks, {str(t["id"]): str(t["metadata"]["contract_hash"]) for t in doc["tasks"]}


def bundled_path(folder: str) -> Path:
    return Path(str(resources.files("yoxla").joinpath("editions", folder)))


@cache
def load_edition(name: str) -> Edition:
    if name not in EDITIONS:
        raise DataUnavailable(f"unknown edition {name!r}; known editions: {', '.join(EDITIONS)}")
    text = resources.files("yoxla").joinpath("editions", f"{name}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return Edition(
        name=data["edition"],
        source=data["source"],
        revision=data.get("revision"),
        tasks={tid: ManifestEntry(**entry) for tid, entry in data["tasks"].items()},
        description=data.get("description", ""),
    )


def fingerprint(rows: list[dict[str, Any]]) -> str:
    """SHA-256 over the rows in order, each as sorted-key JSON plus a newline."""
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def resolve_source(edition: Edition, data_dir: str | os.PathLike[str] | None = None) -> str:
    """Where rows come from: an explicit folder, then $YOXLA_DATA_DIR, then the edition's default."""
    if data_dir:
        return str(data_dir)
    env = os.environ.get(DATA_DIR_ENV)
    if env and not edition.bundled:
        return env
    return edition.default_source()


OFFLINE_HINT = (
    f". Offline? Point --data-dir (or ${DATA_DIR_ENV}) at a local copy in the Hub layout, "
    "or make one where the Hub is reachable with `yoxla download --out DIR`."
)


def _is_local(source: str) -> bool:
    return Path(source).is_dir()


def _hub_folder(
    edition: Edition, repo: str, revision: str | None, local_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The snapshot of an edition's configs: in the Hugging Face cache (downloaded once per
    process and revision), or in ``local_dir`` (``yoxla download``)."""
    configs = sorted({e.config for e in edition.tasks.values()})
    try:
        return snapshot(repo, revision, [(c, SPLIT) for c in configs], local_dir=local_dir).folder
    except DataUnavailable as exc:
        what = f"download {exc}" if local_dir else f"load {edition.name} from {exc}{OFFLINE_HINT}"
        raise DataUnavailable(f"could not {what}") from None


def load_rows(
    edition: Edition,
    task_id: str,
    data_dir: str | os.PathLike[str] | None = None,
    revision: str | None = None,
) -> list[dict[str, Any]]:
    """Rows of one task of an edition, in dataset order, as plain dicts (JSON types).

    The rows are shared with later calls that read the same bytes: do not modify them.
    """
    entry = edition.tasks.get(task_id)
    if entry is None:
        raise DataUnavailable(f"task {task_id!r} is not part of edition {edition.name!r}")
    source = resolve_source(edition, data_dir)
    local = _is_local(source)
    if not local and (data_dir or source.startswith(("/", "."))):
        raise DataUnavailable(f"data folder {source!r} does not exist")
    if local:
        return read_config(Path(source), entry.config, SPLIT, ID_FIELD)
    folder = _hub_folder(edition, source, revision or edition.revision)
    try:
        return read_config(folder, entry.config, SPLIT, ID_FIELD)
    except DataUnavailable as exc:
        raise DataUnavailable(f"{exc} (Hub dataset {source}){OFFLINE_HINT}") from None


def download(out: str | os.PathLike[str], revision: str | None = None, edition: str = "v1") -> Path:
    """Make an offline copy of an edition's configs at a pinned revision (for --data-dir)."""
    ed = load_edition(edition)
    if ed.bundled:
        raise DataUnavailable(f"edition {edition!r} is bundled with the package; nothing to download")
    return _hub_folder(ed, ed.source, revision or ed.revision, local_dir=out)
