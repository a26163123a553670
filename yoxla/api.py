"""The library's small public surface: ``yoxla.load_suite``, ``run``, ``rescore``, ``check_file``.

``yoxla/__init__.py`` loads this module on first use of one of these names, so ``import yoxla``
stays cheap. Each call is a thin wrapper over what the command line does (``yoxla run``,
``yoxla rescore``, ``yoxla verify``), so a script and the command line cannot disagree.

``run`` and a run folder's ``rescore`` live with the runner, in ``yoxla.run.library``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.data.editions import EDITIONS, Edition, load_edition
from yoxla.run.library import committed_suite, rescore_folder, run

__all__ = ["Benchmark", "check_file", "load_suite", "rescore", "run"]
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Benchmark:
    """A built-in benchmark edition: its rows and fingerprints (``edition``) and its package suite
    (``suite``: the ``SuiteManifest`` of ``yoxla/editions/yoxla-<edition>.yaml``, whose tasks hold
    the frozen contracts; only the edition's tasks in ``tasks``, as ``SuiteTask``)."""

    edition: Edition
    suite: Any

    @property
    def name(self) -> str:
        return self.edition.name

    @property
    def tasks(self) -> dict[str, Any]:
        return {tid: self.suite.tasks[tid] for tid in self.edition.task_ids}


def load_suite(name_or_path: str | os.PathLike[str]) -> Any:
    """The typed suite ``name_or_path`` names.

    ``"v1"`` or ``"sample"``: a :class:`Benchmark` (the edition and its package suite). A
    manifest file: its ``SuiteManifest``. A committed suite's id (``metadata.name`` of a manifest
    under ``suites/``, e.g. ``"oxu"``): that manifest. ValueError (one line) when nothing matches
    or the manifest is invalid.
    """
    from yoxla.contract.errors import ManifestError
    from yoxla.contract.loader import load_manifest
    from yoxla.contract.registry import is_file, manifest_path, shown_ref

    try:
        if isinstance(name_or_path, str) and name_or_path in EDITIONS:
            name = name_or_path
            return Benchmark(edition=load_edition(name), suite=load_manifest(manifest_path(name)))
    except OSError as exc:  # a name that cannot be a path here (too long, …): one line
        raise ValueError(f"{shown_ref(name_or_path)}: cannot be read ({exc.strerror or exc})") from None
    path = Path(name_or_path)
    try:
        if path.suffix.lower() in MANIFEST_SUFFIXES and is_file(path):
            return load_manifest(path)
        return committed_suite(str(name_or_path))
    except ManifestError as exc:
        raise ValueError(str(exc)) from None


def rescore(path: str | os.PathLike[str], *, data_dir: str | None = None, allow_hub: bool = False) -> Any:
    """Re-score stored answers; no model is asked.

    A run folder: its stored raw outputs are replayed through today's extraction and graders,
    ``task_scores.json`` and ``summary.json`` are rewritten, and the ``RunReport`` is returned (as
    ``yoxla rescore RUN_DIR``). A result file: every number is re-derived from its stored answers
    with the committed suite, exactly as admission does, and the ``Verdict`` is returned
    (``scores``, per-task ``tasks``, ``reasons`` where a stored number differs).
    """
    from yoxla.contract.registry import is_dir

    if is_dir(Path(path)):
        return rescore_folder(path)
    return check_file(path, data_dir=data_dir, allow_hub=allow_hub, use_cache=False)


def check_file(
    path: str | os.PathLike[str],
    *,
    data_dir: str | None = None,
    allow_hub: bool = False,
    trusted_keys: str | None = None,
    use_cache: bool = True,
) -> Any:
    """The leaderboard's admission verdict on one result file (as ``yoxla verify FILE``): a
    ``Verdict`` whose ``status`` is ``admitted`` or ``excluded`` with its ``reasons``. Never raises
    on a bad file. ``allow_hub=False`` (the default) never contacts the Hub: a v1 file whose rows
    are not local is then admitted as "not re-checked"."""
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import check_file as admission_check
    from yoxla.admission.rules import load_trusted_keys

    data = DataSource(data_dir=data_dir, allow_hub=allow_hub)
    return admission_check(path, trusted=load_trusted_keys(trusted_keys), data=data, use_cache=use_cache)
