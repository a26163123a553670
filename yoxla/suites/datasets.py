"""Dataset rows for a suite task: local JSONL/CSV files and Hugging Face datasets.

Everything is read by content and fingerprinted over the rows actually read
(:func:`yoxla.editions.fingerprint`: SHA-256 over sorted-key JSON lines):

* a local file is read straight from its bytes (path relative to the manifest's folder);
  JSONL rows must be objects, a CSV's first row is its header; a bad row names its line;
* a Hugging Face dataset is fetched with ``huggingface_hub.snapshot_download`` at the given
  revision, restricted by ``allow_patterns`` to the files of the requested config and split,
  and those files are then read directly (JSONL, JSON, CSV, Parquet through pyarrow). The
  ``datasets`` library and its cache (keyed by folder names) are never used.

Which files belong to a config and split: the ``configs`` section of the dataset card
(``README.md``) when it has one, else the Hub's conventions (``<config>/<split>…``,
``data/<split>…``, ``<split>…``). The ``json``/``csv`` builders take ``data_files`` that
are Hugging Face file URLs (``https://huggingface.co/datasets/<repo>/resolve/<rev>/<file>``
or ``hf://datasets/<repo>@<rev>/<file>``); other hosts are refused.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from yoxla.editions import fingerprint
from yoxla.suites.errors import DatasetError
from yoxla.suites.spec import MAX_ROWS, HubDataset, LocalDataset

MAX_FILE_BYTES = 512 * 1024 * 1024  # one local or downloaded file
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024  # all files of one dataset
MAX_LINE = 16 * 1024 * 1024  # one JSONL line or CSV field
DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")


@dataclass(frozen=True)
class LoadedDataset:
    """Rows as read, their fingerprint, and what identifies where they came from."""

    rows: tuple[dict[str, Any], ...]
    fingerprint: str
    identity: dict[str, Any]  # the spec's fields that say which data (hashed with the fingerprint)
    files: tuple[str, ...]  # the files read, relative to their folder

    def describe(self) -> str:
        ident = self.identity
        where = ident.get("path", "")
        if ident.get("source") == "huggingface":
            where = f"hf:{ident['path']}" + (f" ({ident['name']})" if ident.get("name") else "")
            where += f" split {ident['split']}" + (f" @ {ident['revision']}" if ident.get("revision") else "")
        return f"{where}: {len(self.rows)} rows, {self.fingerprint[:19]}…"


def load_dataset(
    spec: LocalDataset | HubDataset, base_dir: Path, default_split: str = "test", where: str = "dataset"
) -> LoadedDataset:
    """Rows of one dataset (task or few-shot); DatasetError with the file, line and reason."""
    if isinstance(spec, LocalDataset):
        return _load_local(spec, base_dir, where)
    return _load_hub(spec, default_split, where)


def _finish(
    rows: list[dict[str, Any]], identity: dict[str, Any], files: list[str], where: str
) -> LoadedDataset:
    if not rows:
        raise DatasetError(f"{where}: no rows were read")
    return LoadedDataset(tuple(rows), fingerprint(rows), identity, tuple(files))


# Local files ---------------------------------------------------------------------------------


def _load_local(spec: LocalDataset, base_dir: Path, where: str) -> LoadedDataset:
    path = (base_dir / spec.path).resolve()
    if not path.is_file():
        raise DatasetError(f"{where}: file {spec.path} not found (looked in {base_dir})")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise DatasetError(f"{where}: {spec.path} is {size} bytes (at most {MAX_FILE_BYTES})")
    limit = spec.max_rows or MAX_ROWS
    fmt = spec.resolved_format
    data = path.read_bytes()
    rows = list(_read_bytes(data, fmt, f"{where}: {spec.path}", limit))
    identity = {"source": "local", "path": spec.path, "format": fmt, "max_rows": spec.max_rows}
    return _finish(rows, identity, [spec.path], where)


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetError(f"{name} line {line}: not UTF-8 text") from None


def _read_bytes(data: bytes, fmt: str, name: str, limit: int) -> Iterator[dict[str, Any]]:
    if fmt == "jsonl":
        yield from _read_jsonl(_text(data, name), name, limit)
    elif fmt == "csv":
        yield from _read_csv(_text(data, name), name, limit)
    elif fmt == "json":
        yield from _read_json(_text(data, name), name, limit)
    elif fmt == "parquet":
        yield from _read_parquet(data, name, limit)
    else:  # pragma: no cover - formats are checked before
        raise DatasetError(f"{name}: unknown format {fmt}")


def _read_jsonl(text: str, name: str, limit: int) -> Iterator[dict[str, Any]]:
    n = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise DatasetError(f"{name} line {lineno}: longer than {MAX_LINE} characters")
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{name} line {lineno}: not valid JSON ({exc.args[0][:80]})") from None
        if not isinstance(row, dict):
            raise DatasetError(
                f"{name} line {lineno}: a row must be a JSON object, found {type(row).__name__}"
            )
        yield row
        n += 1
        if n >= limit:
            return


def _read_csv(text: str, name: str, limit: int) -> Iterator[dict[str, Any]]:
    csv.field_size_limit(MAX_LINE)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise DatasetError(f"{name}: empty CSV file (the first row is the header)") from None
    except csv.Error as exc:
        raise DatasetError(f"{name} line 1: {exc}") from None
    header = [h.strip() for h in header]
    if not all(header):
        raise DatasetError(f"{name} line 1: a header column is empty")
    if len(set(header)) != len(header):
        raise DatasetError(f"{name} line 1: header columns repeat")
    n = 0
    try:
        for values in reader:
            if not values or (len(values) == 1 and not values[0].strip()):
                continue
            if len(values) != len(header):
                raise DatasetError(
                    f"{name} line {reader.line_num}: {len(values)} fields, the header has {len(header)}"
                )
            yield dict(zip(header, values, strict=True))
            n += 1
            if n >= limit:
                return
    except csv.Error as exc:
        raise DatasetError(f"{name} line {reader.line_num}: {exc}") from None


def _read_json(text: str, name: str, limit: int) -> Iterator[dict[str, Any]]:
    try:
        doc = json.loads(text)
    except ValueError:
        yield from _read_jsonl(text, name, limit)  # many ".json" files on the Hub are JSON lines
        return
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if not isinstance(doc, list):
        raise DatasetError(f"{name}: a JSON file must hold a list of objects (or JSON lines)")
    for i, row in enumerate(doc[:limit], start=1):
        if not isinstance(row, dict):
            raise DatasetError(f"{name} item {i}: a row must be a JSON object, found {type(row).__name__}")
        yield row


def _plain(value: Any) -> Any:
    """Parquet values as JSON data (dates and decimals as text, bytes refused)."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        raise ValueError("binary values (images, audio) are not supported")
    return str(value)


