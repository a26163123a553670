"""Suites by id: a manifest's suite id, its path in the repository, and the committed suites.

A suite's **id** is its manifest's ``metadata.name`` (else the file's stem): it names the result
folder (``results/suites/<id>/``) and is how admission finds the committed suite a result file
was made with. A **committed** suite has its frozen hash file next to it; which they are, and
where the repository root comes from, is in docs/suites.md, *Internals*, "Registry and roots".

A reference (a path or an id) comes from a user: one that cannot be a path here (too long, a
NUL, a symbolic-link loop) is no file, an id is only :data:`SUITE_ID` (never a path, so
``../x`` or ``yoxla-sample/../..`` names no suite), and a message quotes it on one line, cut
short (:func:`shown_ref`). A root or suites folder that is not a folder holds no suites, which
the message for an unknown id says.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from yoxla.contract.errors import ManifestError
from yoxla.contract.hashing import hash_file_path
from yoxla.contract.loader import MANIFEST_SUFFIXES, SuiteManifest, load_manifest
from yoxla.contract.paths import shipped_data
from yoxla.safe.text import one_line
from yoxla.safe.walk import walk_files

SUITES_DIR_ENV = "YOXLA_SUITES_DIR"
ROOT_ENV = "YOXLA_ROOT"
SUITE_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
MAX_MANIFESTS = 1_000
MAX_DEPTH = 6
BENCHMARK_EDITIONS = ("sample", "v1")  # shipped as the package suites yoxla-<edition>
EDITIONS_DIR = shipped_data()  # package data: the benchmark's suites, their hash files and rows
SHOWN_REF = 120  # characters of a reference a message quotes


def shown_ref(ref: str | os.PathLike[str]) -> str:
    """A suite reference as a message quotes it: one printable line, cut short."""
    return one_line(os.fspath(ref) if not isinstance(ref, str) else ref, SHOWN_REF)


def is_file(path: Path) -> bool:
    """Is ``path`` a file? False where it cannot be one (too long, a NUL, a link loop)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    """Is ``path`` a folder? False where it cannot be one (too long, a NUL, a link loop)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def resolved(path: Path) -> Path:
    """``path`` made absolute with its links followed, as far as they go (a loop stays as is)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path.absolute()


def repo_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The repository: ``root`` when given, else ``$YOXLA_ROOT``, else the working directory."""
    if root is not None:
        return Path(root)
    env = os.environ.get(ROOT_ENV)
    return Path(env) if env else Path.cwd()


def package_suites_dir() -> Path:
    """The package's benchmark suites (package data, next to the editions they read)."""
    return shipped_data()


def manifest_path(edition: str) -> Path:
    """The package suite of a benchmark edition: ``yoxla/editions/yoxla-<edition>.yaml``, the
    committed source of its tasks (their hash file next to it)."""
    return EDITIONS_DIR / f"yoxla-{edition}.yaml"


def edition_of(suite_id: str) -> str | None:
    """The benchmark edition a package suite's id stands for (``yoxla-sample`` -> ``sample``),
    else None: ``python runner.py --edition E`` runs the package suite ``yoxla-E``."""
    return next((ed for ed in BENCHMARK_EDITIONS if f"yoxla-{ed}" == suite_id), None)


def suites_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The repository's suites: ``$YOXLA_SUITES_DIR``, else ``suites/`` of :func:`repo_root`."""
    env = os.environ.get(SUITES_DIR_ENV)
    return Path(env) if env else repo_root(root) / "suites"


def suite_id(manifest: SuiteManifest) -> str:
    """The suite's id; ManifestError when its name cannot be one."""
    name = manifest.name
    if not SUITE_ID.match(name) or name in (".", ".."):
        raise ManifestError(
            f"{manifest.path}: metadata.name {name[:80]!r} cannot be a suite id "
            "(letters, digits, _ . - only, 1 to 64 characters)"
        )
    return name


