"""Suites by id: a manifest's suite id, its path in the repository, and the committed suites.

A suite's **id** is its manifest's ``metadata.name`` (else the file's stem), written with
letters, digits, ``_``, ``.`` and ``-``: it names the result folder
(``results/suites/<id>/``) and is how admission finds the committed suite a result file
was made with. A **committed** suite is a manifest under the repository's ``suites/``
folder with its frozen hash file next to it (``<stem>.hashes.json``): reviewed code and
data, the only suites the leaderboard re-scores with.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from yoxla.suites.errors import ManifestError
from yoxla.suites.hashing import hash_file_path
from yoxla.suites.loader import MANIFEST_SUFFIXES, SuiteManifest
from yoxla.walk import walk_files

SUITES_DIR_ENV = "YOXLA_SUITES_DIR"
SUITE_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
MAX_MANIFESTS = 1_000
MAX_DEPTH = 6


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def suites_root() -> Path:
    """The committed suites: ``$YOXLA_SUITES_DIR``, else ``suites/`` of this repository."""
    env = os.environ.get(SUITES_DIR_ENV)
    return Path(env) if env else repo_root() / "suites"


def suite_id(manifest: SuiteManifest) -> str:
    """The suite's id; ManifestError when its name cannot be one."""
    name = manifest.name
    if not SUITE_ID.match(name) or name in (".", ".."):
        raise ManifestError(
            f"{manifest.path}: metadata.name {name[:80]!r} cannot be a suite id "
            "(letters, digits, _ . - only, 1 to 64 characters)"
        )
    return name


def repo_path(path: Path) -> str:
    """The manifest's path as a result file names it: relative to the repository (or the
    suites folder) when inside it, else only its file name (no local folders are stored)."""
    resolved = path.resolve()
    for base in (repo_root(), suites_root().resolve().parent):
        try:
            return resolved.relative_to(base).as_posix()
        except ValueError:
            continue
    return resolved.name


@dataclass(frozen=True)
class Committed:
    """A manifest file under the suites folder that has a frozen hash file."""

    path: Path
    hash_file: Path


def find_committed(root: Path | None = None) -> list[Committed]:
    """Every manifest under ``root`` with its ``<stem>.hashes.json`` next to it (sorted)."""
    base = root if root is not None else suites_root()

    def keep(entry: os.DirEntry[str]) -> bool:
        path = Path(entry.path)
        return (
            entry.is_file(follow_symlinks=False)
            and path.suffix.lower() in MANIFEST_SUFFIXES
            and not entry.name.endswith(".hashes.json")
            and hash_file_path(path).is_file()
        )

    found = walk_files(
        base,
        max_depth=MAX_DEPTH,
        max_files=MAX_MANIFESTS,
        enter=lambda entry, _depth: not entry.name.startswith("."),
        keep=keep,
    )
    return [Committed(path, hash_file_path(path)) for path in found]
