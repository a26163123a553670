"""Errors of the suite machinery: each carries one line that names the file, task and field."""

from __future__ import annotations


class SuiteError(ValueError):
    """A suite breaks its own schema (a manifest)."""


class ManifestError(SuiteError):
    """A suite manifest breaks a rule (schema, limit, template, regex, grader source).

    ``str(exc)`` is one line (the first problem, and how many more); ``problems`` lists every
    problem found, one line each, for ``yoxla suite validate`` to print them all.
    """

    def __init__(self, message: str, problems: tuple[str, ...] | list[str] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems) or (message,)


class DatasetError(ManifestError):
    """A dataset named by a manifest cannot be read, or a row breaks the format."""


class PreprocessError(ManifestError):
    """A preprocessor failed: the task fails before any model call; the message names the row."""


class TemplateError(ManifestError):
    """A template uses something other than a field reference."""
