"""The options of an ``--edition`` run on ``--suite yoxla-sample`` / ``yoxla-v1``: each does what
it did on the built-in engine, whose stored result files (the legacy-v2 fixture) are the oracle.

``--block G`` runs the suite's group G (the benchmark's blocks are the package suites'
groups) with the stored scores of that block; the model facts and the signature reach the
result file; ``--filter``/``--difficulty``/``--limit``/``--scored-only`` pick the rows that
carry those values, each with its stored verdict; ``--retry-errors`` re-asks the failed items
of a run from its run folder or from its result file (a suite file, or a built-in engine's v2
file, which seeds a run of the package suite); and rows read with ``--data-dir`` that are not
the frozen ones are warned of before any model is asked.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from parity_helpers import (
    SUITE_RESULT,
    VERDICT,
    assert_same_runs,
    legacy,
    only_block,
    result_file,
    same,
    score_lines,
)
from runner_helpers import one_error_line

from yoxla.admission.rules import check_file
from yoxla.contract.benchmark import benchmark_groups, task_ids
from yoxla.record.signing import content_digest, key_id, verify_signature
from yoxla.testing.fakeserver import FakeServer, Reply

REPO = Path(__file__).resolve().parents[2]
SAMPLE_ROWS = REPO / "yoxla" / "editions" / "sample"  # the sample edition, in the Hub layout
NO_GROUPS = REPO / "suites" / "examples" / "oxu" / "oxu.yaml"
GROUPS = benchmark_groups()
BASELINE = ("--provider", "baseline", "--model", "overlap")
SUITE_BASELINE = ("--provider", "suite-baseline", "--model", "overlap")


def _suite(runner, *extra: str, run_id: str = "s") -> tuple[dict[str, Any], str, str]:
    rc, out, err = runner("run", *SUITE_BASELINE, "--suite", "yoxla-sample", "--run-id", run_id, *extra)
    assert rc == 0, err
    return runner.json(run_id, "summary.json"), out, err


def _partial(results: Path, where: Path) -> dict[str, Any]:
    return result_file(results / "partial", where)


# --block: a group of the suite ------------------------------------------------------------


@pytest.mark.parametrize("block", ["rag", "understanding"])
def test_block_runs_the_suites_group_with_the_stored_scores_of_the_block(runner, block) -> None:
    want = only_block(legacy("overlap"), block)
    got, out, _ = _suite(runner, "--block", block)
    tasks = list(GROUPS[block])
    assert sorted(got["tasks"]) == sorted(want["tasks"]) == sorted(tasks)
    assert got["complete"] is False  # one block: a partial run
    assert same(got["groups"], want["scores"]["blocks"]) and list(got["groups"]) == [block]
    assert same(got["suite_score"], want["scores"]["yoxla"])
    for tid in tasks:
        assert same(got["tasks"][tid]["score"], want["tasks"][tid]["score"]), tid
    assert list(score_lines(out)) == [block, "YOXLA"]
    assert_same_runs(want, _partial(runner.results, SUITE_RESULT), blocks=[block])
    info = runner.json("s", "run.json")
    assert info["conditions"]["tasks"] == info["task_ids"] and sorted(info["task_ids"]) == sorted(tasks)


def test_block_all_is_the_whole_suite(runner) -> None:
    got, _, _ = _suite(runner, "--block", "all")
    assert got["complete"] is True and len(got["tasks"]) == len(task_ids())
    assert sorted(got["groups"]) == sorted(GROUPS)
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


def test_model_facts_reach_the_result_file(runner, tmp_path) -> None:
    info = tmp_path / "model.yaml"
    info.write_text("model_card: https://huggingface.co/org/overlap-8b\nparams: 8B\n", encoding="utf-8")
    _suite(runner, *FACTS, "--model-info", str(info))
    got = result_file(runner.results, SUITE_RESULT)["model"]
    assert {k: got[k] for k in ("provider", "model", "reported_model", "display_name")} == {
        "provider": "suite-baseline",
        "model": "overlap",
        "reported_model": "suite-baseline/overlap",
        "display_name": "Örtüşmə Səkkiz",  # never folded to ASCII
    }
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
    _suite(runner, "--sign-key", str(key))
    signed = result_file(runner.results, SUITE_RESULT)
    public = base64.b64decode(Path(f"{key}.pub").read_text(encoding="utf-8"))
    assert verify_signature(signed) == (True, key_id(public))  # signed with this key
    assert signed["content_sha256"] == content_digest(signed)
    forged = json.loads(json.dumps(signed))  # a changed score under a re-computed digest
    forged["tasks"]["nli_v1"]["score"] = 99.0
    forged["content_sha256"] = content_digest(forged)
    assert verify_signature(forged)[0] is False


# Row filters ---------------------------------------------------------------------------------


def _kept(flags: tuple[str, ...]) -> dict[str, list[str]]:
    """Per task, the ids of the sample rows the flags keep, read off the rows files themselves (a
    task whose rows lack the filtered field is left out; the sample declares no control rows, so
    ``--scored-only`` keeps every row)."""
    out = {}
    for tid in legacy("overlap")["tasks"]:
        text = (SAMPLE_ROWS / tid / "test.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        if flags[0] == "--limit":
            rows = rows[: int(flags[1])]
        elif flags[0] != "--scored-only":
            field, value = flags[1].split("=") if flags[0] == "--filter" else ("difficulty", flags[1])
            rows = [r for r in rows if str(r.get(field)) == value] if field in rows[0] else []
        if rows:
            out[tid] = [str(r["id"]) for r in rows]
    return out


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
def test_row_selections_pick_the_rows_with_those_values_and_their_stored_verdicts(runner, flags) -> None:
    want, stored = _kept(flags), legacy("overlap")
    got, _, _ = _suite(runner, *flags)
    assert got["complete"] is False
    assert sorted(got["tasks"]) == sorted(want) and want
    suite = _partial(runner.results, SUITE_RESULT)
    for tid, ids in want.items():
        predictions = suite["tasks"][tid]["predictions"]
        assert [p["id"] for p in predictions] == ids, tid
        verdicts = {p["id"]: p for p in stored["tasks"][tid]["predictions"]}
        for p in predictions:  # each row's verdict is the stored one (a row is scored alone)
            w = verdicts[p["id"]]
            assert all(same(w.get(k), p.get(k)) for k in (*VERDICT, "score")), (tid, p["id"])
    if flags[0] == "--limit":
        assert all(len(ids) == 3 for ids in want.values()) and len(want) == len(task_ids())


def test_the_seed_draws_the_random_answers(runner) -> None:
    def answers(*seed: str, run_id: str) -> tuple[dict[str, Any], list[Any]]:
        rc, _, err = runner("run", "--provider", "baseline", "--model", "random", "--edition", "sample",
                            *seed, "--run-id", run_id)  # fmt: skip
        assert rc == 0, err
        doc = result_file(runner.results, SUITE_RESULT)
        return doc, [p["raw"] for t in doc["tasks"].values() for p in t["predictions"]]

    default, _ = answers(run_id="d")
    assert_same_runs(legacy("random"), default)  # the stored run used the default seed
    _, seven = answers("--seed", "7", run_id="s7")
    _, again = answers("--seed", "7", run_id="s7b")
    _, eight = answers("--seed", "8", run_id="s8")
    assert seven == again and seven != eight  # the seed is what changed the answers


# --retry-errors on a package-suite run ------------------------------------------------------


@pytest.fixture
def failing(runner, env_key, answers, examples):
    """A server that fails two NLI and one knowledge_choice request until it is made alive."""
    dead = [k for t, _, k in examples if t == "nli_v1"][:2]
    dead += [k for t, _, k in examples if t == "knowledge_choice_v1"][:1]
    state = {"alive": False}

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key in dead and not state["alive"]:
            return Reply(status=503, message="upstream down")
        return Reply(content=answers.get(key, "?"))

    with FakeServer(responder=responder) as srv:
        yield srv, state


def _api(runner, srv: FakeServer, *extra: str) -> tuple[int, str, str]:
    return runner(
        "run", "--provider", "vllm", "--model", "fake/model-1", "--base-url", srv.base_url,
        "--backoff-base", "0.01", "--timeout", "5", "--max-retries", "0", *extra,
    )  # fmt: skip


def _retry(runner, target: str, srv: FakeServer) -> tuple[int, str, str]:
    return runner(
        "run", "--retry-errors", target, "--base-url", srv.base_url, "--backoff-base", "0.01", "--no-progress",
        "--runs-dir", str(runner.runs), base=False,
    )  # fmt: skip


@pytest.mark.parametrize("source", ["run folder", "result file", "result file, run folder gone"])
def test_retry_errors_on_a_package_suite_run_gives_the_scores_of_a_run_that_never_failed(
    runner, failing, source
) -> None:
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
    # The same answers and scores as a run that never failed.
    rc, _, err = _api(runner, srv, "--edition", "sample", "--run-id", "e")
    assert rc == 0, err
    never = json.loads(path.read_text(encoding="utf-8"))
    assert never["run"]["run_id"] == "e" and never["generation_errors"] == 0
    assert same(after["scores"], never["scores"])
    for tid, task in never["tasks"].items():
        got = after["tasks"][tid]
        assert [(p["id"], p["raw"], p["outcome"]) for p in got["predictions"]] == [
            (p["id"], p["raw"], p["outcome"]) for p in task["predictions"]
        ], tid
        assert same((got["score"], got["metrics"]), (task["score"], task["metrics"])), tid


# --retry-errors on a built-in engine's v2 result file ------------------------------------------

FAILED = (("nli_v1", 0), ("nli_v1", 1), ("knowledge_choice_v1", 4))


def _failed_v2(tmp: Path, **task_change: Any) -> tuple[Path, dict[str, Any]]:
    """The built-in engine's file of baseline ``first`` with three answers turned into generation
    errors (as a server that refused them would have left them)."""
    doc = legacy("first")
    for tid, i in FAILED:
        doc["tasks"][tid]["predictions"][i].update(
            raw=None, parsed=None, valid=False, abstained=False, outcome="generation_error",
            reason="generation_error", near_miss=None, score=0.0, finish_reason=None, error="upstream down",
        )  # fmt: skip
    doc["generation_errors"] = len(FAILED)
    doc["tasks"]["nli_v1"].update(task_change)
    path = tmp / "received" / "baseline__first.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path, doc


def _retry_file(runner, path: Path) -> tuple[int, str, str]:
    return runner(
        "run", "--retry-errors", str(path), "--runs-dir", str(runner.runs), "--results-dir", str(runner.results),
        "--no-progress", base=False,
    )  # fmt: skip


@pytest.mark.parametrize("folder", [False, True])
def test_retry_errors_on_a_v2_file_seeds_a_run_of_the_package_suite(runner, folder) -> None:
    path, doc = _failed_v2(runner.tmp)
    run_id = doc["run"]["run_id"]
    if folder:  # the built-in run folder of that id is still there: left alone, a new one is made
        old = runner.runs / run_id
        old.mkdir(parents=True)
        (old / "run.json").write_text(json.dumps({"run_id": run_id, "edition": "sample"}), encoding="utf-8")
    rc, _, err = _retry_file(runner, path)
    assert rc == 0, err
    assert f"retrying its {len(FAILED)} errors" in err
    [made] = [d for d in runner.runs.iterdir() if (d / "predictions.jsonl").exists()]
    assert (made.name == run_id) is not folder and made.name.startswith(run_id)
    info = json.loads((made / "run.json").read_text(encoding="utf-8"))
    assert info["kind"] == "suite" and info["suite"]["id"] == "yoxla-sample"
    assert info["seeded_from"]["result_file"] == path.name
    lines = [
        json.loads(line) for line in (made / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    asked = {(r["task"], r["id"]) for r in lines if r["attempts"] > 1}  # only the failed ones were re-asked
    assert asked == {(tid, doc["tasks"][tid]["predictions"][i]["id"]) for tid, i in FAILED}
    after = result_file(runner.results, SUITE_RESULT)
    assert (after["format"], after["format_version"]) == ("yoxla-result", 3) and after[
        "generation_errors"
    ] == 0
    assert_same_runs(legacy("first"), after)  # the scores of the run before its answers failed
    assert check_file(runner.results / SUITE_RESULT / "baseline__first.json", use_cache=False).shown
    assert path.read_text(encoding="utf-8") == json.dumps(doc, ensure_ascii=False)  # the file is kept


def test_a_v2_file_asked_under_another_contract_is_not_retried(runner) -> None:
    path, _ = _failed_v2(runner.tmp, contract_hash="sha256:" + "0" * 64)
    rc, _, err = _retry_file(runner, path)
    one_error_line(
        rc, err, "task nli_v1", "another contract than the suite yoxla-sample's", "start a new run"
    )
    assert rc == 2 and not runner.runs.exists() and not runner.results.exists()


# Other rows than the frozen ones (--data-dir) -------------------------------------------------------------


@pytest.mark.parametrize("names", [("--suite", "yoxla-v1"), ("--edition", "v1")])
def test_rows_of_another_count_through_data_dir_refuse_the_v1_suite(runner, monkeypatch, names) -> None:
    """The sample rows read as v1's: every task has fewer rows than v1 is frozen with, so the
    run is refused in one line before any model is asked, as the built-in engine refused it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    provider = SUITE_BASELINE if names[0] == "--suite" else BASELINE
    argv = ("run", *provider, *names, "--data-dir", str(SAMPLE_ROWS), "--run-id", "v")
    rc, _, err = runner(*argv, "--task", "nli_v1", "--task", "sts_v1")
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"yoxla: error: nli_v1: 12 rows (read from --data-dir {SAMPLE_ROWS}), but the suite "
        "yoxla-v1 is frozen with 100; … and 1 more task(s); a run of other rows cannot be admitted, "
        "no model was asked"
    ]
    assert not runner.runs.exists() and not runner.results.exists()


