"""Dataset rows for a suite task: a manifest's dataset spec mapped onto the one loading path.

Rows are read by :mod:`yoxla.data.files` and Hugging Face data is fetched by
:func:`yoxla.data.hub.snapshot`, the code that loads the benchmark's editions (the same readers,
limits, content cache and error messages). What each dataset form reads, and what
``--revision``/``--data-dir`` (:func:`hub_override`) change, is in docs/suites.md, *Datasets*.
Rows are fingerprinted over what was read (:func:`yoxla.data.editions.fingerprint`); a Hugging
Face dataset records the commit it was read at. An override leaves the manifest, and so every
definition hash, as it is: the data's identity is its fingerprint, which admission compares.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yoxla.contract.errors import DatasetError
from yoxla.contract.paths import suite_file
from yoxla.contract.spec_base import MAX_ROWS
from yoxla.contract.spec_data import HubDataset, LocalDataset
from yoxla.data.editions import fingerprint
from yoxla.data.files import (
    ALL_FORMATS,
    DataUnavailable,
    config_files,
    file_format,
    match_files,
    read_files,
    splits_of,
)
from yoxla.data.hub import Snapshot, file_url, snapshot

ID_FIELD = "id"  # the row id a bad line's message names (the field items take their ids from)
OFFLINE_HINT = (
    ". Offline? Load it once where the Hub is reachable (with revision pinned to a commit, "
    "HF_HUB_OFFLINE=1 then reads it from the Hugging Face cache), or copy its rows into a "
    "JSONL or CSV file next to the manifest and give that path."
)


class HubUnavailable(DatasetError):
    """A Hugging Face dataset cannot be read here (Hub unreachable, offline with nothing cached):
    admission lists a file of such a suite as not re-checked instead of excluding it."""


@dataclass(frozen=True)
class HubOverride:
    """Where a run reads its Hugging Face datasets instead of the manifest's revision."""

    revision: str | None = None
    data_dir: Path | None = None

    def folder(self, repo: str) -> Path:
        """The local copy of ``repo``: ``DIR/<owner>/<name>`` when there is one, else ``DIR``."""
        assert self.data_dir is not None
        own = self.data_dir / repo
        return own if own.is_dir() else self.data_dir


_OVERRIDE: ContextVar[HubOverride | None] = ContextVar("hub_override", default=None)


@contextmanager
def hub_override(revision: str | None, data_dir: str | Path | None) -> Iterator[None]:
    """Read every Hugging Face dataset loaded inside at ``revision``, or from ``data_dir``."""
    if revision is None and data_dir is None:
        yield
        return
    token = _OVERRIDE.set(HubOverride(revision, Path(data_dir) if data_dir is not None else None))
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


def reads_hub(spec: LocalDataset | HubDataset | None) -> bool:
    return isinstance(spec, HubDataset)


@dataclass(frozen=True)
class LoadedDataset:
    """Rows as read, their fingerprint, and what identifies where they came from."""

    rows: tuple[dict[str, Any], ...]
    fingerprint: str
    identity: dict[str, Any]  # the spec's fields that say which data (hashed with the fingerprint)
    files: tuple[str, ...]  # the files read, relative to their folder
    commits: dict[str, str] = field(default_factory=dict)  # Hugging Face repo -> the commit read

    def describe(self) -> str:
        ident = self.identity
        where = ident.get("path", "")
        if ident.get("source") == "huggingface":
            where = f"hf:{ident['path']}" + (f" ({ident['name']})" if ident.get("name") else "")
            where += f" split {ident['split']}"
            if self.commits:
                where += " @ " + ", ".join(c[:12] for c in self.commits.values())
                if ident.get("revision") and ident["revision"] not in self.commits.values():
                    where += f" ({ident['revision']})"
        return f"{where}: {len(self.rows)} rows, {self.fingerprint[:19]}…"


def load_dataset(
    spec: LocalDataset | HubDataset, base_dir: Path, default_split: str = "test", where: str = "dataset"
) -> LoadedDataset:
    """Rows of one dataset (task or few-shot); DatasetError with the file, line and reason."""
    if isinstance(spec, LocalDataset):
        return _load_local(spec, base_dir, where)
    return _load_hub(spec, default_split, where)


def _finish(
    rows: list[dict[str, Any]],
    spec: LocalDataset | HubDataset,
    identity: dict[str, Any],
    files: list[str],
    where: str,
    commits: dict[str, str] | None = None,
) -> LoadedDataset:
    if spec.max_rows is None and len(rows) > MAX_ROWS:
        raise DatasetError(
            f"{where}: {len(rows):,} rows, more than the {MAX_ROWS:,} a suite dataset may have "
            f"(set max_rows to use the first ones)"
        )
    rows = rows[: spec.max_rows or MAX_ROWS]
    if not rows:
        raise DatasetError(f"{where}: no rows were read")
    return LoadedDataset(tuple(rows), fingerprint(rows), identity, tuple(files), commits or {})


