"""Read a manifest file into checked, ready-to-use tasks.

:func:`load_manifest` is the one way in: bytes -> YAML/JSON (bounded: at most
MAX_MANIFEST_BYTES, no YAML aliases, at most MAX_NESTING levels) -> the typed
:class:`~yoxla.contract.spec.Manifest` -> per task a :class:`SuiteTask` with its templates
parsed, its Python source read (``path`` inside the manifest's folder,
:mod:`yoxla.contract.paths`), its extractor built, its metrics resolved and its definition hash.
Any problem is one :class:`~yoxla.contract.errors.ManifestError` whose message names the file,
the task and the field (and how many more problems; ``problems`` lists them all); never a
traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from yoxla.contract import spec as S
from yoxla.contract.canonical import canonical_json, sha256_text
from yoxla.contract.errors import ManifestError
from yoxla.contract.hashing import task_definition
from yoxla.contract.paths import suite_file
from yoxla.extract.extractors import Extractor, build_extractor
from yoxla.prompt.templates import Template

if TYPE_CHECKING:
    from yoxla.score.replay import ScoringPlan

MAX_MANIFEST_BYTES = 5 * 1024 * 1024
MAX_NESTING = 32  # levels of mappings and lists in a manifest
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


def validation_problems(exc: ValidationError, raw: Any, source: str) -> list[str]:
    """Every problem of a failed validation, one line each: file, task, field and reason."""
    out: list[str] = []
    errors = exc.errors(include_url=False, include_input=False)
    located = [_clean_loc(raw, tuple(err["loc"]), err["type"]) for err in errors]
    for err, parts in zip(errors, located, strict=True):
        if err["type"].endswith("_type") and any(
            len(other) > len(parts) and other[: len(parts)] == parts for other in located
        ):
            continue  # a union's other branch (e.g. "a list") where the value matched one branch
        who, dotted = _where(raw, parts)
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field (not part of the manifest format)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif (
            err["type"] == "string_pattern_mismatch" and (err.get("ctx") or {}).get("pattern") == S.ID_PATTERN
        ):
            msg = "use letters, digits, _, . and - only (1 to 64 characters)"
        line = f"{source}: {who}" + (f", field {dotted}" if dotted else "") + f": {msg}"
        if line not in out:  # a union's branches can repeat one problem
            out.append(line)
    return out


def summary(problems: list[str]) -> str:
    """One line for many problems: the first, and how many more."""
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more problem(s))" if more > 0 else "")


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

    @cached_property
    def scoring(self) -> ScoringPlan:
        """What scoring reads of the task (graders, metrics, groups and controls), worked out once."""
        from yoxla.score.replay import ScoringPlan  # contract loads without score/

        return ScoringPlan(self)

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
        from yoxla.score.graders import default_metric_ids

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
        from yoxla.score.calibration.ranking import suite_order

        return self.spec.ranking if self.spec is not None else suite_order(self.metadata)

    def task(self, task_id: str) -> SuiteTask:
        try:
            return self.tasks[task_id]
        except KeyError:
            known = ", ".join(self.tasks)
            raise ManifestError(f"{self.path}: no task {task_id!r} (tasks: {known})") from None


# Loading -------------------------------------------------------------------------------------


def _yaml_shape(loader: Any, source: str) -> None:
    """Refuse aliases and nesting deeper than MAX_NESTING, from the parser's events (linear)."""
    import yaml

    depth = 0
    while loader.check_event():
        event = loader.get_event()
        kind = type(event)
        if kind is yaml.AliasEvent:
            line = event.start_mark.line + 1 if event.start_mark is not None else "?"
            raise ManifestError(
                f"{source}: line {line}: a YAML alias (*{str(event.anchor)[:40]}); a manifest writes "
                "every value out (aliases, anchors' copies and << merges are not accepted)"
            )
        if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            depth += 1
            if depth > MAX_NESTING:
                line = event.start_mark.line + 1 if event.start_mark is not None else "?"
                raise ManifestError(f"{source}: line {line}: nested more than {MAX_NESTING} levels deep")
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            depth -= 1


