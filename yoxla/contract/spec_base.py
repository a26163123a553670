"""What every manifest record shares: the limits, the id and text types, the strict base record.

The limits follow MKA1's where it sets one (marked), and bound everything else so a hostile
manifest stays small. :class:`Spec` is the base of every record in ``yoxla.contract.spec*``:
strict (no coercion), closed (unknown keys refused) and immutable. The helpers check
metadata mappings, refuse MKA1's uploaded-file ids, and make a tagged union's one error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field

# The cue-only baseline strategies (yoxla.baselines.strategies answers with them); named here, where
# the manifest's analysis section checks the strategies it gates, so the spec imports no scoring.
STRATEGIES = ("first", "majority", "random", "overlap", "longest", "most_linked", "none_of_them", "abstain")
SUITE_STRATEGIES = (*STRATEGIES, "echo")

# Limits --------------------------------------------------------------------------------------
MAX_TASKS = 100  # tasks per suite (MKA1: 1 to 100)
MAX_FEWSHOT = 100  # few-shot examples per sample (MKA1: 0 to 100)
MAX_ROWS = 1_000_000  # Hugging Face max_rows (MKA1: up to 1,000,000); also rows of a local file
MAX_METADATA_KEY = 64  # MKA1
MAX_METADATA_VALUE = 512  # MKA1
MAX_METADATA_ENTRIES = 64
MAX_TEMPLATE = 100_000  # characters of one template
MAX_CHOICES = 1_000
MAX_CHOICE = 1_000  # characters of one choice or label
MAX_SOURCE = 1_000_000  # characters of a grader's or preprocessor's source
MAX_METRICS = 50
MAX_GRADERS = 10
MAX_TIMEOUT_S = 3600.0
MAX_NAME = 200
MAX_DESCRIPTION = 2_000
MAX_PATH = 1_000

ID_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"

Id = Annotated[str, Field(pattern=ID_PATTERN)]
TemplateText = Annotated[str, Field(max_length=MAX_TEMPLATE)]
Seconds = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)]
RelPath = Annotated[str, Field(min_length=1, max_length=MAX_PATH)]
SourceText = Annotated[str, Field(min_length=1, max_length=MAX_SOURCE)]


class Spec(BaseModel):
    """Base of every manifest record: strict, closed, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


def refuse_upload_ids(data: Any, what: str) -> Any:
    """MKA1's ``file_id`` (a gateway upload) refused with where YOXLA's files come from."""
    if isinstance(data, dict) and "file_id" in data:
        raise ValueError(
            f"file_id names a file uploaded to the MKA1 gateway; in YOXLA {what} is a local file "
            "given by path (relative to the manifest's folder)"
        )
    return data


def check_metadata(value: Any, where: str) -> dict[str, str]:
    """Metadata: at most 64 entries, keys ≤ 64 characters, scalar values ≤ 512 characters."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping")
    if len(value) > MAX_METADATA_ENTRIES:
        raise ValueError(f"{where} has {len(value)} entries (at most {MAX_METADATA_ENTRIES})")
    out: dict[str, str] = {}
    for key, val in value.items():
        if not isinstance(key, str) or not key or len(key) > MAX_METADATA_KEY:
            shown = str(key)[:80]
            raise ValueError(f"{where} key {shown!r} must be 1 to {MAX_METADATA_KEY} characters")
        if isinstance(val, bool) or not isinstance(val, str | int | float):
            raise ValueError(f"{where}.{key} must be a string (found {type(val).__name__})")
        text = str(val)
        if len(text) > MAX_METADATA_VALUE:
            raise ValueError(f"{where}.{key} is {len(text)} characters long (at most {MAX_METADATA_VALUE})")
        out[key] = text
    return out


def kind_of(tell: Callable[[Any], str], error: str, message: str) -> Discriminator:
    """The member of a tagged union that ``tell`` names; any other value is one ``error``."""
    return Discriminator(tell, custom_error_type=error, custom_error_message=message)
