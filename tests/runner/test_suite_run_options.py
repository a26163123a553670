"""The options of an ``--edition`` run on ``--suite yoxla-sample`` / ``yoxla-v1``: each does on
the suite engine what it does on the built-in one.

``--block G`` runs the suite's group G (the benchmark's blocks are the package suites'
groups); the model facts and the signature reach the suite result file as the benchmark's;
``--filter``/``--difficulty`` pick the same rows; ``--retry-errors`` re-asks the failed items
of a package-suite run from its run folder or from its result file; and rows read with
``--data-dir`` that are not the frozen ones are warned of before any model is asked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from parity_helpers import (
    EDITION_RESULT,
    SUITE_RESULT,
    assert_same_runs,
    result_file,
    same,
    score_lines,
)
from runner_helpers import one_error_line

from yoxla.leaderboard.admission import check_file
from yoxla.results import content_digest, verify_signature
from yoxla.suite import load_suite
from yoxla.testing.fakeserver import FakeServer, Reply

REPO = Path(__file__).resolve().parents[2]
SAMPLE_ROWS = REPO / "yoxla" / "editions" / "sample"  # the sample edition, in the Hub layout
NO_GROUPS = REPO / "suites" / "examples" / "oxu" / "oxu.yaml"
SUITE = load_suite()
BASELINE = ("--provider", "baseline", "--model", "overlap")
SUITE_BASELINE = ("--provider", "suite-baseline", "--model", "overlap")


def _edition(runner, *extra: str, run_id: str = "e") -> dict[str, Any]:
    rc, _, err = runner.builtin("run", *BASELINE, "--edition", "sample", "--run-id", run_id, *extra)
    assert rc == 0, err
    return runner.json(run_id, "summary.json")


def _suite(runner, *extra: str, run_id: str = "s") -> tuple[dict[str, Any], str, str]:
    rc, out, err = runner("run", *SUITE_BASELINE, "--suite", "yoxla-sample", "--run-id", run_id, *extra)
    assert rc == 0, err
    return runner.json(run_id, "summary.json"), out, err


def _partial(results: Path, where: Path) -> dict[str, Any]:
    return result_file(results / "partial", where)


# --block: a group of the suite ------------------------------------------------------------


@pytest.mark.parametrize("block", ["rag", "understanding"])
def test_block_runs_the_suites_group_as_the_edition_runs_the_block(runner, block) -> None:
    want = _edition(runner, "--block", block)
    got, out, _ = _suite(runner, "--block", block)
    tasks = [t.id for t in SUITE.block_tasks(block)]
    assert sorted(got["tasks"]) == sorted(want["tasks"]) == sorted(tasks)
    assert got["complete"] is want["complete"] is False  # one block: a partial run
    assert same(got["groups"], want["blocks"]) and list(got["groups"]) == [block]
    assert same(got["suite_score"], want["yoxla"])
    for tid in tasks:
        assert same(got["tasks"][tid]["score"], want["tasks"][tid]["score"]), tid
    assert list(score_lines(out)) == [block, "YOXLA"]
    assert_same_runs(
        _partial(runner.builtin_results, EDITION_RESULT),
        _partial(runner.results, SUITE_RESULT),
        blocks=[block],
    )
    info = runner.json("s", "run.json")
    assert info["conditions"]["tasks"] == info["task_ids"] and sorted(info["task_ids"]) == sorted(tasks)


def test_block_all_is_the_whole_suite(runner) -> None:
    got, _, _ = _suite(runner, "--block", "all")
    assert got["complete"] is True and len(got["tasks"]) == len(SUITE.tasks)
    assert sorted(got["groups"]) == sorted(SUITE.blocks)
    assert result_file(runner.results, SUITE_RESULT)["run"]["conditions"]["tasks"] is None


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (
            ("--suite", "yoxla-sample", "--block", "grammar"),
            (
                "--block grammar: not a group of suite yoxla-sample",
                "understanding, language, knowledge, rag, all",
            ),
        ),
        (("--suite", "yoxla-sample", "--block", "rag", "--task", "nli_v1"), ("--block or --task, not both",)),
        (("--suite", str(NO_GROUPS), "--block", "rag"), ("declares no groups", "--task")),
    ],
)
def test_a_block_that_cannot_be_run_is_one_line(runner, argv, needles) -> None:
    rc, _, err = runner("run", *SUITE_BASELINE, *argv)
    assert rc == 2
    one_error_line(rc, err, *needles)
    assert not runner.runs.exists()


# The model facts and the signature ----------------------------------------------------------

FACTS = ("--display-name", "Örtüşmə Səkkiz", "--license", "apache-2.0", "--weights", "open")


def test_model_facts_reach_the_suite_result_file_as_the_benchmarks(runner, tmp_path) -> None:
    info = tmp_path / "model.yaml"
    info.write_text("model_card: https://huggingface.co/org/overlap-8b\nparams: 8B\n", encoding="utf-8")
    _edition(runner, *FACTS, "--model-info", str(info))
    _suite(runner, *FACTS, "--model-info", str(info))
    want = result_file(runner.builtin_results, EDITION_RESULT)["model"]
    got = result_file(runner.results, SUITE_RESULT)["model"]
    assert got == {**want, "reported_model": "suite-baseline/overlap", "provider": "suite-baseline"}
    assert got["display_name"] == "Örtüşmə Səkkiz"  # never folded to ASCII
    assert got["metadata"] == {
        "parameters": 8_000_000_000,
        "open_weights": True,
        "licence": "apache-2.0",
        "card_url": "https://huggingface.co/org/overlap-8b",
    }


def test_the_sign_key_signs_the_suite_result_file(runner, tmp_path) -> None:
    key = tmp_path / "key.pem"
    rc, _, err = runner("keygen", "--out", str(key))
    assert rc == 0, err
    _edition(runner, "--sign-key", str(key))
    _suite(runner, "--sign-key", str(key))
    signed = [result_file(runner.results, where) for where in (EDITION_RESULT, SUITE_RESULT)]
    checks = [verify_signature(doc) for doc in signed]
    assert checks[0] == checks[1] and checks[1][0] is True
    assert signed[1]["signature"]["key_id"] == signed[0]["signature"]["key_id"]
    assert signed[1]["content_sha256"] == content_digest(signed[1])
    forged = json.loads(json.dumps(signed[1]))  # a changed score under a re-computed digest
    forged["tasks"]["nli_v1"]["score"] = 99.0
    forged["content_sha256"] = content_digest(forged)
    assert verify_signature(forged)[0] is False


# Row filters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        ("--difficulty", "hard"),
        ("--filter", "domain=daily_life"),
        ("--filter", "length_bucket=short"),
        ("--limit", "3"),
        ("--scored-only",),
    ],
)
def test_row_selections_pick_the_same_rows_on_both_engines(runner, flags) -> None:
    want = _edition(runner, *flags)
    got, _, _ = _suite(runner, *flags)
    assert got["complete"] is want["complete"] is False
    assert sorted(got["tasks"]) == sorted(want["tasks"]) and want["tasks"]
    edition, suite = _partial(runner.builtin_results, EDITION_RESULT), _partial(runner.results, SUITE_RESULT)
    for tid, task in edition["tasks"].items():
        ids = [p["id"] for p in task["predictions"]]
        assert [p["id"] for p in suite["tasks"][tid]["predictions"]] == ids, tid
        assert same(task["score"], suite["tasks"][tid]["score"]), tid


def test_the_seed_draws_the_same_random_answers_on_both_engines(runner) -> None:
    runs = {}
    for seed in ("7", "8"):
        rc, _, err = runner.builtin("run", "--provider", "baseline", "--model", "random", "--edition", "sample",
                            "--seed", seed, "--run-id", f"e{seed}")  # fmt: skip
        assert rc == 0, err
        edition = result_file(runner.builtin_results, EDITION_RESULT)
        rc, _, err = runner("run", "--provider", "suite-baseline", "--model", "random", "--suite", "yoxla-sample",
                            "--seed", seed, "--run-id", f"s{seed}")  # fmt: skip
        assert rc == 0, err
        suite = result_file(runner.results, SUITE_RESULT)
        assert_same_runs(edition, suite)
        runs[seed] = [p["raw"] for t in suite["tasks"].values() for p in t["predictions"]]
    assert runs["7"] != runs["8"]  # the seed is what changed the answers


# --retry-errors on a package-suite run ------------------------------------------------------


@pytest.fixture
def failing(runner, env_key, answers, examples):
    """A server that fails two NLI and one knowledge_choice request until it is made alive."""
    dead = [k for t, _, k in examples if t.id == "nli_v1"][:2]
    dead += [k for t, _, k in examples if t.id == "knowledge_choice_v1"][:1]
    state = {"alive": False}

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key in dead and not state["alive"]:
            return Reply(status=503, message="upstream down")
        return Reply(content=answers.get(key, "?"))

    with FakeServer(responder=responder) as srv:
        yield srv, state


def _api(runner, srv: FakeServer, *extra: str, builtin: bool = False) -> tuple[int, str, str]:
    return (runner.builtin if builtin else runner)(
        "run", "--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url,
        "--backoff-base", "0.01", "--timeout", "5", "--max-retries", "0", *extra,
    )  # fmt: skip


def _retry(runner, target: str, srv: FakeServer) -> tuple[int, str, str]:
    return runner(
        "run", "--retry-errors", target, "--base-url", srv.base_url, "--backoff-base", "0.01", "--no-progress",
        "--runs-dir", str(runner.runs), base=False,
    )  # fmt: skip


@pytest.mark.parametrize("source", ["run folder", "result file", "result file, run folder gone"])
def test_retry_errors_on_a_package_suite_run_gives_the_edition_runs_scores(runner, failing, source) -> None:
    srv, state = failing
    rc, _, err = _api(runner, srv, "--suite", "yoxla-sample", "--run-id", "s")
    assert rc == 0, err
    path = runner.results / SUITE_RESULT / "vllm__fake--model-1.json"
    before = json.loads(path.read_text(encoding="utf-8"))
    assert before["generation_errors"] == 3
    state["alive"] = True
    asked = srv.total_requests()
    if source == "run folder":
        target = str(runner.runs / "s")
    else:
        target = str(runner.tmp / "received.json")
        shutil.copy(path, target)
        if source.endswith("gone"):
            shutil.rmtree(runner.runs / "s")
    rc, _, err = _retry(runner, target, srv)
    assert rc == 0, err
    assert srv.total_requests() == asked + 3  # only the failed items were asked again
    after = json.loads(path.read_text(encoding="utf-8"))
    assert after["generation_errors"] == 0 and after["run"]["run_id"] == "s"
    assert check_file(path, use_cache=False).shown
    # The same scores as a run that never failed, on the built-in engine.
    rc, _, err = _api(runner, srv, "--edition", "sample", "--run-id", "e", builtin=True)
    assert rc == 0, err
    assert_same_runs(result_file(runner.builtin_results, EDITION_RESULT), after)


# --data-dir on the frozen v1 suite -------------------------------------------------------------


def test_other_rows_through_data_dir_are_warned_of_task_by_task(runner, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ("run", *SUITE_BASELINE, "--suite", "yoxla-v1", "--data-dir", str(SAMPLE_ROWS), "--run-id", "v")
    rc, _, err = runner(*argv, "--task", "nli_v1", "--task", "sts_v1")
    assert rc == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert [w.split(":")[1].strip() for w in warned] == ["nli_v1", "sts_v1"]
    assert all("not as the suite yoxla-v1 was frozen" in w and "the rows of its dataset" in w for w in warned)
    # The frozen sample suite, read as it is, warns of nothing.
    _, _, err = _suite(runner, "--task", "nli_v1")
    assert "warning" not in err


def test_an_unreadable_hub_dataset_names_data_dir_as_the_benchmark_does(runner, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the conftest's empty HF_HOME: nothing cached
    rc, _, err = runner("run", *SUITE_BASELINE, "--suite", "yoxla-v1", "--task", "nli_v1")
    line = one_error_line(rc, err, "could not load Hub dataset LocalDoc/YOXLA-Benchmark", "--data-dir DIR")
    assert rc == 2 and "yoxla download --out DIR" in line
    rc, _, err = runner.builtin("run", *BASELINE, "--edition", "v1", "--task", "nli_v1")
    one_error_line(rc, err, "could not load v1", "--data-dir")
    assert not runner.runs.exists()
