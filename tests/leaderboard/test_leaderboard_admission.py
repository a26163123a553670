"""Admission: committed files pass; every kind of corruption is excluded with the right reason."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from leaderboard_helpers import REPO, write

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import MAX_BYTES, admit, check_file, load_trusted_keys
from yoxla.admission.verdict import ADMITTED, COMMUNITY, EXCLUDED, NOT_RECHECKED, SUPERSEDED, VERIFIED
from yoxla.board.loading import load_board
from yoxla.contract.benchmark import benchmark_groups
from yoxla.record.signing import finalize, keygen, sign
from yoxla.score.stats import block_scores, yoxla_score
from yoxla.testing.synthetic import build_result, edition_for_rows, synthetic_rows
from yoxla.testing.synthetic_v3 import sample_result
from yoxla.views.leaderboard_tables import leaderboard_table
from yoxla.views.methodology import excluded_table


def refinalize(doc: dict[str, Any]) -> dict[str, Any]:
    """Make the summary scores and the digest consistent again, as a careful forger would."""
    doc["scores"]["tasks"] = {tid: t["score"] for tid, t in doc["tasks"].items()}
    blocks = block_scores(benchmark_groups(), doc["scores"]["tasks"])
    doc["scores"]["blocks"] = blocks
    doc["scores"]["yoxla"] = yoxla_score(blocks)
    return finalize(doc)


def _changed_score(doc: dict[str, Any], tmp: Path) -> Path:
    doc["tasks"]["nli_v1"]["score"] = min(100.0, doc["tasks"]["nli_v1"]["score"] + 25.0)
    return write(tmp / "changed_score.json", refinalize(doc))


def _changed_digest(doc: dict[str, Any], tmp: Path) -> Path:
    doc["content_sha256"] = "sha256:" + "0" * 64
    return write(tmp / "changed_digest.json", doc)


def _edited_without_digest(doc: dict[str, Any], tmp: Path) -> Path:
    doc["model"]["display_name"] = "better name"
    return write(tmp / "edited.json", doc)


def _bad_signature(doc: dict[str, Any], tmp: Path) -> Path:
    key, _, _ = keygen(tmp / "keys" / "k")
    sign(doc, key)
    sig = doc["signature"]["value"]
    doc["signature"]["value"] = ("A" if sig[0] != "A" else "B") + sig[1:]
    return write(tmp / "bad_signature.json", doc)


def _missing_task(doc: dict[str, Any], tmp: Path) -> Path:
    del doc["tasks"]["sts_v1"]
    return write(tmp / "missing_task.json", refinalize(doc))


def _missing_example(doc: dict[str, Any], tmp: Path) -> Path:
    doc["tasks"]["nli_v1"]["predictions"].pop(0)
    return write(tmp / "missing_example.json", refinalize(doc))


def _duplicated_example(doc: dict[str, Any], tmp: Path) -> Path:
    preds = doc["tasks"]["nli_v1"]["predictions"]
    preds.append(copy.deepcopy(preds[0]))
    return write(tmp / "duplicated_example.json", refinalize(doc))


def _wrong_fingerprint(doc: dict[str, Any], tmp: Path) -> Path:
    doc["tasks"]["nli_v1"]["fingerprint"] = "sha256:" + "1" * 64
    return write(tmp / "wrong_fingerprint.json", refinalize(doc))


def _wrong_suite_hash(doc: dict[str, Any], tmp: Path) -> Path:
    doc["suite_hash"] = "sha256:" + "2" * 64
    return write(tmp / "wrong_suite_hash.json", refinalize(doc))


def _wrong_prompt_hash(doc: dict[str, Any], tmp: Path) -> Path:
    doc["tasks"]["nli_v1"]["prompt_hash"] = "sha256:" + "3" * 64
    return write(tmp / "wrong_prompt_hash.json", refinalize(doc))


def _nan(doc: dict[str, Any], tmp: Path) -> Path:
    refinalize(doc)
    doc["tasks"]["nli_v1"]["metrics"]["accuracy"] = float("nan")
    p = tmp / "nan.json"
    p.write_text(json.dumps(doc), encoding="utf-8")  # json writes NaN by default
    return p


def _negative_count(doc: dict[str, Any], tmp: Path) -> Path:
    doc["tasks"]["nli_v1"]["metrics"]["n_valid"] = -3
    return write(tmp / "negative_count.json", refinalize(doc))


def _truncated(doc: dict[str, Any], tmp: Path) -> Path:
    text = json.dumps(doc, ensure_ascii=False)
    p = tmp / "truncated.json"
    p.write_text(text[: len(text) // 2], encoding="utf-8")
    return p


def _huge(doc: dict[str, Any], tmp: Path) -> Path:
    p = tmp / "huge.json"
    with p.open("w", encoding="utf-8") as f:
        f.write(json.dumps(doc))
        f.write(" " * (60 * 1024 * 1024))
    return p


def _not_object(doc: dict[str, Any], tmp: Path) -> Path:
    return write(tmp / "list.json", [doc])  # type: ignore[arg-type]


def _wrong_version(doc: dict[str, Any], tmp: Path) -> Path:
    doc["format_version"] = 99
    return write(tmp / "version.json", refinalize(doc))


def _unknown_edition(doc: dict[str, Any], tmp: Path) -> Path:
    doc["edition"] = "v9"
    return write(tmp / "edition.json", refinalize(doc))


CORRUPTIONS: dict[str, tuple[Callable[[dict[str, Any], Path], Path], str]] = {
    "changed score": (_changed_score, "tasks.nli_v1.score is stored as"),
    "changed digest": (_changed_digest, "content_sha256 does not match"),
    "edited, digest not updated": (_edited_without_digest, "content_sha256 does not match"),
    "bad signature": (_bad_signature, "signature does not verify"),
    "missing task": (_missing_task, "task(s) missing: sts_v1"),
    "missing example": (_missing_example, "missing from the predictions"),
    "duplicated example": (_duplicated_example, "predicted more than once"),
    "wrong fingerprint": (_wrong_fingerprint, "fingerprint differs"),
    "wrong suite hash": (_wrong_suite_hash, "suite hash"),
    "wrong prompt hash": (_wrong_prompt_hash, "prompt hash differs"),
    "NaN": (_nan, "NaN"),
    "negative count": (_negative_count, "n_valid"),
    "truncated JSON": (_truncated, "looks truncated"),
    "60 MB file": (_huge, "over the 50 MB limit"),
    "not an object": (_not_object, "not a JSON object"),
    "unknown format version": (_wrong_version, "format"),
    "unknown edition": (_unknown_edition, "at edition"),
}


def test_committed_files_are_admitted(committed: list[Path]) -> None:
    """Fails when scoring changed and the committed baselines were not regenerated."""
    verdicts = admit(committed, data=DataSource(allow_hub=False))
    for v in verdicts:
        assert v.status == ADMITTED, f"{v.path}: {v.reasons}"
        assert v.rechecked and v.trust == COMMUNITY
    assert {v.model for v in verdicts} >= {"first", "majority", "random", "overlap", "longest", "most_linked"}


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
def test_corruption_is_excluded_with_reason(kind: str, base_doc: dict[str, Any], tmp_path: Path) -> None:
    make, expected = CORRUPTIONS[kind]
    path = make(base_doc, tmp_path)
    v = check_file(path, data=DataSource(allow_hub=False))
    assert v.status == EXCLUDED
    assert any(expected in r for r in v.reasons), v.reasons


def test_changed_score_gives_only_the_rescoring_reason(base_doc: dict[str, Any], tmp_path: Path) -> None:
    v = check_file(_changed_score(base_doc, tmp_path), data=DataSource(allow_hub=False))
    assert len(v.reasons) == 1 and "nli_v1" in v.reasons[0]


def test_app_starts_with_every_corruption_present(
    committed: list[Path], base_doc: dict[str, Any], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    for p in committed:
        shutil.copy(p, results / "sample" / p.name) if (results / "sample").exists() else (
            (results / "sample").mkdir(parents=True),
            shutil.copy(p, results / "sample" / p.name),
        )
    bad = results / "bad"
    bad.mkdir()
    for make, _ in CORRUPTIONS.values():
        make(copy.deepcopy(base_doc), bad)
    (bad / "keys").exists() and shutil.rmtree(bad / "keys")
    board = load_board(results, allow_hub=False)
    assert len(board.shown("sample")) == len(committed)
    assert len([v for v in board.excluded() if v.status == EXCLUDED]) == len(CORRUPTIONS)

    assert len(leaderboard_table(board, "sample")) == len(committed)
    assert len(excluded_table(board)) == len(CORRUPTIONS)


def test_signatures_make_verified_or_community(base_doc: dict[str, Any], tmp_path: Path) -> None:
    key, pub, kid = keygen(tmp_path / "k")
    sign(base_doc, key)
    path = write(tmp_path / "signed.json", base_doc)
    untrusted = check_file(path, data=DataSource(allow_hub=False), trusted={})
    assert untrusted.status == ADMITTED and untrusted.trust == COMMUNITY and untrusted.key_id == kid
    keys = tmp_path / "trusted.json"
    keys.write_text(
        json.dumps({"keys": [{"key_id": kid, "public_key": pub.read_text().strip(), "owner": "t"}]})
    )
    trusted = check_file(path, data=DataSource(allow_hub=False), trusted=load_trusted_keys(keys))
    assert trusted.status == ADMITTED and trusted.trust == VERIFIED


def test_newer_file_supersedes_older(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", sample_result("first", model="m", created_at="2026-01-01T00:00:00Z"))
    new = write(
        tmp_path / "new.json", sample_result("majority", model="m", created_at="2026-02-01T00:00:00Z")
    )
    verdicts = {Path(v.path).name: v for v in admit([old, new], data=DataSource(allow_hub=False))}
    assert verdicts["new.json"].status == ADMITTED
    assert verdicts["old.json"].status == SUPERSEDED and "new.json" in verdicts["old.json"].reasons[0]


def test_generation_errors_are_flagged_not_excluded(tmp_path: Path) -> None:
    doc = sample_result("first", model="errs", errors={"nli_v1": ["timeout"] + [None] * 11})
    v = check_file(write(tmp_path / "e.json", doc), data=DataSource(allow_hub=False))
    assert v.status == ADMITTED and v.generation_errors == 1
    assert any("generation error" in n for n in v.notes)


def test_v1_without_data_is_admitted_unchecked(tmp_path: Path) -> None:
    from yoxla.data.editions import load_edition

    v1 = load_edition("v1")
    rows = synthetic_rows(v1)
    doc = build_result("majority", edition=v1, rows=rows, model="m")
    path = write(tmp_path / "v1.json", doc)
    v = check_file(path, data=DataSource(allow_hub=False))
    assert v.status == ADMITTED and not v.rechecked
    assert any(NOT_RECHECKED in n for n in v.notes)
    # With the rows at hand (a synthetic manifest standing in for v1's) the scores are re-checked.
    ed = edition_for_rows("v1", rows)
    doc2 = build_result("majority", edition=ed, rows=rows, model="m")
    from yoxla.admission.gold import EditionRows

    data = DataSource()
    data._cache["v1"] = EditionRows(rows, "synthetic")
    v2 = check_file(write(tmp_path / "v1b.json", doc2), data=data, editions={"v1": ed})
    assert v2.status == ADMITTED and v2.rechecked


def test_cache_never_admits_what_a_fresh_check_excludes(committed: list[Path], tmp_path: Path) -> None:
    data = DataSource(allow_hub=False)
    p = tmp_path / "f.json"
    shutil.copy(committed[0], p)
    assert check_file(p, data=data).status == ADMITTED
    doc = json.loads(p.read_text())
    doc["tasks"]["nli_v1"]["score"] = 99.0
    write(p, doc)
    assert check_file(p, data=data).status == EXCLUDED  # new bytes, new key


def test_verify_cli_exit_codes(committed: list[Path], base_doc: dict[str, Any], tmp_path: Path) -> None:
    def verify(*files: Path) -> subprocess.CompletedProcess[str]:
        code = "import sys; from yoxla.cli.main import run; sys.exit(run(sys.argv[1:]))"
        return subprocess.run(
            [sys.executable, "-c", code, "verify", "--no-hub", *map(str, files)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )

    ok = verify(*committed)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{len(committed)} of {len(committed)} file(s) admitted" in ok.stdout
    bad = verify(committed[0], _missing_example(base_doc, tmp_path))
    assert bad.returncode == 1
    assert "EXCLUDED" in bad.stdout and "missing from the predictions" in bad.stdout
    (tmp_path / "empty" / "partial").mkdir(parents=True)
    (tmp_path / "empty" / "notes.txt").write_text("no results here", encoding="utf-8")
    (tmp_path / "empty" / "partial" / "skipped.json").write_text("{}", encoding="utf-8")
    none = verify(tmp_path / "empty")
    assert none.returncode == 1
    assert none.stderr.strip() == f"error: {tmp_path / 'empty'} holds no result files (*.json)"
    mixed = verify(tmp_path / "empty", committed[0])  # the files are checked, the folder still fails
    assert mixed.returncode == 1 and "1 of 1 file(s) admitted" in mixed.stdout
    assert "holds no result files" in mixed.stderr


def test_size_limit_is_fifty_megabytes() -> None:
    assert MAX_BYTES == 50 * 1024 * 1024


def test_disk_cache_keeps_every_verdict_and_survives_a_restart(
    committed: list[Path], base_doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YOXLA_CACHE_DIR", str(tmp_path / "cache"))
    first = check_file(committed[0], data=DataSource(allow_hub=False))
    bad = check_file(_missing_example(base_doc, tmp_path), data=DataSource(allow_hub=False))
    assert bad.status == EXCLUDED
    stored = list((tmp_path / "cache" / "admission").glob("*.pickle"))
    assert len(stored) == 2  # excluded verdicts are cached too: a hostile file costs its check once
    again = check_file(committed[0], data=DataSource(allow_hub=False))  # a restart: read from disk
    assert again.status == ADMITTED and again.scores == first.scores
    assert np.array_equal(again.tasks["nli_v1"].scores, first.tasks["nli_v1"].scores)


def test_cached_unchecked_verdict_is_not_reused_once_the_rows_are_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verdict given without the rows rests on their absence: rows at hand mean a new check."""
    from yoxla.admission.gold import EditionRows
    from yoxla.data.editions import load_edition

    monkeypatch.setenv("YOXLA_CACHE_DIR", str(tmp_path / "cache"))
    rows = synthetic_rows(load_edition("v1"))
    ed = edition_for_rows("v1", rows)
    path = write(tmp_path / "v1.json", build_result("majority", edition=ed, rows=rows, model="m"))
    without = check_file(path, data=DataSource(allow_hub=False), editions={"v1": ed})
    assert without.status == ADMITTED and not without.rechecked
    data = DataSource()
    data._cache["v1"] = EditionRows(rows, "synthetic")
    with_rows = check_file(path, data=data, editions={"v1": ed})
    assert with_rows.status == ADMITTED and with_rows.rechecked


