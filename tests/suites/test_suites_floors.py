"""Cue-only answers to suite items, and the shortcut gate on committed suites (``yoxla suite floors``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from suites_helpers import task, write_jsonl, write_manifest

from yoxla.baselines.strategies import chance_score, suite_answer
from yoxla.cli.main import run as cli_run
from yoxla.contract.loader import load_manifest
from yoxla.prompt.prepare import prepare_task

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "suites" / "examples").glob("*/*.yaml"))
ROWS = [
    {"id": "a", "sual": "Hansı düzdür? 12 və ya 15", "cavab": "B"},
    {"id": "b", "sual": "Hansı düzdür? 7", "cavab": "B"},
    {"id": "c", "sual": "Sadəcə mətn", "cavab": "A"},
]


@pytest.fixture
def prepared(tmp_path: Path):
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    path = write_manifest(tmp_path, [task(choices=["A", "B"], output_extraction={"type": "strict"})])
    return prepare_task(load_manifest(path).task("t1"))


@pytest.mark.parametrize(
    ("strategy", "answers"),
    [
        ("first", ["A", "A", "A"]),
        ("majority", ["B", "B", "B"]),
        ("echo", ["15", "7", "Sual: Sadəcə mətn"]),
    ],
)
def test_strategies(prepared, strategy, answers) -> None:
    assert [suite_answer(strategy, prepared, i) for i in prepared.items] == answers


def test_random_is_seeded_per_item_and_stays_in_the_answer_space(prepared) -> None:
    first = [suite_answer("random", prepared, i) for i in prepared.items]
    again = [suite_answer("random", prepared, i) for i in reversed(prepared.items)][::-1]
    assert first == again and set(first) <= {"A", "B"}
    assert chance_score(prepared) == 50.0
    with pytest.raises(ValueError, match="unknown strategy"):
        suite_answer("oracle", prepared, prepared.items[0])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_the_shipped_examples_pass_the_shortcut_gate(path, capsys) -> None:
    assert cli_run(["suite", "floors", str(path), "--gate"]) == 0
    assert "shortcut gate passed" in capsys.readouterr().out


def _answer_in_prompt(tmp_path: Path, **metadata: str) -> Path:
    rows = [{"id": f"r{i}", "a": i, "cavab": str(i)} for i in range(1, 9)]
    write_jsonl(tmp_path / "data.jsonl", rows)
    entry = task(
        prompt_template="{{a}} ədədini yaz.",
        output_extraction={"type": "number"},
        grader={"type": "builtin", "name": "accuracy"},
        metadata=metadata,
    )
    return write_manifest(tmp_path, [entry])


def test_a_cue_that_gives_the_answer_fails_the_gate(tmp_path, capsys) -> None:
    path = _answer_in_prompt(tmp_path)
    assert cli_run(["suite", "floors", str(path), "--gate"]) == 1
    out = capsys.readouterr().out
    assert "gate failed: t1: echo scores 100.00 > threshold 27.50" in out


def test_a_declared_threshold_with_a_reason_is_used(tmp_path, capsys) -> None:
    path = _answer_in_prompt(tmp_path, gate_threshold="100", gate_reason="ədəd sualda verilir (sınaq)")
    assert cli_run(["suite", "floors", str(path), "--gate"]) == 0
    assert "declared because: ədəd sualda verilir" in capsys.readouterr().out
