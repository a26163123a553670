"""A suite run end to end: ``python runner.py --suite FILE`` through the loopback server.

The real openai client talks to :mod:`yoxla.testing.fakeserver` over HTTP. Covered: what a
request carries (the rendered messages, sampling, stop, passthrough), ordering at several
workers, resume after a kill equals an uninterrupted run, ``--retry-errors``, ``rescore``
reproducing the run folder's files byte for byte, the result file read by the record and
admitted, and a failing preprocessor that stops the run before any model call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
import yaml
from suite_run_helpers import (
    GENERATION,
    ROWS,
    SuiteRunner,
    answer_fields,
    make_suite,
    manifest,
    model_answer,
    responder,
)

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.contract.loader import load_manifest
from yoxla.prompt.prepare import prepare_task
from yoxla.record.result import ResultFile, parse_record
from yoxla.testing.fakeserver import FakeServer, Reply, prompt_key

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "yoxla" / "schema" / "result.schema.json").read_text(encoding="utf-8"))
SECRET = "sk-suite-5ecret-DO-NOT-LEAK-0123456789"


@pytest.fixture
def runner(tmp_path: Path, capsys, monkeypatch) -> SuiteRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLLM_API_KEY", SECRET)
    monkeypatch.delenv("YOXLA_SIGN_KEY", raising=False)
    return SuiteRunner(tmp_path, capsys, monkeypatch)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return make_suite(tmp_path)


def admit(doc: dict, root: Path):
    return check_document(doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites")))


def test_requests_carry_the_rendered_messages_and_the_generation_settings(runner, suite) -> None:
    with FakeServer(responder=responder) as srv:
        rc, out, err = runner.api(suite, srv.base_url, "req", "--workers", "4")
    assert rc == 0, err
    prepared = prepare_task(load_manifest(suite).task("toplama_v1"))
    sent = {prompt_key(b): b for b in srv.bodies}
    assert len(sent) == len(ROWS)
    for item in prepared.items:
        body = sent[item.messages[-1]["content"]]
        assert body["messages"] == list(item.messages)  # system instructions, few-shot example first
        assert body["messages"][0] == {"role": "system", "content": GENERATION["instructions"]}
        assert body["messages"][1]["content"].count("neçədir?") == 2  # one few-shot example
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.9, 32)
        assert body["stop"] == ["\n\n"]
        # Passthrough to an OpenAI-compatible upstream that is not OpenAI; unsafe keys removed.
        assert body["top_k"] == 5 and body["min_tokens"] == 1 and body["model"] == "fake/model-1"
    assert "suite sinaq: 50.00" in out
    assert SECRET not in (runner.runs / "req" / "run.json").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("base_url", "passthrough"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("https://openrouter.ai/api/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://x.openai.azure.com/openai", False),
    ],
)
def test_passthrough_goes_only_to_upstreams_that_are_not_openai(
    suite, base_url, passthrough, monkeypatch
) -> None:
    from yoxla.providers.base import ProviderOptions
    from yoxla.providers.openai_compat import OpenAICompatProvider
    from yoxla.providers.registry import get_spec, with_overrides
    from yoxla.run.plan import make_plan, request_for
    from yoxla.run.settings import RunSettings

    monkeypatch.setenv("VLLM_API_KEY", SECRET)
    s = RunSettings(provider="vllm", model="m", suite=str(suite))
    plan = make_plan(s)
    task = plan.tasks["toplama_v1"]
    spec = with_overrides(get_spec("vllm"), base_url)
    body = OpenAICompatProvider(spec, "m", ProviderOptions()).request_body(
        request_for(task, task.prepared.items[0], s, spec.backend, spec.base_url)
    )
    assert ("extra_body" in body) is passthrough
    if passthrough:
        assert body["extra_body"] == {"min_tokens": 1, "top_k": 5}
    assert body["stop"] == ["\n\n"] and body["timeout"] == 5.0


def test_ordered_at_several_workers_and_admitted(runner, suite, tmp_path) -> None:
    with FakeServer(responder=responder, latency=0.005) as srv:
        assert runner.api(suite, srv.base_url, "w1", "--workers", "1")[0] == 0
        rc, _, err = runner.api(suite, srv.base_url, "w8", "--workers", "8")
        assert rc == 0, err
    one, eight = runner.predictions("w1"), runner.predictions("w8")
    assert [r["id"] for r in eight] == [r["id"] for r in ROWS]  # item order, whatever the schedule
    assert answer_fields(one) == answer_fields(eight)
    assert runner.json("w1", "task_scores.json") == runner.json("w8", "task_scores.json")

    doc = runner.result()
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    record, problems = parse_record(doc)
    assert isinstance(record, ResultFile), problems
    task = record.tasks["toplama_v1"]
    assert (task.rows, task.items, task.primary, task.score) == (24, 24, "accuracy", 50.0)
    assert set(task.breakdowns["per_movzu_accuracy"]) == {"cüt", "tək"}
    assert record.suite.path == "sinaq.yaml" or record.suite.path.endswith("suites/sinaq/sinaq.yaml")
    assert record.run.conditions.generation["toplama_v1"].top_k == 5
    verdict = admit(doc, tmp_path)
    assert verdict.status == "admitted" and verdict.rechecked, verdict.reasons
    assert verdict.suite == "sinaq" and verdict.scores["suite"] == 50.0 and verdict.edition is None


def test_resume_after_kill_equals_uninterrupted(runner, suite, tmp_path) -> None:
    with FakeServer(responder=responder, latency=0.05) as srv:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "VLLM_API_KEY": SECRET}
        cmd = [
            sys.executable,
            str(ROOT / "runner.py"),
            "--suite",
            str(suite),
            "--provider",
            "vllm",
            "--model",
            "fake/model-1",
            "--base-url",
            srv.base_url,
            "--run-id",
            "killed",
            "--workers",
            "2",
            "--no-progress",
        ]
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        pred = tmp_path / "runs" / "killed" / "predictions.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not pred.exists() or pred.read_bytes().count(b"\n") < 5):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        on_disk = pred.read_bytes().count(b"\n")
        assert 5 <= on_disk < len(ROWS)
        rc, _, err = runner("run", "--run-id", "killed", "--resume")
        assert rc == 0, err
        assert f"{on_disk} of {len(ROWS)} examples already on disk" in err
        assert runner.api(suite, srv.base_url, "whole")[0] == 0
    assert answer_fields(runner.predictions("killed")) == answer_fields(runner.predictions("whole"))
    for name in ("task_scores.json",):
        assert runner.json("killed", name) == runner.json("whole", name)
    assert runner.json("killed", "run.json")["status"] == "complete"


def test_retry_errors_reasks_only_the_failures(runner, suite) -> None:
    down = {"on": True}
    failing = {m for m in range(1, 25) if m % 5 == 0}

    def flaky(key: str, attempt: int, body: dict) -> Reply:
        question = key.rsplit("Sual: ", 1)[-1]
        if down["on"] and int(question.split(" ")[0]) in failing:
            return Reply(status=503)
        return Reply(content=model_answer(key))

    with FakeServer(responder=flaky) as srv:
        rc, out, _ = runner.api(suite, srv.base_url, "flaky", "--max-retries", "0")
        assert rc == 0
        assert "generation errors: 4" in out
        first = runner.predictions("flaky")
        assert sum(r["outcome"] == "generation_error" for r in first) == 4
        assert runner.result()["generation_errors"] == 4
        down["on"] = False
        before = srv.total_requests()
        rc, out, err = runner("run", "--retry-errors", "flaky")
        assert rc == 0, err
        assert srv.total_requests() - before == 4  # only the failures were asked again
    again = runner.predictions("flaky")
    assert [r["id"] for r in again] == [r["id"] for r in first]
    assert not [r for r in again if r["outcome"] == "generation_error"]
    assert runner.result()["generation_errors"] == 0 and runner.result()["scores"]["suite"] == 50.0


def test_rescore_reproduces_the_run_folder_byte_for_byte(runner, suite) -> None:
    with FakeServer(responder=responder) as srv:
        assert runner.api(suite, srv.base_url, "rs", "--workers", "3")[0] == 0
    run_dir = runner.runs / "rs"
    names = ("task_scores.json", "summary.json", "predictions.jsonl", "run.json")
    before = {n: (run_dir / n).read_bytes() for n in names}
    old = runner.result()
    rc, out, err = runner("rescore", str(run_dir))
    assert rc == 0, err
    assert "suite sinaq: 50.00" in out
    for name, data in before.items():
        assert (run_dir / name).read_bytes() == data, name
    rc, _, err = runner("rescore", str(run_dir), "--result")
    assert rc == 0, err
    new = runner.result()
    assert new["tasks"] == old["tasks"] and new["scores"] == old["scores"] and new["suite"] == old["suite"]


def test_a_failing_preprocessor_stops_the_run_before_any_model_call(runner, tmp_path) -> None:
    source = "def transform_row(row):\n    if row['id'] == 'm03':\n        raise ValueError('pis sətir')\n    return row\n"
    doc = manifest(preprocess={"type": "python", "contract": "row", "source": source})
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "data.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8"
    )
    (folder / "grader.py").write_text("def grade(sample, item):\n    return 0.0\n", encoding="utf-8")
    path = folder / "bad.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with FakeServer(responder=responder) as srv:
        rc, _, err = runner.api(path, srv.base_url, "pre")
        assert srv.total_requests() == 0
    assert rc == 1
    line = err.strip().splitlines()[-1]
    assert "row 3 (id 'm03')" in line and "pis sətir" in line and "no model was asked" in line
    assert not (runner.runs / "pre").exists()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--block", "rag"), "declares no groups"),
        (("--edition", "sample"), "--edition is for the benchmark"),
        (("--task", "yoxdur_v1"), "--task yoxdur_v1: not a task of"),
        (("--judge-provider", "vllm"), "--judge-provider needs --judge-model"),
    ],
)
def test_suite_options_are_checked(runner, suite, argv, needle) -> None:
    rc, _, err = runner("run", "--suite", str(suite), "--provider", "vllm", "--model", "m", *argv)
    assert rc != 0 and needle in err.strip().splitlines()[-1], err


@pytest.mark.parametrize("cwd", ["above", "elsewhere"])
def test_an_unknown_task_quotes_the_manifest_without_the_users_folders(
    runner, suite, tmp_path, tmp_path_factory, monkeypatch, cwd
) -> None:
    if cwd == "elsewhere":
        monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # a folder beside it
    argv = ("--suite", str(suite.resolve()), "--provider", "vllm", "--model", "m", "--task", "yox_v1")
    rc, _, err = runner("run", *argv)
    shown = "suites/sinaq/sinaq.yaml" if cwd == "above" else "sinaq.yaml"
    assert rc == 2 and err.strip().splitlines() == [
        f"yoxla: error: --task yox_v1: not a task of {shown} (tasks: toplama_v1)"
    ], err


@pytest.mark.parametrize("cwd", ["above", "elsewhere"])
def test_suite_render_by_id_quotes_the_manifest_without_the_users_folders(
    runner, suite, tmp_path, tmp_path_factory, monkeypatch, cwd
) -> None:
    """A committed suite named by its id is loaded from an absolute path; ``yoxla suite`` quotes
    it as it quotes a manifest given by a relative path."""
    monkeypatch.setenv("YOXLA_SUITES_DIR", str(tmp_path / "suites"))
    if cwd == "elsewhere":
        monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # a folder beside it
    rc, _, err = runner("suite", "render", "sinaq", "--task", "yox_v1")
    shown = "suites/sinaq/sinaq.yaml" if cwd == "above" else "sinaq.yaml"
    assert rc == 2 and err.strip().splitlines() == [
        f"yoxla: error: {shown}: no task 'yox_v1' (tasks: toplama_v1)"
    ], err


def test_the_baseline_provider_answers_a_suite_as_suite_baseline_does(runner, suite) -> None:
    """One offline baseline provider: ``baseline`` serves suite items; ``suite-baseline`` is its alias."""
    for provider in ("baseline", "suite-baseline"):
        rc, _, err = runner("run", "--suite", str(suite), "--provider", provider, "--model", "first")
        assert rc == 0, err
    mine, alias = runner.result("baseline__first.json"), runner.result("suite-baseline__first.json")
    assert alias["model"]["provider"] == "suite-baseline" and mine["model"]["provider"] == "baseline"
    assert mine["scores"] == alias["scores"]
    for tid, t in mine["tasks"].items():
        assert [p["raw"] for p in t["predictions"]] == [p["raw"] for p in alias["tasks"][tid]["predictions"]]


def test_suite_baseline_runs_offline_and_is_admitted(runner, suite, tmp_path) -> None:
    rc, _, err = runner("run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "echo")
    assert rc == 0, err
    doc = runner.result("suite-baseline__echo.json")
    verdict = admit(doc, tmp_path)
    assert verdict.status == "admitted", verdict.reasons


def test_a_hugging_face_dataset_s_commit_is_stored_with_its_fingerprint(
    runner, tmp_path, monkeypatch
) -> None:
    """A task that reads a Hub dataset: run.json and the result file name the commit it was read at."""
    from yoxla.testing.fakehub import COMMIT, FakeHub

    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "test.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8"
    )
    fake = FakeHub(remote, tmp_path / "hf-cache").install(monkeypatch)
    spec = {"source": "huggingface", "path": "acme/toplama", "revision": "v1.0"}
    suite = make_suite(tmp_path, manifest(dataset=spec))
    rc, _, err = runner("run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "echo")
    assert rc == 0, err
    assert fake.calls and {c["revision"] for c in fake.calls} == {COMMIT}
    doc = runner.result("suite-baseline__echo.json")
    stored = doc["suite"]["tasks"]["toplama_v1"]
    assert stored["commits"] == {"dataset": {"acme/toplama": COMMIT}}
    assert (
        stored["data"]["dataset"]
        == prepare_task(load_manifest(suite).tasks["toplama_v1"]).fingerprints["dataset"]
    )
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    record, problems = parse_record(doc)
    assert isinstance(record, ResultFile), problems
    assert record.suite.tasks["toplama_v1"].commits == {"dataset": {"acme/toplama": COMMIT}}
    run_dir = next(runner.runs.iterdir())
    facts = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["tasks"]["toplama_v1"]
    assert facts["commits"] == {"dataset": {"acme/toplama": COMMIT}}
    assert admit(doc, tmp_path).status == "admitted"


def test_a_suite_of_local_files_stores_no_commits(runner, suite) -> None:
    rc, _, err = runner("run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "echo")
    assert rc == 0, err
    assert "commits" not in runner.result("suite-baseline__echo.json")["suite"]["tasks"]["toplama_v1"]
