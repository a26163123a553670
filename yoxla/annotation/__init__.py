"""Blind annotation of an edition's rows, agreement with gold, resolutions and review status.

The workflow (docs/annotation.md):

1. ``yoxla annotate export --edition E --annotator NAME`` writes a shuffled sheet without
   gold labels to ``annotations/<edition>/<NAME>.csv`` (``--model`` for a model annotator:
   ``annotations/<edition>/model/<NAME>.csv``).
2. The annotator fills ``label`` (``?`` when unsure), ``not_natural`` and ``note``.
3. ``yoxla annotate compare --edition E --annotator NAME`` reports agreement with gold,
   Cohen's κ and every disagreement with its row id.
4. A person settles each disagreement in ``annotations/<edition>/resolutions.csv``.
5. ``yoxla annotate status --edition E`` (and :func:`review_status`, for the app) says how
   many rows of each task are reviewed: confirmed by a person's agreeing annotation or by a
   resolution. Model annotations are compared like any other but never mark a row reviewed.

Annotations are tied to the text the annotator saw (``input_sha``, a hash of the task's
input fields): after a row's text changes, its old annotations no longer count.
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
