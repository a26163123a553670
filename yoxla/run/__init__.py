"""The runner: send every item of a suite to a provider and keep everything.

Its modules, one line each, are listed in docs/architecture.md ("The package"). Every run is a
suite run (``--suite FILE`` or ``--edition E``, the package suite ``yoxla-E``); a run folder of
the older built-in engine is refused in one line. Nothing here is imported by ``import yoxla``.
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
