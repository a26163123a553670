"""Scoring stored outputs: built-in graders (table), Python sample and batch graders, judges, cache."""

from __future__ import annotations

import pytest
from suites_helpers import ROWS, cases, write_jsonl

from yoxla.contract.errors import ManifestError
from yoxla.prompt.prepare import prepare_task
from yoxla.score.judge import BATCH_SAMPLE_ID, JudgeRecord, JudgeResponse
from yoxla.score.replay import score_suite_task
from yoxla.score.samples import SampleCache, SampleOutput

BUILTINS = cases("builtin_cases.yaml")


def _prepare(folder, load, pool, rows, **task):
    write_jsonl(folder / "rows.jsonl", [{"id": f"r{i}", **r} for i, r in enumerate(rows)])
    spec = {
        "id": "b",
        "dataset": {"path": "rows.jsonl"},
        "prompt_template": "{{t}}",
        "target_template": "{{t}}",
    }
    spec.update(task)
    return prepare_task(load(spec).task("b"), pool)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in BUILTINS])
def test_builtin_grader(case, folder, load, pool):
    if "error_at_load" in case:
        with pytest.raises(ManifestError, match=case["error_at_load"]):
            _prepare(folder, load, pool, case["rows"], **case["task"])
        return
    prepared = _prepare(folder, load, pool, case["rows"], **case["task"])
    scored = score_suite_task(prepared, [SampleOutput.from_raw(o) for o in case["outputs"]], pool=pool)
    for i, expected in enumerate(case.get("sample") or []):
        r = scored.results[i]
        if expected is None:
            assert r.grader_error is not None and r.outcome == "grader_error", r
        else:
            assert r.scores == expected, r
    for i, expected in enumerate(case.get("sample_subset") or []):
        assert {k: scored.results[i].scores[k] for k in expected} == expected
    for key, value in (case.get("metrics") or {}).items():
        if isinstance(value, dict):
            assert scored.metrics[key] == value, key
        else:
            assert scored.metrics[key] == pytest.approx(value), key


def test_diagnostics_and_outcomes(folder, load, pool):
    prepared = _prepare(
        folder, load, pool, [{"t": "a"}] * 5, choices=["a", "b"], output_extraction={"type": "strict"}
    )
    outputs = [
        SampleOutput("a"),
        SampleOutput("b"),
        SampleOutput("a b", finish_reason="length"),
        SampleOutput(None, error="HTTP 500 after 6 retries"),
        SampleOutput.from_raw("<think>a? b?</think>a"),
    ]
    scored = score_suite_task(prepared, outputs, pool=pool)
    assert [r.outcome for r in scored.results] == [
        "correct",
        "wrong",
        "truncated",
        "generation_error",
        "correct",
    ]
    m = scored.metrics
    assert (m["n"], m["n_valid"], m["generation_errors"], m["truncated"]) == (5, 3, 1, 1)
    assert m["invalid_output_rate"] == pytest.approx(0.4)
    assert scored.primary == "exact_match" and scored.score == pytest.approx(40.0)
    assert outputs[4].reasoning == "a? b?"


def test_python_sample_grader_declared_metrics(folder, load, pool):
    grader = (
        "def grade(sample, item):\n"
        "    ok = float(sample['extracted_output'] == item['target'])\n"
        "    return {'scores': {'exact': ok, 'length': len(sample['output_text'] or '')}}\n"
    )
    prepared = _prepare(
        folder,
        load,
        pool,
        [{"t": "Bakı", "mövzu": "x"}, {"t": "Gəncə", "mövzu": "y"}, {"t": "Şəki", "mövzu": "x"}],
        grader={"type": "python", "source": grader},
        metrics=[{"id": "exact"}, {"id": "length", "aggregation": "none", "higher_is_better": False}],
        metadata={"breakdowns": "movzu"},
    )
    scored = score_suite_task(
        prepared, [SampleOutput("Bakı"), SampleOutput("Gəncəyə"), SampleOutput("Şəki")], pool=pool
    )
    assert scored.metrics["exact"] == pytest.approx(2 / 3)
    assert "length" not in scored.metrics  # aggregation none: per sample only
    assert scored.results[1].scores == {"exact": 0.0, "length": 7.0}
    assert [r.score for r in scored.results] == [1.0, 0.0, 1.0]
    assert scored.metrics["per_movzu_score"] == {}  # the rows have mövzu, not movzu: none counted


