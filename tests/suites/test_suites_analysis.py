"""A suite's ``analysis`` section (YOXLA): breakdowns, groups, controls, gate and ranking, hashed apart.

Declared in ``analysis`` instead of the task's ``metadata``, the same keys derive the same
numbers, but no task hash covers them: the analysis hash does, in the hash file and the result
file. Changing the analysis needs no new task id, only ``suite check --write`` and a re-score
of the results made before (admission names the difference until then).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from yoxla.cli.main import run as cli_run
from yoxla.contract.errors import ManifestError

ROWS = [
    {"id": "r1", "sual": "1", "qrup": "g1", "nezaret": False, "movzu": "tarix", "cavab": "A"},
    {"id": "r2", "sual": "2", "qrup": "g1", "nezaret": False, "movzu": "tarix", "cavab": "A"},
    {"id": "r3", "sual": "3", "qrup": "g2", "nezaret": False, "movzu": "dil", "cavab": "B"},
    {"id": "r4", "sual": "4", "qrup": "g2", "nezaret": False, "movzu": "dil", "cavab": "A"},
    {"id": "c1", "sual": "5", "qrup": "g1", "nezaret": True, "movzu": "tarix", "cavab": "B"},
]
SUITE = "tehlil"
ANALYSIS = {"breakdowns": ["movzu"], "group_field": "qrup", "control_field": "nezaret"}


def task_doc(**metadata: str) -> dict[str, Any]:
    return {
        "id": "tehlil_v1",
        "dataset": {"path": "data.jsonl"},
        "prompt_template": "Sual {{sual}}: A yoxsa B?",
        "target_template": "{{cavab}}",
        "choices": ["A", "B"],
        "output_extraction": {"type": "strict"},
        "metrics": [{"id": "accuracy"}],
        "grader": {"type": "builtin", "name": "accuracy"},
        "metadata": dict(metadata),
    }


def doc(task: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    return {"schema_version": "2026-05-27", "metadata": {"name": SUITE}, "tasks": [task or task_doc()], **top}


def write(root: Path, document: dict[str, Any], freeze: bool = True) -> Path:
    folder = root / "suites" / SUITE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    path = folder / f"{SUITE}.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    if freeze:
        assert cli_run(["suite", "check", str(path), "--write"]) == 0
    return path


def _metrics(path: Path) -> dict[str, Any]:
    from yoxla.contract.loader import load_manifest
    from yoxla.prompt.prepare import prepare_task
    from yoxla.score.replay import score_suite_task
    from yoxla.score.samples import SampleOutput

    prepared = prepare_task(load_manifest(path).task("tehlil_v1"))
    return score_suite_task(prepared, [SampleOutput.from_raw("A") for _ in prepared.items]).metrics


def test_analysis_derives_what_metadata_does_but_leaves_the_task_hash_alone(tmp_path) -> None:
    from yoxla.contract.hashing import analysis_hash
    from yoxla.contract.loader import load_manifest

    in_metadata = write(
        tmp_path / "a", doc(task_doc(breakdowns="movzu", group_field="qrup", control_field="nezaret"))
    )
    in_analysis = write(tmp_path / "b", doc(analysis={"tasks": {"tehlil_v1": ANALYSIS}}))
    plain = write(tmp_path / "c", doc())
    got = _metrics(in_analysis)
    assert got == _metrics(in_metadata)
    assert got["per_movzu_accuracy"] == {"dil": {"accuracy": 0.5, "n": 2}, "tarix": {"accuracy": 1.0, "n": 2}}
    assert got["controls"] == 1 and got["n"] == 4 and got["group_consistency"] == 0.5
    hashes = {
        p: load_manifest(p).task("tehlil_v1").definition_hash for p in (in_metadata, in_analysis, plain)
    }
    assert hashes[in_analysis] == hashes[plain] != hashes[in_metadata]
    assert analysis_hash(load_manifest(plain)) is None
    assert analysis_hash(load_manifest(in_analysis)) is not None
    frozen = json.loads((in_analysis.parent / f"{SUITE}.hashes.json").read_text(encoding="utf-8"))
    assert frozen["analysis_hash"] == analysis_hash(load_manifest(in_analysis))


def test_a_new_breakdown_changes_the_analysis_hash_and_no_task_hash(tmp_path, capsys) -> None:
    path = write(tmp_path, doc(analysis={"tasks": {"tehlil_v1": {"breakdowns": ["movzu"]}}}))
    before = json.loads(path.with_name(f"{SUITE}.hashes.json").read_text(encoding="utf-8"))
    write(tmp_path, doc(analysis={"tasks": {"tehlil_v1": {"breakdowns": ["movzu", "qrup"]}}}), freeze=False)
    capsys.readouterr()
    assert cli_run(["suite", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "tehlil_v1: unchanged" in out and "analysis: changed" in out
    assert cli_run(["suite", "check", str(path), "--write"]) == 0
    after = json.loads(path.with_name(f"{SUITE}.hashes.json").read_text(encoding="utf-8"))
    assert after["tasks"] == before["tasks"] and after["analysis_hash"] != before["analysis_hash"]
    assert cli_run(["suite", "check", str(path)]) == 0


def test_admission_names_another_analysis_and_rescore_mends_it(tmp_path) -> None:
    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import check_document

    path = write(tmp_path, doc(analysis={"tasks": {"tehlil_v1": {"breakdowns": ["movzu"]}}}))
    runs, results = tmp_path / "runs", tmp_path / "results"
    argv = ["run", "--suite", str(path), "--provider", "suite-baseline", "--model", "first", "--run-id", "t1"]
    assert cli_run([*argv, "--no-progress", "--runs-dir", str(runs), "--results-dir", str(results)]) == 0
    result_path = results / "suites" / SUITE / "suite-baseline__first.json"

    def check() -> Any:
        document = json.loads(result_path.read_text(encoding="utf-8"))
        data = DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites"))
        return document, check_document(document, data=data)

    document, v = check()
    assert v.status == "admitted", v.reasons
    assert document["suite"]["analysis_hash"].startswith("sha256:")
    assert "per_movzu_accuracy" in document["tasks"]["tehlil_v1"]["breakdowns"]
    write(tmp_path, doc(analysis={"tasks": {"tehlil_v1": {"breakdowns": ["qrup"]}}}))
    _, v = check()
    assert v.status == "excluded" and any("another analysis section" in r for r in v.reasons), v.reasons
    assert cli_run(["rescore", str(runs / "t1"), "--result"]) == 0
    document, v = check()
    assert v.status == "admitted", v.reasons
    assert set(document["tasks"]["tehlil_v1"]["breakdowns"]) >= {"per_qrup_accuracy"}
    assert "per_movzu_accuracy" not in document["tasks"]["tehlil_v1"]["breakdowns"]


def test_gate_threshold_and_ranking_come_from_the_analysis(tmp_path) -> None:
    from yoxla.baselines.gate import gate
    from yoxla.contract.loader import load_manifest

    analysis = {
        "tasks": {"tehlil_v1": {"gate_threshold": 90, "gate_reason": "iki cavab: təsadüf 50-dir"}},
        "ranking": ["yoxla", "group_consistency"],
    }
    manifest = load_manifest(write(tmp_path, doc(analysis=analysis)))
    assert manifest.ranking == ("yoxla", "group_consistency")
    [verdict] = gate(manifest, {"tehlil_v1": {"first": 80.0}}, {"tehlil_v1": 50.0}, margin=15)
    assert verdict.threshold == 90 and verdict.reason == "iki cavab: təsadüf 50-dir" and verdict.passed


@pytest.mark.parametrize(
    ("task", "analysis", "top", "message"),
    [
        (None, {"tasks": {"yox_v1": {"breakdowns": ["movzu"]}}}, {}, "'yox_v1' is not a task of the suite"),
        (
            task_doc(breakdowns="movzu"),
            {"tasks": {"tehlil_v1": {"breakdowns": ["qrup"]}}},
            {},
            "analysis.tasks.tehlil_v1.breakdowns: already declared in the task's metadata",
        ),
        (
            task_doc(group_field="qrup"),
            {"tasks": {"tehlil_v1": {"control_field": "nezaret"}}},
            {},
            "declare groups and controls in one place",
        ),
        (
            None,
            {"tasks": {"tehlil_v1": {"gate_threshold": 60}}},
            {},
            "gate_threshold and gate_reason go together",
        ),
        (
            None,
            {"tasks": {"tehlil_v1": {"control_values": ["bəli"]}}},
            {},
            "control_values needs control_field",
        ),
        (None, {"tasks": {"tehlil_v1": {"breakdowns": ["Böyük"]}}}, {}, "breakdowns"),
        (
            None,
            {"ranking": ["yoxla"]},
            {"ranking": "yoxla"},
            "the ranking is already given in metadata.ranking",
        ),
        (None, {"ranking": ["bogus"]}, {}, "unknown ranking metric 'bogus'"),
        (
            None,
            {"tasks": {"tehlil_v1": {"gate_strategies": ["overlap"]}}},
            {},
            "gate_strategies needs gate_threshold",
        ),
        (None, {"gate": {"strategies": ["first", "bəxt"]}}, {}, "unknown strategy 'bəxt'"),
        (None, {"gate": {"strategies": ["first", "first"]}}, {}, "a strategy is named twice"),
        (None, {"gate": {"margin": 101}}, {}, "gate.margin"),
        (None, {"gate": {"marjin": 10}}, {}, "marjin"),
    ],
)
def test_a_bad_analysis_section_is_refused_in_one_line(tmp_path, task, analysis, top, message) -> None:
    from yoxla.contract.loader import load_document

    document = doc(task, analysis=analysis)
    document["metadata"].update(top)
    with pytest.raises(ManifestError) as err:
        load_document(document, tmp_path, "tehlil.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_example_suites_declare_no_analysis_and_keep_their_hashes(tmp_path) -> None:
    root = Path(__file__).resolve().parents[2] / "suites" / "examples"
    for name in ("oxu", "hesab", "muraciet"):
        shutil.copytree(root / name, tmp_path / name)
        frozen = json.loads((tmp_path / name / f"{name}.hashes.json").read_text(encoding="utf-8"))
        assert "analysis_hash" not in frozen
        assert cli_run(["suite", "check", str(tmp_path / name / f"{name}.yaml"), "--run-code"]) == 0


def test_the_analysis_may_declare_the_gate_and_any_ranking_metric(tmp_path) -> None:
    from yoxla.contract.hashing import analysis_hash
    from yoxla.contract.loader import load_manifest

    gate = {"margin": 10.0, "strategies": ["first", "overlap"]}
    task = {"gate_threshold": 70, "gate_reason": "söz üst-üstə düşür", "gate_strategies": ["overlap"]}
    full = {"tasks": {"tehlil_v1": task}, "gate": gate, "ranking": ["yoxla", "mean_gold_p"]}
    manifest = load_manifest(write(tmp_path / "a", doc(analysis=full)))
    assert manifest.ranking == ("yoxla", "mean_gold_p")
    assert manifest.spec is not None and manifest.spec.analysis is not None
    declared = manifest.spec.analysis.gate
    assert declared is not None and declared.strategies == ["first", "overlap"] and declared.margin == 10
    assert manifest.tasks["tehlil_v1"].spec.gate_applies_to == ("overlap",)
    # the extension's keys are hashed: each one changes the analysis hash
    hashes = {analysis_hash(manifest)}
    for cut in ("gate", "ranking"):
        hashes.add(analysis_hash(load_manifest(write(tmp_path / cut, doc(analysis={**full, cut: None})))))
    assert len(hashes) == 3
    # the declared gate: its strategies, its margin (``--margin`` overrides it), the threshold for overlap only
    from yoxla.baselines.gate import gate

    floors = {"tehlil_v1": {"first": 65.0, "overlap": 69.0, "echo": 99.0}}
    [v] = gate(manifest, floors, {"tehlil_v1": 50.0})
    assert v.scores == {"first": 65.0, "overlap": 69.0} and v.thresholds == {"first": 60.0, "overlap": 70.0}
    assert v.failures == (("first", 65.0),) and v.declared_for == ("overlap",)
    [v] = gate(manifest, floors, {"tehlil_v1": 50.0}, margin=20)
    assert v.passed and v.threshold_of("first") == 70.0
