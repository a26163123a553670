"""An on-disk cache of admission verdicts, so a restart does not re-check every file.

A verdict depends on the file's bytes, the code (evaluators, parser, suite, manifests,
record: every source and data file of the package is hashed into the key), the trusted
keys, any non-default editions, and, for files that reached re-scoring, the rows of their
edition. The first four make the entry's name; the rows' token (their fingerprints, or
why there were none) is stored inside and compared at load time, so a verdict given
without the v1 rows is not reused once they are there, and the other way round. Every
verdict is cached, excluded ones too, so a hostile file costs its check once.

Entries live under ``$YOXLA_CACHE_DIR`` (default ``~/.cache/yoxla``); ``YOXLA_NO_CACHE=1``
turns the cache off. They are pickles of this package's own records, written and read only
by this module in the user's own cache folder.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

CACHE_ENV = "YOXLA_CACHE_DIR"
NO_CACHE_ENV = "YOXLA_NO_CACHE"
_VERSION = b"admission-cache-3"


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


def cache_dir() -> Path | None:
    if os.environ.get(NO_CACHE_ENV, "").lower() in ("1", "true", "yes"):
        return None
    base = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "yoxla")
    return Path(base) / "admission"


def _key(sha256: str, trusted: Mapping[str, str], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    h.update(code_token().encode())
    h.update(sha256.encode())
    h.update(repr(sorted(trusted.items())).encode())
    return h.hexdigest()


def _data_token(v: Any, data: Any, editions: Mapping[str, Any] | None) -> str | None:
    """The rows (or the committed suite) a verdict may rest on: None when the file named neither."""
    if getattr(v, "suite", None) is not None:
        return str(data.suites.token(v.suite))
    if v.edition is None:
        return None
    from yoxla.editions import load_edition

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
