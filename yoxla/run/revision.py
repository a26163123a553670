"""``--revision``: checked once, for benchmark and suite runs alike, before the Hub client, run.json
or a result file ever sees it."""

from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from yoxla.providers.registry import redact
from yoxla.run.errors import RunError
from yoxla.suites.registry import shown_ref
from yoxla.suites.spec import HubDataset


def check_revision(revision: str) -> None:
    """``--revision`` is a revision as a manifest may write one (:class:`~yoxla.suites.spec.
    HubDataset`: letters, digits, ``_ . - /``, at most 100 characters), and a Git ref's shape: no
    ``..``, no empty part, no part that starts with ``.``. So a URL, a credential, a control
    character or a path never reaches the Hub client, run.json or the result file."""
    rule: TypeAdapter[str | None] = TypeAdapter(HubDataset.model_fields["revision"].annotation)
    try:
        rule.validate_python(revision)
        ok = ".." not in revision and all(p and not p.startswith(".") for p in revision.split("/"))
    except ValidationError:
        ok = False
    if not ok:  # quoted without the credentials a URL may carry; a long one by its length
        shown = shown_ref(redact(revision)) if len(revision) <= 200 else f"of {len(revision):,} characters"
        raise RunError(
            f"--revision {shown}: not a revision (a branch, tag or commit: letters, "
            "digits, _ . - and / between parts, at most 100 characters)"
        )
