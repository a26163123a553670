"""Read a manifest file into checked, ready-to-use tasks.

:func:`load_manifest` is the one way in: bytes -> YAML/JSON (``yaml.safe_load``) -> the typed
:class:`~yoxla.suites.spec.Manifest` -> per task a :class:`SuiteTask` with its templates
parsed, its Python source read (``path`` relative to the manifest's folder), its extractor
built, its metrics resolved and its definition hash. Any problem is one
:class:`~yoxla.suites.errors.ManifestError` whose message names the file, the task and the
field; never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from yoxla.suite import canonical_json, sha256_text
from yoxla.suites import spec as S
from yoxla.suites.errors import ManifestError
from yoxla.suites.extraction import Extractor, build_extractor
from yoxla.suites.templates import Template

MAX_MANIFEST_BYTES = 5 * 1024 * 1024
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


# Messages ------------------------------------------------------------------------------------


def _clean_loc(raw: Any, loc: tuple[Any, ...], kind: str) -> list[Any]:
    """The part of a pydantic location that exists in the document (drops union/tag names)."""
    node, parts = raw, []
    for i, p in enumerate(loc):
        if isinstance(node, Mapping) and p in node:
            parts.append(p)
            node = node[p]
        elif isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
            parts.append(p)
            node = node[p]
        elif i == len(loc) - 1 and isinstance(p, str) and kind in ("missing", "extra_forbidden"):
            parts.append(p)
    return parts


def _where(raw: Any, parts: list[Any]) -> tuple[str, str]:
    """('task 'x'', 'field.path') for a cleaned location."""
    who = "manifest"
    if len(parts) >= 2 and parts[0] == "tasks" and isinstance(parts[1], int):
        entry = raw["tasks"][parts[1]]
        tid = entry.get("id") if isinstance(entry, Mapping) else None
        who = f"task {tid!r}" if isinstance(tid, str) else f"task #{parts[1] + 1}"
        parts = parts[2:]
    dotted = ""
    for p in parts:
        dotted += f"[{p}]" if isinstance(p, int) else (f".{p}" if dotted else str(p))
    return who, dotted


def format_validation_error(exc: ValidationError, raw: Any, source: str) -> str:
    """One line: file, task, field and reason of the first problem (and how many more)."""
    errors = exc.errors(include_url=False, include_input=False)
    err = errors[0]
    who, dotted = _where(raw, _clean_loc(raw, tuple(err["loc"]), err["type"]))
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown field (not part of the manifest format)"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "string_pattern_mismatch" and (err.get("ctx") or {}).get("pattern") == S.ID_PATTERN:
        msg = "use letters, digits, _, . and - only (1 to 64 characters)"
    text = f"{source}: {who}" + (f", field {dotted}" if dotted else "") + f": {msg}"
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more problem(s))"
    return text


# Loaded tasks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """A piece of suite Python: its source text and the name errors show."""

    source: str
    filename: str

    @property
    def sha256(self) -> str:
        return sha256_text(self.source)


@dataclass(frozen=True)
class SuiteTask:
    """One manifest task, checked and compiled (templates, code, extractor, metrics)."""

    spec: S.TaskSpec
    base_dir: Path
    source: str  # the manifest file, for messages
    prompt: Template
    target: Template
    fewshot_prompt: Template | None
    fewshot_target: Template | None
    fewshot_example: Template | None
    preprocess_code: Code | None
    grader_code: dict[int, Code] = field(default_factory=dict)  # index in spec.graders -> code

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def where(self) -> str:
        return f"{self.source}: task {self.id!r}"

    @cached_property
    def extractor(self) -> Extractor:
        return build_extractor(self.spec)

    @property
    def choices(self) -> tuple[str, ...]:
        """The answers every row shares (``choices``, or an ``answer_space``'s labels)."""
        return self.spec.fixed_choices

    @property
    def instructions(self) -> str | None:
        gen = self.spec.generation
        return gen.instructions if gen is not None else None

    @cached_property
    def metrics(self) -> tuple[S.Metric, ...]:
        """Declared metrics, or the default ones of the graders when ``metrics`` is omitted."""
        if self.spec.metrics is not None:
            return tuple(self.spec.metrics)
        from yoxla.suites.builtins import default_metric_ids

        ids: list[str] = []
        for g in self.spec.graders or (_default_grader(self.spec),):
            if isinstance(g, S.PythonGrader):
                if g.contract == "sample":
                    ids.append(g.metric_id)
            else:
                ids.extend(default_metric_ids(g))
        return tuple(S.Metric(id=i) for i in dict.fromkeys(ids))

    @cached_property
    def graders(self) -> tuple[S.PythonGrader | S.BuiltinGrader, ...]:
        """The graders that score this task (``exact_match`` when none is named)."""
        return self.spec.graders or (_default_grader(self.spec),)

    @property
    def primary(self) -> str | None:
        """The task's headline metric: the first declared (or default) metric."""
        return self.metrics[0].id if self.metrics else None

    @cached_property
    def definition(self) -> dict[str, Any]:
        """Everything of the manifest that changes results, as canonical data (no data rows)."""
        from yoxla.suites.hashing import task_definition

        return task_definition(self)

    @cached_property
    def definition_hash(self) -> str:
        return sha256_text(canonical_json(self.definition))


def _default_grader(task: S.TaskSpec) -> S.BuiltinGrader:
    """No grader named: a built-in named by the first metric id, else exact_match."""
    for m in task.metrics or ():
        if m.id in S.BUILTIN_GRADERS and m.id not in ("span", "abstention"):
            return S.BuiltinGrader(type="builtin", name=m.id)  # type: ignore[arg-type]
    return S.BuiltinGrader(type="builtin", name="exact_match")


@dataclass(frozen=True)
class SuiteManifest:
    """A loaded suite: its file, schema version, metadata and tasks in order."""

    path: Path
    schema_version: str
    metadata: dict[str, str]
    tasks: dict[str, SuiteTask]
    raw: dict[str, Any] = field(repr=False, compare=False)
    spec: S.Manifest | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.metadata.get("name") or self.path.stem

    @property
    def groups(self) -> tuple[S.Group, ...]:
        """YOXLA ``groups`` (the benchmark's blocks); () when none are declared."""
        return tuple(self.spec.groups or ()) if self.spec is not None else ()

    @property
    def headline_rule(self) -> str:
        return self.spec.headline_rule if self.spec is not None else "mean_of_tasks"

    @property
    def headline_name(self) -> str | None:
        head = self.spec.headline if self.spec is not None else None
        return head.name if head is not None else None

    @property
    def ranking(self) -> tuple[str, ...] | None:
        """The order the suite declares (``metadata.ranking`` or ``analysis.ranking``, checked on
        loading); None: none."""
        from yoxla.calibration.ranking import suite_order

        return self.spec.ranking if self.spec is not None else suite_order(self.metadata)

    def task(self, task_id: str) -> SuiteTask:
        try:
            return self.tasks[task_id]
        except KeyError:
            known = ", ".join(self.tasks)
            raise ManifestError(f"{self.path}: no task {task_id!r} (tasks: {known})") from None


# Loading -------------------------------------------------------------------------------------


def parse_document(text: str, source: str) -> Any:
    """YAML (a superset of JSON) with ``yaml.safe_load``; JSON files with ``json``."""
    import yaml

    if source.lower().endswith(".json"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ManifestError(f"{source}: not valid JSON ({exc})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ManifestError(f"{source}: not valid YAML{at} ({problem})") from None


def _read_code(code: Any, base_dir: Path, where: str, what: str) -> Code:
    if code.source is not None:
        return Code(code.source, f"<{what}>")
    path = (base_dir / code.path).resolve()
    if not path.is_file():
        raise ManifestError(f"{where}, field {what}.path: file {code.path} not found")
    if path.stat().st_size > S.MAX_SOURCE:
        raise ManifestError(f"{where}, field {what}.path: {code.path} is larger than {S.MAX_SOURCE} bytes")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{where}, field {what}.path: {code.path} is not UTF-8 text") from None
    return Code(text, code.path)


def _check_syntax(code: Code, where: str, what: str) -> None:
    import ast

    try:
        ast.parse(code.source, filename=code.filename)
    except SyntaxError as exc:
        raise ManifestError(
            f"{where}, field {what}: Python syntax error at line {exc.lineno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ManifestError(f"{where}, field {what}: not Python source ({exc})") from None


def _template(text: str | None, where: str, what: str) -> Template | None:
    if text is None:
        return None
    return Template.parse(text, f"{where}, field {what}")


def compile_task(task: S.TaskSpec, base_dir: Path, source: str) -> SuiteTask:
    where = f"{source}: task {task.id!r}"
    fs = task.fewshot_settings
    preprocess = None
    if task.preprocess is not None:
        preprocess = _read_code(task.preprocess, base_dir, where, "preprocess")
        _check_syntax(preprocess, where, "preprocess")
    grader_code = {}
    for i, g in enumerate(task.graders):
        if isinstance(g, S.PythonGrader):
            what = "grader" if not isinstance(task.grader, list) else f"grader[{i}]"
            grader_code[i] = _read_code(g, base_dir, where, what)
            _check_syntax(grader_code[i], where, what)
    prompt = _template(task.prompt_template, where, "prompt_template")
    assert prompt is not None
    compiled = SuiteTask(
        spec=task,
        base_dir=base_dir,
        source=source,
        prompt=prompt,
        target=_template(task.target_template or "", where, "target_template") or Template("", ()),
        fewshot_prompt=_template(fs.prompt_template, where, "fewshot.prompt_template") if fs else None,
        fewshot_target=_template(fs.target_template, where, "fewshot.target_template") if fs else None,
        fewshot_example=_template(fs.example_template, where, "fewshot.example_template") if fs else None,
        preprocess_code=preprocess,
        grader_code=grader_code,
    )
    _ = compiled.extractor  # regexes compile now, not during the run
    return compiled


def load_manifest(path: str | Path) -> SuiteManifest:
    """Read, validate and compile a manifest file; ManifestError (one line) on any problem."""
    p = Path(path)
    source = str(path)
    if not p.is_file():
        raise ManifestError(f"{source}: no such file")
    if p.suffix.lower() not in MANIFEST_SUFFIXES:
        raise ManifestError(f"{source}: a manifest is a .yaml, .yml or .json file")
    size = p.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{source}: {size} bytes (a manifest is at most {MAX_MANIFEST_BYTES})")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{source}: not UTF-8 text") from None
    raw = parse_document(text, source)
    return load_document(raw, p.resolve().parent, source, p)


def load_document(raw: Any, base_dir: Path, source: str, path: Path | None = None) -> SuiteManifest:
    """Validate and compile an already parsed manifest (``base_dir`` resolves relative paths)."""
    if not isinstance(raw, dict):
        raise ManifestError(f"{source}: a manifest is a mapping with schema_version and tasks")
    try:
        manifest = S.Manifest.model_validate(raw)
    except ValidationError as exc:
        raise ManifestError(format_validation_error(exc, raw, source)) from None
    tasks = {t.id: compile_task(t, base_dir, source) for t in manifest.tasks}
    return SuiteManifest(
        path=path or base_dir / "manifest",
        schema_version=manifest.schema_version,
        metadata=dict(manifest.metadata),
        tasks=tasks,
        raw=raw,
        spec=manifest,
    )
