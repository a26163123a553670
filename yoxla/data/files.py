"""Rows of a dataset folder in the Hub layout, read straight from its files.

The reading half of the one loading path (the Hub half is :mod:`yoxla.data.hub`): a local copy, the
bundled ``sample`` edition, a Hub snapshot, or a suite's data file next to its manifest, all read
the same way. Which files hold a config's split (the part of what ``datasets`` accepts that an
evaluation needs):

1. the ``configs:`` list in the front matter of the folder's ``README.md``, when it names the
   config (without a config: the one named ``default``, the one marked ``default: true``, or
   the only one): its ``data_files`` for the split (paths or globs relative to the folder), or,
   with only ``data_dir``, the conventions below inside that folder;
2. otherwise the conventions, in ``<config>/``, ``data/<config>/`` and ``<config>/data/``
   (without a config: the folder itself, then ``data/``; the first folder with a match wins):
   ``<split>``, ``<split>-*``, ``<split>_*``, ``<split>/*``, ``*-<split>``, ``*-<split>-*``
   with an allowed suffix (``test.jsonl``, ``test-00000-of-00001.parquet``, ``test/0000.parquet``).

Formats, by suffix: JSON Lines (``.jsonl``, ``.ndjson``; blank lines skipped), Parquet (pyarrow,
imported only then) and, where the caller allows them (suites), CSV (a header row; values are
strings) and JSON (a list of objects, ``{"data": [...]}``, or JSON lines). A config's files are
of one format, concatenated pattern by pattern, each pattern's matches in name order. The rows
then get the one schema ``datasets`` gave them through Arrow (every row has every column, in
order of first appearance, ``None`` when missing; numbers that mix ints and floats are floats),
which keeps the pinned fingerprints; a string that looks like a date stays a string, and Parquet
values JSON cannot hold become ``str(value)``, as the fingerprint serialised them.

Parsed rows are remembered by a hash of the files' bytes, never by a folder's name. A bad file is
one :class:`DataUnavailable` line naming the file, the line and, where it can be found, the row's id.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from pathlib import Path, PurePosixPath
from typing import Any

SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
FORMATS = (".jsonl", ".parquet")  # what an edition may hold
ALL_FORMATS = tuple(SUFFIXES)  # what a suite's dataset may hold
MAX_FILE_BYTES = 512 * 2**20  # one data file
MAX_TOTAL_BYTES = 2 * 2**30  # all the files of one dataset
MAX_LINE_CHARS = 16 * 2**20  # one JSON line or CSV field
MAX_README_BYTES = 2**20
_CACHE_ENTRIES = 128

Row = dict[str, Any]


class DataUnavailable(RuntimeError):
    """The rows of a dataset could not be loaded; the message says how to fix it."""


def file_format(path: Path | str) -> str | None:
    """The reader a file's suffix calls for (``jsonl``, ``json``, ``csv``, ``parquet``), if any."""
    return SUFFIXES.get(PurePosixPath(str(path)).suffix.lower())


def _convention_names(split: str, formats: Sequence[str] = FORMATS) -> list[str]:
    stems = [split, f"{split}-*", f"{split}_*", f"{split}/*", f"*-{split}", f"*-{split}-*"]
    return [f"{stem}{ext}" for stem in stems for ext in formats]


def _bases(config: str | None) -> list[str]:
    return [config, f"data/{config}", f"{config}/data"] if config else ["", "data"]


