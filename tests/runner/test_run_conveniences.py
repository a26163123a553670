"""Runner conveniences: retry from a result file, run-all, row filters, rescore times, printing."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from runner_helpers import one_error_line

from yoxla.admission.rules import check_file
from yoxla.data.editions import load_edition, load_rows
from yoxla.testing.fakeserver import FakeServer, Reply

RESULT = ("sample", "vllm__fake--model-1.json")


def _doc(path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# --retry-errors RESULT.json ----------------------------------------------------------------


@pytest.fixture
def failing_run(runner, env_key, answers, examples):
    """A complete run whose two NLI examples failed: (server, the dead prompts, its result path)."""
    dead_keys = [k for t, _, k in examples if t == "nli_v1"][:2]
    state = {"alive": False}

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key in dead_keys and not state["alive"]:
            return Reply(status=503, message="upstream down")
        return Reply(content=answers.get(key, "?"))

    srv = FakeServer(responder=responder).start()
    rc, _, err = runner.api(srv, "r1", "--block", "all", "--max-retries", "0")
    assert rc == 0, err
    path = runner.results.joinpath(*RESULT)
    assert _doc(path)["generation_errors"] == 2
    yield srv, state, path
    srv.stop()


def _retry(runner, target: str, srv: FakeServer) -> tuple[int, str, str]:
    return runner(
        "run", "--retry-errors", target, "--base-url", srv.base_url, "--backoff-base", "0.01", "--no-progress",
        base=False,
    )  # fmt: skip


def test_retry_from_a_result_file_whose_run_folder_is_here(runner, failing_run) -> None:
    srv, state, path = failing_run
    old = _doc(path)
    state["alive"] = True
    rc, _, err = _retry(runner, str(path), srv)
    assert rc == 0, err
    assert "retrying in its run folder" in err
    new = _doc(path)  # the same path: the old file is replaced
    assert new["generation_errors"] == 0 and new["content_sha256"] != old["content_sha256"]
    assert new["run"]["run_id"] == old["run"]["run_id"] == "r1"
    changed = [
        (tid, a["id"])
        for tid in old["tasks"]
        for a, b in zip(old["tasks"][tid]["predictions"], new["tasks"][tid]["predictions"], strict=True)
        if a != b
    ]
    assert len(changed) == 2 and {tid for tid, _ in changed} == {"nli_v1"}
    assert check_file(path, use_cache=False).shown


def test_retry_from_a_result_file_without_its_run_folder(runner, failing_run) -> None:
    srv, state, path = failing_run
    received = runner.tmp / "received.json"  # a file that came from elsewhere
    shutil.copy(path, received)
    shutil.rmtree(runner.runs / "r1")
    old = _doc(received)
    asked = srv.total_requests()
    state["alive"] = True
    rc, _, err = _retry(runner, str(received), srv)
    assert rc == 0, err
    assert srv.total_requests() == asked + 2  # only the two failed examples were asked again
    info = runner.json("r1", "run.json")
    assert info["seeded_from"] == {"result_file": "received.json", "content_sha256": old["content_sha256"]}
    assert info["status"] == "complete"
    new = _doc(path)  # written where the run writes it; the received file is left as it was
    assert _doc(received) == old
    assert new["generation_errors"] == 0 and new["content_sha256"] != old["content_sha256"]
    assert new["model"]["display_name"] == old["model"]["display_name"]
    for tid, task in old["tasks"].items():
        for a, b in zip(task["predictions"], new["tasks"][tid]["predictions"], strict=True):
            if a["outcome"] != "generation_error":
                assert a == b  # the stored answers were carried over, not asked again
    assert new["usage"]["total_tokens"] >= old["usage"]["total_tokens"]
    assert check_file(path, use_cache=False).shown


def test_retry_from_a_result_file_without_errors_writes_nothing(runner, env_key, answers) -> None:
    with FakeServer(answers=dict(answers)) as srv:
        rc, _, err = runner.api(srv, "ok", "--block", "all")
        assert rc == 0, err
        path = runner.results.joinpath(*RESULT)
        before = path.read_bytes()
        rc, _, err = _retry(runner, str(path), srv)
    assert rc == 0 and "no generation errors to retry" in err
    assert path.read_bytes() == before


def test_retry_refuses_what_is_not_a_result_file(runner, tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    rc, _, err = runner("run", "--retry-errors", str(bad), base=False)
    one_error_line(rc, err, "is not a result file")
    rc, _, err = runner("run", "--retry-errors", str(tmp_path / "missing.json"), base=False)
    one_error_line(rc, err, "no result file")


# run-all --------------------------------------------------------------------------------------

KEYS = ("OPENROUTER_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "VLLM_API_KEY", "LLAMACPP_API_KEY")


def test_run_all_runs_what_it_can_and_says_what_it_skipped(runner, monkeypatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    flags = ["--edition", "sample", "--task", "nli_v1", "--runs-dir", str(runner.runs)]
    flags += ["--results-dir", str(runner.results), "--no-progress"]
    rc, out, err = runner("run-all", "--", *flags, base=False)
    assert rc == 0, err
    assert "skipped gpt-4o-mini: no key: OPENAI_API_KEY is not set" in out
    assert "skipped gemini-2.5-flash: no key: GEMINI_API_KEY is not set" in out
    assert "skipped qwen3-8b: no key: OPENROUTER_API_KEY is not set" in out
    assert "skipped qwen3-8b-local: a local model: name the preset to run it" in out
    assert "run-all: 2 ran, 0 failed" in out
    partial = runner.results / "partial" / "sample"
    assert {p.name for p in partial.iterdir()} == {"baseline__overlap.json", "baseline__majority.json"}
    doc = _doc(partial / "baseline__overlap.json")
    assert doc["run"]["command"].startswith("yoxla run --preset floor-overlap --edition sample")


def test_run_all_with_named_presets_and_a_bad_flag(runner, monkeypatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    flags = ["--edition", "sample", "--task", "sts_v1", "--runs-dir", str(runner.runs), "--no-progress"]
    rc, out, err = runner("run-all", "floor-majority", "gpt-4.1", "--", *flags, base=False)
    assert rc == 0, err
    assert "skipped gpt-4.1: no key" in out and "run-all: 1 ran, 0 failed, 1 skipped" in out
    rc, _, err = runner("run-all", "no-such-preset", base=False)
    one_error_line(rc, err, "unknown preset 'no-such-preset'")
    rc, _, err = runner("run-all", "--", "--model", "x", base=False)
    one_error_line(rc, err, "run-all sets --model itself")
    rc, _, err = runner("run-all", "floor-majority", "--limit", "3", base=False)
    one_error_line(rc, err, "runner flags go after --")


# Row filters ----------------------------------------------------------------------------------


def test_category_filter_makes_a_partial_run_of_the_tasks_that_have_the_column(runner) -> None:
    rc, _, err = runner(
        "run", "--edition", "sample", "--provider", "baseline", "--model", "first", "--run-id", "geo",
        "--category", "geography",
    )  # fmt: skip
    assert rc == 0, err
    info = runner.json("geo", "run.json")
    sample = load_edition("sample")
    having = [
        tid for tid in sample.tasks if any(r.get("category") == "geography" for r in load_rows(sample, tid))
    ]
    assert info["task_ids"] == having and "knowledge_choice_v1" in having
    assert "has no column 'category'; left out of this run" in err
    doc = _doc(runner.results / "partial" / "sample" / "baseline__first.json")
    assert doc["run"]["conditions"]["filters"] == {"category": ["geography"]}
    assert list(doc["tasks"]) == [t for t in doc["tasks"] if t in having] and set(doc["tasks"]) == set(having)
    for tid in having:
        rows = [r for r in load_rows(sample, tid) if r.get("category") == "geography"]
        assert [p["id"] for p in doc["tasks"][tid]["predictions"]] == [r["id"] for r in rows]
    assert not check_file(
        runner.results / "partial" / "sample" / "baseline__first.json", use_cache=False
    ).shown


def test_filter_on_a_column_no_task_has_is_one_line(runner) -> None:
    rc, _, err = runner(
        "run", "--edition", "sample", "--provider", "baseline", "--model", "first", "--filter", "colour=red",
    )  # fmt: skip
    one_error_line(rc, err, "no selected task has a column 'colour'")
    rc, _, err = runner(
        "run", "--edition", "sample", "--provider", "baseline", "--model", "first", "--filter", "x"
    )
    one_error_line(rc, err, "--filter takes COLUMN=VALUE")


def test_filter_values_of_one_column_are_alternatives(runner) -> None:
    rc, _, err = runner(
        "run", "--edition", "sample", "--provider", "baseline", "--model", "first", "--run-id", "f",
        "--task", "minimal_pairs_v1", "--filter", "difficulty=easy", "--difficulty", "hard",
    )  # fmt: skip
    assert rc == 0, err
    rows = load_rows(load_edition("sample"), "minimal_pairs_v1")
    want = [r["id"] for r in rows if r["difficulty"] in ("easy", "hard")]
    got = [r["id"] for r in runner.predictions("f")]
    assert got == want and 0 < len(want) < len(rows)
    assert runner.json("f", "run.json")["settings"]["filters"] == {"difficulty": ["easy", "hard"]}


# rescore keeps the run's time; rates keep their precision ----------------------------------


def test_rescore_keeps_the_runs_finished_at_and_records_its_own_time(
    runner, server, env_key, monkeypatch
) -> None:
    import yoxla.run.finalize as finalize

    rc, _, err = runner.api(server, "r1")
    assert rc == 0, err
    path = runner.results.joinpath(*RESULT)
    finished = _doc(path)["run"]["finished_at"]
    assert finished and runner.json("r1", "run.json")["finished_at"] == finished
    later = "2099-01-02T03:04:05Z"
    monkeypatch.setattr(finalize, "now_iso", lambda: later)  # rescored_at and the result file's created_at
    rc, _, err = runner("rescore", str(runner.runs / "r1"), "--result", base=False)
    assert rc == 0, err
    doc = _doc(path)
    assert doc["run"]["finished_at"] == finished != later
    assert doc["created_at"] == later  # the document itself is the rescore's
    info = runner.json("r1", "run.json")
    assert (info["finished_at"], info["rescored_at"]) == (finished, later)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.00031, "0.00031"),
        (0.042, "0.042"),
        (0.5, "0.50"),
        (3.14159, "3.1"),
        (12.34, "12.3"),
        (1234.5, "1234"),
    ],
)
def test_rates_and_times_are_printed_with_the_precision_they_need(value, text) -> None:
    from yoxla.run.printing import figure

    assert figure(value) == text


def test_footer_of_a_short_slow_run_prints_a_rate_not_zero(capsys) -> None:
    from types import SimpleNamespace

    from yoxla.run.printing import print_footer

    summary = {"usage": {"total_tokens": 3}, "wall_s": 40.0}
    report = SimpleNamespace(summary=summary, sent=1, run_dir="runs/x", result_path=None, complete=True)
    print_footer(report)
    assert "wall time: 40.0 s, 0.025 req/s this session" in capsys.readouterr().out
