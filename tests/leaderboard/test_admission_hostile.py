"""Admission that no file can fool, crash or stall: one regression test per finding."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from leaderboard_helpers import LEGACY, REPO, write

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import admit, check_bytes, check_document, check_file, load_trusted_keys
from yoxla.admission.verdict import ADMITTED, EXCLUDED, SUPERSEDED
from yoxla.board.loading import find_result_files, load_board
from yoxla.testing.hostile import refinalize, write_hostile_folder
from yoxla.testing.synthetic_v3 import sample_result
from yoxla.views.leaderboard_tables import leaderboard_table
from yoxla.views.methodology import excluded_table


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "results"
    expect, trusted = write_hostile_folder(folder, LEGACY, root / "keys")
    return folder, expect, trusted


@pytest.fixture(scope="module")
def verdicts(hostile: tuple[Path, dict[str, Any], Path]) -> dict[str, Any]:
    folder, _, trusted = hostile
    board = load_board(folder, allow_hub=False, trusted_keys=trusted)
    return {v.key: v for v in board.verdicts}


def _check(verdicts: dict[str, Any], expect: dict[str, Any], name: str) -> None:
    v, e = verdicts[name], expect[name]
    assert v.status == e.status, (name, v.status, v.reasons)
    if e.reason:
        assert any(e.reason in r for r in v.reasons + v.notes), (name, v.reasons)
    for r in v.reasons + v.notes:
        assert "\n" not in r and "\x1b" not in r and "\u202e" not in r and len(r) <= 400, r


@pytest.mark.parametrize(
    "name",
    [
        "hostile/edited_metrics.json",
        "hostile/flipped_predictions.json",
        "hostile/hidden_generation_errors.json",
        "hostile/fake_task_score.json",
        "hostile/duplicate_keys.json",
    ],
)
def test_forged_derived_fields_are_re_derived_and_excluded(verdicts, hostile, name: str) -> None:
    _check(verdicts, hostile[1], name)


@pytest.mark.parametrize(
    "name",
    [
        "hostile/deep_nesting.json",
        "hostile/big_integer.json",
        "hostile/lone_surrogate.json",
        "hostile/deep_metrics.json",
        "hostile/four_megabyte_answer.json",
        "hostile/fifo.json",
        "hostile/zeros.json",
        "hostile/five_megabyte_name.json",
        "hostile/workflow_injection.json",
        "hostile/bidi_name.json",
    ],
)
def test_files_that_crashed_or_stalled_admission_get_one_verdict(verdicts, hostile, name: str) -> None:
    _check(verdicts, hostile[1], name)


def test_display_names_are_unique_and_lookalikes_are_excluded_naming_the_other_file(
    verdicts, hostile
) -> None:
    for name in ("hostile/cyrillic_lookalike.json", "hostile/same_display_name.json"):
        _check(verdicts, hostile[1], name)
        assert any("sample/" in r for r in verdicts[name].reasons)


def test_a_community_file_never_replaces_a_verified_one(verdicts, hostile) -> None:
    _check(verdicts, hostile[1], "hostile/unsigned_newer.json")
    shown = verdicts["verified/trusted.json"]
    assert shown.status == ADMITTED and shown.trust == "verified"


def test_v1_files_without_rows_are_checked_for_consistency(verdicts, hostile) -> None:
    _check(verdicts, hostile[1], "v1/invented_ids_99.json")
    _check(verdicts, hostile[1], "v1/span_recall_high.json")


def test_board_keys_are_paths_so_same_base_names_stay_apart(verdicts, hostile) -> None:
    a, b = verdicts["twin_a/model.json"], verdicts["twin_b/model.json"]
    assert a.status == b.status == ADMITTED and a.key != b.key


def test_every_file_gets_the_expected_verdict(verdicts, hostile) -> None:
    expect = hostile[1]
    assert set(verdicts) == set(expect)  # FIFOs and links are listed, not skipped
    for name in expect:
        _check(verdicts, expect, name)


def test_verify_prints_one_verdict_per_file_and_admits_only_the_genuine(hostile) -> None:
    folder, expect, trusted = hostile
    files = sorted(str(p) for p in find_result_files(folder))
    code = "import sys; from yoxla.cli.main import run; sys.exit(run(sys.argv[1:]))"
    proc = subprocess.run(
        [sys.executable, "-c", code, "verify", "--no-hub", "--trusted-keys", str(trusted), *files],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    verdict_lines = [
        ln for ln in proc.stdout.splitlines() if ln.split(" ", 1)[0] in ("ADMITTED", "EXCLUDED", "SUPERSEDED")
    ]
    assert len(verdict_lines) == len(files)
    admitted = {ln.split(" ", 2)[1].rstrip(":") for ln in verdict_lines if ln.startswith("ADMITTED")}
    want = {str(folder / k) for k, e in expect.items() if e.status == ADMITTED}
    assert admitted == want
    assert "\x1b" not in proc.stdout and not any(ln.startswith("::") for ln in proc.stdout.splitlines())


def test_a_file_with_six_generation_errors_is_flagged_not_hidden(tmp_path: Path) -> None:
    doc = sample_result("first", model="errs", errors={"nli_v1": ["timeout"] * 6 + [None] * 6})
    v = check_file(write(tmp_path / "e.json", doc), data=DataSource(allow_hub=False))
    assert v.status == ADMITTED and v.generation_errors == 6
    assert any("6 generation error" in n for n in v.notes)


def test_thinking_runs_are_marked_and_ranked_apart(tmp_path: Path) -> None:
    on = write(tmp_path / "on.json", sample_result("first", model="m", display_name="m", thinking=True))
    off = write(tmp_path / "off.json", sample_result("first", model="m", display_name="m"))
    vs = {Path(v.path).name: v for v in admit([on, off], data=DataSource(allow_hub=False))}
    assert vs["on.json"].status == vs["off.json"].status == ADMITTED  # different boards: no clash
    assert vs["on.json"].group == "thinking" and vs["off.json"].group == "standard"
    assert any("thinking" in n for n in vs["on.json"].notes)


def test_unsigned_later_file_supersedes_only_at_equal_trust(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", sample_result("first", model="m", created_at="2026-01-01T00:00:00Z"))
    new = write(
        tmp_path / "new.json", sample_result("majority", model="m", created_at="2026-02-01T00:00:00Z")
    )
    vs = {Path(v.path).name: v for v in admit([old, new], data=DataSource(allow_hub=False))}
    assert vs["new.json"].status == ADMITTED and vs["old.json"].status == SUPERSEDED


# Property: whatever the document, check_document returns a verdict and never raises. -----------

_BASE = json.loads(LEGACY[0].read_text(encoding="utf-8")) if LEGACY else {}
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["\ud800", "\u202e", "\n::error::x", "x" * 10_000]),
)
_json = st.recursive(
    _leaf,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=30,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in list(doc.items())[:12]:
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:2]):
            out += _paths(v, (*prefix, i))
    return out


_PATHS = _paths(_BASE)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(_PATHS), value=_json, refinal=st.booleans())
def test_check_document_always_returns_a_verdict(path: tuple[Any, ...], value: Any, refinal: bool) -> None:
    doc = copy.deepcopy(_BASE)
    if path:
        node = doc
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
    else:
        doc = value
    if refinal and isinstance(doc, dict):
        try:
            refinalize(doc)
        except Exception:
            pass  # a forger's tool may fail on nonsense; admission may not
    v = check_document(doc, data=DataSource(allow_hub=False))
    assert v.status in (ADMITTED, EXCLUDED)
    assert all(isinstance(r, str) and "\n" not in r and len(r) < 500 for r in v.reasons)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_check_bytes_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    v = check_bytes(data, data=DataSource(allow_hub=False))
    assert v.status == EXCLUDED and v.reasons


def test_trusted_keys_of_the_fixture_make_the_signed_file_verified(hostile) -> None:
    folder, _, trusted = hostile
    v = check_file(
        folder / "verified" / "trusted.json",
        trusted=load_trusted_keys(trusted),
        data=DataSource(allow_hub=False),
    )
    assert v.trust == "verified"


def test_app_board_serves_whatever_the_folder_holds(hostile) -> None:

    folder, expect, trusted = hostile
    board = load_board(folder, allow_hub=False, trusted_keys=trusted)
    shown = board.shown("sample")
    assert {v.key for v in shown} >= {f"sample/{p.name}" for p in LEGACY}
    assert len(leaderboard_table(board, "sample")) == len(shown)
    assert len(excluded_table(board)) == sum(e.status != ADMITTED for e in expect.values())
