"""The manifest's datasets and few-shot settings: a local file or a Hugging Face dataset.

A dataset is told apart by ``source`` when given; otherwise a path ending like a file (or a
``format``) is a local file next to the manifest, anything else a Hugging Face dataset id
(the reference's inference). Few-shot examples come from the task's own rows or a dataset.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, Tag, field_validator, model_validator

from yoxla.contract.spec_base import (
    MAX_FEWSHOT,
    MAX_ROWS,
    RelPath,
    Spec,
    TemplateText,
    kind_of,
    refuse_upload_ids,
)
from yoxla.prompt.generation import bounded_json

LOCAL_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
# A path ending like a file is a local file (then only .jsonl/.ndjson/.csv are readable);
# anything else without a source is a Hugging Face dataset id (the reference's inference).
FILE_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".json", ".parquet", ".tsv", ".txt", ".gz", ".xlsx")

# Datasets ------------------------------------------------------------------------------------

# YOXLA: the columns every row must carry though nothing of the task reads them (a published
# dataset's descriptive columns), checked by the row validator (yoxla.data.validate). What the
# data is, not how it is read: no hash covers them (yoxla.contract.hashing leaves them out).
RequiredColumns = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]], Field(min_length=1, max_length=100)
]


class LocalDataset(Spec):
    """A JSONL or CSV file next to the manifest (YOXLA's form of MKA1's uploaded file)."""

    source: Literal["local"] = "local"
    path: RelPath = Field(description="relative to the manifest's folder")
    format: Literal["jsonl", "csv"] | None = Field(default=None, description="inferred from the suffix")
    max_rows: Annotated[int, Field(ge=1, le=MAX_ROWS)] | None = None
    required_columns: RequiredColumns | None = Field(default=None, description="YOXLA: not hashed")

    @model_validator(mode="before")
    @classmethod
    def _before(cls, data: Any) -> Any:
        return refuse_upload_ids(data, "a dataset")

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", value) or "://" in value:
            raise ValueError("must be a path relative to the manifest's folder")
        return value

    @model_validator(mode="after")
    def _format(self) -> LocalDataset:
        if self.format is None:
            suffix = "." + self.path.rsplit(".", 1)[-1].lower() if "." in self.path else ""
            if suffix not in LOCAL_SUFFIXES:
                raise ValueError(
                    f"cannot infer the format of {self.path!r} from its suffix; "
                    "name it .jsonl or .csv, or give format: jsonl|csv"
                )
        return self

    @property
    def resolved_format(self) -> str:
        if self.format is not None:
            return self.format
        return LOCAL_SUFFIXES["." + self.path.rsplit(".", 1)[-1].lower()]


DataFiles = str | list[str] | dict[str, str | list[str]]


class HubDataset(Spec):
    """A Hugging Face dataset, loaded through the one loading path (pinned revision, by content)."""

    source: Literal["huggingface"] = "huggingface"
    path: Annotated[str, Field(min_length=1, max_length=200)] = Field(
        description="the dataset repo (owner/name), or json/csv with data_files"
    )
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    split: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")] | None = Field(
        default=None, description="default test (train for a few-shot dataset)"
    )
    revision: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-/]{1,100}$")] | None = None
    max_rows: Annotated[int, Field(ge=1, le=MAX_ROWS)] | None = None
    data_files: DataFiles | None = None
    dataset_kwargs: dict[str, Any] | None = None
    required_columns: RequiredColumns | None = Field(default=None, description="YOXLA: not hashed")

    @field_validator("path")
    @classmethod
    def _repo(cls, value: str) -> str:
        if value in ("json", "csv"):
            return value
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9][A-Za-z0-9_.\-]*)?", value):
            raise ValueError(f"{value!r} is not a Hugging Face dataset id (owner/name), json or csv")
        return value

    @field_validator("dataset_kwargs")
    @classmethod
    def _kwargs(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else bounded_json(value, "dataset_kwargs")

    @model_validator(mode="after")
    def _builder(self) -> HubDataset:
        files = self.all_data_files
        if self.path in ("json", "csv") and files is None:
            raise ValueError(f"the {self.path} builder needs data_files")
        if self.path not in ("json", "csv") and files is not None:
            raise ValueError("data_files is only for the json and csv builders")
        if self.data_files is not None and (self.dataset_kwargs or {}).get("data_files") is not None:
            raise ValueError("give data_files once: either data_files or dataset_kwargs.data_files")
        return self

    @property
    def all_data_files(self) -> Any:
        if self.data_files is not None:
            return self.data_files
        return (self.dataset_kwargs or {}).get("data_files")


def _dataset_kind(data: Any) -> str:
    """``source`` when given; otherwise local for a path with a file suffix or a format, else Hub."""
    if isinstance(data, dict):
        if data.get("source") in ("local", "huggingface"):
            return str(data["source"])
        if "source" in data:
            return "unknown"
        path = data.get("path")
        if "format" in data or "file_id" in data:
            return "local"
        if isinstance(path, str) and (
            path.lower().endswith(FILE_SUFFIXES) or path.startswith(".") or path.count("/") > 1
        ):
            return "local"
        return "huggingface"
    return "local" if isinstance(data, LocalDataset) else "huggingface"


Dataset = Annotated[
    Annotated[LocalDataset, Tag("local")] | Annotated[HubDataset, Tag("huggingface")],
    kind_of(_dataset_kind, "dataset_source", "source must be local or huggingface"),
]


# Few-shot ------------------------------------------------------------------------------------


class Fewshot(Spec):
    count: Annotated[int, Field(ge=0, le=MAX_FEWSHOT)]
    dataset: Dataset | None = Field(default=None, description="default: the task's own rows")
    prompt_template: TemplateText | None = None
    target_template: TemplateText | None = None
    example_template: TemplateText = "{{prompt}}\n{{target}}"
    separator: Annotated[str, Field(max_length=1_000)] = "\n\n"
    strategy: Literal["first", "random"] = "first"
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 0
