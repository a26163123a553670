"""What a run sends: its tasks and validated rows, what is still to ask, and the provider to ask."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from yoxla.editions import Edition, fingerprint, load_edition, load_rows, resolve_source
from yoxla.providers.base import Provider
from yoxla.providers.registry import (
    MASK,
    api_key,
    create_provider,
    get_spec,
    known_secrets,
    public_url,
    split_credentials,
    with_overrides,
)
from yoxla.run.errors import Log, RunError, ValidationFailed
from yoxla.run.executor import Item
from yoxla.run.revision import check_revision
from yoxla.run.settings import RunSettings, generation_for, provider_options
from yoxla.suite import Suite, load_suite

R = TypeVar("R")


@dataclass
class Plan:
    suite: Suite
    edition: Edition
    task_ids: list[str]
    rows: dict[str, list[dict[str, Any]]]  # every row of each task, validated
    facts: dict[str, dict[str, Any]]  # per task: rows, selected, fingerprint, hashes, max_tokens
    chosen: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # rows the filters keep

    def selected(self, tid: str, limit: int | None) -> list[dict[str, Any]]:
        rows = self.chosen.get(tid, self.rows[tid])
        return rows if limit is None else rows[:limit]

    def pending(self, limit: int | None, done: set[tuple[str, str]]) -> tuple[list[Item], int]:
        """(the selected examples not in ``done``, in run order; how many are selected in all)."""
        items: list[Item] = []
        total = 0
        for tid in self.task_ids:
            task = self.suite.task(tid)
            for row in self.selected(tid, limit):
                total += 1
                if (tid, str(row[task.id_field])) not in done:
                    items.append((task, row))
        return items, total


def make_plan(s: RunSettings, log: Log | None = None) -> Plan:
    if s.revision is not None:  # before the Hub, run.json or the result file ever see it
        check_revision(s.revision)
    suite = load_suite()
    edition = load_edition(s.edition)
    task_ids = select_tasks(suite, edition, s.tasks)
    rows = load_task_rows(suite, edition, task_ids, s.data_dir, s.revision, log)
    task_ids, chosen = choose_rows(suite, edition, task_ids, rows, s.filters, s.scored_only, log)
    plan = Plan(suite, edition, task_ids, rows, {}, chosen)
    for tid in task_ids:
        task = suite.task(tid)
        plan.facts[tid] = {
            "block": task.block,
            "rows": len(rows[tid]),
            "selected": len(plan.selected(tid, s.limit)),
            "fingerprint": fingerprint(rows[tid]),
            "contract_hash": task.contract_hash,
            "prompt_hash": task.prompt_hash,
            "max_tokens": generation_for(task, s.thinking, s.thinking_budget).max_tokens,
        }
    return plan


def select_tasks(suite: Suite, edition: Edition, task_ids: Iterable[str]) -> list[str]:
    ids = list(task_ids)
    for tid in ids:
        suite.task(tid)  # SuiteError names the known tasks
        if tid not in edition.tasks:
            raise RunError(f"task {tid} is not part of edition {edition.name}")
    chosen = set(ids) if ids else set(edition.tasks)
    return [tid for tid in edition.tasks if tid in chosen]  # edition order, no duplicates


def filter_columns(task: Any) -> list[str]:
    """The columns a run may filter a task's rows by: its breakdown and its metadata."""
    return list(dict.fromkeys([*([task.breakdown] if task.breakdown else []), *task.metadata]))