def _load_local(spec: LocalDataset, base_dir: Path, where: str) -> LoadedDataset:
    path = suite_file(
        base_dir, spec.path, where, "path", data=True
    )  # never a file outside the suite's folder
    if not path.is_file():
        raise DatasetError(f"{where}: file {spec.path} not found (looked in {base_dir})")
    fmt = spec.resolved_format
    try:
        rows = read_files([(path, fmt)], ID_FIELD, schema=False)
    except DataUnavailable as exc:
        raise DatasetError(f"{where}: {exc}") from None
    identity = {"source": "local", "path": spec.path, "format": fmt, "max_rows": spec.max_rows}
    return _finish(rows, spec, identity, [spec.path], where)


def _load_hub(spec: HubDataset, default_split: str, where: str) -> LoadedDataset:
    split = spec.split or default_split
    identity = {
        "source": "huggingface",
        "path": spec.path,
        "name": spec.name,
        "split": split,
        "revision": spec.revision,
        "max_rows": spec.max_rows,
        "data_files": spec.data_files,
        "dataset_kwargs": spec.dataset_kwargs,
    }
    override = _OVERRIDE.get()
    if spec.path in ("json", "csv"):
        files, snaps = _builder_files(spec, split, where, override)
    else:
        if override is not None and override.data_dir is not None:
            snap = Snapshot(spec.path, "", override.folder(spec.path))
            snaps = []
            at = f"the local copy {snap.folder}"
        else:
            revision = override.revision if override is not None else spec.revision
            snap = _snapshot(where, spec.path, revision, [(spec.name, split)])
            snaps = [snap]
            at = f"Hub dataset {spec.path} at {snap.commit}"
        try:
            found = config_files(snap.folder, spec.name, split, ALL_FORMATS)
        except DataUnavailable as exc:
            raise DatasetError(f"{where}: {exc} ({at})") from None
        files = [(p, p.relative_to(snap.folder).as_posix(), _format(p)) for p in found]
    try:
        rows = read_files([(path, fmt) for path, _, fmt in files], ID_FIELD)
    except DataUnavailable as exc:
        raise DatasetError(f"{where}: {exc}") from None
    commits = {s.repo: s.commit for s in snaps}
    return _finish(rows, spec, identity, [shown for _, shown, _ in files], where, commits)


def _snapshot(
    where: str,
    repo: str,
    revision: str | None,
    configs: list[tuple[str | None, str]] | None = None,
    files: list[str] | None = None,
) -> Snapshot:
    try:
        return snapshot(repo, revision, configs or (), files=files or ())
    except DataUnavailable as exc:
        raise HubUnavailable(f"{where}: could not load {exc}{OFFLINE_HINT}") from None


def _format(path: Path | str) -> str:
    return file_format(path) or "jsonl"  # the files were chosen by suffix


def _builder_files(
    spec: HubDataset, split: str, where: str, override: HubOverride | None
) -> tuple[list[tuple[Path, str, str]], list[Snapshot]]:
    """The files named by the json/csv builder's data_files for ``split``, downloaded."""
    urls = (splits_of(spec.all_data_files) or {}).get(split)
    if not urls:
        raise DatasetError(f"{where}: data_files has no files for split {split!r}")
    try:
        wanted = [(url, *file_url(url)) for url in urls]
    except DataUnavailable as exc:
        raise DatasetError(f"{where}: {exc}") from None
    if override is not None:  # every file at the run's revision, or from its local copy
        wanted = [(url, repo, override.revision, name) for url, repo, _, name in wanted]
    names: dict[tuple[str, str | None], list[str]] = {}
    for _, repo, revision, name in wanted:
        names.setdefault((repo, revision), []).append(name)
    if override is not None and override.data_dir is not None:
        snaps = {key: Snapshot(key[0], "", override.folder(key[0])) for key in names}
    else:
        snaps = {key: _snapshot(where, *key, files=files) for key, files in names.items()}
    out: list[tuple[Path, str, str]] = []
    for url, repo, revision, name in wanted:
        folder = snaps[repo, revision].folder
        found = match_files(folder, [name])
        if not found:
            raise DatasetError(f"{where}: {url} was not found in the download")
        for path in found:
            fmt = "csv" if spec.path == "csv" else "jsonl" if file_format(path) == "jsonl" else "json"
            out.append((path, path.relative_to(folder).as_posix(), fmt))
    return out, [s for s in snaps.values() if s.commit]
