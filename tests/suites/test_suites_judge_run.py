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

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.record.signing import finalize
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
    return check_document(
        doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites"))
    )


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


def _partial_result(runner: SuiteRunner) -> dict:
    path = runner.results / "partial" / "suites" / "sinaq" / "vllm__fake--model-1.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_failed_judge_call_is_asked_again_when_the_run_resumes(runner, judged, tmp_path) -> None:
    judge_up = {"on": False}

    def flaky_judge(key: str, attempt: int, body: dict) -> Reply:
        if key.startswith("JUDGE: ") and not judge_up["on"]:
            return Reply(status=503)
        return responder(key, attempt, body)

    with FakeServer(responder=flaky_judge) as srv:
        rc, out, err = runner.api(judged, srv.base_url, "down", "--max-retries", "0", *_judge_args(srv))
        assert rc == 0, err
        assert "judge call(s) failed" in err
        # The task's judge calls failed: incomplete, written to the partial folder, never admitted.
        assert f"incomplete: toplama_v1: {len(ROWS)} grader call(s) lack a judge's answer" in out
        assert "[incomplete" in out and not (runner.results / "suites").exists()
        assert runner.json("down", "summary.json")["complete"] is False
        doc = _partial_result(runner)
        assert doc["tasks"]["toplama_v1"]["metrics"]["grader_errors"] == len(ROWS)
        assert doc["tasks"]["toplama_v1"]["score"] is None
        verdict = _admit(doc, tmp_path)
        assert verdict.status == "excluded"
        assert f"task toplama_v1: {len(ROWS)} grader call(s) lack a judge's answer" in verdict.reasons[0]
        judge_up["on"] = True
        rc, out, err = runner("run", "--run-id", "down", "--resume", *_judge_args(srv))
        assert rc == 0, err
        assert "[complete]" in out
    doc = runner.result()
    assert doc["tasks"]["toplama_v1"]["metrics"]["grader_errors"] == 0 and doc["scores"]["suite"] == 50.0
    assert _admit(doc, tmp_path).status == "admitted"


def test_without_a_judge_model_a_judging_grader_fails_and_says_how_to_fix_it(runner, judged) -> None:
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(judged, srv.base_url, "nojudge")
        assert rc == 0, err
        assert _judge_requests(srv) == 0
    assert "--judge-provider P --judge-model M" in err
    task = _partial_result(runner)["tasks"]["toplama_v1"]  # unanswered judge calls: incomplete
    assert task["metrics"]["grader_errors"] == len(ROWS) and task["judge_scored"] is False


def test_the_judge_defaults_to_the_runs_own_server(runner, judged) -> None:
    """No --judge-base-url and the judge on the run's provider: the judge asks the run's --base-url."""
    with FakeServer(responder=responder) as srv:
        base = srv.base_url
        rc, out, err = runner.api(judged, base, "own", "--judge-model", "hakim-1")
        assert rc == 0, err
        assert _judge_requests(srv) == len(ROWS)
    assert "[complete]" in out
    doc = runner.result()
    assert doc["run"]["judge"] == {"provider": "vllm", "model": "hakim-1", "base_url": base}
    assert runner.json("own", "run.json")["judge"]["base_url"] == base
    assert doc["tasks"]["toplama_v1"]["metrics"]["grader_errors"] == 0


def test_a_judge_on_another_provider_keeps_that_providers_url() -> None:
    from yoxla.providers.registry import get_spec
    from yoxla.run.judge import judge_facts
    from yoxla.run.settings import RunSettings

    s = RunSettings(provider="vllm", model="m", base_url="http://127.0.0.1:9/v1", judge_model="hakim")
    assert judge_facts(s) == {"provider": "vllm", "model": "hakim", "base_url": "http://127.0.0.1:9/v1"}
    s.judge_provider = "openai"
    assert judge_facts(s)["base_url"] == get_spec("openai").base_url
    s.judge_base_url = "http://127.0.0.1:7/v1"
    assert judge_facts(s)["base_url"] == "http://127.0.0.1:7/v1"
    s.judge_model = None
    assert judge_facts(s) is None


def test_a_resumed_run_records_the_judge_it_asked(runner, judged) -> None:
    """The judge moved: --resume --judge-base-url NEW asks NEW and records NEW."""

    def no_judge(key: str, attempt: int, body: dict) -> Reply:
        return Reply(status=503) if key.startswith("JUDGE: ") else responder(key, attempt, body)

    with FakeServer(responder=no_judge) as old, FakeServer(responder=responder) as new:
        old_url, new_url = old.base_url, new.base_url
        args = ("--judge-provider", "vllm", "--judge-model", "hakim-1", "--judge-base-url", old_url)
        rc, _, err = runner.api(judged, old_url, "moved", "--max-retries", "0", *args)
        assert rc == 0, err
        assert runner.json("moved", "run.json")["judge"]["base_url"] == old_url
        rc, out, err = runner("run", "--run-id", "moved", "--resume", "--judge-base-url", new_url)
        assert rc == 0, err
        assert _judge_requests(new) == len(ROWS)
    assert "[complete]" in out
    assert runner.json("moved", "run.json")["judge"]["base_url"] == new_url
    assert runner.result()["run"]["judge"]["base_url"] == new_url


def test_credentials_of_the_runs_url_stay_out_of_the_judge_record(runner, judged) -> None:
    password = "judge-pass-5ecret"
    with FakeServer(responder=responder) as srv:
        base = srv.base_url
        url = base.replace("http://", f"http://user:{password}@") + "?api_key=q-5ecret-key"
        rc, out, err = runner.api(judged, url, "creds", "--judge-model", "hakim-1")
        assert rc == 0, err
        assert _judge_requests(srv) == len(ROWS)  # the judge reached the run's own server
    doc = runner.result()
    assert doc["run"]["judge"]["base_url"] == base
    stored = runner.json("creds", "run.json")
    assert "***" in stored["settings"]["base_url"]
    for path in [*(runner.runs / "creds").iterdir(), *(runner.results / "suites" / "sinaq").iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert password not in text and "q-5ecret-key" not in text, path.name
    assert password not in out + err


def test_unanswered_judge_calls_are_counted_from_stored_errors_and_batch_problems() -> None:
    from yoxla.score.judge import JudgeSession, unanswered_calls

    with pytest.raises(RuntimeError) as caught:
        JudgeSession("s1", [], None).responses_create({"input": "JUDGE: 1 | 1"})
    replayed = f"RuntimeError: {caught.value}"  # how a sample's grader error reads after replay
    assert unanswered_calls([None, replayed, "ValueError: bad grader", replayed]) == 2
    assert unanswered_calls([None], [f"batch grader failed: {replayed}", "metric x was not produced"]) == 1
    assert unanswered_calls([None, "RuntimeError: the judge request failed: HTTP 503"]) == 0
