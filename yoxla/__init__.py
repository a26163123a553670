"""YOXLA: evaluation framework for large language models in Azerbaijani.

Importing the package is cheap: heavy libraries (huggingface_hub, pyarrow, torch, transformers, gradio)
are imported only by the functions that need them.

The public surface (``yoxla.api``, loaded on first use):

- ``load_suite(name_or_path)``: the typed suite for ``"v1"``, ``"sample"``, a manifest file or a
  committed suite's id;
- ``run(suite, provider=…, model=…, **flags)``: a run, as ``python runner.py`` makes it;
- ``rescore(path)``: a run folder's stored answers re-scored, or a result file's numbers re-derived;
- ``check_file(path)``: the leaderboard's admission verdict on a result file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yoxla.api import check_file, load_suite, rescore

__version__ = "0.1.0"
__all__ = ["__version__", "check_file", "load_suite", "rescore", "run"]

_PUBLIC = frozenset(("check_file", "load_suite", "rescore"))


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        from yoxla import api

        return getattr(api, name)
    if name == "run":  # the runner package, callable as yoxla.run.library.run (see yoxla/run/__init__.py)
        import importlib

        return importlib.import_module("yoxla.run")
    raise AttributeError(f"module 'yoxla' has no attribute {name!r}")