def test_published_schema_is_generated_from_the_record() -> None:
    """The committed schema file is exactly what yoxla.record.result generates (python -m yoxla.record.result)."""
    from yoxla.record.result import schema_text
    from yoxla.record.schema import published_schema_text

    assert published_schema_text() == schema_text()


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["tasks"]["nli_v1"]["metrics"].__setitem__("n_valid", -3),
        lambda d: d.__setitem__("format_version", 99),
        lambda d: d["tasks"]["nli_v1"]["predictions"][0].pop("id"),
        lambda d: d["tasks"]["nli_v1"].__setitem__("rows", "twelve"),
        lambda d: d["tasks"]["nli_v1"].__setitem__("rows", "12"),
        lambda d: d["model"].__setitem__("display_name", "x" * 5000),
    ],
    ids=[
        "negative count",
        "format version",
        "prediction without id",
        "rows not a number",
        "rows as text",
        "long name",
    ],
)
def test_record_and_published_schema_agree(edit: Callable[[dict[str, Any]], Any], base_doc) -> None:
    """The typed record refuses what the published schema refuses (no coercion of "12" to 12)."""
    import jsonschema

    from yoxla.record.result import parse_record
    from yoxla.record.schema import published_schema

    validator = jsonschema.Draft202012Validator(published_schema())
    assert list(validator.iter_errors(base_doc)) == []
    assert parse_record(base_doc)[0] is not None
    edit(base_doc)
    assert list(validator.iter_errors(base_doc)), "the published schema must refuse it too"
    record, problems = parse_record(base_doc)
    assert record is None and problems
