"""Judge-scored suites: every judge call is stored, and re-scoring replays it without asking.

The loopback server plays both the model and the judge (a judge request's user message
starts with ``JUDGE:``). A run asks the judge through the provider layer and keeps every
request and response in ``judgements.jsonl`` and in the result file; ``rescore`` and
admission replay them and make no request at all; a forged judgement is caught.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from suite_run_helpers import ROWS, SuiteRunner, make_suite, manifest, responder

from yoxla.leaderboard.admission import check_document
from yoxla.leaderboard.data import DataSource
from yoxla.leaderboard.suite_data import SuiteSource
from yoxla.results import finalize
from yoxla.testing.fakeserver import FakeServer, Reply

SECRET = "sk-judge-5ecret-DO-NOT-LEAK-0123456789"


@pytest.fixture
def runner(tmp_path: Path, capsys, monkeypatch) -> SuiteRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLLM_API_KEY", SECRET)
    return SuiteRunner(tmp_path, capsys, monkeypatch)


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    return make_suite(tmp_path, manifest(judge=True))


def _judge_args(srv: FakeServer) -> tuple[str, ...]:
    return ("--judge-provider", "vllm", "--judge-model", "hakim-1", "--judge-base-url", srv.base_url)


def _admit(doc: dict, tmp_path: Path):
    return check_document(doc, data=DataSource(allow_hub=False, suites=SuiteSource(root=tmp_path / "suites")))


def _judge_requests(srv: FakeServer) -> int:
    return sum(n for key, n in srv.counts.items() if key.startswith("JUDGE: "))


def test_judge_calls_are_stored_and_replayed_without_a_request(runner, judged, tmp_path) -> None:
    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(judged, srv.base_url, "judged", "--workers", "4", *_judge_args(srv))
        assert rc == 0, err
        assert _judge_requests(srv) == len(ROWS)
        assert "judge: vllm/hakim-1" in out and "suite sinaq: 50.00" in out
        run_dir = runner.runs / "judged"
        log = [
            json.loads(line)
            for line in (run_dir / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        assert len(log) == len(ROWS)
        assert all(
            line["request"]["model"] == "hakim" and line["response"]["model"] == "fake-model" for line in log
        )
        doc = runner.result()
        task = doc["tasks"]["toplama_v1"]
        assert task["judge_scored"] is True and task["judge_models"] == ["fake-model"]
        assert doc["run"]["judge"]["model"] == "hakim-1" and doc["run"]["judge"]["provider"] == "vllm"
        calls = [p["judgements"] for p in task["predictions"]]
        assert all(len(c) == 1 and c[0]["request"]["input"].startswith("JUDGE: ") for c in calls)
        assert SECRET not in (run_dir / "judgements.jsonl").read_text(encoding="utf-8")

        # rescore and admission replay the stored judgements: not one request more.
        requests = srv.total_requests()
        before = {n: (run_dir / n).read_bytes() for n in ("task_scores.json", "summary.json")}
        rc, _, err = runner("rescore", str(run_dir), "--result")
        assert rc == 0, err
        for name, data in before.items():
            assert (run_dir / name).read_bytes() == data, name
        assert runner.result()["tasks"] == doc["tasks"]
        verdict = _admit(doc, tmp_path)
        assert verdict.status == "admitted", verdict.reasons
        assert verdict.judge == "hakim-1" and verdict.tasks["toplama_v1"].judge_scored
        assert any("judge-scored" in n for n in verdict.notes)
        assert srv.total_requests() == requests

        # A resumed, finished run asks nothing either.
        rc, _, err = runner("run", "--run-id", "judged", "--resume", *_judge_args(srv))
        assert rc == 0, err
        assert srv.total_requests() == requests


def test_a_forged_judgement_is_excluded(runner, judged, tmp_path) -> None:
    with FakeServer(responder=responder) as srv:
        assert runner.api(judged, srv.base_url, "forge", *_judge_args(srv))[0] == 0
    doc = runner.result()
    wrong = next(p for p in doc["tasks"]["toplama_v1"]["predictions"] if p["score"] == 0.0)
    wrong["judgements"][0]["response"]["output_text"] = "bəli"  # the judge said no
    verdict = _admit(finalize(doc), tmp_path)
    assert verdict.status == "excluded"
    assert "tasks.toplama_v1.score is stored as 50.0 but re-deriving it" in verdict.reasons[0]


def test_a_failed_judge_call_is_asked_again_when_the_run_resumes(runner, judged) -> None:
    judge_up = {"on": False}

    def flaky_judge(key: str, attempt: int, body: dict) -> Reply:
        if key.startswith("JUDGE: ") and not judge_up["on"]:
            return Reply(status=503)
        return responder(key, attempt, body)

    with FakeServer(responder=flaky_judge) as srv:
        rc, _, err = runner.api(judged, srv.base_url, "down", "--max-retries", "0", *_judge_args(srv))
        assert rc == 0, err
        assert "judge call(s) failed" in err
        doc = runner.result()
        assert doc["tasks"]["toplama_v1"]["metrics"]["grader_errors"] == len(ROWS)
        judge_up["on"] = True
        rc, _, err = runner("run", "--run-id", "down", "--resume", *_judge_args(srv))
        assert rc == 0, err
    doc = runner.result()
    assert doc["tasks"]["toplama_v1"]["metrics"]["grader_errors"] == 0 and doc["scores"]["suite"] == 50.0


def test_without_a_judge_model_a_judging_grader_fails_and_says_how_to_fix_it(runner, judged) -> None:
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(judged, srv.base_url, "nojudge")
        assert rc == 0, err
        assert _judge_requests(srv) == 0
    assert "--judge-provider P --judge-model M" in err
    task = runner.result()["tasks"]["toplama_v1"]
    assert task["metrics"]["grader_errors"] == len(ROWS) and task["judge_scored"] is False
