"""Groups, controls and a declared ranking order for eval suites (task and suite ``metadata``).

One two-choice task, ``qrup_v1``: twelve rows, two of them controls (``nezaret``) and most of
them in groups (``qrup``). The offline ``suite-baseline`` strategies answer it without a
model: ``first`` always says A, ``majority`` always B (the most frequent target). Counted by
hand over the ten scored rows:

======== ========= ======================================== ==========================
strategy  accuracy  groups of two or more (g1, g2, g4)        with the controls counted
======== ========= ======================================== ==========================
first     5/10      g1 (A A A A) consistent: 1/3              5/12, g1 broken by c1: 0/3
majority  5/10      g2 (B B), g4 (B B) consistent: 2/3        7/12
======== ========= ======================================== ==========================

``tek`` is a group of one row (not a group), ``r10`` has no group; both still count in the
accuracy. The suite declares ``ranking: yoxla, group_consistency``: equal suite scores, so
``majority`` ranks above ``first`` (by name it would be the other way round).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from suites_helpers import write_manifest

from yoxla.cli.main import run as cli_run
from yoxla.record.signing import finalize
from yoxla.views.leaderboard_tables import leaderboard_frame

ROWS: list[dict[str, Any]] = [
    {"id": "r01", "sual": "1", "qrup": "g2", "nezaret": False, "cavab": "B"},
    {"id": "r02", "sual": "2", "qrup": "g2", "nezaret": False, "cavab": "B"},
    {"id": "r03", "sual": "3", "qrup": "g4", "nezaret": False, "cavab": "B"},
    {"id": "r04", "sual": "4", "qrup": "g4", "nezaret": False, "cavab": "B"},
    {"id": "r05", "sual": "5", "qrup": "g1", "nezaret": False, "cavab": "A"},
    {"id": "r06", "sual": "6", "qrup": "g1", "cavab": "A"},
    {"id": "r07", "sual": "7", "qrup": "g1", "cavab": "A"},
    {"id": "r08", "sual": "8", "qrup": "g1", "cavab": "A"},
    {"id": "r09", "sual": "9", "qrup": "tek", "cavab": "A"},
    {"id": "r10", "sual": "10", "cavab": "B"},
    {"id": "c1", "sual": "11", "qrup": "g1", "nezaret": True, "cavab": "B"},
    {"id": "c2", "sual": "12", "nezaret": "bəli", "cavab": "B"},
]
TASK_ID = "qrup_v1"
SUITE = "qrup"


def task_doc(**metadata: str) -> dict[str, Any]:
    return {
        "id": TASK_ID,
        "name": "Qruplar",
        "type": "multiple_choice",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "Sual {{sual}}: A yoxsa B?\nCavab:",
        "target_template": "{{cavab}}",
        "choices": ["A", "B"],
        "output_extraction": {"type": "label_set", "labels": ["A", "B"], "case_sensitive": True},
        "metrics": [{"id": "accuracy"}],
        "grader": {"type": "builtin", "name": "accuracy"},
        "metadata": {"group_field": "qrup", "control_field": "nezaret", **metadata},
    }


def make_suite(root: Path, ranking: str | None = "yoxla, group_consistency", **metadata: str) -> Path:
    """suites/qrup/qrup.yaml under ``root`` with its rows and frozen hashes."""
    from yoxla.contract.hashing import hash_file_path, write_hash_file
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import current_hashes

    folder = root / "suites" / SUITE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8"
    )
    top: dict[str, str] = {"name": SUITE}
    if ranking is not None:
        top["ranking"] = ranking
    doc = {"schema_version": "2026-05-27", "metadata": top, "tasks": [task_doc(**metadata)]}
    path = folder / f"{SUITE}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    loaded = load_manifest(path)
    write_hash_file(hash_file_path(path), loaded.name, current_hashes(loaded))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The suite under tmp and the suite-baseline result documents of ``first`` and ``majority``."""
    tmp = tmp_path_factory.mktemp("groups")
    suite = make_suite(tmp)
    docs = {}
    for strategy in ("first", "majority"):
        argv = ["run", "--suite", str(suite), "--provider", "suite-baseline", "--model", strategy]
        argv += ["--run-id", f"qrup-{strategy}", "--no-progress"]
        argv += ["--runs-dir", str(tmp / "runs"), "--results-dir", str(tmp / "results")]
        assert cli_run(argv) == 0
        path = tmp / "results" / "suites" / SUITE / f"suite-baseline__{strategy}.json"
        docs[strategy] = json.loads(path.read_text(encoding="utf-8"))
    return tmp, docs


