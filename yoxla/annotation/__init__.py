"""Blind annotation of an edition's rows, agreement with gold, resolutions and review status.

The workflow (``yoxla annotate export``, ``compare``, ``status``) is in docs/annotation.md.
Annotations are tied to the text the annotator saw (``input_sha``, a hash of the task's input
fields): after a row's text changes, its old annotations no longer count.
"""

from typing import Any

# The names below are imported on first use, so ``yoxla --help`` and the other commands do
# not pay for this package's imports.
_REVIEW = "Comparison TaskReview cohen_kappa compare read_resolutions review_status"
_SHEETS = "Annotation annotatable annotations_dir export_sheet input_sha read_annotations sheet_path"
_EXPORTS = {**dict.fromkeys(_REVIEW.split(), "review"), **dict.fromkeys(_SHEETS.split(), "sheets")}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'yoxla.annotation' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"yoxla.annotation.{_EXPORTS[name]}"), name)
