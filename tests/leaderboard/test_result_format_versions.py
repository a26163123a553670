"""One result format with versions: runs write ``yoxla-result`` 3 (the suite body); the files of
``yoxla-suite-result`` 1 (the same body) stay admitted, on the same board as their
regeneration; any other header, or a body that is not its header's, is refused with one reason.

The ``yoxla-suite-result`` 1 fixtures (tests/leaderboard/cases/suite-v1/) are the committed
results/ files as they were before the regeneration under version 3: the sample edition's
``first`` baseline and the oxu suite's.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from leaderboard_helpers import LEGACY, REPO, write

from yoxla.admission.gold import DataSource
from yoxla.admission.rules import admit
from yoxla.admission.verdict import ADMITTED, EXCLUDED, SUPERSEDED
from yoxla.board.loading import Board, load_board
from yoxla.record.base import FORMAT, FORMAT_VERSION, SUITE_FORMAT
from yoxla.record.result import ResultFile, parse_record
from yoxla.record.schema import published_schema
from yoxla.record.signing import finalize
from yoxla.record.v2 import ResultFileV2

SUITE_V1 = Path(__file__).parent / "cases" / "suite-v1"
# (the version-1 fixture, its regeneration under version 3), by their paths under results/
PAIRS = ("sample/baseline__first.json", "suites/oxu/suite-baseline__first.json")
HEADER = ("format", "format_version", "run", "created_at", "content_sha256")


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _board(root: Path) -> Board:
    return load_board(root, data=DataSource(allow_hub=False), B=20)


def test_runs_write_version_3_of_the_one_format() -> None:
    assert (FORMAT, FORMAT_VERSION) == ("yoxla-result", 3)
    for rel in PAIRS:
        doc = _doc(REPO / "results" / rel)
        assert (doc["format"], doc["format_version"]) == ("yoxla-result", 3), rel
        old = _doc(SUITE_V1 / rel)
        assert (old["format"], old["format_version"]) == ("yoxla-suite-result", 1), rel


@pytest.mark.parametrize("rel", PAIRS)
def test_a_suite_v1_file_and_its_v3_regeneration_parse_into_one_record(rel: str) -> None:
    old, new = parse_record(_doc(SUITE_V1 / rel)), parse_record(_doc(REPO / "results" / rel))
    assert old[1] == [] and new[1] == []
    assert type(old[0]) is type(new[0]) is ResultFile
    body = {k: v for k, v in old[0].model_dump().items() if k not in HEADER}
    assert body == {k: v for k, v in new[0].model_dump().items() if k not in HEADER}


@pytest.mark.parametrize("rel", PAIRS)
def test_a_suite_v1_file_is_admitted_on_the_board_of_its_v3_regeneration(rel: str, tmp_path: Path) -> None:
    old_root, new_root, both = tmp_path / "v1", tmp_path / "v3", tmp_path / "both"
    for src, dst in ((SUITE_V1 / rel, old_root / rel), (REPO / "results" / rel, new_root / rel)):
        dst.parent.mkdir(parents=True)
        shutil.copy(src, dst)
    boards = _board(old_root), _board(new_root)
    for board, fmt in zip(boards, ("yoxla-suite-result v1", "yoxla-result v3"), strict=True):
        (v,) = board.verdicts
        assert v.status == ADMITTED and v.rechecked and v.result_format == fmt, v.reasons
    a, b = (board.verdicts[0] for board in boards)
    assert (a.edition, a.suite, a.group, a.board, a.source_suite) == (
        b.edition,
        b.suite,
        b.group,
        b.board,
        b.source_suite,
    )
    assert a.key == b.key and a.scores == b.scores
    assert {t: r.score for t, r in a.tasks.items()} == {t: r.score for t, r in b.tasks.items()}
    if a.suite is None:  # a file of the package's benchmark suite: on its edition's board
        assert a.edition == "sample" and [v.key for v in boards[0].shown("sample")] == [a.key]
    else:
        assert [v.key for v in boards[0].shown(boards[0].board_of(a))] == [a.key]
    # Side by side they compete for one place on one board: the newer (version 3) keeps it.
    write(both / Path(rel).with_name("old.json"), _doc(SUITE_V1 / rel))
    write(both / Path(rel).with_name("new.json"), _doc(REPO / "results" / rel))
    status = {Path(v.key).name: v.status for v in _board(both).verdicts}
    assert status == {"old.json": SUPERSEDED, "new.json": ADMITTED}


def _v2_body_under_v3() -> dict[str, Any]:
    doc = _doc(LEGACY[0])
    assert isinstance(parse_record(doc)[0], ResultFileV2)
    doc["format_version"] = FORMAT_VERSION
    return finalize(doc)


def _suite_format_version_3() -> dict[str, Any]:
    doc = _doc(SUITE_V1 / PAIRS[0])
    doc["format_version"] = 3
    return finalize(doc)


def _v3_body_under_v2() -> dict[str, Any]:
    doc = _doc(REPO / "results" / PAIRS[0])
    doc["format_version"] = 2
    return finalize(doc)


REFUSED = {
    "v3 header, v2 body": (
        _v2_body_under_v3,
        "'yoxla-result' version 3 at the top level: missing 'suite'; unexpected 'edition', 'suite_hash' "
        "(that is the body of 'yoxla-result' version 2)",
    ),
    "yoxla-suite-result v3": (
        _suite_format_version_3,
        "unknown format version 3 of 'yoxla-suite-result' (this leaderboard reads 'yoxla-result' "
        "version 3 or 2, 'yoxla-suite-result' version 1)",
    ),
    "v2 header, v3 body": (
        _v3_body_under_v2,
        "'yoxla-result' version 2 at the top level: missing 'edition', 'suite_hash'; unexpected 'suite' "
        "(that is the body of 'yoxla-result' version 3)",
    ),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_a_header_without_its_body_is_refused_with_one_reason(case: str, tmp_path: Path) -> None:
    make, reason = REFUSED[case]
    doc = make()
    record, problems = parse_record(doc)
    assert record is None and len(problems) == 1 and reason in problems[0], problems
    (v,) = admit([write(tmp_path / "x.json", doc)], data=DataSource(allow_hub=False))
    assert v.status == EXCLUDED and v.reasons == problems
    validator = jsonschema.Draft202012Validator(published_schema())
    assert list(validator.iter_errors(doc)), "the published schema must refuse it too"


def test_an_unknown_format_names_every_format_and_version_read() -> None:
    doc = _doc(REPO / "results" / PAIRS[0])
    for fmt, version, start in (
        ("yoxla-results", 3, "not a YOXLA result file (format is 'yoxla-results'"),
        (FORMAT, 4, "unknown format version 4 of 'yoxla-result'"),
        (FORMAT, True, "unknown format version True of 'yoxla-result'"),
        (SUITE_FORMAT, 2, "unknown format version 2 of 'yoxla-suite-result'"),
    ):
        bad = copy.deepcopy(doc) | {"format": fmt, "format_version": version}
        record, problems = parse_record(bad)
        assert record is None and len(problems) == 1, problems
        assert problems[0].startswith(start), problems
        assert "'yoxla-result' version 3 or 2, 'yoxla-suite-result' version 1" in problems[0]


def test_the_record_itself_refuses_a_header_pair_that_does_not_exist() -> None:
    """Dispatch aside, the model checks its header pair (a Literal each, one pair of them)."""
    doc = _suite_format_version_3()
    with pytest.raises(ValueError, match="yoxla-suite-result does not come in version 3"):
        ResultFile.model_validate(doc)
    assert ResultFile.model_validate(doc | {"format": FORMAT}).format_version == 3
