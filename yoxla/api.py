"""The library's small public surface: ``yoxla.load_suite``, ``run``, ``rescore``, ``check_file``.

``yoxla/__init__.py`` loads this module on first use of one of these names, so ``import yoxla``
stays cheap. Each call is a thin wrapper over what the command line does (``yoxla run``,
``yoxla rescore``, ``yoxla verify``), so a script and the command line cannot disagree.

Today a suite of tasks goes through one of two engines: the built-in benchmark (editions
``v1``/``sample``) or the suite path (a manifest under ``suites/``). :func:`engine_of` is the one
place this surface asks which; it goes when the two engines become one (issue 13).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from yoxla.editions import EDITIONS, Edition, load_edition
from yoxla.suite import Suite
from yoxla.suite import load_suite as load_benchmark_suite

Engine = Literal["builtin", "suite"]
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Benchmark:
    """A built-in benchmark edition: its rows and fingerprints (``edition``) and the frozen task
    contracts it runs (``suite``, only the edition's tasks in ``tasks``)."""

    edition: Edition
    suite: Suite

    @property
    def name(self) -> str:
        return self.edition.name

    @property
    def tasks(self) -> dict[str, Any]:
        return {tid: self.suite.task(tid) for tid in self.edition.task_ids}


def engine_of(target: str | os.PathLike[str]) -> Engine:
    """Which engine handles ``target``: an edition name, a manifest path or committed suite id,
    or a run folder. The only "which engine?" question of the public surface."""
    if isinstance(target, str) and target in EDITIONS:
        return "builtin"
    path = Path(target)
    if path.is_dir():
        from yoxla.run.artifacts import is_suite_run

        return "suite" if is_suite_run(path) else "builtin"
    return "suite"


def load_suite(name_or_path: str | os.PathLike[str]) -> Any:
    """The typed suite ``name_or_path`` names.

    ``"v1"`` or ``"sample"``: a :class:`Benchmark` (the edition and its frozen contracts). A
    manifest file: its ``SuiteManifest``. A committed suite's id (``metadata.name`` of a manifest
    under ``suites/``, e.g. ``"oxu"``): that manifest. ValueError (one line) when nothing matches
    or the manifest is invalid.
    """
    if engine_of(name_or_path) == "builtin":
        name = str(name_or_path)
        return Benchmark(edition=load_edition(name), suite=load_benchmark_suite())
    from yoxla.suites.errors import ManifestError
    from yoxla.suites.loader import load_manifest

    path = Path(name_or_path)
    try:
        if path.suffix.lower() in MANIFEST_SUFFIXES and path.is_file():
            return load_manifest(path)
        return _committed(str(name_or_path))
    except ManifestError as exc:
        raise ValueError(str(exc)) from None


def _committed(suite_id: str) -> Any:
    from yoxla.suites.errors import ManifestError
    from yoxla.suites.loader import load_manifest
    from yoxla.suites.registry import find_committed

    known = []
    for entry in find_committed():
        try:
            manifest = load_manifest(entry.path)
        except ManifestError:
            continue  # a broken manifest is `yoxla suite check`'s to report, not a lookup's
        if manifest.name == suite_id:
            return manifest
        known.append(manifest.name)
    names = ", ".join(["v1", "sample", *sorted(known)])
    raise ValueError(
        f"no suite {suite_id[:80]!r}: not an edition, a manifest file or a committed suite ({names})"
    )


class _Refused(ValueError):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print usage and exit
        raise _Refused(message)


def run_arguments(suite: str | os.PathLike[str], options: dict[str, Any]) -> list[str]:
    """The ``yoxla run`` flags a :func:`run` call stands for: ``key=value`` -> ``--key value``
    (``_`` -> ``-``), True -> the bare flag, a list -> the flag once per item, None/False -> none."""
    if engine_of(suite) == "builtin":
        argv = ["--edition", str(suite)]
    else:
        path = Path(suite)
        argv = ["--suite", str(path if path.is_file() else load_suite(suite).path)]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, list | tuple):
            for item in value:
                argv += [flag, str(item)]
        else:
            argv += [flag, str(value)]
    return argv


def run(suite: str | os.PathLike[str], *, provider: str, model: str, **options: Any) -> Any:
    """Run ``suite`` (``"v1"``, ``"sample"``, a manifest path or a committed suite's id) with
    ``provider`` and ``model``; returns the finished ``RunReport`` (``run_dir``, ``summary``,
    ``result_path``, ``complete``), or None for a ``retry_errors`` result file with nothing to retry.

    Other keywords are ``yoxla run``'s flags (see ``python runner.py --help``): ``block="all"``,
    ``task=["hesab"]``, ``limit=5``, ``filter=["topic=x"]``, ``scored_only=True``, ``runs_dir=…``,
    ``results_dir=…``, ``run_id=…``, ``resume=True``, ``retry_errors=…``, ``base_url=…``,
    ``seed=…``, ``no_progress=True``… An unknown keyword or a bad value raises ValueError; a run
    that cannot start raises the runner's own error (RunError, ProviderError…), one line each.
    """
    from yoxla.run.commands import add_run_args, execute_run

    parser = _Parser(prog="yoxla.run", add_help=False)
    add_run_args(parser)
    argv = run_arguments(suite, {"provider": provider, "model": model, **options})
    try:
        args = parser.parse_args(argv)
    except _Refused as exc:
        raise ValueError(f"yoxla.run: {exc}") from None
    args.command_line = f"yoxla.run({str(suite)!r}, provider={provider!r}, model={model!r}, …)"
    return execute_run(args)


def rescore(path: str | os.PathLike[str], *, data_dir: str | None = None, allow_hub: bool = False) -> Any:
    """Re-score stored answers; no model is asked.

    A run folder: its stored raw outputs are replayed through today's extraction and graders,
    ``task_scores.json`` and ``summary.json`` are rewritten, and the ``RunReport`` is returned (as
    ``yoxla rescore RUN_DIR``). A result file: every number is re-derived from its stored answers
    with the committed suite, exactly as admission does, and the ``Verdict`` is returned
    (``scores``, per-task ``tasks``, ``reasons`` where a stored number differs).
    """
    target = Path(path)
    if target.is_dir():
        if engine_of(target) == "suite":
            from yoxla.run.suite_finalize import rescore_suite_run as replay
        else:
            from yoxla.run.finalize import rescore_run as replay
        return replay(target)
    return check_file(target, data_dir=data_dir, allow_hub=allow_hub, use_cache=False)


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
    from yoxla.leaderboard.admission import check_file as admission_check
    from yoxla.leaderboard.admission import load_trusted_keys
    from yoxla.leaderboard.data import DataSource

    data = DataSource(data_dir=data_dir, allow_hub=allow_hub)
    return admission_check(path, trusted=load_trusted_keys(trusted_keys), data=data, use_cache=use_cache)
