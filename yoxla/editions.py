"""Editions of the benchmark and the one path that loads their rows.

``v1`` is the published data on the Hugging Face Hub; ``sample`` is our own small copy,
bundled inside the package in exactly the Hub layout. Both are read with the same
``datasets.load_dataset(source, config, split=...)`` call; only ``source`` differs.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from yoxla.suite import Suite, canonical_json, load_suite, sha256_text

DATA_DIR_ENV = "YOXLA_DATA_DIR"
EDITIONS = ("v1", "sample")


class DataUnavailable(RuntimeError):
    """The rows of an edition could not be loaded; the message says how to fix it."""


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

    def suite_hash(self, suite: Suite | None = None) -> str:
        """Hash of the frozen contracts this edition runs: blocks plus each task's contract hash."""
        suite = suite or load_suite()
        body = {
            "suite": suite.name,
            "blocks": list(suite.blocks),
            "tasks": {tid: suite.task(tid).contract_hash for tid in self.tasks},
        }
        return sha256_text(canonical_json(body))


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
HUB_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


def hub_offline() -> bool:
    return any(os.environ.get(v, "").lower() in _TRUE for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def hub_reachable(repo: str, revision: str | None, timeout: float = HUB_TIMEOUT_S) -> tuple[bool, str]:
    """A quick look at the Hub before anything slow: offline mode, then one request with a short timeout."""
    if hub_offline():
        return False, "offline mode (HF_HUB_OFFLINE) is set"
    try:
        from huggingface_hub import HfApi

        HfApi().dataset_info(repo, revision=revision, timeout=timeout)
    except Exception as exc:  # any failure means "not now"
        return False, f"the Hub did not answer ({type(exc).__name__})"
    return True, ""


def _is_local(source: str) -> bool:
    return Path(source).is_dir()


def _quiet_datasets() -> Any:
    import datasets

    datasets.utils.logging.set_verbosity_error()
    datasets.utils.logging.disable_progress_bar()
    return datasets


_ROW_CACHE: dict[tuple[str, str, str, str | None], list[dict[str, Any]]] = {}


def load_rows(
    edition: Edition,
    task_id: str,
    data_dir: str | os.PathLike[str] | None = None,
    revision: str | None = None,
) -> list[dict[str, Any]]:
    """Rows of one task of an edition, in dataset order, as plain dicts."""
    suite = load_suite()
    entry = edition.tasks.get(task_id)
    if entry is None:
        raise DataUnavailable(f"task {task_id!r} is not part of edition {edition.name!r}")
    source = resolve_source(edition, data_dir)
    local = _is_local(source)
    if not local and (data_dir or source.startswith(("/", "."))):
        raise DataUnavailable(f"data folder {source!r} does not exist")
    rev = None if local else (revision or edition.revision)
    key = (source, entry.config, suite.split, rev)
    if key in _ROW_CACHE:
        return _ROW_CACHE[key]
    if local:
        # A local folder needs no network; say so before datasets is imported.
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    elif not hub_offline():
        ok, why = hub_reachable(source, rev)
        if not ok:  # fail in seconds, not after the Hub client's minute of retries
            raise DataUnavailable(f"could not load {task_id} from Hub dataset {source}: {why}{OFFLINE_HINT}")
    datasets = _quiet_datasets()
    try:
        ds = datasets.load_dataset(source, entry.config, split=suite.split, revision=rev)
    except Exception as exc:  # datasets raises many types; all mean "not available here"
        where = f"local folder {source}" if local else f"Hub dataset {source}"
        msg = f"could not load {task_id} (config {entry.config}) from {where}: {type(exc).__name__}: {exc}"
        if not local:
            msg += OFFLINE_HINT
        raise DataUnavailable(msg) from None
    rows = [dict(r) for r in ds]
    _ROW_CACHE[key] = rows
    return rows


def download(out: str | os.PathLike[str], revision: str | None = None, edition: str = "v1") -> Path:
    """Make an offline copy of the Hub dataset at a pinned revision (for --data-dir)."""
    ed = load_edition(edition)
    if ed.bundled:
        raise DataUnavailable(f"edition {edition!r} is bundled with the package; nothing to download")
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(
            repo_id=ed.source, repo_type="dataset", revision=revision or ed.revision, local_dir=str(out)
        )
    except Exception as exc:
        raise DataUnavailable(f"could not download {ed.source}: {type(exc).__name__}: {exc}") from None
    return Path(path)
