"""Rows of one config of a dataset folder in the Hub layout, read straight from its files.

A folder is a local copy, the bundled ``sample`` edition, or a Hub snapshot that
``yoxla.editions`` has downloaded; all three are read here, the same way. Which files hold a
config's split (the subset of what ``datasets`` accepts that a benchmark needs):

1. the ``configs:`` list in the front matter of the folder's ``README.md``, when it names the
   config: its ``data_files`` for the split (paths or globs relative to the folder), or, with
   only ``data_dir``, the conventions below inside that folder;
2. otherwise the conventions, in ``<config>/`` and then ``data/<config>/`` (the first folder
   with a match wins): ``<split>.jsonl``, ``<split>-*.jsonl``, ``<split>/*.jsonl``, or the same
   names ending in ``.parquet`` (``test-00000-of-00001.parquet``, ``test/0000.parquet``).

A config's files are all JSON Lines (UTF-8, one object per line, blank lines skipped) or all
Parquet (read with pyarrow, imported only then), concatenated pattern by pattern, each
pattern's matches in name order (as ``datasets`` orders them). The rows then get
the one schema ``datasets`` gave them through Arrow: every row has every column, in order of
first appearance, a missing value is ``None``, and a column (or list, or struct field) of
numbers that mixes ints and floats holds floats. That keeps the pinned fingerprints, which
were computed over rows read that way. Unlike Arrow, a string that looks like a date stays a
string. Parquet values JSON cannot hold (dates, decimals, bytes) become ``str(value)``, as the
fingerprint already serialised them.

Parsed rows are remembered by a hash of the files' bytes, never by a folder's name: a file
edited in place is read again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from pathlib import Path, PurePosixPath
from typing import Any

FORMATS = (".jsonl", ".parquet")
MAX_FILE_BYTES = 512 * 2**20  # one data file of a config
MAX_LINE_CHARS = 16 * 2**20  # one JSON line
MAX_README_BYTES = 2**20
_CACHE_ENTRIES = 128

Row = dict[str, Any]


class DataUnavailable(RuntimeError):
    """The rows of an edition could not be loaded; the message says how to fix it."""


def _convention_names(split: str) -> list[str]:
    return [f"{split}{ext}" for ext in FORMATS] + [f"{split}{sep}*{ext}" for sep in "-/" for ext in FORMATS]


def convention_patterns(config: str, split: str, bases: Iterable[str] | None = None) -> list[str]:
    """Glob patterns, relative to the dataset folder, that the conventions look at."""
    bases = [config, f"data/{config}"] if bases is None else list(bases)
    return [f"{b}/{name}" for b in bases for name in _convention_names(split)]


def folder_patterns(config: str) -> list[str]:
    """Everything in the config's conventional folders (what a snapshot fetches first)."""
    return [f"{config}/**", f"data/{config}/**"]


def download_patterns(root: Path, config: str, split: str) -> list[str]:
    """What a snapshot of ``root``'s repository needs for this config (``README.md`` read first)."""
    declared = _declared(root, config, split)
    if declared is None:
        return folder_patterns(config)
    kind, values = declared
    return values if kind == "files" else [f"{d}/**" for d in values]


def config_files(root: Path, config: str, split: str) -> list[Path]:
    """The data files of one config's split, in the order their rows come."""
    declared = _declared(root, config, split)
    if declared is not None and declared[0] == "files":
        return _declared_files(root, config, split, declared[1])
    bases = declared[1] if declared is not None else [config, f"data/{config}"]
    for base in bases:
        files = _match(root, convention_patterns(config, split, [base]))
        if files:
            return _one_format(files, f"{root / base}")
    folders = [root / b for b in bases if (root / b).is_dir()]
    if not folders:
        looked = " or ".join(f"{root / b}/" for b in bases)
        raise DataUnavailable(f"config {config!r} not found: no folder {looked}")
    found = sorted(p.relative_to(folders[0]).as_posix() for p in folders[0].rglob("*") if p.is_file())
    expected = ", ".join(_convention_names(split))
    raise DataUnavailable(
        f"no {split!r} data for config {config!r} in {folders[0]}: expected one of {expected}"
        f" (found: {', '.join(found[:10]) or 'nothing'})"
    )


def read_config(root: Path, config: str, split: str, id_field: str | None = None) -> list[Row]:
    """The rows of one config's split in ``root``: resolved, read, unified (cached by content)."""
    files = config_files(root, config, split)
    blobs = [(path, _read_bytes(path)) for path in files]
    key = tuple((path.suffix, hashlib.sha256(data).digest()) for path, data in blobs)
    rows = _ROWS.get(key)
    if rows is None:
        rows = []
        for path, data in blobs:
            rows += (
                _jsonl_rows(path, data, id_field) if path.suffix == ".jsonl" else _parquet_rows(path, data)
            )
        rows = unify(rows)
        _remember(_ROWS, key, rows)
    return rows


def clear_cache() -> None:
    _ROWS.clear()
    _FRONT_MATTER.clear()


