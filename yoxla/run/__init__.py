"""The runner: send every item of a suite to a provider and keep everything.

- ``session``: a run from start to finish (start, resume, retry failed items), the run folder held.
- ``settings``: what a run is asked to do, the provider it asks (checked first, opened), the
  secrets it scrubs, and its record in run.json (settings, conditions).
- ``plan``: the suite's tasks prepared, the items a run selects, each request.
- ``executor``: the ordered pool that sends items and hands records back in item order, and the
  job that sends and scores each item as it arrives; ``judge``: judge models, every call kept.
- ``finalize``: the stored answers scored, the summary and the result file, written in the order
  that never lies; ``model_facts``: what the result file says of the model.
- ``seed``: a run folder made from a result file (``--retry-errors FILE.json``, a v2 file included).
- ``artifacts``: the run folder's files and its lock (one process per folder); ``errors``: one-line errors.
- ``commands``: the command line (``python runner.py …`` = ``yoxla run …``), ``run-all``, ``rescore``;
  ``options``: the options of ``yoxla run`` and what the commands share; ``printing``: the summary;
  ``yoxla providers``, ``test`` and ``keygen`` are in ``commands`` too; ``library``: ``yoxla.run(…)``.

Every run is a suite run: ``--suite FILE`` or ``--edition E``, the package suite ``yoxla-E``. A
run folder made by the built-in engine of older versions is refused in one line
(:func:`yoxla.run.artifacts.refuse_builtin`). Nothing here is imported by ``import yoxla``.
"""

import sys
from types import ModuleType
from typing import Any


class _RunPackage(ModuleType):
    """``yoxla.run`` is this package and the library's ``run`` call at once: ``yoxla.run(…)``
    is :func:`yoxla.run.library.run` (the name would otherwise stop being the function as soon as a
    ``yoxla.run.…`` module is imported, since Python binds the subpackage to it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from yoxla.run.library import run

        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _RunPackage