def parse_document(text: str, source: str) -> Any:
    """YAML (a superset of JSON) with the safe loader; JSON files with the strict JSON reader.

    Bounded: no YAML aliases (an alias bomb expands a kilobyte into gigabytes), at most
    MAX_NESTING levels of mappings and lists, and the size limit of :func:`load_manifest`.
    """
    import yaml

    if source.lower().endswith(".json"):
        from yoxla.safe.strictjson import StrictJSONError, loads_strict

        try:
            return loads_strict(text.encode("utf-8", "surrogatepass"), max_depth=MAX_NESTING)
        except StrictJSONError as exc:
            raise ManifestError(f"{source}: {exc}") from None
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        events = loader_class(text)
        try:
            _yaml_shape(events, source)
        finally:
            events.dispose()
        return yaml.load(text, Loader=loader_class)  # the safe loader (C when available)
    except ManifestError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ManifestError(f"{source}: not valid YAML{at} ({problem})") from None
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        raise ManifestError(
            f"{source}: not a readable manifest ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


def _read_code(code: Any, base_dir: Path, where: str, what: str) -> Code:
    if code.source is not None:
        return Code(code.source, f"<{what}>")
    path = suite_file(base_dir, code.path, where, f"{what}.path")
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


def _code(code: Any, base_dir: Path, where: str, what: str) -> Code:
    found = _read_code(code, base_dir, where, what)
    _check_syntax(found, where, what)
    return found


def compile_task(task: S.TaskSpec, base_dir: Path, source: str) -> SuiteTask:
    """A checked task; ManifestError listing every problem of its files and templates."""
    where = f"{source}: task {task.id!r}"
    fs = task.fewshot_settings
    problems: list[str] = []

    def attempt(make: Any, *args: Any) -> Any:
        try:
            return make(*args)
        except ManifestError as exc:
            problems.extend(exc.problems)
            return None

    preprocess = None
    if task.preprocess is not None:
        preprocess = attempt(_code, task.preprocess, base_dir, where, "preprocess")
    grader_code = {}
    for i, g in enumerate(task.graders):
        if isinstance(g, S.PythonGrader):
            what = "grader" if not isinstance(task.grader, list) else f"grader[{i}]"
            grader_code[i] = attempt(_code, g, base_dir, where, what)
    for what, ds in (("dataset", task.dataset), ("fewshot.dataset", fs.dataset if fs else None)):
        if isinstance(ds, S.LocalDataset):
            attempt(suite_file, base_dir, ds.path, where, f"{what}.path", True)
    templates = {
        name: attempt(_template, text, where, name)
        for name, text in (
            ("prompt_template", task.prompt_template),
            ("target_template", task.target_template or ""),
            ("fewshot.prompt_template", fs.prompt_template if fs else None),
            ("fewshot.target_template", fs.target_template if fs else None),
            ("fewshot.example_template", fs.example_template if fs else None),
        )
    }
    if problems:
        raise ManifestError(summary(problems), problems)
    compiled = SuiteTask(
        spec=task,
        base_dir=base_dir,
        source=source,
        prompt=templates["prompt_template"],
        target=templates["target_template"],
        fewshot_prompt=templates["fewshot.prompt_template"],
        fewshot_target=templates["fewshot.target_template"],
        fewshot_example=templates["fewshot.example_template"],
        preprocess_code=preprocess,
        grader_code=grader_code,
    )
    _ = compiled.extractor  # regexes compile now, not during the run
    return compiled


def load_manifest(path: str | Path) -> SuiteManifest:
    """Read, validate and compile a manifest file; ManifestError (one line) on any problem.
    A committed suite named by its id: :func:`yoxla.contract.registry.load_suite_manifest`."""
    p = Path(path)
    source = str(path)
    if not p.is_file():
        raise ManifestError(f"{source}: no such file, and no committed suite has this id")
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


def _problems_of_valid_tasks(raw: dict[str, Any], base_dir: Path, source: str) -> list[str]:
    """When the manifest fails its schema: the file and template problems of the tasks that
    pass it on their own, so that one reading lists them too."""
    tasks = raw.get("tasks")
    out: list[str] = []
    for entry in tasks[: S.MAX_TASKS] if isinstance(tasks, list) else ():
        try:
            spec = S.TaskSpec.model_validate(entry)
        except ValidationError:
            continue  # already listed
        try:
            compile_task(spec, base_dir, source)
        except ManifestError as exc:
            out.extend(exc.problems)
    return out


def load_document(raw: Any, base_dir: Path, source: str, path: Path | None = None) -> SuiteManifest:
    """Validate and compile an already parsed manifest (``base_dir`` resolves relative paths)."""
    if not isinstance(raw, dict):
        raise ManifestError(f"{source}: a manifest is a mapping with schema_version and tasks")
    try:
        manifest = S.Manifest.model_validate(raw)
    except ValidationError as exc:
        found = validation_problems(exc, raw, source) + _problems_of_valid_tasks(raw, base_dir, source)
        raise ManifestError(summary(found), found) from None
    tasks: dict[str, SuiteTask] = {}
    problems: list[str] = []
    for t in manifest.tasks:
        try:
            tasks[t.id] = compile_task(t, base_dir, source)
        except ManifestError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ManifestError(summary(problems), problems)
    return SuiteManifest(
        path=path or base_dir / "manifest",
        schema_version=manifest.schema_version,
        metadata=dict(manifest.metadata),
        tasks=tasks,
        raw=raw,
        spec=manifest,
    )