# --- the schema ``datasets`` gave the rows -------------------------------------------------


def unify(rows: list[Row]) -> list[Row]:
    """Every row gets every column (first-appearance order, ``None`` when missing); mixed
    int/float numbers become floats. Rows are changed in place where possible."""
    if not rows:
        return rows
    shapes = dict.fromkeys(map(tuple, rows))  # the distinct key orders, first seen first
    if len(shapes) > 1:
        columns: dict[str, None] = {}
        for shape in shapes:
            columns.update(dict.fromkeys(shape))
        names = tuple(columns)
        rows = [row if tuple(row) == names else {c: row.get(c) for c in names} for row in rows]
    else:
        names = next(iter(shapes))
    for name, column in zip(names, zip(*map(dict.values, rows), strict=True), strict=True):
        plan = _plan(column)
        if plan is not None:
            for row in rows:
                row[name] = plan(row[name])
    return rows


_INT64 = (-(2**63), 2**63 - 1)
Plan = Callable[[Any], Any]


def _plan(values: Sequence[Any]) -> Plan | None:
    """How to convert every value of one column (``None`` when nothing changes)."""
    seen = set(map(type, values))
    types = seen - {type(None)}
    present = values if types == seen else [v for v in values if v is not None]
    if types == {int}:
        if _INT64[0] <= min(present) and max(present) <= _INT64[1]:
            return None
        return _to_float  # Arrow read numbers beyond int64 as doubles
    if types == {int, float}:
        return _to_float
    if types == {list}:
        inner = _plan(list(chain.from_iterable(present)))
        if inner is None:
            return None
        return lambda v: None if v is None else [inner(x) for x in v]
    if types == {dict}:
        return _struct_plan(present)
    return None  # strings, bools, floats, or a mix Arrow could not type: kept as read


def _struct_plan(dicts: Sequence[dict[str, Any]]) -> Plan | None:
    keys = list(dicts[0])
    keyset = set(keys)
    if any(d.keys() != keyset for d in dicts):
        return None  # structs with different fields: datasets kept them as read
    plans = {k: _plan([d[k] for d in dicts]) for k in keys}
    if all(p is None for p in plans.values()) and all(list(d) == keys for d in dicts):
        return None

    def convert(v: Any) -> Any:
        if v is None:
            return None
        return {k: (p(v[k]) if (p := plans[k]) is not None else v[k]) for k in keys}

    return convert


def _to_float(v: Any) -> Any:
    return float(v) if type(v) is int else v


# --- reading files -------------------------------------------------------------------------


def _read_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise DataUnavailable(
                f"{path} is {size:,} bytes; data files over {MAX_FILE_BYTES:,} bytes are refused"
            )
        return path.read_bytes()
    except OSError as exc:
        raise DataUnavailable(f"could not read {path}: {exc.strerror or exc}") from None


def _bad_line(path: Path, number: int, line: str, id_field: str | None, what: str) -> DataUnavailable:
    row_id = _row_id(line, id_field)
    where = f"{path}, line {number}" + (f" (row {row_id})" if row_id else "")
    return DataUnavailable(f"{where}: {what}")


def _row_id(line: str, id_field: str | None) -> str | None:
    """The row's id, found in a line that may not parse (best effort, for error messages)."""
    if not id_field:
        return None
    m = re.search(rf'"{re.escape(id_field)}"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)', line[:100_000])
    if m is None:
        return None
    try:
        return str(json.loads(m.group(1)))
    except ValueError:
        return m.group(1)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_no_constants)


def _jsonl_rows(path: Path, data: bytes, id_field: str | None) -> list[Row]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data[: exc.start].count(b"\n") + 1
        bad = data.split(b"\n")[at - 1].decode("utf-8", errors="replace")
        raise _bad_line(path, at, bad, id_field, f"not UTF-8 text (byte {exc.start} of the file)") from None
    rows: list[Row] = []
    raw_decode = _DECODER.raw_decode
    for number, line in enumerate(text.split("\n"), 1):
        if not line or line.isspace():
            continue
        if len(line) > MAX_LINE_CHARS:
            what = f"a line of {len(line):,} characters; lines over {MAX_LINE_CHARS:,} are refused"
            raise _bad_line(path, number, line, id_field, what)
        try:  # the fast path: an object from the first character to the end of the line
            row, end = raw_decode(line)
            if end != len(line) and not line[end:].isspace():
                raise ValueError
        except (ValueError, RecursionError):  # the full decoder accepts the line or says why not
            row = _decode_line(path, number, line, id_field)
        if type(row) is not dict:
            raise _bad_line(path, number, line, id_field, f"a JSON {type(row).__name__}, not an object")
        rows.append(row)
    return rows


def _decode_line(path: Path, number: int, line: str, id_field: str | None) -> Any:
    try:
        return _DECODER.decode(line)
    except json.JSONDecodeError as exc:
        what = f"not valid JSON: {exc.msg} (column {exc.colno})"
    except ValueError as exc:
        what = f"not valid JSON: {exc}"
    except RecursionError:
        what = "JSON nested too deeply"
    raise _bad_line(path, number, line, id_field, what)


