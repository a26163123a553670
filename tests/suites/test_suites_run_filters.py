"""Row filters, ``--scored-only`` and ``--limit`` on suite runs work as on the benchmark.

A filtered suite run sends only the items that pass, is partial (results/partial/…, never
complete, never admitted) and says its filters in the result file's conditions; a filter on a
field no task declares, or one that nothing passes, is one line and a non-zero exit before
any run folder or result file exists (the benchmark's messages, tests/runner/test_run_conveniences.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from suite_run_helpers import SuiteRunner
from suites_helpers import write_jsonl, write_manifest

from yoxla.admission.rules import check_file

ROOT = Path(__file__).resolve().parents[2]
OXU = ROOT / "suites" / "examples" / "oxu" / "oxu.yaml"
OXU_ROWS = [
    json.loads(line)
    for line in (OXU.parent / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
# Two two-choice tasks: "secim_v1" declares a breakdown by mövzu and controls by nezaret,
# "sade_v1" declares nothing (a filter leaves it out of the run).
ROWS = [
    {"id": f"r{i:02d}", "sual": str(i), "movzu": ["tarix", "coğrafiya", "mədəniyyət"][i % 3],
     "nezaret": i in (4, 7), "cavab": "AB"[i % 2]}
    for i in range(1, 13)
]  # fmt: skip


def _task(tid: str, **metadata: str) -> dict[str, Any]:
    return {
        "id": tid,
        "name": tid,
        "type": "multiple_choice",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "Sual {{sual}}: A yoxsa B?\nCavab:",
        "target_template": "{{cavab}}",
        "choices": ["A", "B"],
        "output_extraction": {"type": "label_set", "labels": ["A", "B"], "case_sensitive": True},
        "metrics": [{"id": "accuracy"}],
        "grader": {"type": "builtin", "name": "accuracy"},
        **({"metadata": metadata} if metadata else {}),
    }


@pytest.fixture
def runner(tmp_path, capsys, monkeypatch) -> SuiteRunner:
    return SuiteRunner(tmp_path, capsys, monkeypatch)


@pytest.fixture
def two_tasks(tmp_path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    write_jsonl(folder / "data.jsonl", ROWS)
    tasks = [_task("secim_v1", breakdowns="movzu", control_field="nezaret"), _task("sade_v1")]
    return write_manifest(folder, tasks, metadata={"name": "ikili"})


def _run(runner: SuiteRunner, suite: Path, *extra: str) -> tuple[int, str, str]:
    return runner(
        "run",
        "--suite",
        str(suite),
        "--provider",
        "suite-baseline",
        "--model",
        "first",
        "--run-id",
        "f",
        *extra,
    )


def _one_line(rc: int, err: str, needle: str) -> None:
    assert rc == 2, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("yoxla: ") and needle in last, err


def _partial(runner: SuiteRunner, suite: str) -> dict[str, Any]:
    assert not (runner.results / "suites").exists()  # never where complete files go
    path = runner.results / "partial" / "suites" / suite / "suite-baseline__first.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _nothing_written(runner: SuiteRunner) -> None:
    assert not runner.results.exists()
    assert not runner.runs.exists() or not any(runner.runs.iterdir())


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (("--filter", "topic=zzz-no-such-value"), "no row of any selected task passes the filters"),
        (
            ("--filter", "reng=qırmızı"),
            "no selected task has a column 'reng' to filter by; filterable columns: topic",
        ),
        (("--category", "geography"), "no selected task has a column 'category'"),
        (("--difficulty", "easy"), "no selected task has a column 'difficulty'"),
    ],
)
def test_a_filter_that_selects_nothing_is_one_line_and_writes_nothing(runner, flags, needle) -> None:
    rc, _, err = _run(runner, OXU, *flags)
    _one_line(rc, err, needle)
    _nothing_written(runner)


def test_a_filtered_suite_run_sends_only_the_matching_items_and_is_partial(runner) -> None:
    rc, out, err = _run(runner, OXU, "--filter", "topic=coğrafiya", "--filter", "topic=tarix")
    assert rc == 0, err
    want = [r["id"] for r in OXU_ROWS if r["topic"] in ("coğrafiya", "tarix")]
    assert len(want) == 3
    assert [p["id"] for p in runner.predictions("f")] == want
    assert "[incomplete" in out
    doc = _partial(runner, "oxu")
    assert doc["run"]["conditions"]["filters"] == {"topic": ["coğrafiya", "tarix"]}
    assert [p["id"] for p in doc["tasks"]["oxu_v1"]["predictions"]] == want
    assert runner.json("f", "summary.json")["complete"] is False
    assert runner.json("f", "run.json")["tasks"]["oxu_v1"]["selected"] == 3
    path = runner.results / "partial" / "suites" / "oxu" / "suite-baseline__first.json"
    verdict = check_file(path, use_cache=False)
    assert verdict.status == "excluded"
    assert any("partial run" in r and "row filter" in r for r in verdict.reasons), verdict.reasons


def test_a_task_without_the_filtered_field_is_left_out(runner, two_tasks) -> None:
    rc, _, err = _run(runner, two_tasks, "--filter", "movzu=tarix")
    assert rc == 0, err
    assert "filter: sade_v1 has no column 'movzu'; left out of this run" in err
    assert {p["task"] for p in runner.predictions("f")} == {"secim_v1"}
    assert [p["id"] for p in runner.predictions("f")] == [r["id"] for r in ROWS if r["movzu"] == "tarix"]
    doc = _partial(runner, "ikili")
    assert set(doc["tasks"]) == {"secim_v1"}


def test_scored_only_skips_the_controls_and_is_partial(runner, two_tasks) -> None:
    rc, _, err = _run(runner, two_tasks, "--scored-only")
    assert rc == 0, err
    sent = runner.predictions("f")
    assert [p["id"] for p in sent if p["task"] == "secim_v1"] == [r["id"] for r in ROWS if not r["nezaret"]]
    assert len([p for p in sent if p["task"] == "sade_v1"]) == len(ROWS)  # no controls declared there
    doc = _partial(runner, "ikili")
    assert doc["run"]["conditions"]["filters"] == {"controls": ["skipped"]}
    assert runner.json("f", "summary.json")["complete"] is False


def test_the_whole_suite_is_still_complete(runner, two_tasks) -> None:
    rc, out, err = _run(runner, two_tasks)
    assert rc == 0, err
    assert "[complete]" in out
    doc = json.loads((runner.results / "suites" / "ikili" / "suite-baseline__first.json").read_text("utf-8"))
    assert "filters" not in doc["run"]["conditions"]
    assert len(runner.predictions("f")) == 2 * len(ROWS)


def test_limit_makes_a_partial_suite_run(runner) -> None:
    rc, _, err = _run(runner, OXU, "--limit", "2")
    assert rc == 0, err
    assert [p["id"] for p in runner.predictions("f")] == [r["id"] for r in OXU_ROWS[:2]]
    assert _partial(runner, "oxu")["run"]["conditions"]["limit"] == 2


def test_a_resumed_filtered_run_keeps_its_filters(runner) -> None:
    rc, _, err = _run(runner, OXU, "--filter", "topic=mədəniyyət")
    assert rc == 0, err
    lines = (runner.runs / "f" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    (runner.runs / "f" / "predictions.jsonl").write_text(lines[0] + "\n", encoding="utf-8")
    rc, _, err = runner("run", "--resume", "--run-id", "f")
    assert rc == 0, err
    want = [r["id"] for r in OXU_ROWS if r["topic"] == "mədəniyyət"]
    assert sorted(p["id"] for p in runner.predictions("f")) == sorted(want)
    assert _partial(runner, "oxu")["run"]["conditions"]["filters"] == {"topic": ["mədəniyyət"]}


def test_a_filter_that_keeps_every_item_is_still_partial_and_never_admitted(runner) -> None:
    topics = sorted({r["topic"] for r in OXU_ROWS})
    flags = [x for t in topics for x in ("--filter", f"topic={t}")]
    rc, out, err = _run(runner, OXU, *flags)
    assert rc == 0, err
    assert len(runner.predictions("f")) == len(OXU_ROWS)  # every item, yet a filtered run
    assert "[incomplete" in out
    _partial(runner, "oxu")
    path = runner.results / "partial" / "suites" / "oxu" / "suite-baseline__first.json"
    verdict = check_file(path, use_cache=False)
    assert verdict.status == "excluded"
    assert any("partial run" in r and "row filter" in r for r in verdict.reasons), verdict.reasons


@pytest.fixture
def graded(tmp_path) -> Path:
    """One task whose rows carry a category and a difficulty, both declared as breakdowns."""
    folder = tmp_path / "graded"
    folder.mkdir()
    rows = [{**r, "category": ["tarix", "dil"][i % 2], "difficulty": ["easy", "hard"][i % 3 == 0]}
            for i, r in enumerate(ROWS)]  # fmt: skip
    write_jsonl(folder / "data.jsonl", rows)
    task = _task("secim_v1", breakdowns="category, difficulty")
    return write_manifest(folder, [task], metadata={"name": "derece"})


@pytest.mark.parametrize(
    ("flags", "field", "value"),
    [(("--category", "dil"), "category", "dil"), (("--difficulty", "hard"), "difficulty", "hard")],
)
def test_category_and_difficulty_on_a_suite_make_a_partial_run(runner, graded, flags, field, value) -> None:
    rc, out, err = _run(runner, graded, *flags)
    assert rc == 0, err
    rows = [json.loads(line) for line in (graded.parent / "data.jsonl").read_text("utf-8").splitlines()]
    want = [r["id"] for r in rows if r[field] == value]
    assert 0 < len(want) < len(rows)
    assert [p["id"] for p in runner.predictions("f")] == want
    assert "[incomplete" in out
    doc = _partial(runner, "derece")
    assert doc["run"]["conditions"]["filters"] == {field: [value]}
    assert runner.json("f", "summary.json")["complete"] is False
