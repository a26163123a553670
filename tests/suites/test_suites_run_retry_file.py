"""``--retry-errors RESULT.json`` on a suite result file, end to end through the loopback server.

A suite run whose server failed some requests writes a result file with generation errors;
the retry from that file (its run folder here, or gone: rebuilt from the file's answers and
judge calls) asks only the failed items again, keeps every other answer as stored, and
writes a new result file that admission accepts. A file of a suite that is not committed, or
whose tasks changed since, is refused in one line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from suite_run_helpers import ROWS, SuiteRunner, judge_answer, make_suite, manifest, model_answer

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_file
from yoxla.contract.hashing import hash_file_path, write_hash_file
from yoxla.contract.loader import load_manifest
from yoxla.prompt.prepare import current_hashes
from yoxla.testing.fakeserver import FakeServer, Reply

SECRET = "sk-suite-retry-5ecret-0123456789"
FAILING = {a for a in range(1, len(ROWS) + 1) if a % 6 == 0}  # 4 of the 24 items


@pytest.fixture
def runner(tmp_path: Path, capsys, monkeypatch) -> SuiteRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLLM_API_KEY", SECRET)
    monkeypatch.delenv("YOXLA_SIGN_KEY", raising=False)
    monkeypatch.setenv("YOXLA_SUITES_DIR", str(tmp_path / "suites"))  # the suites committed "here"
    return SuiteRunner(tmp_path, capsys, monkeypatch)


class Flaky:
    """The scripted model and judge; while ``down``, the model fails the items in FAILING."""

    def __init__(self) -> None:
        self.down = True
        self.model_requests = 0
        self.judge_requests = 0

    def __call__(self, key: str, attempt: int, body: dict[str, Any]) -> Reply:
        if key.startswith("JUDGE: "):
            self.judge_requests += 1
            return Reply(content=judge_answer(key))
        self.model_requests += 1
        a = int(key.rsplit("Sual: ", 1)[-1].split(" ")[0])
        if self.down and a in FAILING:
            return Reply(status=503, message="upstream down")
        return Reply(content=model_answer(key))


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _failed_run(runner: SuiteRunner, srv: FakeServer, judged: bool) -> Path:
    judge = ("--judge-provider", "vllm", "--judge-model", "hakim-1", "--judge-base-url", srv.base_url)
    rc, out, err = runner.api(runner.tmp / "suites/sinaq/sinaq.yaml", srv.base_url, "r1", "--max-retries", "0",
                              *(judge if judged else ()))  # fmt: skip
    assert rc == 0, err
    assert f"generation errors: {len(FAILING)}" in out
    path = runner.results / "suites" / "sinaq" / "vllm__fake--model-1.json"
    assert _doc(path)["generation_errors"] == len(FAILING)
    return path


def _retry(runner: SuiteRunner, target: Path, srv: FakeServer) -> tuple[int, str, str]:
    return runner("run", "--retry-errors", str(target), "--base-url", srv.base_url, "--backoff-base", "0.01")


def _admitted(path: Path, root: Path) -> bool:
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites"))
    verdict = check_file(path, data=data, use_cache=False)
    assert verdict.shown, verdict.reasons
    return verdict.shown


def _changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Ids of the predictions that differ; every other one must be byte-identical when dumped."""
    changed = []
    for tid, task in old["tasks"].items():
        for a, b in zip(task["predictions"], new["tasks"][tid]["predictions"], strict=True):
            assert a["id"] == b["id"]
            if json.dumps(a, ensure_ascii=False) != json.dumps(b, ensure_ascii=False):
                changed.append(a["id"])
            else:
                assert a["outcome"] != "generation_error"
    return changed


