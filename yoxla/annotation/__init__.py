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

from yoxla.annotation.review import (
    Comparison,
    TaskReview,
    cohen_kappa,
    compare,
    read_resolutions,
    review_status,
)
from yoxla.annotation.sheets import (
    Annotation,
    annotatable,
    annotations_dir,
    export_sheet,
    input_sha,
    read_annotations,
    sheet_path,
)

__all__ = [
    "Annotation",
    "Comparison",
    "TaskReview",
    "annotatable",
    "annotations_dir",
    "cohen_kappa",
    "compare",
    "export_sheet",
    "input_sha",
    "read_annotations",
    "read_resolutions",
    "review_status",
    "sheet_path",
]
