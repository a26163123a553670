"""A run folder made from a result file: ``python runner.py --retry-errors RESULT.json``.

Only the examples the file records as generation errors are asked again, in a suite run of the
suite the file was run on: a suite result file's own committed suite, or, for a ``yoxla-result``
v2 file of the built-in engine of older versions, the package suite ``yoxla-<edition>`` whose
tasks keep the published contract and prompt hashes. The folder holds the file's stored answers
(raw text, finish reason, error, answer distribution per id; a suite file's judge calls too) as
if that run had been made here; the finish re-scores all of them from the stored answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from yoxla.run.artifacts import (
    PREDICTIONS,
    RUN_JSON,
    SUITE_KIND,
    RunLock,
    read_json,
    rewrite_predictions,
    write_json,
)
from yoxla.run.errors import Log, RunError, log_stderr
from yoxla.run.finalize import RunReport
from yoxla.run.judge import JUDGEMENTS
from yoxla.run.plan import RunPlan, make_plan, run_conditions
from yoxla.run.session import new_run_record, refuse_existing, retry_errors
from yoxla.run.settings import RunSettings, check_run_id, now_iso, provider_facts


def retry_result_file(
    path: Path, runs_dir: str, overrides: dict[str, Any], log: Log = log_stderr
) -> RunReport | None:
    """``--retry-errors RESULT.json``: re-ask only the examples the file records as generation
    errors, in the run folder that wrote the file when ``runs_dir`` holds it (same suite, provider
    and model), else in one made from the file; the new result file goes where the run writes it
    (the old one is replaced only when it is that file). None when there is no generation error."""
    from yoxla.record.result import ResultFile

    rec = _read_result(path)
    if rec.generation_errors == 0:
        log(f"{path}: no generation errors to retry")
        return None
    suite = rec.suite.id if isinstance(rec, ResultFile) else f"yoxla-{rec.edition}"
    seed = seed_run if isinstance(rec, ResultFile) else seed_legacy_run
    root = Path(overrides.get("runs_dir") or runs_dir)
    run_dir = root / check_run_id(rec.run.run_id)
    if (run_dir / RUN_JSON).is_file():
        info = read_json(run_dir / RUN_JSON)
        held = (
            info.get("kind"),
            info.get("provider"),
            info.get("model"),
            (info.get("suite") or {}).get("id"),
        )
        if held == (SUITE_KIND, rec.model.provider, rec.model.model, suite):
            log(f"{path}: retrying in its run folder {run_dir}")
            return retry_errors(run_dir, overrides, log)
        run_dir = root / check_run_id(f"{rec.run.run_id}-retry-{now_iso().replace(':', '')}")
    seed(run_dir, path, rec, overrides, log)
    log(f"{path}: made the run folder {run_dir} from the file; retrying its {rec.generation_errors} errors")
    return retry_errors(run_dir, overrides, log)


def _read_result(path: Path) -> Any:
    from yoxla.admission.rules import MAX_BYTES
    from yoxla.record.result import parse_record
    from yoxla.safe.strictjson import StrictJSONError, loads_strict, read_regular_file

    raw, problem = read_regular_file(path, MAX_BYTES)
    if raw is None:
        raise RunError(f"--retry-errors: cannot read {path}: {problem}")
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        raise RunError(f"--retry-errors: {path} is not a result file: {exc}") from None
    rec, problems = parse_record(doc)
    if rec is None:
        raise RunError(f"--retry-errors: {path} is not a result file: {problems[0]}")
    return rec


def seeded_settings(rec: Any, run_dir: Path, overrides: dict[str, Any], **kind: Any) -> RunSettings:
    """The settings of a run folder seeded from a result file (a suite file or a v2 one): the file's
    model, limit and run conditions, then ``overrides``; ``kind`` holds what differs by kind."""
    cond = rec.run.conditions
    s = RunSettings(
        provider=rec.model.provider,
        model=rec.model.model,
        limit=cond.limit,
        thinking=cond.thinking,
        thinking_budget=cond.thinking_budget if cond.thinking_budget is not None else 4096,
        base_url=rec.model.base_url,
        display_name=rec.model.display_name,
        run_id=run_dir.name,
        runs_dir=str(run_dir.parent),
        **kind,
    )
    for key, value in overrides.items():
        s.set(key, value)
    return s


def seeded_line(tid: str, p: Any, rec: Any, verdict: dict[str, Any]) -> dict[str, Any]:
    """The predictions.jsonl line of answer ``p`` to task ``tid`` of result file ``rec``, as a run
    writes it; ``verdict`` holds what the line keeps of the answer's stored scoring (the finish
    re-scores it from the answer)."""
    from yoxla.score.calibration.stored import DISTRIBUTION_KEY

    line = {
        "task": tid,
        "id": p.id,
        "raw": p.raw,
        **verdict,
        "finish_reason": p.finish_reason,
        "model": rec.model.reported_model,
        "usage": {},
        "latency_s": 0.0,
        "attempts": 1,
        "error": p.error,
    }
    if p.distribution is not None:
        line[DISTRIBUTION_KEY] = p.distribution.model_dump(mode="json", exclude_unset=True)
    return line


def seed_run(run_dir: Path, path: Path, rec: Any, overrides: dict[str, Any], log: Log) -> None:
    """A suite run folder holding a suite result file's answers and judge calls, as if that run
    had been made here: only with the committed suite the file names, its tasks unchanged."""
    from yoxla.admission.committed import CommittedSuites
    from yoxla.record.result import RunConditions
    from yoxla.score.judge import request_hash

    committed, why = CommittedSuites().get(rec.suite.id)
    if committed is None:
        raise RunError(f"--retry-errors: {path}: {why}")
    cond = rec.run.conditions
    filters = {k: list(v) for k, v in (cond.filters or {}).items() if k != "controls"}
    judge = rec.run.judge
    s = seeded_settings(
        rec,
        run_dir,
        overrides,
        suite=str(committed.path.resolve()),
        tasks=list(cond.tasks or []),
        filters=filters,
        scored_only="controls" in (cond.filters or {}),
        judge_provider=judge.provider if judge else None,
        judge_model=judge.model if judge else None,
        judge_base_url=judge.base_url if judge else None,
    )
    plan = make_plan(s, log=log)
    _same_tasks(path, rec, plan, committed.repo_path)
    for tid, h in plan.hashes().items():
        stored = rec.suite.tasks.get(tid)
        if stored is None or stored.hash != h["hash"]:
            raise RunError(
                f"--retry-errors: task {tid} of {path} was run with another version of the suite "
                f"(task hash differs from the committed {committed.repo_path}); start a new run"
            )
    now = RunConditions.model_validate(run_conditions(s, plan))
    if now.generation != rec.run.conditions.generation:
        raise RunError(
            f"--retry-errors: {path} ran with other generation settings than the committed suite's"
        )
    records: list[dict[str, Any]] = []
    judgements: dict[str, dict[str, Any]] = {}
    for tid in plan.task_ids:
        for p in rec.tasks[tid].predictions:
            verdict = {
                "extracted": p.extracted,
                "valid": p.valid,
                "outcome": p.outcome,
                "reason": p.reason,
                "score": p.score,
                "scores": dict(p.scores),
                "grader_error": p.grader_error,
                "judgements": [j.model_dump(mode="json") for j in p.judgements],
            }
            # a local model's label scores are carried over too: read back at the finish
            records.append(seeded_line(tid, p, rec, verdict))
            for j in p.judgements:  # replayed by scoring, never sent again
                if request_hash(j.request) == j.request_sha256:
                    judgements.setdefault(
                        j.request_sha256,
                        {
                            "request_sha256": j.request_sha256,
                            "request": j.request,
                            "response": j.response.model_dump(mode="json"),
                        },
                    )
    write_seeded(run_dir, path, rec, s, plan, records, log, {}, list(judgements.values()))


def seed_legacy_run(run_dir: Path, path: Path, rec: Any, overrides: dict[str, Any], log: Log) -> None:
    """A suite run folder of the package suite ``yoxla-<edition>`` holding the answers of a
    ``yoxla-result`` v2 file (the built-in engine's): the same tasks, asked under the same
    contract and prompt hashes, on the suite's own items. Each answer's raw text, finish reason,
    error and distribution are carried over; the finish re-scores every one of them."""
    from yoxla.contract.registry import resolve_suite, resolved

    cond = rec.run.conditions
    if cond.temperature is not None or cond.system_prompt != "contract":
        raise RunError(
            f"--retry-errors: {path} ran under changed conditions (temperature or system prompt) "
            "that this runner cannot repeat"
        )
    sid = f"yoxla-{rec.edition}"
    manifest = resolve_suite(sid)
    if manifest is None:  # pragma: no cover - the package ships both
        raise RunError(f"--retry-errors: {path}: the package suite {sid} is missing")
    s = seeded_settings(
        rec,
        run_dir,
        overrides,
        suite=str(resolved(manifest)),
        tasks=list(cond.filters.get("task", [])),
        filters={k: list(v) for k, v in cond.filters.items() if k not in ("task", "controls")},
        scored_only="controls" in cond.filters,
    )
    plan = make_plan(s, log=log)
    _same_tasks(path, rec, plan, sid)
    for tid, task in plan.tasks.items():
        stored, meta = rec.tasks[tid], task.task.spec.metadata
        if (stored.contract_hash, stored.prompt_hash) != (meta.get("contract_hash"), meta.get("prompt_hash")):
            raise RunError(
                f"--retry-errors: task {tid} of {path} was asked under another contract than the "
                f"suite {sid}'s (contract or prompt hash differs); start a new run"
            )
        known = {item.id for item in task.prepared.items}
        unknown = next((p.id for p in stored.predictions if str(p.id) not in known), None)
        if unknown is not None:
            raise RunError(
                f"--retry-errors: {path}: task {tid} has no item {str(unknown)[:80]!r} in the suite "
                f"{sid} (its rows are not the frozen ones); start a new run"
            )
    records = [
        seeded_line(
            tid, p, rec, {"valid": p.valid, "outcome": p.outcome, "reason": p.reason, "score": p.score}
        )
        for tid in plan.task_ids
        for p in rec.tasks[tid].predictions
    ]
    info = {"chat_template_hash": rec.run.chat_template_hash}
    write_seeded(run_dir, path, rec, s, plan, records, log, info, [])


def _same_tasks(path: Path, rec: Any, plan: RunPlan, suite: str) -> None:
    if set(plan.task_ids) != set(rec.tasks):
        raise RunError(
            f"--retry-errors: {path} holds tasks {', '.join(rec.tasks)}, "
            f"the committed suite {suite} would ask {', '.join(plan.task_ids)}"
        )


def write_seeded(
    run_dir: Path,
    path: Path,
    rec: Any,
    s: RunSettings,
    plan: RunPlan,
    records: list[dict[str, Any]],
    log: Log,
    provider_info: dict[str, Any],
    judgements: list[dict[str, Any]],
) -> None:
    """Write a run folder made from result file ``rec``, under its lock: run.json (with the
    provider facts the file keeps), predictions.jsonl and judgements.jsonl."""
    from yoxla.providers.registry import get_spec

    facts = provider_facts(get_spec(s.provider, s.config), rec.model.base_url, provider_info)
    if records:  # the file keeps only the run's total usage: carried over on the first answer
        records[0]["usage"] = rec.usage.model_dump(mode="json", exclude_unset=True)
    with RunLock(run_dir, log):
        refuse_existing(run_dir)
        info = new_run_record(s, plan, facts, workers=rec.run.workers, batch_size=rec.run.batch_size)
        info.update(
            status="incomplete",
            started_at=rec.run.started_at,
            seeded_from={"result_file": path.name, "content_sha256": rec.content_sha256},
        )
        rewrite_predictions(run_dir / JUDGEMENTS, judgements)
        write_json(run_dir / RUN_JSON, info)
        rewrite_predictions(run_dir / PREDICTIONS, records)