@pytest.mark.parametrize("judged", [False, True], ids=["grader", "judge"])
def test_retry_from_a_suite_result_file_without_its_run_folder(runner, judged) -> None:
    make_suite(runner.tmp, manifest(judge=judged))
    flaky = Flaky()
    with FakeServer(responder=flaky) as srv:
        path = _failed_run(runner, srv, judged)
        received = runner.tmp / "received.json"  # a file that came from elsewhere
        shutil.copy(path, received)
        shutil.rmtree(runner.runs / "r1")
        old = _doc(received)
        failed_ids = {
            p["id"]
            for t in old["tasks"].values()
            for p in t["predictions"]
            if p["outcome"] == "generation_error"
        }
        assert len(failed_ids) == len(FAILING)
        flaky.down = False
        asked, judged_before = flaky.model_requests, flaky.judge_requests
        rc, _, err = _retry(runner, received, srv)
        assert rc == 0, err
        assert "made the run folder" in err
        assert flaky.model_requests - asked == len(FAILING)  # only the failed items were asked again
        # The stored judge calls are replayed; only the new answers are judged.
        assert flaky.judge_requests - judged_before == (len(FAILING) if judged else 0)
    info = runner.json("r1", "run.json")
    assert info["kind"] == "suite" and info["status"] == "complete"
    assert info["seeded_from"] == {"result_file": "received.json", "content_sha256": old["content_sha256"]}
    assert _doc(received) == old  # the received file is left as it was
    new = _doc(path)
    assert new["generation_errors"] == 0 and new["content_sha256"] != old["content_sha256"]
    assert set(_changed(old, new)) == failed_ids
    assert new["scores"]["suite"] == 50.0  # the scripted model is right on the even items
    assert new["run"]["run_id"] == "r1" and new["model"]["display_name"] == old["model"]["display_name"]
    assert new["run"].get("judge") == old["run"].get("judge")
    assert ("judge" in new["run"]) == judged
    assert _admitted(path, runner.tmp)


def test_retry_from_a_suite_result_file_whose_run_folder_is_here(runner) -> None:
    make_suite(runner.tmp)
    flaky = Flaky()
    with FakeServer(responder=flaky) as srv:
        path = _failed_run(runner, srv, False)
        old = _doc(path)
        flaky.down = False
        asked = flaky.model_requests
        rc, _, err = _retry(runner, path, srv)
        assert rc == 0, err
        assert "retrying in its run folder" in err
        assert flaky.model_requests - asked == len(FAILING)
    new = _doc(path)  # the same path: the old file is replaced
    assert new["generation_errors"] == 0
    assert len(_changed(old, new)) == len(FAILING)
    assert _admitted(path, runner.tmp)


def _failed_file(runner: SuiteRunner) -> Path:
    flaky = Flaky()
    with FakeServer(responder=flaky) as srv:
        path = _failed_run(runner, srv, False)
    shutil.rmtree(runner.runs / "r1")
    return path


def _refused(runner: SuiteRunner, path: Path, *needles: str) -> None:
    before = path.read_bytes()
    with FakeServer(responder=Flaky()) as srv:
        rc, _, err = _retry(runner, path, srv)
        assert srv.total_requests() == 0  # nothing was asked
    assert rc != 0 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("yoxla: ") and all(n in last for n in needles), err
    assert path.read_bytes() == before
    assert not (runner.runs / "r1" / "run.json").exists()


def test_retry_refuses_a_suite_file_of_a_suite_not_committed(runner) -> None:
    suite = make_suite(runner.tmp)
    path = _failed_file(runner)
    hash_file_path(suite).unlink()  # the manifest without its frozen hashes is not committed
    _refused(runner, path, "suite 'sinaq' is not committed")


def test_retry_refuses_a_suite_file_whose_task_hash_changed(runner) -> None:
    suite = make_suite(runner.tmp)
    path = _failed_file(runner)
    doc = manifest(prompt_template="Sual: {{a}} + {{b}} neçədir? Düşün.")
    suite.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    loaded = load_manifest(suite)
    write_hash_file(hash_file_path(suite), loaded.name, current_hashes(loaded))  # committed again, changed
    _refused(runner, path, "task toplama_v1", "task hash differs")


def test_retry_from_a_suite_result_file_without_errors_writes_nothing(runner) -> None:
    make_suite(runner.tmp)
    flaky = Flaky()
    flaky.down = False
    with FakeServer(responder=flaky) as srv:
        rc, _, err = runner.api(runner.tmp / "suites/sinaq/sinaq.yaml", srv.base_url, "ok")
        assert rc == 0, err
        path = runner.results / "suites" / "sinaq" / "vllm__fake--model-1.json"
        before, asked = path.read_bytes(), srv.total_requests()
        rc, _, err = _retry(runner, path, srv)
        assert srv.total_requests() == asked
    assert rc == 0 and "no generation errors to retry" in err
    assert path.read_bytes() == before
