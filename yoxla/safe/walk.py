"""A bounded walk of a folder tree, for folders whose contents come from outside.

Directories are walked without following symbolic links (no loops), at most ``max_depth``
levels below the root, entries in name order, and the walk stops once ``max_files`` entries
were kept. A folder that cannot be read is skipped. Used to find result files (the board)
and committed suite manifests (the suite registry).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def walk_files(
    root: Path,
    *,
    max_depth: int,
    max_files: int,
    enter: Callable[[os.DirEntry[str], int], bool],
    keep: Callable[[os.DirEntry[str]], bool],
) -> list[Path]:
    """Sorted paths of the entries ``keep`` accepts; ``enter(entry, depth)`` says whether to
    walk into a directory found at ``depth`` (0: directly under ``root``)."""
    if not root.is_dir():
        return []
    out: list[Path] = []
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack and len(out) < max_files:
        here, depth = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 < max_depth and enter(entry, depth):
                    stack.append((Path(entry.path), depth + 1))
            elif keep(entry):
                out.append(Path(entry.path))
    return sorted(out)[:max_files]
