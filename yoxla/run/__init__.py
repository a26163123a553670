"""The runner: send every example of the benchmark to a provider and keep everything.

- ``engine``: a run from start to finish (start, resume, retry failed examples), small steps.
- ``settings``: what a run is asked to do, and its record in run.json (settings, conditions).
- ``plan``: the tasks and validated rows of a run, what is still to send, the provider.
- ``executor``: the ordered pool that sends examples and hands records back in example order.
- ``finalize``: re-scoring, the run folder's scores and summary, the result file (``build_result``).
- ``artifacts``: the run folder's files; ``lock``: one process per run folder; ``errors``: one-line errors.
- ``commands``: the command line (``python runner.py …`` = ``yoxla run …``), ``run-all``, ``rescore``;
  ``options``: the options of ``yoxla run`` and what the commands share; ``tool_commands``:
  ``yoxla providers``, ``test`` and ``keygen``.
- ``suite_plan``, ``suite_job``, ``suite_judge``, ``suite_engine``, ``suite_finalize``, ``suite_cli``:
  eval suites (``--suite FILE``) through the same executor, lock and run folder.

Nothing here is imported by ``import yoxla``.
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
