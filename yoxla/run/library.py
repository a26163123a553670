"""The runner's library entry points: a run and a run folder's re-scoring.

``yoxla.run(...)`` (this package, callable), ``yoxla.rescore`` and ``yoxla.api`` use these; an
edition name (``v1``/``sample``) stands for the package suite ``yoxla-<edition>``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from yoxla.contract.registry import BENCHMARK_EDITIONS


def committed_suite(suite_id: str) -> Any:
    """The committed manifest (under ``suites/``) whose ``metadata.name`` is ``suite_id``; ValueError
    naming the known ones when there is none."""
    from yoxla.contract.errors import ManifestError
    from yoxla.contract.loader import load_manifest
    from yoxla.contract.registry import find_committed

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
    if isinstance(suite, str) and suite in BENCHMARK_EDITIONS:
        argv = ["--edition", suite]  # the package suite yoxla-<edition>
    else:
        path = Path(suite)
        argv = ["--suite", str(path if path.is_file() else committed_suite(str(suite)).path)]
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
    from yoxla.run.commands import execute_run
    from yoxla.run.options import add_run_args

    parser = _Parser(prog="yoxla.run", add_help=False)
    add_run_args(parser)
    argv = run_arguments(suite, {"provider": provider, "model": model, **options})
    try:
        args = parser.parse_args(argv)
    except _Refused as exc:
        raise ValueError(f"yoxla.run: {exc}") from None
    args.command_line = f"yoxla.run({str(suite)!r}, provider={provider!r}, model={model!r}, …)"
    return execute_run(args)


def rescore_folder(run_dir: str | os.PathLike[str]) -> Any:
    """Replay a run folder's stored raw outputs through today's extraction and graders (no model
    is asked), rewrite ``task_scores.json`` and ``summary.json``; the ``RunReport`` (as ``yoxla
    rescore RUN_DIR``)."""
    from yoxla.run.finalize import rescore_run

    return rescore_run(Path(run_dir))