def _parquet_rows(path: Path, data: bytes) -> list[Row]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataUnavailable(f"reading {path} needs pyarrow (pip install pyarrow)") from None
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise DataUnavailable(f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return [_jsonable(row) for row in table.to_pylist()]


def _jsonable(value: Any) -> Any:
    """Arrow's Python values as JSON's: dicts, lists, str, int, float, bool, None."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)  # datetime, date, Decimal, bytes: what the fingerprint's default=str gave


# --- which files -------------------------------------------------------------------------


def _match(root: Path, patterns: Iterable[str]) -> list[Path]:
    """Files matching the patterns: pattern by pattern, each pattern's matches in name order."""
    found: dict[Path, None] = {}
    for pattern in patterns:
        if not any(c in pattern for c in "*?["):  # a plain path: no directory scan
            if (root / pattern).is_file():
                found[root / pattern] = None
            continue
        for path in sorted(root.glob(pattern)):
            if path.is_file():
                found[path] = None
    return list(found)


def _one_format(files: list[Path], where: str) -> list[Path]:
    suffixes = {p.suffix for p in files}
    unsupported = sorted(str(p) for p in files if p.suffix not in FORMATS)
    if unsupported:
        raise DataUnavailable(f"unsupported data file(s) {', '.join(unsupported)}: use .jsonl or .parquet")
    if len(suffixes) > 1:
        raise DataUnavailable(f"{where} mixes .jsonl and .parquet files; keep one format per config")
    return files


def _declared_files(root: Path, config: str, split: str, patterns: list[str]) -> list[Path]:
    files = _match(root, patterns)
    if not files:
        raise DataUnavailable(
            f"README.md in {root} declares {', '.join(patterns)} for config {config!r} split "
            f"{split!r}, but no such file exists"
        )
    return _one_format(files, f"config {config!r} in {root}")


def _declared(root: Path, config: str, split: str) -> tuple[str, list[str]] | None:
    """What ``README.md`` declares for the config: ("files", patterns), ("dirs", [data_dir]) or None."""
    meta = _front_matter(root / "README.md")
    entry = next(
        (c for c in meta.get("configs") or [] if isinstance(c, dict) and c.get("config_name") == config),
        None,
    )
    if entry is None:
        return None
    data_files = entry.get("data_files")
    if data_files is None:
        data_dir = entry.get("data_dir")
        return ("dirs", [_safe_pattern(root, str(data_dir))]) if data_dir else None
    by_split: dict[str, Any]
    if isinstance(data_files, str) or (
        isinstance(data_files, list) and all(isinstance(d, str) for d in data_files)
    ):
        by_split = {"train": data_files}  # how datasets reads a bare path or path list
    elif isinstance(data_files, list):
        by_split = {str(d.get("split", "train")): d.get("path") for d in data_files if isinstance(d, dict)}
    elif isinstance(data_files, dict):
        by_split = {str(k): v for k, v in data_files.items()}
    else:
        raise DataUnavailable(f"README.md in {root}: data_files of config {config!r} is not understood")
    paths = by_split.get(split)
    if not paths:
        raise DataUnavailable(
            f"README.md in {root} declares config {config!r} without a {split!r} split "
            f"(splits: {', '.join(by_split) or 'none'})"
        )
    return "files", [_safe_pattern(root, str(p)) for p in ([paths] if isinstance(paths, str) else paths)]


def _safe_pattern(root: Path, pattern: str) -> str:
    p = PurePosixPath(pattern)
    if p.is_absolute() or ".." in p.parts or "://" in pattern:
        raise DataUnavailable(f"README.md in {root}: data path {pattern!r} must stay inside the folder")
    return pattern.strip("/")


def _front_matter(readme: Path) -> dict[str, Any]:
    """The YAML front matter of a dataset card (``{}`` when there is none), cached by content."""
    if not readme.is_file():
        return {}
    if readme.stat().st_size > MAX_README_BYTES:
        return {}  # a card that large is prose, not a layout
    data = _read_bytes(readme)
    key = hashlib.sha256(data).digest()
    if key in _FRONT_MATTER:
        return _FRONT_MATTER[key]
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    meta: dict[str, Any] = {}
    lines = text.split("\n")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() == "---"), None)
    if lines[0].rstrip() == "---" and end is not None:
        import yaml

        try:
            loaded = yaml.load("\n".join(lines[1:end]), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exc:
            raise DataUnavailable(f"{readme}: front matter is not valid YAML ({exc})") from None
        meta = loaded if isinstance(loaded, dict) else {}
    _remember(_FRONT_MATTER, key, meta)
    return meta


_ROWS: dict[tuple[tuple[str, bytes], ...], list[Row]] = {}
_FRONT_MATTER: dict[bytes, dict[str, Any]] = {}


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    while len(cache) >= _CACHE_ENTRIES:
        cache.pop(next(iter(cache)))
    cache[key] = value
