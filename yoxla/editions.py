"""Editions of the benchmark and the one path that loads their rows.

``v1`` is the published data on the Hugging Face Hub; ``sample`` is our own small copy,
bundled inside the package in exactly the Hub layout. Rows always come from a folder in that
layout, read by :func:`yoxla.datafiles.read_config`: the bundled folder, a local copy
(``--data-dir`` or ``$YOXLA_DATA_DIR``), or a snapshot of the Hub repository at a pinned
revision that ``huggingface_hub.snapshot_download`` puts in the Hugging Face cache (only the
edition's config folders). Nothing here sets a process-wide switch such as an offline mode.
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

from yoxla.datafiles import DataUnavailable, download_patterns, folder_patterns, read_config
from yoxla.suite import Suite, canonical_json, load_suite, sha256_text

DATA_DIR_ENV = "YOXLA_DATA_DIR"
EDITIONS = ("v1", "sample")


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
    # Analysis declarations (groups, controls, gate, ranking) that travel with an edition made
    # in code (tests, synthetic editions); None: the bundled file of the edition's name
    # (yoxla.declarations.edition_declarations).
    declarations: Any = None

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
        _hub_commit(repo, revision, timeout)
    except Exception as exc:  # any failure means "not now"
        return False, f"the Hub did not answer ({type(exc).__name__})"
    return True, ""


def _hub_commit(repo: str, revision: str | None, timeout: float = HUB_TIMEOUT_S) -> str:
    """The commit a revision (branch, tag or hash; ``None`` is the default branch) points at."""
    from huggingface_hub import HfApi

    sha = HfApi().dataset_info(repo, revision=revision, timeout=timeout).sha
    return sha or revision or "main"


def _is_local(source: str) -> bool:
    return Path(source).is_dir()


_SNAPSHOTS: dict[tuple[str, str | None, str, tuple[str, ...]], Path] = {}


def _snapshot(
    repo: str,
    revision: str | None,
    configs: list[str],
    split: str,
    local_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
) -> Path:
    """Download the configs' files of a Hub dataset at ``revision`` (a commit hash where known).

    The first request fetches ``README.md`` and the conventional config folders; when the card
    declares other paths for a config, a second request at the same revision fetches those.
    """
    from huggingface_hub import snapshot_download

    def fetch(patterns: list[str]) -> Path:
        path = snapshot_download(
            repo_id=repo,
            repo_type="dataset",
            revision=revision,
            allow_patterns=patterns,
            local_dir=str(local_dir) if local_dir else None,
            local_files_only=offline,
        )
        return Path(path)

    first = ["README.md", *(p for c in configs for p in folder_patterns(c))]
    path = fetch(first)
    folders = tuple(p.removesuffix("**") for p in first if p.endswith("/**"))
    missing = [p for c in configs for p in download_patterns(path, c, split) if not p.startswith(folders)]
    if missing:
        path = fetch(["README.md", *dict.fromkeys(missing)])
    return path


def _hub_folder(edition: Edition, repo: str, revision: str | None, split: str) -> Path:
    """The local snapshot of an edition's configs, downloaded once per process and revision."""
    configs = tuple(sorted({e.config for e in edition.tasks.values()}))
    key = (repo, revision, split, configs)
    if key in _SNAPSHOTS:
        return _SNAPSHOTS[key]
    offline = hub_offline()
    rev = revision
    if not offline:
        try:  # fail in seconds, not after the Hub client's minute of retries; pin what we read
            rev = _hub_commit(repo, revision)
        except Exception as exc:
            raise DataUnavailable(
                f"could not load {edition.name} from Hub dataset {repo}: "
                f"the Hub did not answer ({type(exc).__name__}){OFFLINE_HINT}"
            ) from None
    try:
        path = _snapshot(repo, rev, list(configs), split, offline=offline)
    except DataUnavailable as exc:
        raise DataUnavailable(f"{exc}{OFFLINE_HINT}") from None
    except Exception as exc:  # huggingface_hub raises many types; all mean "not available here"
        why = (
            "not in the local Hugging Face cache (offline mode)"
            if offline
            else f"{type(exc).__name__}: {exc}"
        )
        raise DataUnavailable(
            f"could not download {edition.name} from Hub dataset {repo}: {why}{OFFLINE_HINT}"
        ) from None
    _SNAPSHOTS[key] = path
    return path


def load_rows(
    edition: Edition,
    task_id: str,
    data_dir: str | os.PathLike[str] | None = None,
    revision: str | None = None,
) -> list[dict[str, Any]]:
    """Rows of one task of an edition, in dataset order, as plain dicts (JSON types).

    The rows are shared with later calls that read the same bytes: do not modify them.
    """
    suite = load_suite()
    entry = edition.tasks.get(task_id)
    if entry is None:
        raise DataUnavailable(f"task {task_id!r} is not part of edition {edition.name!r}")
    source = resolve_source(edition, data_dir)
    local = _is_local(source)
    if not local and (data_dir or source.startswith(("/", "."))):
        raise DataUnavailable(f"data folder {source!r} does not exist")
    id_field = suite.task(task_id).id_field if task_id in suite.tasks else None
    if local:
        return read_config(Path(source), entry.config, suite.split, id_field)
    folder = _hub_folder(edition, source, revision or edition.revision, suite.split)
    try:
        return read_config(folder, entry.config, suite.split, id_field)
    except DataUnavailable as exc:
        raise DataUnavailable(f"{exc} (Hub dataset {source}){OFFLINE_HINT}") from None


def download(out: str | os.PathLike[str], revision: str | None = None, edition: str = "v1") -> Path:
    """Make an offline copy of an edition's configs at a pinned revision (for --data-dir)."""
    ed = load_edition(edition)
    if ed.bundled:
        raise DataUnavailable(f"edition {edition!r} is bundled with the package; nothing to download")
    configs = sorted({e.config for e in ed.tasks.values()})
    try:
        rev = revision or ed.revision
        if not hub_offline():
            rev = _hub_commit(ed.source, rev)
        return _snapshot(ed.source, rev, configs, load_suite().split, local_dir=out, offline=hub_offline())
    except DataUnavailable:
        raise
    except Exception as exc:
        raise DataUnavailable(f"could not download {ed.source}: {type(exc).__name__}: {exc}") from None