def _scored(tmp_path: Path, answers: dict[str, str], **metadata: str) -> dict[str, Any]:
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import prepare_task
    from yoxla.score.replay import score_suite_task
    from yoxla.score.samples import SampleOutput

    manifest = load_manifest(make_suite(tmp_path, **metadata))
    prepared = prepare_task(manifest.tasks[TASK_ID])
    outputs = [SampleOutput.from_raw(answers[i.id]) for i in prepared.items]
    scored = score_suite_task(prepared, outputs)
    assert len(scored.results) == len(ROWS)  # controls are run and scored as samples
    return scored.metrics


def test_group_consistency_and_controls_by_hand(tmp_path) -> None:
    # Right everywhere but r02 (breaks g2) and r09 (a group of one: not a group); c1 says
    # nothing valid, c2 answers.
    answers = {r["id"]: r["cavab"] for r in ROWS} | {"r02": "A", "r09": "B", "c1": "bilmirəm", "c2": "A"}
    m = _scored(tmp_path, answers)
    assert m["n"] == 10 and m["accuracy"] == pytest.approx(8 / 10)  # c1, c2 left out
    assert m["groups"] == 3 and m["group_consistency"] == pytest.approx(2 / 3)  # g1, g4 of g1, g2, g4
    assert m["controls"] == 2 and m["control_valid_rate"] == pytest.approx(1 / 2)
    assert m["outcomes"] == {"correct": 8, "wrong": 2}


def test_control_values_pick_the_controls(tmp_path) -> None:
    # Only the text "bəli" marks a control: c1 (true) is scored, and breaks g1 for an A-sayer.
    answers = dict.fromkeys((r["id"] for r in ROWS), "A")
    m = _scored(tmp_path, answers, control_values="bəli")
    assert m["controls"] == 1 and m["n"] == 11
    assert m["accuracy"] == pytest.approx(5 / 11) and m["group_consistency"] == 0.0


def test_cue_only_baselines_get_group_consistency_and_leave_controls_out(runs) -> None:
    _, docs = runs
    first, majority = (docs[s]["tasks"][TASK_ID] for s in ("first", "majority"))
    assert first["score"] == pytest.approx(50.0) and majority["score"] == pytest.approx(50.0)
    assert first["metrics"]["group_consistency"] == pytest.approx(1 / 3)
    assert majority["metrics"]["group_consistency"] == pytest.approx(2 / 3)
    for t in (first, majority):
        assert t["metrics"]["groups"] == 3 and t["metrics"]["n"] == 10
        assert t["metrics"]["controls"] == 2 and t["metrics"]["control_valid_rate"] == 1.0
        assert t["rows"] == 12 and len(t["predictions"]) == 12  # run, not scored
        marked = [p["id"] for p in t["predictions"] if p.get("control")]
        assert marked == ["c1", "c2"]
        assert all("control" not in p for p in t["predictions"] if p["id"] not in marked)


