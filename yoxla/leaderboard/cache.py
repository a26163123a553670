"""An on-disk cache of admission verdicts, so a restart does not re-score every file.

Only verdicts that were *admitted with re-checked scores* are stored: for them the outcome
depends on nothing but the file's bytes, the code (evaluators, parser, suite, manifests,
schema: all of the package's source and data files are hashed into the key) and the
trusted keys and any non-default editions (also in the key). Anything else (excluded, or admitted without re-checking)
is recomputed at every start, so the cache can never admit a file that a fresh check
would exclude. Entries live under ``$YOXLA_CACHE_DIR`` (default ``~/.cache/yoxla``);
``YOXLA_NO_CACHE=1`` turns the cache off.
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
_VERSION = b"admission-cache-1"


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


def load(sha256: str, trusted: Mapping[str, str], extra: str = "") -> Any | None:
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{_key(sha256, trusted, extra)}.pickle"
    try:
        with path.open("rb") as f:
            v = pickle.load(f)  # our own files, in the user's own cache folder
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    if getattr(v, "sha256", None) != sha256 or not getattr(v, "rechecked", False):
        return None
    return v


def store(v: Any, trusted: Mapping[str, str], extra: str = "") -> None:
    folder = cache_dir()
    if folder is None or not (v.rechecked and v.status == "admitted" and v.sha256):
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{_key(v.sha256, trusted, extra)}.pickle"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            pickle.dump(v, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    except OSError:
        pass  # a cache that cannot be written is only slower