def test_breakdowns(folder, load, pool):
    prepared = _prepare(
        folder,
        load,
        pool,
        [{"t": "a", "level": 1}, {"t": "b", "level": 2}, {"t": "c", "level": 1}],
        metadata={"breakdowns": "level"},
    )
    scored = score_suite_task(prepared, [SampleOutput("a"), SampleOutput("b"), SampleOutput("x")], pool=pool)
    assert scored.metrics["per_level_score"] == {
        "1": {"accuracy": 0.5, "n": 2},
        "2": {"accuracy": 1.0, "n": 1},
    }


def _batch_task(folder, load, pool, source):
    grader = {"type": "python", "contract": "batch", "source": source}
    return _prepare(folder, load, pool, [{"t": "a"}, {"t": "b"}], grader=grader)


def test_batch_grader_returns_task_metrics(folder, load, pool):
    grader = (
        "def grade_batch(samples, items):\n"
        "    hits = [s['extracted_output'] == i['target'] for s, i in zip(samples, items)]\n"
        "    return {'scores': {'hit_rate': sum(hits) / len(hits), 'n_items': len(items)}}\n"
    )
    prepared = _batch_task(folder, load, pool, grader)
    scored = score_suite_task(prepared, [SampleOutput("a"), SampleOutput("c")], pool=pool)
    assert scored.metrics["hit_rate"] == 0.5 and scored.metrics["n_items"] == 2
    assert scored.primary is None and scored.problems == ()
    assert [r.outcome for r in scored.results] == ["graded", "graded"]


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (
            "def grade_batch(samples, items):\n    raise ValueError('x')\n",
            "batch grader failed: ValueError: x",
        ),
        (
            "def grade_batch(samples, items):\n    return 'yaxşı'\n",
            "batch grader: the grader returned 'yaxşı'",
        ),
        (
            "def grade_batch(samples, items):\n    return {'scores': {'f1': float('nan')}}\n",
            "not a finite number",
        ),
    ],
)
def test_failing_batch_grader_is_a_task_problem(folder, load, pool, source, problem):
    prepared = _prepare(
        folder,
        load,
        pool,
        [{"t": "a"}],
        grader={"type": "python", "contract": "batch", "source": source, "timeout_seconds": 1},
        metrics=[{"id": "f1"}],
    )
    scored = score_suite_task(prepared, [SampleOutput("a")], pool=pool)
    assert any(problem in p for p in scored.problems), scored.problems
    assert any("metric f1 was not produced" in p for p in scored.problems)
    assert scored.score is None


def test_items_subset_and_alignment(folder, load, pool):
    prepared = _prepare(folder, load, pool, [{"t": "a"}, {"t": "b"}, {"t": "c"}])
    scored = score_suite_task(prepared, [SampleOutput("c")], items=prepared.items[2:], pool=pool)
    assert [r.id for r in scored.results] == ["r2"] and scored.metrics["exact_match"] == 1.0
    with pytest.raises(ValueError, match="3 items but 1 outputs"):
        score_suite_task(prepared, [SampleOutput("a")], pool=pool)


def test_cache_serves_repeated_outputs(folder, load, pool):
    grader = "def grade(sample, item):\n    return 1.0\n"
    prepared = _prepare(
        folder, load, pool, [{"t": "a"}, {"t": "b"}], grader={"type": "python", "source": grader}
    )
    cache = SampleCache()
    outputs = [SampleOutput("a"), SampleOutput("x")]
    first = score_suite_task(prepared, outputs, pool=pool, cache=cache)
    second = score_suite_task(prepared, outputs, pool=pool, cache=cache)
    assert cache.hits == 2 and first.results == second.results and first.metrics == second.metrics


