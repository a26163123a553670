"""A repeated example in predictions.jsonl is reported in one line and the first kept: resume and rescore go on."""

from __future__ import annotations

from pathlib import Path

BASE = ("run", "--edition", "sample", "--provider", "baseline", "--model", "random")


def _duplicate(path: Path, lines: list[bytes], repeat: list[int], keep: int) -> list[bytes]:
    """Write the first ``keep`` lines with copies of lines ``repeat`` inserted among them."""
    copies = [lines[i].replace(b'"score":', b'"score":0.0,"was":') for i in repeat]  # a different answer
    out = lines[:3] + copies + lines[3:keep]
    path.write_bytes(b"".join(out))
    return copies


def test_rescore_and_resume_keep_the_first_of_a_repeated_example(runner) -> None:
    rc, _, err = runner(*BASE, "--task", "nli_v1", "--task", "sts_v1", "--run-id", "dup")
    assert rc == 0, err
    whole = runner.predictions("dup")
    scores = runner.json("dup", "task_scores.json")
    pred = runner.runs / "dup" / "predictions.jsonl"
    lines = pred.read_bytes().splitlines(keepends=True)
    _duplicate(pred, lines, [0, 1], keep=len(lines))

    rc, _, err = runner("rescore", str(runner.runs / "dup"))
    assert rc == 0, err
    notes = [line for line in err.splitlines() if "repeated" in line]
    assert len(notes) == 1 and "2 repeated" in notes[0]
    assert f"nli_v1/{whole[0]['id']}" in notes[0] and f"nli_v1/{whole[1]['id']}" in notes[0]
    assert runner.json("dup", "task_scores.json") == scores  # the first of each counts
    assert pred.read_bytes().count(b"\n") == len(lines) + 2  # rescore never rewrites answers

    # Resume with work left to do: the duplicates go when the file is rewritten, the rest is sent.
    _duplicate(pred, lines, [1], keep=len(lines) - 4)
    rc, _, err = runner("run", "--run-id", "dup", "--resume")
    assert rc == 0, err
    assert "1 repeated" in err and "already on disk" in err
    assert runner.predictions("dup") == whole
    assert runner.json("dup", "task_scores.json") == scores
    assert runner.json("dup", "run.json")["status"] == "incomplete"  # two tasks of the edition only
