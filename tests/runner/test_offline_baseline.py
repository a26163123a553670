"""Done means: offline, the baseline provider on the bundled sample writes a run and a result file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.cli.main import run as cli_run
from yoxla.data.editions import load_edition
from yoxla.record.signing import content_digest, verify_signature

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "yoxla" / "schema" / "result.schema.json").read_text(encoding="utf-8"))


def test_fresh_offline_machine_baseline_run_and_rescore(tmp_path: Path, capsys, monkeypatch) -> None:
    env = {
        **os.environ,
        "HF_HOME": str(tmp_path / "hf"),  # an empty cache, as on a fresh machine
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "NO_PROXY": "*",
        "HTTPS_PROXY": "http://127.0.0.1:9",  # any attempt to reach the network fails
        "HTTP_PROXY": "http://127.0.0.1:9",
        "PYTHONPATH": str(ROOT),
    }
    cmd = [
        sys.executable,
        str(ROOT / "runner.py"),
        "--provider",
        "baseline",
        "--model",
        "overlap",
        "--edition",
        "sample",
        "--block",
        "all",
        "--run-id",
        "offline",
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "YOXLA:" in proc.stdout and "generation errors: 0" in proc.stdout
    result_path = tmp_path / "results" / "sample" / "baseline__overlap.json"
    assert result_path.is_file()
    assert "result file: results/sample/baseline__overlap.json [complete]" in proc.stdout
    run_dir = tmp_path / "runs" / "offline"
    for name in ("run.json", "predictions.jsonl", "task_scores.json", "summary.json"):
        assert (run_dir / name).is_file(), name

    doc = json.loads(result_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["content_sha256"] == content_digest(doc)
    assert "signature" not in doc and verify_signature(doc) == (False, None)
    edition = load_edition("sample")
    assert set(doc["tasks"]) == set(edition.tasks)
    # One engine: the edition is the package suite yoxla-sample, frozen in its hash file.
    frozen = json.loads(
        (ROOT / "yoxla" / "editions" / "yoxla-sample.hashes.json").read_text(encoding="utf-8")
    )
    assert (doc["format"], doc["format_version"]) == ("yoxla-result", 3)
    assert doc["suite"]["id"] == "yoxla-sample"
    assert doc["suite"]["suite_hash"] == frozen["suite_hash"]

    # Re-deriving every derived field from the stored answers reproduces the file (admission).
    verdict = check_document(doc, data=DataSource(allow_hub=False))
    assert verdict.status == "admitted" and verdict.rechecked, verdict.reasons
    for tid, t in doc["tasks"].items():
        assert doc["scores"]["tasks"][tid] == t["score"]

    # rescore reproduces both score files byte for byte.
    before = {
        n: (run_dir / n).read_bytes() for n in ("task_scores.json", "summary.json", "predictions.jsonl")
    }
    monkeypatch.chdir(
        tmp_path
    )  # restored after the test: later tests find the repository from the working directory
    assert cli_run(["rescore", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "YOXLA:" in out
    for name, data in before.items():
        assert (run_dir / name).read_bytes() == data, name
    summary = json.loads(before["summary.json"])
    assert summary["headline"] == "YOXLA" and summary["suite_score"] == doc["scores"]["suite"]
    assert summary["complete"] is True and summary["generation_errors"] == 0