# Judges ----------------------------------------------------------------------------------------

JUDGE_GRADER = (
    "def grade(sample, item, ctx):\n"
    "    r = ctx.responses_create(model='hakim', input='Cavab: ' + (sample['extracted_output'] or ''),\n"
    "                             temperature=0)\n"
    "    return 1.0 if r.output_text.strip() == 'düzdür' else 0.0\n"
)


def _judge_task(folder, load, pool):
    return _prepare(
        folder,
        load,
        pool,
        [{"t": "Bakı"}, {"t": "Gəncə"}],
        type="llm_judge",
        grader={"type": "python", "source": JUDGE_GRADER, "timeout_seconds": 1},
    )


def test_live_judgements_are_recorded_then_replayed(folder, load, pool):
    prepared = _judge_task(folder, load, pool)
    asked: list[dict] = []

    def live(request):
        asked.append(request)
        ok = request["input"] == "Cavab: Bakı"
        return JudgeResponse(output_text="düzdür" if ok else "səhvdir", model="hakim-1")

    outputs = [SampleOutput("Bakı"), SampleOutput("Şəki")]
    first = score_suite_task(prepared, outputs, pool=pool, judge=live)
    assert [r.score for r in first.results] == [1.0, 0.0] and len(asked) == 2
    assert first.judge_scored
    rec = first.results[0].judgements[0]
    assert (rec.sample_id, rec.call, rec.request["model"], rec.response.model) == (
        "r0",
        0,
        "hakim",
        "hakim-1",
    )
    # Re-scoring replays the stored records and never asks.
    stored = [
        SampleOutput(o.output_text, judgements=r.judgements)
        for o, r in zip(outputs, first.results, strict=True)
    ]
    again = score_suite_task(prepared, stored, pool=pool)
    assert [r.score for r in again.results] == [1.0, 0.0] and len(asked) == 2
    # A record survives its JSON round trip (result file) unchanged.
    assert JudgeRecord.model_validate_json(rec.model_dump_json()) == rec


def test_replay_refuses_a_different_or_missing_request(folder, load, pool):
    prepared = _judge_task(folder, load, pool)
    live = score_suite_task(
        prepared,
        [SampleOutput("Bakı"), SampleOutput("Gəncə")],
        pool=pool,
        judge=lambda req: JudgeResponse(output_text="düzdür"),
    )
    changed = [SampleOutput("Bakıda", judgements=live.results[0].judgements), SampleOutput("Gəncə")]
    again = score_suite_task(prepared, changed, pool=pool)
    assert "differs from the stored request" in (again.results[0].grader_error or "")
    assert "no stored judgement" in (again.results[1].grader_error or "")


def test_batch_grader_judgements(folder, load, pool):
    grader = (
        "def grade_batch(samples, items, ctx):\n"
        "    r = ctx.responses_create(input=str(len(samples)))\n"
        "    return {'scores': {'judge': float(r['output_text'])}}\n"
    )
    prepared = _batch_task(folder, load, pool, grader)
    live = score_suite_task(
        prepared,
        [SampleOutput("a"), SampleOutput("b")],
        pool=pool,
        judge=lambda r: JudgeResponse(output_text="0.75"),
    )
    assert live.metrics["judge"] == 0.75
    records = live.results[0].judgements
    assert [j.sample_id for j in records] == [BATCH_SAMPLE_ID]
    replay = score_suite_task(prepared, [SampleOutput("a", judgements=records), SampleOutput("b")], pool=pool)
    assert replay.metrics["judge"] == 0.75 and replay.problems == ()


