"""A folder of hostile result files, for the admission tests, the browser test and the benches.

Each file reproduces one way a result file was found to fool, crash or stall admission.
:func:`write_hostile_folder` writes them next to genuine files and returns, per file name,
a piece of the reason admission must give (or the status it must get).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.contract.benchmark import benchmark_groups
from yoxla.data.editions import load_edition
from yoxla.record.signing import finalize, keygen, sign
from yoxla.score.stats import block_scores, yoxla_score
from yoxla.testing.synthetic import build_result, synthetic_rows


@dataclass(frozen=True)
class Expect:
    """What admission must say about one hostile file."""

    status: str  # excluded | superseded | admitted
    reason: str  # a piece of one reason (or note)


def refinalize(doc: dict[str, Any]) -> dict[str, Any]:
    """Make the summary scores and the digest consistent again, as a careful forger would."""
    doc["scores"]["tasks"] = {tid: t["score"] for tid, t in doc["tasks"].items()}
    blocks = block_scores(benchmark_groups(), doc["scores"]["tasks"])
    doc["scores"]["blocks"] = blocks
    doc["scores"]["yoxla"] = yoxla_score(blocks)
    return finalize(doc)


def _write(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _edited_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    for cell in doc["tasks"]["rag_verification_v1"]["metrics"]["per_claim_type_accuracy"].values():
        cell["accuracy"] = 1.0
    return refinalize(doc)


def _flipped_predictions(doc: dict[str, Any]) -> dict[str, Any]:
    for p in doc["tasks"]["nli_v1"]["predictions"]:
        p.update(outcome="correct", score=1.0, valid=True, reason=None, near_miss=None)
    return refinalize(doc)


def _hidden_generation_errors(doc: dict[str, Any]) -> dict[str, Any]:
    return refinalize({**doc, "generation_errors": 0})


def _fake_task(doc: dict[str, Any]) -> dict[str, Any]:
    doc = refinalize(doc)
    doc["scores"]["tasks"]["fake_task_v9"] = 99.0
    return finalize(doc)


def _lookalike(doc: dict[str, Any]) -> dict[str, Any]:
    doc["model"]["model"] = "impostor"
    doc["created_at"] = "2030-01-01T00:00:00Z"  # a later pull request
    doc["model"]["display_name"] = doc["model"]["display_name"].replace("a", "\u0430")  # Cyrillic а
    return refinalize(doc)


def _same_name(doc: dict[str, Any]) -> dict[str, Any]:
    doc["model"]["model"] = "another-model"
    doc["created_at"] = "2030-01-01T00:00:00Z"
    return refinalize(doc)


def _injection(doc: dict[str, Any]) -> dict[str, Any]:
    doc["model"]["model"] = "injector"
    doc["model"]["display_name"] = "ok\n::error file=app.py::pwned\x1b[31m"
    return refinalize(doc)


def _bidi(doc: dict[str, Any]) -> dict[str, Any]:
    doc["model"]["model"] = "bidi"
    doc["model"]["display_name"] = "\u202eledom-doog"
    return refinalize(doc)


def _huge_name(doc: dict[str, Any]) -> dict[str, Any]:
    doc["model"]["model"] = "m" * (5 * 1024 * 1024)
    return refinalize(doc)


def _long_answer(doc: dict[str, Any]) -> dict[str, Any]:
    doc["tasks"]["nli_v1"]["predictions"][0]["raw"] = "'" * (4 * 1024 * 1024)
    return refinalize(doc)


CONSISTENT: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], Expect]] = {
    "edited_metrics.json": (_edited_metrics, Expect("excluded", "per_claim_type_accuracy")),
    "flipped_predictions.json": (_flipped_predictions, Expect("excluded", "predictions[")),
    "fake_task_score.json": (_fake_task, Expect("excluded", "scores.tasks.fake_task_v9")),
    "cyrillic_lookalike.json": (_lookalike, Expect("excluded", "confusable with")),
    "same_display_name.json": (_same_name, Expect("excluded", "the same as")),
    "workflow_injection.json": (_injection, Expect("excluded", "control characters")),
    "bidi_name.json": (_bidi, Expect("excluded", "bidirectional controls")),
    "five_megabyte_name.json": (_huge_name, Expect("excluded", "at most 200 characters")),
    "four_megabyte_answer.json": (_long_answer, Expect("excluded", "raw")),
}


def write_hostile_folder(folder: Path, genuine: list[Path], keys_dir: Path) -> tuple[dict[str, Expect], Path]:
    """Write the hostile files (and copies of ``genuine``) into ``folder``.

    Returns ({relative path: Expect}, trusted-keys file). Genuine files are expected admitted.
    """
    folder.mkdir(parents=True, exist_ok=True)
    expect: dict[str, Expect] = {}
    (folder / "sample").mkdir(exist_ok=True)
    for p in genuine:
        (folder / "sample" / p.name).write_bytes(p.read_bytes())
        expect[f"sample/{p.name}"] = Expect("admitted", "")
    base = json.loads(genuine[0].read_text(encoding="utf-8"))
    bad = folder / "hostile"
    bad.mkdir(exist_ok=True)
    for name, (make, exp) in CONSISTENT.items():
        _write(bad / name, make(copy.deepcopy(base)))
        expect[f"hostile/{name}"] = exp

    # Six real generation errors, declared as none.
    errors = {"nli_v1": ["timeout"] * 6 + [None] * 6}
    doc = build_result("first", model="errs", display_name="errors hidden", errors=errors)
    _write(bad / "hidden_generation_errors.json", _hidden_generation_errors(doc))
    expect["hostile/hidden_generation_errors.json"] = Expect("excluded", "generation_errors")

    # Duplicate keys, the forged value first.
    text = json.dumps(base, ensure_ascii=False)
    forged = text.replace('"yoxla": ', '"yoxla": 99.0, "yoxla": ', 1)
    (bad / "duplicate_keys.json").write_text(forged, encoding="utf-8")
    expect["hostile/duplicate_keys.json"] = Expect("excluded", "appears twice")

    # Parser bombs.
    (bad / "deep_nesting.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    expect["hostile/deep_nesting.json"] = Expect("excluded", "levels deep")
    (bad / "big_integer.json").write_text(
        text.replace('"generation_errors": 0', '"generation_errors": ' + "9" * 5000, 1)
    )
    expect["hostile/big_integer.json"] = Expect("excluded", "digits")
    (bad / "lone_surrogate.json").write_text(text.replace('"display_name": "', '"display_name": "\\ud800', 1))
    expect["hostile/lone_surrogate.json"] = Expect("excluded", "surrogate")
    deep = text.replace('"near_miss": {}', '"near_miss": ' + "[" * 1020 + "]" * 1020, 1)
    (bad / "deep_metrics.json").write_text(deep, encoding="utf-8")
    expect["hostile/deep_metrics.json"] = Expect("excluded", "levels deep")

    # Not regular files.
    fifo = bad / "fifo.json"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        expect["hostile/fifo.json"] = Expect("excluded", "FIFO")
    if Path("/dev/zero").exists():
        (bad / "zeros.json").symlink_to("/dev/zero")
        expect["hostile/zeros.json"] = Expect("excluded", "symbolic link")

    # v1 without its rows: invented ids, every score 99; and a metric that is not a number.
    v1 = load_edition("v1")
    rows = synthetic_rows(v1, seed=7)
    v1doc = build_result("majority", edition=v1, rows=rows, model="v1-forger", display_name="v1 forger")
    for t in v1doc["tasks"].values():
        t["score"] = 99.0
    (folder / "v1").mkdir(exist_ok=True)
    _write(folder / "v1" / "invented_ids_99.json", refinalize(v1doc))
    expect["v1/invented_ids_99.json"] = Expect("excluded", "is not the primary metric")
    v1doc = build_result("majority", edition=v1, rows=rows, model="v1-high", display_name="v1 high")
    v1doc["tasks"]["extractive_qa_v1"]["metrics"]["span_recall"] = "high"
    _write(folder / "v1" / "span_recall_high.json", refinalize(v1doc))
    expect["v1/span_recall_high.json"] = Expect("excluded", "span_recall")

    # A verified file, then a newer unsigned one claiming the same model.
    key, pub, kid = keygen(keys_dir / "maintainer")
    trusted = keys_dir / "trusted_keys.json"
    trusted.write_text(
        json.dumps({"keys": [{"key_id": kid, "public_key": pub.read_text().strip(), "owner": "t"}]})
    )
    verified = build_result(
        "majority", model="trusted-model", display_name="trusted model", created_at="2026-01-01T00:00:00Z"
    )
    sign(verified, key)
    (folder / "verified").mkdir(exist_ok=True)
    _write(folder / "verified" / "trusted.json", verified)
    expect["verified/trusted.json"] = Expect("admitted", "")
    newer = build_result(
        "first", model="trusted-model", display_name="trusted model", created_at="2026-06-01T00:00:00Z"
    )
    _write(bad / "unsigned_newer.json", newer)
    expect["hostile/unsigned_newer.json"] = Expect("superseded", "never replaces a verified one")

    # Two different models whose files share a base name in different folders.
    (folder / "twin_a").mkdir(exist_ok=True)
    (folder / "twin_b").mkdir(exist_ok=True)
    _write(folder / "twin_a" / "model.json", build_result("random", model="twin-a", display_name="twin A"))
    _write(folder / "twin_b" / "model.json", build_result("longest", model="twin-b", display_name="twin B"))
    expect["twin_a/model.json"] = Expect("admitted", "")
    expect["twin_b/model.json"] = Expect("admitted", "")
    return expect, trusted
