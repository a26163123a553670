"""What a run sends: the manifest's tasks prepared, what is still to ask, and each request.

Everything is prepared before any model call (:func:`yoxla.prompt.prepare.prepare_task`); a
failing preprocessor refuses the run and names the task and the row, and so does a row that
breaks a rule of its task's built-in graders (:mod:`yoxla.data.rowchecks`), exit status 2.
What a request carries is in docs/suites.md ("What each request carries") and
:func:`request_for`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from yoxla.contract import registry
from yoxla.contract.errors import ManifestError, PreprocessError
from yoxla.contract.hashing import FrozenHashes, aggregation, suite_hash
from yoxla.contract.loader import SuiteManifest, SuiteTask
from yoxla.contract.registry import is_dir, repo_path, shown_ref, suite_id
from yoxla.contract.spec import HubDataset
from yoxla.data.datasets import HubUnavailable, hub_override, reads_hub
from yoxla.prompt.generation import GenerationSettings
from yoxla.prompt.prepare import Item, PreparedTask, prepare_task
from yoxla.prompt.space import probability_space
from yoxla.providers.base import Request
from yoxla.providers.registry import redact
from yoxla.run.errors import Log, RunError, ValidationFailed, quoting, shown_path
from yoxla.run.settings import RunSettings, stored_path
from yoxla.score.sandbox import announce_for
from yoxla.score.worker import WorkerPool

DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 0.0
DEFAULT_TOP_P = 1.0
REQUEST_OPTIONS = ("stop", "presence_penalty", "frequency_penalty")
RUN_OFFLINE_HINT = (  # what the runner adds to a Hub dataset it cannot read (as the benchmark says)
    " A run can read it from a local copy in the Hub layout instead: --data-dir DIR "
    "(`yoxla download --out DIR` makes one of the benchmark's)."
)


@dataclass(frozen=True)
class PlannedTask:
    """One task of a suite run: the prepared task (items, fingerprints, hash) and its settings."""

    prepared: PreparedTask

    @property
    def id(self) -> str:
        return self.prepared.task.id

    @property
    def task(self) -> SuiteTask:
        return self.prepared.task

    @property
    def generation(self) -> GenerationSettings:
        return self.task.spec.generation or GenerationSettings()

    @property
    def python_graders(self) -> bool:
        """Does a Python grader score this task (only those can ask a judge)?"""
        return bool(self.task.grader_code)


@dataclass
class RunPlan:
    manifest: SuiteManifest
    suite_id: str
    path: str  # the manifest's path in the repository
    tasks: dict[str, PlannedTask]  # the selected tasks, in manifest order
    chosen: dict[str, tuple[Item, ...]] = field(default_factory=dict)  # items the row filters keep

    @property
    def task_ids(self) -> list[str]:
        return list(self.tasks)

    def selected(self, tid: str, limit: int | None) -> tuple[Item, ...]:
        items = self.chosen.get(tid, self.tasks[tid].prepared.items)
        return items if limit is None else items[:limit]

    def pending(
        self, limit: int | None, done: set[tuple[str, str]]
    ) -> tuple[list[tuple[PlannedTask, Item]], int]:
        """(the selected items not in ``done``, in run order; how many are selected in all)."""
        out: list[tuple[PlannedTask, Item]] = []
        total = 0
        for tid, task in self.tasks.items():
            for item in self.selected(tid, limit):
                total += 1
                if (tid, item.id) not in done:
                    out.append((task, item))
        return out, total

    def hashes(self) -> dict[str, dict[str, Any]]:
        """Per task: its hash, definition hash and data fingerprints, and the commits its Hugging
        Face datasets were read at where it has any (the result file's ``suite.tasks``)."""
        out: dict[str, dict[str, Any]] = {}
        for tid, t in self.tasks.items():
            out[tid] = {
                "hash": t.prepared.task_hash,
                "definition": t.task.definition_hash,
                "data": dict(sorted(t.prepared.fingerprints.items())),
            }
            if t.prepared.commits:
                out[tid]["commits"] = dict(sorted(t.prepared.commits.items()))
        return out

    def record(self) -> dict[str, Any]:
        """run.json's ``suite``: id, path, suite hash, task hashes, and the groups, headline and
        analysis hash where the manifest declares them."""
        from yoxla.contract.hashing import analysis_hash, declared_aggregation

        out = {"id": self.suite_id, "path": self.path, "suite_hash": self.hash, "tasks": self.hashes()}
        out.update(declared_aggregation(self.manifest))
        if (found := analysis_hash(self.manifest)) is not None:
            out["analysis_hash"] = found
        return out

    @property
    def hash(self) -> str:
        return suite_hash(
            {tid: t.prepared.task_hash for tid, t in self.tasks.items()}, aggregation(self.manifest)
        )

    def facts(self, s: RunSettings) -> dict[str, dict[str, Any]]:
        """run.json's ``tasks``: per task its hashes, items, how many the run selected, and the
        ``max_tokens`` its requests are sent with (the thinking budget included under --thinking)."""
        return {
            tid: {
                **h,
                "items": len(self.tasks[tid].prepared.items),
                "selected": len(self.selected(tid, s.limit)),
                "max_tokens": request_settings(self.tasks[tid], s.thinking, s.thinking_budget)["max_tokens"],
            }
            for tid, h in self.hashes().items()
        }


def read_manifest(path: str) -> SuiteManifest:
    try:
        return registry.load_suite_manifest(path)
    except ManifestError as exc:
        raise RunError(quoting(str(exc), path)) from None


def filter_fields(task: SuiteTask) -> list[str]:
    """The row fields a run may filter a suite task's items by: those its metadata declares
    (``breakdowns``, ``group_field``, ``control_field``), as ``--filter`` does on the benchmark."""
    spec = task.spec
    named = [*spec.breakdowns, spec.group_field, spec.control_field]
    return list(dict.fromkeys(n for n in named if n))


def _as_text(value: Any) -> str:
    """A row value as a filter compares it: JSON spelling for true/false/null, else its text."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return str(value)


def choose_items(
    tasks: dict[str, PlannedTask], filters: dict[str, list[str]], scored_only: bool, log: Log | None = None
) -> tuple[dict[str, PlannedTask], dict[str, tuple[Item, ...]]]:
    """(the tasks that keep items, the items each keeps) under the row filters (a field's values
    are alternatives; fields must all match) and ``--scored-only``. A task without a filtered
    field, or with no item left, is left out; a field no selected task has is an error (a typo
    must not run nothing), and so is a filter that leaves no item at all."""
    if not filters and not scored_only:
        return tasks, {}
    from yoxla.prompt.templates import lookup
    from yoxla.score.tally import is_control

    columns = {tid: filter_fields(t.task) for tid, t in tasks.items()}
    for name in filters:
        if not any(name in columns[tid] for tid in tasks):
            known = sorted({c for tid in tasks for c in columns[tid]})
            raise RunError(
                f"no selected task has a column {name!r} to filter by; filterable columns: "
                + (", ".join(known) or "none (declare some in the task's metadata)")
            )
    chosen: dict[str, tuple[Item, ...]] = {}
    for tid, t in tasks.items():
        lacking = [name for name in filters if name not in columns[tid]]
        if lacking:
            if log:
                log(f"filter: {tid} has no column {lacking[0]!r}; left out of this run")
            continue
        picked = tuple(
            item
            for item in t.prepared.items
            if all(_as_text(lookup(item.row, name.split("."))) in values for name, values in filters.items())
            and not (scored_only and is_control(t.task.spec, item.row))
        )
        if not picked:
            if log:
                log(f"filter: no row of {tid} passes; left out of this run")
            continue
        chosen[tid] = picked
    if not chosen:
        raise RunError("no row of any selected task passes the filters; nothing to run")
    return {tid: tasks[tid] for tid in chosen}, chosen


def make_plan(s: RunSettings, pool: WorkerPool | None = None, log: Log | None = None) -> RunPlan:
    """Load the manifest named by ``s.suite`` and prepare its selected tasks (no model is asked);
    the row filters and ``--scored-only`` choose the items (a filter nothing passes is an error)."""
    if not s.suite:
        raise RunError("a suite run needs --suite FILE")
    manifest = read_manifest(s.suite)
    try:
        sid = suite_id(manifest)
    except ManifestError as exc:
        raise RunError(str(exc)) from None
    chosen = list(dict.fromkeys(s.tasks)) or list(manifest.tasks)
    unknown = [t for t in chosen if t not in manifest.tasks]
    if unknown:
        known = ", ".join(manifest.tasks)
        raise RunError(f"--task {unknown[0]}: not a task of {shown_path(s.suite)} (tasks: {known})")
    check_data_options(s, [manifest.tasks[t] for t in chosen], repo_path(manifest.path))
    announce_for(manifest.tasks[t] for t in chosen)  # before any code runs: is it sandboxed?
    own = pool is None
    workers = pool or WorkerPool()
    tasks: dict[str, PlannedTask] = {}
    try:
        with hub_override(s.revision, s.data_dir):
            for tid in manifest.tasks:
                if tid in chosen:
                    tasks[tid] = PlannedTask(prepare_task(manifest.tasks[tid], workers))
    except PreprocessError as exc:  # the messages quote the manifest as the loader names it
        raise ValidationFailed(f"{quoting(str(exc), manifest.path)}; no model was asked") from None
    except HubUnavailable as exc:
        hint = "" if s.data_dir is not None else RUN_OFFLINE_HINT
        raise RunError(f"{quoting(str(exc), manifest.path)}{hint}") from None
    except ManifestError as exc:
        raise RunError(quoting(str(exc), manifest.path)) from None
    finally:
        if own:
            workers.close()
    refuse_bad_rows(t.prepared for t in tasks.values())
    frozen = frozen_hashes(manifest, log)
    if frozen is not None and registry.edition_of(sid) is not None:
        refuse_other_counts(sid, tasks, frozen, s)
    if frozen is not None and log is not None:
        warn_unfrozen(manifest, sid, tasks, frozen, log)
    tasks, items = choose_items(tasks, s.filters, s.scored_only, log)
    return RunPlan(manifest, sid, repo_path(manifest.path), tasks, items)


def frozen_hashes(manifest: SuiteManifest, log: Log | None) -> dict[str, FrozenHashes] | None:
    """The frozen hashes of a suite with a hash file (as ``yoxla-v1``); None for one without,
    and for one whose hash file cannot be read (a warning: admission will say more)."""
    from yoxla.contract.hashing import hash_file_path, read_hash_file

    path = hash_file_path(manifest.path)
    if not path.is_file():
        return None
    try:
        return read_hash_file(path)
    except ManifestError as exc:
        if log is not None:
            log(f"warning: {quoting(str(exc), path)}")
        return None


def refuse_other_counts(
    sid: str, tasks: dict[str, PlannedTask], frozen: dict[str, FrozenHashes], s: RunSettings
) -> None:
    """A benchmark suite (``yoxla-v1``, ``yoxla-sample``) whose task has another number of rows
    than it was frozen with (a ``--data-dir`` copy of other rows, another ``--revision``) is
    refused before any model is asked, in one line naming the first such task and how many
    there are (exit status 2): admission could never count the run. Other rows of the frozen
    count are warned of (:func:`warn_unfrozen`)."""
    other = [
        (tid, len(t.prepared.items), frozen[tid].items)
        for tid, t in tasks.items()
        if tid in frozen and frozen[tid].items not in (None, len(t.prepared.items))
    ]
    if not other:
        return
    tid, found, count = other[0]
    read = f" (read from --data-dir {shown_ref(s.data_dir)})" if s.data_dir is not None else ""
    more = f"; … and {len(other) - 1} more task(s)" if len(other) > 1 else ""
    raise RunError(
        f"{tid}: {found:,} rows{read}, but the suite {sid} is frozen with {count:,}{more}; "
        "a run of other rows cannot be admitted, no model was asked"
    )


def warn_unfrozen(
    manifest: SuiteManifest,
    sid: str,
    tasks: dict[str, PlannedTask],
    frozen: dict[str, FrozenHashes],
    log: Log,
) -> None:
    """A task of a frozen suite whose rows or definition differ from the frozen hashes, e.g.
    read with ``--data-dir`` from another copy: a warning per task before any model is asked
    (as the benchmark warns of a fingerprint that differs), since admission will exclude the
    result file."""
    from yoxla.contract.hashing import compare, hash_file_path, prepared_hashes

    now = {tid: prepared_hashes(t.prepared) for tid, t in tasks.items()}
    for line in compare(now, {tid: h for tid, h in frozen.items() if tid in now}):
        if line.status != "unchanged":
            what = line.detail or "the task is not in its hash file"
            log(
                f"warning: {line.task}: not as the suite {sid} was frozen "
                f"({repo_path(hash_file_path(manifest.path))}): "
                f"{what}; results are not comparable with published runs and will not be admitted"
            )


def check_data_options(s: RunSettings, tasks: list[SuiteTask], path: str) -> None:
    """``--revision``/``--data-dir`` need a task that reads a Hugging Face dataset, the revision
    must be one (:func:`check_revision`), the folder must exist and ``run.dataset`` must fit the
    result file (a folder's path at most 500 characters): one line each, exit status 2, before
    any model is asked rather than when the result file is written."""
    given = [f"--{n}" for n, v in (("revision", s.revision), ("data-dir", s.data_dir)) if v is not None]
    if not given:
        return
    if s.revision is not None:
        check_revision(s.revision)
    if s.data_dir is not None and not is_dir(Path(s.data_dir)):
        raise RunError(f"--data-dir {shown_ref(s.data_dir)}: no such folder")
    specs = [t.spec.dataset for t in tasks] + [
        getattr(t.spec.fewshot_settings, "dataset", None) for t in tasks
    ]
    if not any(reads_hub(d) for d in specs):
        raise RunError(
            f"{' and '.join(given)}: suite {shown_path(s.suite or '')} reads no Hugging Face dataset "
            "(these options override its Hub datasets' revision or read them from a local folder)"
        )
    from yoxla.record.base import MAX_URL, DatasetInfo

    found = dataset_info(s, path)
    try:
        DatasetInfo(source=found["source"], revision=found["revision"])
    except ValidationError:
        what = f"--data-dir {shown_ref(s.data_dir)}" if s.data_dir is not None else f"the manifest {path}"
        raise RunError(
            f"{what}: its path has {len(found['source'] or ''):,} characters, more than the "
            f"{MAX_URL} a result file records (give a shorter path)"
        ) from None


def check_revision(revision: str) -> None:
    """``--revision`` is a revision as a manifest may write one (:class:`~yoxla.contract.spec.
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


def dataset_info(s: RunSettings, path: str) -> dict[str, Any]:
    """run.json's ``dataset``: the manifest, or where ``--data-dir``/``--revision`` read the Hub
    datasets from (the result file's ``run.dataset``, as the benchmark records it); a local
    folder as :func:`~yoxla.run.settings.stored_path` writes it, never the user's folders."""
    if s.data_dir is not None:
        return {"source": stored_path(s.data_dir), "revision": None, "local": True}
    if s.revision is not None:
        return {"source": path, "revision": s.revision, "local": False}
    return {"source": path, "revision": None, "local": True}


def refuse_bad_rows(prepared: Iterable[PreparedTask]) -> None:
    """A row that breaks its graders' rules refuses the run before any model call (one line:
    the first three bad rows and how many there are)."""
    from yoxla.data.rowchecks import row_problems

    problems = [str(problem) for p in prepared for problem in row_problems(p)]
    if problems:
        more = f"; … and {len(problems) - 3} more" if len(problems) > 3 else ""
        raise RunError("; ".join(problems[:3]) + more + "; no model was asked")


# Requests ---------------------------------------------------------------------------------------


def request_settings(task: PlannedTask, thinking: bool, thinking_budget: int) -> dict[str, Any]:
    """The sampling settings every request of ``task`` is sent with (defaults filled in)."""
    sampling = task.generation.sampling()
    max_tokens = int(sampling.get("max_output_tokens", DEFAULT_MAX_TOKENS))
    return {
        "temperature": float(sampling.get("temperature", DEFAULT_TEMPERATURE)),
        "top_p": float(sampling.get("top_p", DEFAULT_TOP_P)),
        "max_tokens": max_tokens + (thinking_budget if thinking else 0),
        "options": {k: sampling[k] for k in REQUEST_OPTIONS if k in sampling},
    }


def request_for(task: PlannedTask, item: Item, s: RunSettings, backend: str, base_url: str | None) -> Request:
    """The request for one item: its messages, the task's sampling, passthrough and transport limits."""
    gen = task.generation
    settings = request_settings(task, s.thinking, s.thinking_budget)
    return Request(
        task=task,
        row=item.row,
        example_id=item.id,
        messages=[dict(m) for m in item.messages],
        max_tokens=settings["max_tokens"],
        temperature=settings["temperature"],
        top_p=settings["top_p"],
        thinking=s.thinking,
        options=settings["options"],
        passthrough=gen.passthrough(backend, base_url),
        timeout=gen.timeout_seconds,
        max_retries=gen.max_retries,
        space=probability_space(task.task.spec, item.choices),
    )


def run_conditions(s: RunSettings, plan: RunPlan) -> dict[str, Any]:
    """The conditions of a run, as run.json and the result file state them; ``filters``: the row
    filters (``controls: [skipped]`` for ``--scored-only``), only for a run that has some."""
    filters = {name: [str(v) for v in values] for name, values in sorted(s.filters.items())}
    if s.scored_only:
        filters["controls"] = ["skipped"]
    return {
        "thinking": s.thinking,
        "thinking_budget": s.thinking_budget if s.thinking else None,
        "limit": s.limit,
        "tasks": list(s.tasks) or None,
        **({"filters": filters} if filters else {}),
        "generation": {
            tid: t.generation.model_dump(mode="json", exclude_none=True, exclude={"instructions"})
            for tid, t in plan.tasks.items()
        },
    }