def _sample_copy(root: Path, tid: str, change) -> Path:
    """The sample suite copied under ``root`` (its manifest, hash file and rows), the rows of
    ``tid`` passed through ``change``."""
    root.mkdir()
    for name in ("yoxla-sample.yaml", "yoxla-sample.hashes.json"):
        shutil.copy(REPO / "yoxla" / "editions" / name, root / name)
    shutil.copytree(SAMPLE_ROWS, root / "sample")
    rows_file = root / "sample" / tid / "test.jsonl"
    lines = [line for line in rows_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows_file.write_text("".join(line + "\n" for line in change(lines)), encoding="utf-8")
    return root / "yoxla-sample.yaml"


def test_a_sample_suite_one_row_short_is_refused_and_other_rows_are_warned_of(runner) -> None:
    short = _sample_copy(runner.tmp / "short", "nli_v1", lambda lines: lines[:-1])
    rc, _, err = runner("run", *SUITE_BASELINE, "--suite", str(short), "--task", "nli_v1")
    assert rc == 2 and err.strip().splitlines() == [
        "yoxla: error: nli_v1: 11 rows, but the suite yoxla-sample is frozen with 12; "
        "a run of other rows cannot be admitted, no model was asked"
    ], err
    assert not runner.runs.exists()
    rc, _, err = runner("run", *SUITE_BASELINE, "--suite", str(short), "--task", "sts_v1", "--run-id", "k")
    assert rc == 0, err  # a task of the frozen count runs
    # Other rows of the frozen count: warned of task by task, and the run goes on.
    other = _sample_copy(runner.tmp / "other", "nli_v1", lambda lines: [*lines[1:], lines[0]])
    rc, _, err = runner("run", *SUITE_BASELINE, "--suite", str(other), "--task", "nli_v1", "--run-id", "o")
    assert rc == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert [w.split(":")[1].strip() for w in warned] == ["nli_v1"]
    assert "not as the suite yoxla-sample was frozen" in warned[0] and "the rows of its dataset" in warned[0]
    # The frozen sample suite, read as it is, warns of nothing.
    _, _, err = _suite(runner, "--task", "nli_v1")
    assert "warning" not in err


def test_an_unreadable_hub_dataset_names_data_dir_as_the_benchmark_does(runner, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the conftest's empty HF_HOME: nothing cached
    rc, _, err = runner("run", *SUITE_BASELINE, "--suite", "yoxla-v1", "--task", "nli_v1")
    line = one_error_line(rc, err, "could not load Hub dataset LocalDoc/YOXLA-Benchmark", "--data-dir DIR")
    assert rc == 2 and "yoxla download --out DIR" in line
    rc, _, err = runner("run", *BASELINE, "--edition", "v1", "--task", "nli_v1")  # the same suite
    assert one_error_line(rc, err) == line
    assert not runner.runs.exists()
