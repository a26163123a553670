"""A suite reads only files inside its own folder.

A manifest names its local files (``dataset.path``, ``fewshot.dataset.path``,
``preprocess.path``, ``grader.path``) relative to the folder it lives in. What a pull
request shows for review is then all that runs and all that is hashed: a path is refused
when it is absolute, starts with ``~``, names a drive, or, once resolved (every symbolic
link followed), lies outside that folder. A symbolic link that stays inside the folder is
allowed.

One exception, for datasets only: the rows of the benchmark's own editions shipped in the
package (``yoxla/editions/``), which a copy of a benchmark suite elsewhere may read.
Code (a preprocessor, a grader) always comes from the suite's folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from yoxla.contract.errors import ManifestError

_DRIVE = re.compile(r"^[A-Za-z]:")


def shipped_data() -> Path:
    """The benchmark's edition files in the package, which a suite's dataset may also read."""
    return (Path(__file__).resolve().parents[1] / "editions").resolve()


def outside_reason(base_dir: Path, rel: str, data: bool = False) -> str | None:
    """Why ``rel`` is not a file inside ``base_dir`` (None when it is inside; with ``data``,
    also None inside the package's shipped editions)."""
    if rel.startswith(("/", "\\", "~")) or _DRIVE.match(rel) or "://" in rel:
        return "is not a path relative to the suite's folder"
    base = base_dir.resolve()
    try:
        resolved = (base / rel).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
        return f"cannot be resolved ({type(exc).__name__})"
    if data and resolved.is_relative_to(shipped_data()):
        return None
    if not resolved.is_relative_to(base):
        lexical = Path(os.path.normpath(base / rel))
        via = " through a symbolic link" if lexical.is_relative_to(base) else ""
        return f"leads{via} outside the suite's folder"
    return None


def suite_file(base_dir: Path, rel: str, where: str, field: str, data: bool = False) -> Path:
    """The resolved path of ``rel`` inside ``base_dir`` (see :func:`outside_reason`);
    ManifestError naming ``field`` else."""
    reason = outside_reason(base_dir, rel, data)
    if reason is not None:
        raise ManifestError(
            f"{where}, field {field}: {rel[:200]!r} {reason}; a suite reads only files inside "
            "its own folder (the manifest's folder)"
        )
    return (base_dir.resolve() / rel).resolve()
