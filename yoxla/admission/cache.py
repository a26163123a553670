"""An on-disk cache of admission verdicts, so a restart does not re-check every file.

A verdict depends on the file's bytes, the code (evaluators, parser, suite, manifests,
record: every source and data file of the package is hashed into the key), the trusted
keys, any non-default editions, and, for files that reached re-scoring, the rows of their
edition. The first four make the entry's name; the rows' token (their fingerprints, or
why there were none) is stored inside and compared at load time, so a verdict given
without the v1 rows is not reused once they are there, and the other way round. Every
verdict is cached, excluded ones too, so a hostile file costs its check once.

Entries live under ``$YOXLA_CACHE_DIR``, else ``/data/yoxla-cache`` on a Space with persistent
storage, else ``$XDG_CACHE_HOME/yoxla`` or ``~/.cache/yoxla``; ``YOXLA_NO_CACHE=1`` turns the cache off. Every key is a
SHA-256 of canonical content (:func:`stable_digest`), so processes with different hash seeds
share the entries. They are pickles of this package's own records, written and read only
by this module in the user's own cache folder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

CACHE_ENV = "YOXLA_CACHE_DIR"
NO_CACHE_ENV = "YOXLA_NO_CACHE"
_VERSION = b"admission-cache-6"


@cache
def code_token() -> str:
    """Hash of every source and data file of the installed package (any change invalidates)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(_VERSION)
    for p in sorted(root.rglob("*")):
        if (
            p.is_file()
            and p.suffix in (".py", ".yaml", ".yml", ".json", ".jsonl")
            and "__pycache__" not in p.parts
        ):
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def _canonical(obj: Any) -> Any:
    """A JSON-able form of ``obj`` that is the same in every process: sets sorted, dataclasses and
    models as their fields, mappings by key; nothing depends on the hash seed or an object's id."""
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return repr(obj)  # NaN and infinities too; the repr round-trips
    if isinstance(obj, bytes):
        return {"__bytes__": obj.hex()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            "__type__": type(obj).__qualname__,
            **{f.name: _canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj)},
        }
    if hasattr(obj, "model_dump") and callable(obj.model_dump):
        return {"__type__": type(obj).__qualname__, **_canonical(obj.model_dump(mode="json"))}
    if isinstance(obj, Mapping):
        items = [(json.dumps(_canonical(k), sort_keys=True), _canonical(v)) for k, v in obj.items()]
        return {"__map__": sorted(items, key=lambda kv: kv[0])}
    if isinstance(obj, set | frozenset):
        return {"__set__": sorted(json.dumps(_canonical(x), sort_keys=True) for x in obj)}
    if isinstance(obj, list | tuple):
        return [_canonical(x) for x in obj]
    if isinstance(obj, Path):
        return {"__path__": obj.as_posix()}
    raise TypeError(f"no canonical form for {type(obj).__name__}")


def stable_digest(obj: Any) -> str:
    """SHA-256 of ``obj``'s canonical content: a cache key that two processes agree on whatever
    their ``PYTHONHASHSEED`` (never ``hash()`` or the ``repr`` of a set)."""
    body = json.dumps(_canonical(obj), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


PERSISTENT_ROOT = Path("/data")  # a Hugging Face Space's persistent storage, where it has some


def cache_base() -> tuple[Path, bool]:
    """Where the cache lives, and whether that place survives a restart.

    ``$YOXLA_CACHE_DIR`` when set; on a Hugging Face Space (``$SPACE_ID`` set) with persistent
    storage (``/data`` writable) ``/data/yoxla-cache``; otherwise ``$XDG_CACHE_HOME/yoxla`` (an
    absolute ``XDG_CACHE_HOME`` only, as the XDG rules say), else ``~/.cache/yoxla``, which a
    Space without persistent storage loses at every restart."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit), True
    on_space = bool(os.environ.get("SPACE_ID"))
    if on_space and PERSISTENT_ROOT.is_dir() and os.access(PERSISTENT_ROOT, os.W_OK):
        return PERSISTENT_ROOT / "yoxla-cache", True
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    home = Path(xdg) if xdg and Path(xdg).is_absolute() else Path(os.path.expanduser("~")) / ".cache"
    return home / "yoxla", not on_space


def describe() -> str:
    """One start-up line: where verdicts are cached, and whether a restart keeps them."""
    folder = cache_dir()
    if folder is None:
        return f"verdict cache off ({NO_CACHE_ENV}=1): every start checks every file"
    _, lasting = cache_base()
    if not lasting:
        return (
            f"verdict cache at {folder}, which this Space loses at every restart (no persistent "
            f"storage at {PERSISTENT_ROOT}; set {CACHE_ENV} to keep it): every start is a first start"
        )
    return f"verdict cache at {folder}"


def cache_dir() -> Path | None:
    if os.environ.get(NO_CACHE_ENV, "").lower() in ("1", "true", "yes"):
        return None
    return cache_base()[0] / "admission"


def _key(sha256: str, trusted: Mapping[str, str], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    h.update(code_token().encode())
    h.update(sha256.encode())
    h.update(stable_digest(dict(trusted)).encode())
    return h.hexdigest()


def _data_token(v: Any, data: Any, editions: Mapping[str, Any] | None) -> str | None:
    """The rows (or the committed suite) a verdict may rest on: None when the file named neither."""
    # a suite file (one of a benchmark suite too, shown on its edition's board) rests on its suite
    suite = getattr(v, "source_suite", None) or getattr(v, "suite", None)
    if suite is not None:
        return str(data.suites.token(suite))
    if v.edition is None:
        return None
    from yoxla.data.editions import load_edition

    try:
        edition = (editions or {}).get(v.edition) or load_edition(v.edition)
    except Exception:
        return None
    return str(data.token(edition))


def load(
    sha256: str, trusted: Mapping[str, str], extra: str, data: Any, editions: Mapping[str, Any] | None
) -> Any | None:
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{_key(sha256, trusted, extra)}.pickle"
    try:
        with path.open("rb") as f:
            token, v = pickle.load(f)  # our own files, in the user's own cache folder
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
        return None
    if getattr(v, "sha256", None) != sha256:
        return None
    if token is not None and token != _data_token(v, data, editions):
        return None
    return v


def store(
    v: Any, trusted: Mapping[str, str], extra: str, data: Any, editions: Mapping[str, Any] | None
) -> None:
    folder = cache_dir()
    if folder is None or not v.sha256:
        return
    try:
        token = _data_token(v, data, editions)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{_key(v.sha256, trusted, extra)}.pickle"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            pickle.dump((token, v), f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    except (OSError, pickle.PicklingError, RecursionError):
        pass  # a cache that cannot be written is only slower


def load_arrays(kind: str, key: str, names: tuple[str, ...]) -> tuple[Any, ...] | None:
    """Arrays stored under ``kind/key`` (NumPy's own format, no pickles), or None."""
    folder = cache_dir()
    if folder is None:
        return None
    import numpy as np

    path = folder.parent / kind / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as z:
            return tuple(z[n] for n in names)
    except (OSError, KeyError, ValueError, EOFError):
        return None


def store_arrays(kind: str, key: str, arrays: Mapping[str, Any]) -> None:
    folder = cache_dir()
    if folder is None:
        return
    import numpy as np

    try:
        target = folder.parent / kind
        target.mkdir(parents=True, exist_ok=True)
        tmp = target / f"{key}.{os.getpid()}.tmp.npz"
        np.savez(tmp, **arrays)
        tmp.replace(target / f"{key}.npz")
    except OSError:
        pass  # a cache that cannot be written is only slower