def _as_text(value: Any) -> str:
    """A row value as a filter compares it: JSON spelling for true/false/null, else its text."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return str(value)


def choose_rows(
    suite: Suite,
    edition: Edition,
    task_ids: list[str],
    rows: dict[str, list[dict[str, Any]]],
    filters: dict[str, list[str]],
    scored_only: bool,
    log: Log | None = None,
) -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
    """(the tasks that keep rows, the rows each keeps) under the row filters and --scored-only
    (see :func:`pick_rows`); a benchmark task filters by its breakdown and metadata columns."""
    if not filters and not scored_only:
        return task_ids, {}
    controls: dict[str, Callable[[dict[str, Any]], bool]] = {}
    if scored_only:
        from yoxla.declarations import edition_declarations

        declarations = edition_declarations(edition)
        for tid in task_ids:
            decl = declarations.task(tid, suite.task(tid).id_field)
            controls[tid] = decl.is_control
    return pick_rows(
        task_ids,
        {tid: filter_columns(suite.task(tid)) for tid in task_ids},
        rows,
        lambda row, name: row.get(name),
        filters,
        controls,
        log,
    )


def pick_rows(
    task_ids: list[str],
    columns: Mapping[str, Sequence[str]],
    rows: Mapping[str, Sequence[R]],
    value: Callable[[R, str], Any],
    filters: Mapping[str, Sequence[str]],
    controls: Mapping[str, Callable[[R], bool]],
    log: Log | None = None,
) -> tuple[list[str], dict[str, list[R]]]:
    """(the tasks that keep rows, the rows each keeps): the one row filter of benchmark and suite runs.

    ``columns`` names what each task may be filtered by, ``value(row, column)`` reads one,
    ``controls`` (``--scored-only``) says per task which rows are controls to skip. A row
    passes when, for every filtered column, its value is one of the given values (a column's
    values are alternatives; columns must all match). A task without a filtered column is left
    out of the run, and so is a task with no row left; a column that no selected task has is
    an error (a typo must not run nothing), and so is a filter that leaves no row at all.
    """
    for name in filters:
        if not any(name in columns[tid] for tid in task_ids):
            known = sorted({c for tid in task_ids for c in columns[tid]})
            raise RunError(
                f"no selected task has a column {name!r} to filter by; filterable columns: "
                + (", ".join(known) or "none (declare some in the task's metadata)")
            )
    kept: list[str] = []
    chosen: dict[str, list[R]] = {}
    for tid in task_ids:
        lacking = [name for name in filters if name not in columns[tid]]
        if lacking:
            if log:
                log(f"filter: {tid} has no column {lacking[0]!r}; left out of this run")
            continue
        is_control = controls.get(tid)
        picked = [
            row
            for row in rows[tid]
            if all(_as_text(value(row, name)) in values for name, values in filters.items())
            and not (is_control is not None and is_control(row))
        ]
        if not picked:
            if log:
                log(f"filter: no row of {tid} passes; left out of this run")
            continue
        kept.append(tid)
        chosen[tid] = picked
    if not kept:
        raise RunError("no row of any selected task passes the filters; nothing to run")
    return kept, chosen


def load_task_rows(
    suite: Suite,
    edition: Edition,
    task_ids: list[str],
    data_dir: str | None,
    revision: str | None,
    log: Log | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Full rows of each task, validated; errors refuse the run, warnings are logged."""
    from yoxla.validate import validate_rows

    out: dict[str, list[dict[str, Any]]] = {}
    problems: list[str] = []
    for tid in task_ids:
        rows = load_rows(edition, tid, data_dir, revision)
        report = validate_rows(suite.task(tid), rows, edition.tasks[tid])
        problems.extend(str(p) for p in report.errors)
        if log:
            for p in report.warnings:
                log(f"warning: {p}")
        out[tid] = rows
    if problems:
        shown = "; ".join(problems[:3]) + (f"; … and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise ValidationFailed(f"the benchmark rows failed validation ({len(problems)} errors): {shown}")
    return out


def dataset_info(edition: Edition, s: RunSettings) -> dict[str, Any]:
    source = resolve_source(edition, s.data_dir)
    local = Path(source).is_dir()
    return {
        "source": edition.source if edition.bundled and not s.data_dir else source,
        "revision": None if local else (s.revision or edition.revision),
        "local": local,
    }


# The provider --------------------------------------------------------------------------------


def precheck_provider(s: RunSettings) -> None:
    """Unknown provider, missing key, or a stored base URL without its credentials: say so first."""
    if s.base_url and MASK in s.base_url:
        raise RunError(
            "this run's base URL carried credentials, which are never stored; give --base-url again"
        )
    spec = get_spec(s.provider, s.config)
    if spec.backend == "openai":
        api_key(with_overrides(spec, s.base_url, **s.provider_settings))


def open_provider(s: RunSettings) -> tuple[Provider, dict[str, Any]]:
    """Create the provider (one-line ProviderError on any problem) and facts about it."""
    precheck_provider(s)
    spec = with_overrides(get_spec(s.provider, s.config), s.base_url, **s.provider_settings)
    provider = create_provider(spec, s.model, provider_options(s))
    check = getattr(provider, "check_reachable", None)
    if s.check_connection and callable(check):
        try:
            check()
        except BaseException:
            provider.close()
            raise
    facts = {
        "backend": spec.backend,
        "base_url": public_url(spec.base_url),
        "api_key_env": spec.api_key_env,
        "reasoning_control": spec.reasoning,
        "provider_info": {
            k: v for k, v in provider.describe().items() if k not in ("base_url", "api_key_env")
        },
    }
    return provider, facts


def run_secrets(s: RunSettings) -> list[str]:
    """Values to scrub from every stored text: the registry's keys and the base URLs' credentials."""
    return [
        *known_secrets(),
        *split_credentials(s.base_url).secrets,
        *split_credentials(s.judge_base_url).secrets,
    ]