def test_no_judge_outside_a_grader_call(folder, load, pool):
    prepared = _prepare(folder, load, pool, ROWS[:1], grader={"type": "python", "source": JUDGE_GRADER})
    result = score_suite_task(prepared, [SampleOutput("Bakı")], pool=pool).results[0]
    assert "no stored judgement" in (result.grader_error or "")


# The fast path -----------------------------------------------------------------------------------

FAST_ROWS = [
    {"t": "bəli", "qrup": "q1", "nezaret": False, "menbe": "x"},
    {"t": "xeyr", "qrup": "q1", "nezaret": False, "menbe": "y"},
    {"t": "bəli", "qrup": "q2", "nezaret": True, "menbe": "x"},
    {"t": "xeyr", "qrup": "q2", "nezaret": False},
    {"t": "bəli", "qrup": "q3", "nezaret": False, "menbe": "y"},
    {"t": "xeyr", "qrup": "q3", "nezaret": False, "menbe": "x"},
]
FAST_OUTPUTS = ["Bəli", "bəli", "BƏLİ", "xeyr.", "<think>xeyr?</think>bəli", None]


def _fast_task(folder, load, pool, python: bool):
    graders = [{"type": "builtin", "name": "accuracy"}, {"type": "builtin", "name": "macro_f1"}]
    if python:  # a Python grader sends the task down the general path
        graders.append({"type": "python", "source": "def grade(sample, item):\n    return 0.5\n"})
    return _prepare(
        folder,
        load,
        pool,
        FAST_ROWS,
        choices=["bəli", "xeyr"],
        output_extraction={"type": "strict"},
        metrics=[{"id": "accuracy"}, {"id": "macro_f1"}],
        grader=graders,
        metadata={"group_field": "qrup", "control_field": "nezaret", "breakdowns": "menbe"},
    )


def test_builtin_only_task_scores_as_the_general_path_without_a_worker(folder, load, pool):
    outputs = [SampleOutput.from_raw(o, error=None if o else "HTTP 503") for o in FAST_OUTPUTS]
    general = score_suite_task(_fast_task(folder, load, pool, python=True), outputs, pool=pool)
    started = len(pool._workers)
    fast = score_suite_task(_fast_task(folder, load, pool, python=False), outputs, pool=pool)
    assert len(pool._workers) == started  # no worker for a task whose graders are all built in
    assert fast.control == general.control == (False, False, True, False, False, False)
    assert {k: v for k, v in general.metrics.items() if k != "score"} == fast.metrics
    assert fast.metrics["groups"] == 2 and fast.metrics["controls"] == 1
    assert set(fast.metrics["per_menbe_accuracy"]) == {"x", "y"}
    for f, g in zip(fast.results, general.results, strict=True):
        assert f == type(g)(**{**g.__dict__, "scores": {k: v for k, v in g.scores.items() if k != "score"}})
    # Azerbaijani casing: "BƏLİ" is the label "bəli"; the answer after the reasoning is the one scored.
    assert [r.outcome for r in fast.results] == [
        "correct",
        "wrong",
        "correct",
        "invalid",
        "correct",
        "generation_error",
    ]
    assert fast.results[3].near_miss == "trailing_punctuation"


def test_fast_path_equals_the_runners_per_sample_scoring(folder, load, pool):
    from yoxla.score.replay import TaskScorer

    prepared = _fast_task(folder, load, pool, python=False)
    outputs = [SampleOutput.from_raw(o) for o in ["bəli", "bəli", "xeyr", "bəli", "bəli", "heç biri"]]
    fast = score_suite_task(prepared, outputs, pool=pool)
    scorer = TaskScorer(prepared, pool)
    one_by_one = [scorer.score([i], [o])[0] for i, o in zip(prepared.items, outputs, strict=True)]
    assert list(fast.results) == one_by_one
    # a recurring answer is extracted once: its samples share what extraction gave
    assert fast.results[0].source is fast.results[1].source is fast.results[3].source
    assert fast.results[5].near_miss == one_by_one[5].near_miss and not fast.results[5].valid