def repo_path(path: Path, suites_dir: Path | None = None) -> str:
    """The manifest's path as a result file names it: ``yoxla/…`` for a package suite (wherever
    the package is installed), else relative to the repository (or the folder above the suites
    folder, ``suites_dir`` or :func:`suites_root`) when inside it, else only its file name (no
    local folders are stored)."""
    found = resolved(path)
    package = package_suites_dir().parent
    if found.is_relative_to(package):
        return "yoxla/" + found.relative_to(package).as_posix()
    if suites_dir is not None and found.is_relative_to(resolved(suites_dir).parent):
        return found.relative_to(resolved(suites_dir).parent).as_posix()
    for base in (resolved(repo_root()), resolved(suites_root()).parent):
        try:
            return found.relative_to(base).as_posix()
        except ValueError:
            continue
    return found.name


@dataclass(frozen=True)
class Committed:
    """A manifest file under the suites folder that has a frozen hash file."""

    path: Path
    hash_file: Path


def find_committed(root: Path | None = None, *, package: bool = True) -> list[Committed]:
    """The package's benchmark suites (with ``package``), then every manifest under ``root``
    (the suites folder, default :func:`suites_root`) with its ``<stem>.hashes.json`` next to
    it, each part sorted."""
    base = root if root is not None else suites_root()
    first = _committed_in(package_suites_dir(), 1) if package else []
    if resolved(base) == package_suites_dir() or not is_dir(base):
        return first
    return first + _committed_in(base, MAX_DEPTH)


def _committed_in(base: Path, depth: int) -> list[Committed]:

    def keep(entry: os.DirEntry[str]) -> bool:
        path = Path(entry.path)
        return (
            entry.is_file(follow_symlinks=False)
            and path.suffix.lower() in MANIFEST_SUFFIXES
            and not entry.name.endswith(".hashes.json")
            and is_file(hash_file_path(path))
        )

    found = walk_files(
        base,
        max_depth=depth,
        max_files=MAX_MANIFESTS,
        enter=lambda entry, _depth: not entry.name.startswith("."),
        keep=keep,
    )
    return [Committed(path, hash_file_path(path)) for path in found]


def resolve_suite(ref: str, root: str | os.PathLike[str] | None = None) -> Path | None:
    """The manifest ``ref`` names: a file (as given), else the committed suite whose id it is
    (the package's first, then the repository's); None when it is neither."""
    path = Path(ref)
    if is_file(path):
        return path
    if not SUITE_ID.match(ref) or ref in (".", ".."):
        return None
    committed = find_committed(suites_root(root))
    # A file named after its id is the usual case: try those first, then read the others.
    committed.sort(key=lambda c: c.path.stem != ref)
    for c in committed:
        try:
            if load_manifest(c.path).name == ref:
                return c.path
        except ManifestError:
            continue  # a broken suite is reported when it is named by its path
    return None


def unknown_ref(ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> str:
    """Why ``ref`` names no suite (one line): no file, no committed suite with this id, and,
    when ``root``, ``$YOXLA_ROOT`` or ``$YOXLA_SUITES_DIR`` named where to look, that there is
    no suites folder there."""
    why = f"{shown_ref(ref)}: no such file, and no committed suite has this id"
    if os.environ.get(SUITES_DIR_ENV):
        given = f"${SUITES_DIR_ENV}"
    elif root is not None:
        given = "root"
    elif os.environ.get(ROOT_ENV):
        given = f"${ROOT_ENV}"
    else:
        return why  # the working directory: a folder without suites/ is the usual case
    folder = suites_root(root)
    if not is_dir(folder):
        why += f" (no suites folder at {shown_ref(folder)}, from {given})"
    return why


def load_suite_manifest(
    ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> SuiteManifest:
    """The manifest file ``ref``, or the committed suite whose id it is (e.g. ``yoxla-sample``);
    ManifestError (one line) when it is neither or does not load."""
    if is_file(Path(ref)):
        return load_manifest(Path(ref))
    found = resolve_suite(ref, root) if isinstance(ref, str) else None
    if found is None:
        raise ManifestError(unknown_ref(ref, root))
    return load_manifest(found)
