"""run.json records the conditions that decide comparability (thinking, budget, temperature, filters), in one block."""

from __future__ import annotations

import json

from yoxla.contract.benchmark import benchmark_task
from yoxla.testing.fakeserver import FakeServer


def test_thinking_run_records_flag_budget_and_effective_generation(runner, env_key, answers) -> None:
    with FakeServer(answers=dict(answers)) as srv:
        rc, _, err = runner.api(
            srv, "think", "--task", "sentiment_v1", "--limit", "2", "--thinking", "--thinking-budget", "512",
            provider="openrouter",
        )  # fmt: skip
        assert rc == 0, err
        assert {b["max_tokens"] for b in srv.bodies} == {16 + 512}
    info = runner.json("think", "run.json")
    assert info["settings"]["thinking"] is True and info["settings"]["thinking_budget"] == 512
    settings = benchmark_task("sentiment_v1").spec.generation
    assert settings is not None
    # The suite's generation settings as run; the thinking budget is added to each request (above).
    generation = {
        "sentiment_v1": {
            "temperature": float(settings.temperature),
            "top_p": float(settings.top_p),
            "max_output_tokens": settings.max_output_tokens,
        }
    }
    assert info["conditions"] == {
        "thinking": True,
        "thinking_budget": 512,
        "limit": 2,
        "tasks": ["sentiment_v1"],
        "generation": generation,
    }
    assert info["tasks"]["sentiment_v1"]["selected"] == 2
    assert info["tasks"]["sentiment_v1"]["max_tokens"] == 16 + 512  # what each request was sent with
    doc = json.loads((runner.results / "partial" / "sample" / "openrouter__fake--model-1.json").read_text())
    assert doc["run"]["conditions"] == info["conditions"]


def test_run_without_thinking_records_no_budget_and_no_filter(runner) -> None:
    rc, _, err = runner(
        "run", "--edition", "sample", "--provider", "baseline", "--model", "first", "--run-id", "b"
    )
    assert rc == 0, err
    c = runner.json("b", "run.json")["conditions"]
    assert (c["thinking"], c["thinking_budget"], c["tasks"], c["limit"]) == (False, None, None, None)
    assert "filters" not in c
    assert len(c["generation"]) == 11 and all(t["temperature"] == 0.0 for t in c["generation"].values())


def test_run_folder_of_an_older_runner_resumes(runner) -> None:
    """Older run.json files list the transport settings flat; they still resume."""
    args = ("run", "--edition", "sample", "--provider", "baseline", "--model", "first", "--task", "nli_v1")
    rc, _, err = runner(*args, "--run-id", "old", "--workers", "3")
    assert rc == 0, err
    path = runner.runs / "old" / "run.json"
    info = json.loads(path.read_text(encoding="utf-8"))
    info["settings"].update(info["settings"].pop("transport"))
    info["status"] = "interrupted"
    path.write_text(json.dumps(info), encoding="utf-8")
    pred = runner.runs / "old" / "predictions.jsonl"
    pred.write_bytes(b"".join(pred.read_bytes().splitlines(keepends=True)[:5]))
    rc, _, err = runner("run", "--run-id", "old", "--resume")
    assert rc == 0, err
    settings = runner.json("old", "run.json")["settings"]
    assert settings["transport"]["workers"] == 3 and "workers" not in settings
    assert len(runner.predictions("old")) == 12


def test_the_stored_command_names_local_paths_without_the_users_folders(tmp_path, monkeypatch) -> None:
    """Every absolute form of the run's paths: relative under the working directory, else
    ``<local>/<name>``; a folder inside another is replaced as itself, once; a relative path stays."""
    from yoxla.run.settings import RunSettings, stored_path, without_local_paths

    work, home = tmp_path / "work", tmp_path / "home"
    (work / "results").mkdir(parents=True)
    (home / "kopiya").mkdir(parents=True)
    monkeypatch.chdir(work)
    suite = home / "kopiya" / "x.yaml"
    s = RunSettings(
        provider="baseline", model="first", suite=str(suite), data_dir=str(home / "kopiya"),
        results_dir=str(work / "results"), runs_dir="runs",
    )  # fmt: skip
    command = (
        f"runner.py --suite {suite} --data-dir {home}/kopiya/ --results-dir {work / 'results'} "
        "--runs-dir runs --filter movzu=tarix"
    )
    assert without_local_paths(command, s) == (
        "runner.py --suite <local>/x.yaml --data-dir <local>/kopiya/ --results-dir results "
        "--runs-dir runs --filter movzu=tarix"
    )
    assert stored_path(work) == "." and stored_path(work / "results") == "results"
    assert stored_path(home / "kopiya") == "<local>/kopiya"