def _read_parquet(data: bytes, name: str, limit: int) -> Iterator[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        n = 0
        for batch in pf.iter_batches(batch_size=10_000):
            for row in batch.to_pylist():
                try:
                    yield {str(k): _plain(v) for k, v in row.items()}
                except ValueError as exc:
                    raise DatasetError(f"{name} row {n + 1}: {exc}") from None
                n += 1
                if n >= limit:
                    return
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"{name}: not a readable Parquet file ({exc})") from None


# Hugging Face -------------------------------------------------------------------------------


def _snapshot(repo: str, revision: str | None, patterns: list[str], where: str) -> Path:
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            repo_id=repo, repo_type="dataset", revision=revision, allow_patterns=patterns
        )
    except Exception as exc:  # the Hub client raises many types; all mean "not available"
        raise DatasetError(
            f"{where}: could not fetch Hugging Face dataset {repo}"
            + (f" at {revision}" if revision else "")
            + f": {type(exc).__name__}: {str(exc)[:200]}"
        ) from None
    return Path(folder)


def _card_configs(folder: Path) -> list[dict[str, Any]]:
    """The ``configs`` list of a dataset card's YAML header ([] when there is none)."""
    import yaml

    card = folder / "README.md"
    if not card.is_file():
        return []
    text = card.read_text(encoding="utf-8", errors="replace")
    m = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", text, re.DOTALL)
    if not m:
        return []
    try:
        header = yaml.safe_load(m.group(1))
    except yaml.YAMLError:
        return []
    configs = header.get("configs") if isinstance(header, dict) else None
    return [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []


def _split_patterns(data_files: Any, split: str) -> list[str] | None:
    """The file patterns of ``split`` in a data_files value (str, list, {split: …}, [{split, path}])."""
    if isinstance(data_files, str):
        return [data_files] if split == "train" else None
    if isinstance(data_files, dict):
        value = data_files.get(split)
        if value is None:
            return None
        return [value] if isinstance(value, str) else [str(v) for v in value]
    if isinstance(data_files, list):
        if all(isinstance(v, str) for v in data_files):
            return list(data_files) if split == "train" else None
        for entry in data_files:
            if isinstance(entry, dict) and entry.get("split") == split:
                path = entry.get("path")
                return [path] if isinstance(path, str) else [str(p) for p in path or []]
    return None


def _convention_patterns(name: str | None, split: str) -> list[str]:
    stems = [f"{split}.*", f"{split}-*", f"{split}_*", f"{split}/*", f"*-{split}.*", f"*-{split}-*"]
    prefixes = [f"{name}/", f"{name}/data/"] if name else ["", "data/"]
    return [p + s for p in prefixes for s in stems]


def _matching(folder: Path, patterns: list[str]) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and rel.lower().endswith(DATA_SUFFIXES):
            if any(fnmatch.fnmatch(rel, p) for p in patterns):
                found.append(path)
    return found


def _resolve_hub_url(url: str, where: str) -> tuple[str, str | None, str]:
    """(repo, revision, file) of a Hugging Face dataset file URL; DatasetError for anything else."""
    if url.startswith("hf://datasets/"):
        pieces = url[len("hf://datasets/") :].split("/")
        if len(pieces) < 3:
            raise DatasetError(f"{where}: {url} does not name a file")
        repo, revision = "/".join(pieces[:2]), None
        if "@" in repo:
            repo, revision = repo.split("@", 1)
        return repo, revision, "/".join(pieces[2:])
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.hostname != "huggingface.co" or parts.username or parts.password:
        raise DatasetError(
            f"{where}: data_files must be Hugging Face dataset file URLs "
            "(https://huggingface.co/datasets/<repo>/resolve/<revision>/<file>); other hosts are not fetched"
        )
    m = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", unquote(parts.path))
    if not m:
        raise DatasetError(f"{where}: {url} is not a …/datasets/<repo>/resolve/<revision>/<file> URL")
    return m.group(1), m.group(2), m.group(3)


def _file_format(name: str) -> str:
    low = name.lower()
    for suffix, fmt in ((".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json"), (".csv", "csv")):
        if low.endswith(suffix):
            return fmt
    if low.endswith(".parquet"):
        return "parquet"
    raise DatasetError(f"{name}: unknown data file type (jsonl, json, csv or parquet)")


def _read_files(files: list[tuple[Path, str]], limit: int, where: str) -> list[dict[str, Any]]:
    total = sum(p.stat().st_size for p, _ in files)
    if total > MAX_TOTAL_BYTES:
        raise DatasetError(f"{where}: the data files hold {total} bytes (at most {MAX_TOTAL_BYTES})")
    rows: list[dict[str, Any]] = []
    for path, shown in files:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise DatasetError(f"{where}: {shown} is larger than {MAX_FILE_BYTES} bytes")
        fmt = _file_format(shown)
        rows.extend(_read_bytes(path.read_bytes(), fmt, f"{where}: {shown}", limit - len(rows)))
        if len(rows) >= limit:
            break
    return rows


def _load_hub(spec: HubDataset, default_split: str, where: str) -> LoadedDataset:
    split = spec.split or default_split
    limit = spec.max_rows or MAX_ROWS
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
    if spec.path in ("json", "csv"):
        patterns = _split_patterns(spec.all_data_files, split)
        if not patterns:
            raise DatasetError(f"{where}: data_files has no files for split {split!r}")
        files: list[tuple[Path, str]] = []
        for url in patterns:
            repo, revision, name = _resolve_hub_url(url, where)
            folder = _snapshot(repo, revision, [name], where)
            path = folder / name
            if not path.is_file():
                raise DatasetError(f"{where}: {url} was not found in the download")
            files.append((path, name))
        rows = _read_files(files, limit, where)
        return _finish(rows, identity, [n for _, n in files], where)

    folder = _snapshot(spec.path, spec.revision, ["README.md"], where)
    patterns = None
    configs = _card_configs(folder)
    if configs:
        chosen = next((c for c in configs if c.get("config_name") == (spec.name or "default")), None)
        if chosen is None and spec.name is None:
            chosen = next((c for c in configs if c.get("default")), configs[0] if len(configs) == 1 else None)
        if chosen is None:
            names = ", ".join(str(c.get("config_name")) for c in configs)
            raise DatasetError(f"{where}: {spec.path} has no config {spec.name!r} (it has {names})")
        patterns = _split_patterns(chosen.get("data_files"), split)
        if patterns is None:
            raise DatasetError(
                f"{where}: config {chosen.get('config_name')} of {spec.path} has no split {split!r}"
            )
    if patterns is None:
        patterns = _convention_patterns(spec.name, split)
    folder = _snapshot(spec.path, spec.revision, patterns, where)
    found = _matching(folder, patterns)
    if not found:
        what = f"config {spec.name!r}, " if spec.name else ""
        raise DatasetError(f"{where}: no data files for {what}split {split!r} in {spec.path}")
    rel = [(p, p.relative_to(folder).as_posix()) for p in found]
    rows = _read_files(rel, limit, where)
    return _finish(rows, identity, [n for _, n in rel], where)
