"""Helpers of the suite run tests: a small committed suite in a folder, a scripted model and judge."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from yoxla.cli.main import run as cli_run
from yoxla.testing.fakeserver import Reply

ROWS = [
    {"id": f"m{i:02d}", "a": i, "b": i + 3, "cavab": str(2 * i + 3), "movzu": ["cüt", "tək"][i % 2]}
    for i in range(1, 25)
]
QUESTION = re.compile(r"Sual: (\d+) \+ (\d+) neçədir\?")
GRADER = """
def _number(text):
    try:
        return float(str(text).replace(",", "."))
    except (TypeError, ValueError):
        return None


def grade(sample, item):
    got = _number(sample["extracted_output"])
    return 1.0 if got is not None and got == _number(item["target"]) else 0.0
"""
JUDGE_GRADER = """
def grade(sample, item, ctx):
    r = ctx.responses_create(
        model="hakim",
        instructions="Cavab düzdürsə 'bəli', deyilsə 'xeyr' yaz.",
        input=f"JUDGE: {sample['extracted_output']} | {item['target']}",
        temperature=0,
    )
    return {"scores": {"judge": 1.0 if r["output_text"].strip() == "bəli" else 0.0}}
"""
GENERATION = {
    "instructions": "Sən riyaziyyat müəllimisən. Yalnız ədədi yaz.",
    "temperature": 0.2,
    "top_p": 0.9,
    "max_output_tokens": 32,
    "stop": ["\n\n"],
    "top_k": 5,
    "extra_body": {"min_tokens": 1, "model": "başqa-model"},
    "timeout_seconds": 5,
    "max_retries": 1,
}


def manifest(judge: bool = False, **task_fields: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "id": "toplama_v1",
        "name": "Toplama",
        "type": "llm_judge" if judge else "numeric",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "Sual: {{a}} + {{b}} neçədir?",
        "target_template": "{{cavab}}",
        "num_fewshot": 1,
        "output_extraction": {"type": "regex_last", "pattern": r"-?\d+"},
        "metrics": [{"id": "judge" if judge else "accuracy"}],
        "grader": {
            "type": "python",
            "contract": "sample",
            "path": "judge.py" if judge else "grader.py",
            "metric_id": "judge" if judge else "accuracy",
        },
        "generation": GENERATION,
        "metadata": {"breakdowns": "movzu"},
    }
    task.update(task_fields)
    return {"schema_version": "2026-05-27", "metadata": {"name": "sinaq"}, "tasks": [task]}


def make_suite(
    root: Path, doc: dict[str, Any] | None = None, rows: list[dict[str, Any]] | None = None
) -> Path:
    """suites/sinaq/sinaq.yaml under ``root`` with its data, graders and frozen hashes."""
    from yoxla.contract.hashing import hash_file_path, write_hash_file
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import current_hashes

    folder = root / "suites" / "sinaq"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows or ROWS), encoding="utf-8"
    )
    (folder / "grader.py").write_text(GRADER, encoding="utf-8")
    (folder / "judge.py").write_text(JUDGE_GRADER, encoding="utf-8")
    path = folder / "sinaq.yaml"
    path.write_text(yaml.safe_dump(doc or manifest(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    loaded = load_manifest(path)
    write_hash_file(hash_file_path(path), loaded.name, current_hashes(loaded))
    return path


def model_answer(key: str) -> str:
    """The scripted model: the right sum when a is even, one too many otherwise."""
    found = QUESTION.findall(key)
    if not found:
        return "bilmirəm"
    a, b = (int(x) for x in found[-1])
    return f"Cavab: {a + b + (a % 2)}"


def judge_answer(key: str) -> str:
    got, _, target = key.removeprefix("JUDGE: ").partition(" | ")
    return "bəli" if got.strip() == target.strip() else "xeyr"


def responder(key: str, attempt: int, body: dict[str, Any]) -> Reply:
    if key.startswith("JUDGE: "):
        return Reply(content=judge_answer(key))
    return Reply(content=model_answer(key))


class SuiteRunner:
    """``yoxla …`` in-process with run and result folders under tmp_path."""

    def __init__(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.tmp = tmp_path
        self.runs = tmp_path / "runs"
        self.results = tmp_path / "results"
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def __call__(self, *args: str) -> tuple[int, str, str]:
        argv = list(args)
        if argv[0] == "run":
            argv += ["--runs-dir", str(self.runs), "--results-dir", str(self.results), "--no-progress"]
        self.monkeypatch.setattr(sys, "argv", ["yoxla", *argv])
        rc = cli_run(argv)
        out, err = self.capsys.readouterr()
        return rc, out, err

    def api(self, suite: Path, base_url: str, run_id: str, *extra: str) -> tuple[int, str, str]:
        return self(
            "run",
            "--suite",
            str(suite),
            "--provider",
            "vllm",
            "--model",
            "fake/model-1",
            "--base-url",
            base_url,
            "--run-id",
            run_id,
            "--backoff-base",
            "0.01",
            "--timeout",
            "5",
            *extra,
        )

    def predictions(self, run_id: str) -> list[dict[str, Any]]:
        path = self.runs / run_id / "predictions.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def json(self, run_id: str, name: str) -> Any:
        return json.loads((self.runs / run_id / name).read_text(encoding="utf-8"))

    def result(self, name: str = "vllm__fake--model-1.json", suite: str = "sinaq") -> dict[str, Any]:
        return json.loads((self.results / "suites" / suite / name).read_text(encoding="utf-8"))


ANSWER_FIELDS = ("task", "id", "raw", "extracted", "valid", "outcome", "score", "scores", "error")


def answer_fields(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r[k] for k in ANSWER_FIELDS) for r in records]