def _check(doc: dict[str, Any], root: Path) -> Any:
    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import check_document

    return check_document(doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites")))


def test_admission_rederives_group_consistency_and_controls(runs) -> None:
    tmp, docs = runs
    v = _check(docs["majority"], tmp)
    assert v.status == "admitted" and v.rechecked, v.reasons
    for key, value in (("group_consistency", 1.0), ("groups", 4), ("control_valid_rate", 0.5)):
        forged = copy.deepcopy(docs["majority"])
        forged["tasks"][TASK_ID]["metrics"][key] = value
        v = _check(finalize(forged), tmp)
        assert v.status == "excluded", key
        assert any(f"tasks.{TASK_ID}.metrics.{key} is stored as" in r for r in v.reasons), v.reasons
    unmarked = copy.deepcopy(docs["majority"])
    del unmarked["tasks"][TASK_ID]["predictions"][10]["control"]  # c1 passed off as a scored row
    v = _check(finalize(unmarked), tmp)
    assert v.status == "excluded" and any("control" in r for r in v.reasons), v.reasons


def test_group_and_control_fields_are_hashed_when_declared(tmp_path) -> None:
    from yoxla.contract.loader import load_manifest

    plain = load_manifest(make_suite(tmp_path / "a")).tasks[TASK_ID].definition_hash
    other = load_manifest(make_suite(tmp_path / "b", control_values="bəli")).tasks[TASK_ID]
    ranked = load_manifest(make_suite(tmp_path / "c", ranking=None)).tasks[TASK_ID]
    assert other.definition_hash != plain  # controls change what is scored
    assert ranked.definition_hash == plain  # the suite's ranking order changes no result


def _validate(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    code = cli_run(["suite", "validate", str(path)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"ranking": "yoxla, bogus"}, "metadata.ranking: unknown ranking metric 'bogus' for a suite"),
        ({"ranking": "mean_gold_p"}, "unknown ranking metric 'mean_gold_p' for a suite"),
        ({"ranking": "yoxla, yoxla"}, "metadata.ranking: a ranking order names a metric twice"),
    ],
)
def test_validate_refuses_an_unknown_ranking_metric(tmp_path, capsys, metadata, message) -> None:
    from suites_helpers import task

    (tmp_path / "data.jsonl").write_text('{"id": "s1", "sual": "x", "cavab": "y"}\n', encoding="utf-8")
    good = write_manifest(tmp_path, [task()], metadata={"ranking": "yoxla, group_consistency"})
    assert _validate(capsys, good)[0] == 0
    code, err = _validate(capsys, write_manifest(tmp_path, [task()], metadata=metadata))
    assert code == 2 and message in err and err.startswith("yoxla: error: "), err


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"group_field": "Qrup Adı"}, "metadata.group_field: 'Qrup Adı' is not a lower-case field name"),
        ({"control_values": "true"}, "metadata.control_values needs metadata.control_field"),
    ],
)
def test_validate_refuses_bad_group_and_control_declarations(tmp_path, capsys, metadata, message) -> None:
    from suites_helpers import task

    (tmp_path / "data.jsonl").write_text('{"id": "s1", "sual": "x", "cavab": "y"}\n', encoding="utf-8")
    code, err = _validate(capsys, write_manifest(tmp_path, [task(metadata=metadata)]))
    assert code == 2 and message in err, err


def test_suite_board_follows_the_declared_ranking(runs) -> None:
    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.board.loading import load_board, suite_board_id
    from yoxla.board.prepared import prepare

    tmp, _ = runs
    data = DataSource(allow_hub=False, suites=CommittedSuites(root=tmp / "suites"))
    prepared = prepare(load_board(tmp / "results", data=data, B=50), floors=False)
    ed = prepared.edition(suite_board_id(SUITE))
    names = [v.model_info.model if v.model_info else v.name for v in ed.standard.models]
    assert names == ["majority", "first"]  # equal suite scores; the tie goes to group consistency
    assert ed.standard.by_key == {v.key: i for i, v in enumerate(ed.standard.models)}
    assert ed.order == ("yoxla", "group_consistency")
    assert ed.order_text.startswith(
        "Ranked by the suite score, the mean of its task scores (higher first), then group "
        "consistency, the mean over the tasks that declare groups (higher first);"
    )
    frame = leaderboard_frame(ed)
    assert len(frame) == 2


def test_a_task_whose_every_row_is_a_control_is_refused(tmp_path, capsys) -> None:
    # Every row has a non-empty "sual": all would be controls, leaving nothing to score (an
    # accuracy over n = 0 would read 0.0); validate refuses it in one line instead.
    path = make_suite(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "control_field: nezaret" in text
    path.write_text(text.replace("control_field: nezaret", "control_field: sual"), encoding="utf-8")
    code, err = _validate(capsys, path)
    assert code == 2 and "every row is a control" in err and "'sual'" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
