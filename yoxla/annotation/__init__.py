"""Blind annotation of an edition's rows, agreement with gold, resolutions and review status.

The workflow (``yoxla annotate export``, ``compare``, ``status``) is in docs/annotation.md.
Annotations are tied to the text the annotator saw (``input_sha``, a hash of the task's input
fields): after a row's text changes, its old annotations no longer count.
"""

from typing import Any

# The names below are imported on first use, so ``yoxla --help`` and the other commands do
# not pay for this package's imports.
_EXPORTS = {
    "Comparison": "review",
    "TaskReview": "review",
    "cohen_kappa": "review",
    "compare": "review",
    "read_resolutions": "review",
    "review_status": "review",
    "Annotation": "sheets",
    "annotatable": "sheets",
    "annotations_dir": "sheets",
    "export_sheet": "sheets",
    "input_sha": "sheets",
    "read_annotations": "sheets",
    "sheet_path": "sheets",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'yoxla.annotation' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"yoxla.annotation.{_EXPORTS[name]}"), name)