def _under(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


def convention_patterns(
    config: str | None, split: str, bases: Iterable[str] | None = None, formats: Sequence[str] = FORMATS
) -> list[str]:
    """Glob patterns, relative to the dataset folder, that the conventions look at."""
    bases = _bases(config) if bases is None else list(bases)
    return [_under(b, name) for b in bases for name in _convention_names(split, formats)]


def split_globs(config: str | None, split: str) -> list[str]:
    """What a snapshot fetches before it has read the card: every file the conventions could pick
    for the split, in any format (``fnmatch`` patterns, whose ``*`` also crosses ``/``)."""
    return [_under(b, stem) for b in _bases(config) for stem in (f"{split}*", f"*-{split}*")]


def download_patterns(root: Path, config: str | None, split: str) -> list[str]:
    """What a snapshot of ``root``'s repository needs for this config's split (``README.md`` read)."""
    declared = _declared(root, config, split)
    if declared is None:
        return split_globs(config, split)
    kind, values = declared
    return values if kind == "files" else [_under(d, s) for d in values for s in (f"{split}*", f"*-{split}*")]


def config_files(root: Path, config: str | None, split: str, formats: Sequence[str] = FORMATS) -> list[Path]:
    """The data files of one config's split, in the order their rows come."""
    declared = _declared(root, config, split)
    if declared is not None and declared[0] == "files":
        return _declared_files(root, config, split, declared[1], formats)
    bases = declared[1] if declared is not None else _bases(config)
    for base in bases:
        files = match_files(root, convention_patterns(config, split, [base], formats))
        if files:
            return _one_format(files, f"{root / base}", formats)
    folders = [root / b for b in bases if (root / b).is_dir()]
    if not folders:
        looked = " or ".join(f"{root / b}/" for b in bases)
        known = _card_configs(root)
        if known:
            names = ", ".join(str(c.get("config_name")) for c in known)
            raise DataUnavailable(
                f"config {config!r} not found: README.md in {root} declares only {names}, "
                f"and there is no folder {looked}"
            )
        raise DataUnavailable(f"config {config!r} not found: no folder {looked}")
    found = sorted(p.relative_to(folders[0]).as_posix() for p in folders[0].rglob("*") if p.is_file())
    expected = ", ".join(_convention_names(split, formats))
    raise DataUnavailable(
        f"no {split!r} data for {_config_name(config)} in {folders[0]}: expected one of {expected}"
        f" (found: {', '.join(found[:10]) or 'nothing'})"
    )


def _config_name(config: str | None) -> str:
    return f"config {config!r}" if config else "the default config"


def read_config(
    root: Path,
    config: str | None,
    split: str,
    id_field: str | None = None,
    formats: Sequence[str] = FORMATS,
) -> list[Row]:
    """The rows of one config's split in ``root``: resolved, read, unified (cached by content)."""
    files = config_files(root, config, split, formats)
    return read_files([(path, _format(path)) for path in files], id_field)


def read_files(
    files: Sequence[tuple[Path, str]], id_field: str | None = None, schema: bool = True
) -> list[Row]:
    """The rows of these files (each with the format to read it as), in order, cached by content.

    ``schema``: give the rows the one schema ``datasets`` gives a Hub dataset (:func:`unify`);
    without it the rows are as written (a suite's own file next to its manifest).
    The rows are shared with later calls that read the same bytes: do not modify them.
    """
    sizes = [_size(path) for path, _ in files]
    if sum(sizes) > MAX_TOTAL_BYTES:
        raise DataUnavailable(
            f"{files[0][0].parent}: the data files hold {sum(sizes):,} bytes; "
            f"over {MAX_TOTAL_BYTES:,} in all are refused"
        )
    blobs = [(path, fmt, _read_bytes(path)) for path, fmt in files]
    key = (schema, tuple((fmt, hashlib.sha256(data).digest()) for _, fmt, data in blobs))
    rows = _ROWS.get(key)
    if rows is None:
        rows = []
        for path, fmt, data in blobs:
            rows += _READERS[fmt](path, data, id_field)
        if schema:
            rows = unify(rows)
        _remember(_ROWS, key, rows)
    return rows


def _format(path: Path) -> str:
    fmt = file_format(path)
    if fmt is None:  # pragma: no cover - the suffix was checked when the files were chosen
        raise DataUnavailable(f"{path}: unknown data file type")
    return fmt


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


def _size(path: Path) -> int:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DataUnavailable(f"could not read {path}: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise DataUnavailable(
            f"{path} is {size:,} bytes; data files over {MAX_FILE_BYTES:,} bytes are refused"
        )
    return size


def _read_bytes(path: Path) -> bytes:
    _size(path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DataUnavailable(f"could not read {path}: {exc.strerror or exc}") from None


def _bad_line(path: Path, number: int, line: str, id_field: str | None, what: str) -> DataUnavailable:
    return _bad_row(path, f"line {number}", _row_id(line, id_field), what)


def _bad_row(path: Path, where: str, row_id: str | None, what: str) -> DataUnavailable:
    return DataUnavailable(f"{path}, {where}" + (f" (row {row_id})" if row_id else "") + f": {what}")


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


def _text(path: Path, data: bytes, id_field: str | None) -> str:
    """UTF-8 text without a byte order mark; a bad byte names its line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data[: exc.start].count(b"\n") + 1
        bad = data.split(b"\n")[at - 1].decode("utf-8", errors="replace")
        raise _bad_line(path, at, bad, id_field, f"not UTF-8 text (byte {exc.start} of the file)") from None


def _jsonl_rows(path: Path, data: bytes, id_field: str | None) -> list[Row]:
    return _json_lines(path, _text(path, data, id_field), id_field)


def _json_lines(path: Path, text: str, id_field: str | None) -> list[Row]:
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


def _json_rows(path: Path, data: bytes, id_field: str | None) -> list[Row]:
    """A JSON file: a list of objects, ``{"data": [objects]}``, or JSON lines under a .json name."""
    text = _text(path, data, id_field)
    try:
        doc = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return _json_lines(path, text, id_field)  # many ".json" files on the Hub are JSON lines
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if not isinstance(doc, list):
        raise DataUnavailable(f"{path}: a JSON file must hold a list of objects (or JSON lines)")
    for number, row in enumerate(doc, 1):
        if type(row) is not dict:
            raise _bad_row(path, f"item {number}", None, f"a JSON {type(row).__name__}, not an object")
    return doc


def _csv_rows(path: Path, data: bytes, id_field: str | None) -> list[Row]:
    """CSV with a header row; every value a string, as written."""
    text = _text(path, data, id_field)
    csv.field_size_limit(MAX_LINE_CHARS)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise DataUnavailable(f"{path}: empty CSV file (the first row is the header)") from None
    except csv.Error as exc:
        raise _bad_row(path, "line 1", None, str(exc)) from None
    if not all(header):
        raise _bad_row(path, "line 1", None, "a header column is empty")
    if len(set(header)) != len(header):
        raise _bad_row(path, "line 1", None, "header columns repeat")
    at = header.index(id_field) if id_field in header else None
    rows: list[Row] = []
    values: list[str] = []
    try:
        for values in reader:
            if not values or (len(values) == 1 and not values[0].strip()):
                continue
            if len(values) != len(header):
                row_id = values[at] if at is not None and at < len(values) else None
                what = f"{len(values)} fields, the header has {len(header)}"
                raise _bad_row(path, f"line {reader.line_num}", row_id, what)
            rows.append(dict(zip(header, values, strict=True)))
    except csv.Error as exc:
        raise _bad_row(path, f"line {reader.line_num}", None, str(exc)) from None
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


def _parquet_rows(path: Path, data: bytes, id_field: str | None = None) -> list[Row]:
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


_READERS: dict[str, Callable[[Path, bytes, str | None], list[Row]]] = {
    "jsonl": _jsonl_rows,
    "json": _json_rows,
    "csv": _csv_rows,
    "parquet": _parquet_rows,
}


# --- which files -------------------------------------------------------------------------


def match_files(root: Path, patterns: Iterable[str]) -> list[Path]:
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


def _one_format(files: list[Path], where: str, formats: Sequence[str]) -> list[Path]:
    unsupported = sorted(str(p) for p in files if p.suffix.lower() not in formats)
    if unsupported:
        allowed = ", ".join(formats[:-1]) + f" or {formats[-1]}"
        raise DataUnavailable(f"unsupported data file(s) {', '.join(unsupported)}: use {allowed}")
    if len({file_format(p) for p in files}) > 1:
        suffixes = " and ".join(sorted({p.suffix.lower() for p in files}))
        raise DataUnavailable(f"{where} mixes {suffixes} files; keep one format per config")
    return files


def _declared_files(
    root: Path, config: str | None, split: str, patterns: list[str], formats: Sequence[str]
) -> list[Path]:
    files = match_files(root, patterns)
    if not files:
        raise DataUnavailable(
            f"README.md in {root} declares {', '.join(patterns)} for {_config_name(config)} split "
            f"{split!r}, but no such file exists"
        )
    return _one_format(files, f"{_config_name(config)} in {root}", formats)


def _card_configs(root: Path) -> list[dict[str, Any]]:
    configs = _front_matter(root / "README.md").get("configs")
    return [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []


def _card_entry(root: Path, config: str | None) -> dict[str, Any] | None:
    """The card's entry for the config; without a config, its default (as ``datasets`` picks it)."""
    configs = _card_configs(root)
    if config is not None or not configs:
        return next((c for c in configs if c.get("config_name") == config), None)
    entry = next((c for c in configs if c.get("config_name") == "default"), None)
    entry = entry or next((c for c in configs if c.get("default") is True), None)
    if entry is None and len(configs) > 1:
        names = ", ".join(str(c.get("config_name")) for c in configs)
        raise DataUnavailable(f"README.md in {root} declares several configs ({names}): name one")
    return entry or configs[0]


def _declared(root: Path, config: str | None, split: str) -> tuple[str, list[str]] | None:
    """What ``README.md`` declares for the config: ("files", patterns), ("dirs", [data_dir]) or None."""
    entry = _card_entry(root, config)
    if entry is None:
        return None
    config = config or entry.get("config_name")
    data_files = entry.get("data_files")
    if data_files is None:
        data_dir = entry.get("data_dir")
        return ("dirs", [_safe_pattern(root, str(data_dir))]) if data_dir else None
    by_split = splits_of(data_files)
    if by_split is None:
        raise DataUnavailable(f"README.md in {root}: data_files of config {config!r} is not understood")
    paths = by_split.get(split)
    if not paths:
        raise DataUnavailable(
            f"README.md in {root} declares config {config!r} without a {split!r} split "
            f"(splits: {', '.join(by_split) or 'none'})"
        )
    return "files", [_safe_pattern(root, p) for p in paths]


def splits_of(data_files: Any) -> dict[str, list[str]] | None:
    """A ``data_files`` value (a card's, or the ``json``/``csv`` builders'), split by split:
    a path or list of paths is ``train``; ``{split: path(s)}``; ``[{split, path(s)}]``."""
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
        return None
    return {
        k: [v] if isinstance(v, str) else [str(p) for p in v] if isinstance(v, list) else []
        for k, v in by_split.items()
    }


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


_ROWS: dict[tuple[bool, tuple[tuple[str, bytes], ...]], list[Row]] = {}
_FRONT_MATTER: dict[bytes, dict[str, Any]] = {}


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    while len(cache) >= _CACHE_ENTRIES:
        cache.pop(next(iter(cache)))
    cache[key] = value
