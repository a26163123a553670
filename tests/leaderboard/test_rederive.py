"""Admission of suite result files: only with the committed suite, every derived field re-derived.

The files are real runs of the offline ``suite-baseline`` provider on the shipped example
suites. Hostile edits (an unknown suite, a changed hash, forged metrics and per-sample
scores, a partial run, smuggled grader code) are excluded with a reason naming what is
wrong; code that arrives in a file is never run.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import admit, check_document, check_file
from yoxla.cli.main import run as cli_run
from yoxla.record.signing import finalize, write_result

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "suites" / "examples"


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """suite-baseline results: oxu (first, random), hesab (echo), muraciet (majority)."""
    tmp = tmp_path_factory.mktemp("suite-results")
    out = {}
    for suite, strategy in (("oxu", "first"), ("oxu", "random"), ("hesab", "echo"), ("muraciet", "majority")):
        argv = ["run", "--suite", str(EXAMPLES / suite / f"{suite}.yaml"), "--provider", "suite-baseline"]
        argv += ["--model", strategy, "--run-id", f"{suite}-{strategy}", "--no-progress"]
        argv += ["--runs-dir", str(tmp / "runs"), "--results-dir", str(tmp / "results")]
        assert cli_run(argv) == 0
        path = tmp / "results" / "suites" / suite / f"suite-baseline__{strategy}.json"
        out[f"{suite}/{strategy}"] = json.loads(path.read_text(encoding="utf-8"))
    return out


def _check(doc: dict[str, Any], root: Path | None = None):
    return check_document(doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=root)))


def test_baseline_results_of_every_example_are_admitted(docs) -> None:
    for name, doc in docs.items():
        v = _check(doc)
        assert v.status == "admitted" and v.rechecked, (name, v.reasons)
        assert v.suite == name.split("/")[0] and v.edition is None and v.group == "standard"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        node: Any = doc
        keys = [int(k) if k.isdigit() else k for k in path.split(".")]
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value

    return edit


def _drop_prediction(doc: dict[str, Any]) -> None:
    task = doc["tasks"]["oxu_v1"]
    task["predictions"].pop(3)
    task["rows"] -= 1


HOSTILE = [
    ("unknown suite", _set("suite.id", "yoxdur"), "suite 'yoxdur' is not committed in this repository"),
    ("changed task hash", _set("suite.tasks.oxu_v1.hash", "sha256:" + "0" * 64), "task hash differs"),
    ("changed suite hash", _set("suite.suite_hash", "sha256:" + "1" * 64), "suite hash"),
    (
        "forged metric",
        _set("tasks.oxu_v1.metrics.accuracy", 0.9),
        "tasks.oxu_v1.metrics.accuracy is stored as 0.9",
    ),
    ("forged task score", _set("tasks.oxu_v1.score", 90.0), "tasks.oxu_v1.score is stored as 90.0"),
    (
        "forged per-sample score",
        _set("tasks.oxu_v1.predictions.1.scores", {"accuracy": 1.0}),
        "tasks.oxu_v1.predictions[1].scores.accuracy is stored as 1.0",
    ),
    (
        "forged extracted answer",
        _set("tasks.oxu_v1.predictions.2.extracted", "D"),
        "tasks.oxu_v1.predictions[2].extracted",
    ),
    ("forged breakdown", _set("tasks.oxu_v1.breakdowns.per_topic_accuracy.tarix.n", 5), "per_topic_accuracy"),
    ("forged suite score", _set("scores.suite", 99.0), "summary scores: scores.suite"),
    ("partial run", _set("run.conditions.limit", 5), "a partial run"),
    ("task filter", _set("run.conditions.tasks", ["oxu_v1"]), "a partial run"),
    ("missing prediction", _drop_prediction, "item ids missing from the predictions: 'oxu-04'"),
    (
        "a judgement nothing asked for",
        _set(
            "tasks.oxu_v1.predictions.0.judgements",
            [
                {
                    "sample_id": "oxu-01",
                    "call": 0,
                    "request": {"input": "x"},
                    "request_sha256": "sha256:" + "2" * 64,
                    "response": {"output_text": "bəli"},
                }
            ],
        ),
        "predictions[0].judgements",
    ),
    (
        "definition hash changed, task hash kept",
        _set("suite.tasks.oxu_v1.definition", "sha256:" + "3" * 64),
        "task oxu_v1: definition hash differs from the committed task's",
    ),
    (
        "data fingerprint changed, task hash kept",
        _set("suite.tasks.oxu_v1.data.dataset", "sha256:" + "4" * 64),
        "task oxu_v1: the fingerprint of its dataset differs from the committed task's",
    ),
    (
        "a changed few-shot fingerprint",
        _set("suite.tasks.oxu_v1.data.fewshot", "sha256:" + "5" * 64),
        "task oxu_v1: the fingerprint of its fewshot differs",
    ),
    (
        "no fingerprint of the dataset",
        _set("suite.tasks.oxu_v1.data", {}),
        "no fingerprint is stored for its dataset",
    ),
    (
        "a Hub commit for a local dataset",
        _set("suite.tasks.oxu_v1.commits", {"dataset": {"owner/name": "a" * 40}}),
        "a Hugging Face commit is stored for its dataset",
    ),
    ("grader code in the suite block", _set("suite.grader", {"source": "import os"}), "suite.grader"),
    ("a path leaving the repository", _set("suite.path", "../../etc/oxu.yaml"), "suite.path"),
    ("code beside a prediction", _set("tasks.oxu_v1.predictions.0.grader_source", "x"), "grader_source"),
]


@pytest.mark.parametrize(("what", "edit", "reason"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_suite_files_are_excluded(docs, what, edit, reason) -> None:
    doc = copy.deepcopy(docs["oxu/first"])
    edit(doc)
    v = _check(finalize(doc))
    assert v.status == "excluded", what
    assert any(reason in r for r in v.reasons), v.reasons


def test_each_differing_hash_gives_its_own_reason(docs) -> None:
    """The definition and the fingerprint both forged, the task hash kept: two reasons, one each."""
    doc = copy.deepcopy(docs["oxu/first"])
    stored = doc["suite"]["tasks"]["oxu_v1"]
    stored["definition"] = "sha256:" + "6" * 64
    stored["data"]["dataset"] = "sha256:" + "7" * 64
    v = _check(finalize(doc))
    assert v.status == "excluded"
    assert [r.split(":")[0] for r in v.reasons] == ["task oxu_v1", "task oxu_v1"], v.reasons
    assert "definition hash differs" in v.reasons[0] and "fingerprint of its dataset" in v.reasons[1]


def test_a_fingerprint_of_data_the_task_never_reads_is_excluded(docs) -> None:
    doc = copy.deepcopy(docs["hesab/echo"])
    (tid,) = doc["suite"]["tasks"]
    doc["suite"]["tasks"][tid]["data"]["fewshot"] = "sha256:" + "8" * 64
    v = _check(finalize(doc))
    assert v.status == "excluded"
    assert v.reasons == [
        f"task {tid}: a fingerprint is stored for a fewshot the committed task does not read"
    ]


def test_grader_code_named_by_a_result_file_is_never_run(docs, tmp_path) -> None:
    """A file pointing at another manifest with the same suite id is scored with the committed one."""
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "evil"
    shutil.copytree(EXAMPLES / "oxu", evil)
    (evil / "grader.py").write_text(
        f"def grade(sample, item):\n    open({str(marker)!r}, 'w').write('x')\n    return 1.0\n",
        encoding="utf-8",
    )
    text = (evil / "oxu.yaml").read_text(encoding="utf-8")
    (evil / "oxu.yaml").write_text(
        text.replace(
            "grader:\n      type: builtin\n      name: accuracy",
            "grader: {type: python, path: grader.py, metric_id: accuracy}",
        ),
        encoding="utf-8",
    )
    doc = copy.deepcopy(docs["oxu/first"])
    doc["suite"]["path"] = "evil/oxu.yaml"
    for p in doc["tasks"]["oxu_v1"]["predictions"]:
        p["scores"] = {"accuracy": 1.0}
    v = _check(finalize(doc))
    assert v.status == "excluded" and "predictions[1].scores.accuracy" in v.reasons[0]
    honest = copy.deepcopy(docs["oxu/first"])
    honest["suite"]["path"] = "evil/oxu.yaml"
    v = _check(finalize(honest))
    assert v.status == "admitted" and any(
        "the committed one is suites/examples/oxu/oxu.yaml" in n for n in v.notes
    )
    assert not marker.exists()


def _copy_examples(root: Path) -> Path:
    suites = root / "suites"
    shutil.copytree(EXAMPLES, suites / "examples")
    return suites


def test_a_committed_suite_changed_in_place_admits_nothing(docs, tmp_path) -> None:
    suites = _copy_examples(tmp_path)
    manifest = suites / "examples" / "oxu" / "oxu.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("Cavab:", "Cavabın:"), encoding="utf-8")
    v = _check(docs["oxu/first"], suites)
    assert v.status == "excluded"
    assert "task oxu_v1 of the committed suite 'oxu' changed since it was frozen" in v.reasons[0]
    assert _check(docs["hesab/echo"], suites).status == "admitted"


def test_a_suite_without_its_hash_file_is_not_committed(docs, tmp_path) -> None:
    suites = _copy_examples(tmp_path)
    (suites / "examples" / "oxu" / "oxu.hashes.json").unlink()
    v = _check(docs["oxu/first"], suites)
    assert v.status == "excluded" and "not committed" in v.reasons[0]


def test_two_committed_manifests_with_one_id_admit_nothing(docs, tmp_path) -> None:
    suites = _copy_examples(tmp_path)
    shutil.copytree(suites / "examples" / "oxu", suites / "copy")
    v = _check(docs["oxu/first"], suites)
    assert v.status == "excluded" and "two committed manifests name suite 'oxu'" in v.reasons[0]


def test_a_cached_verdict_is_not_reused_once_the_committed_suite_changes(docs, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("YOXLA_CACHE_DIR", str(tmp_path / "cache"))
    suites = _copy_examples(tmp_path)
    path = write_result(docs["oxu/first"], tmp_path / "results" / "oxu.json")
    first = check_file(path, data=DataSource(allow_hub=False, suites=CommittedSuites(root=suites)))
    assert first.status == "admitted"
    again = check_file(path, data=DataSource(allow_hub=False, suites=CommittedSuites(root=suites)))
    assert again.status == "admitted"
    data = suites / "examples" / "oxu" / "data" / "test.jsonl"
    first_row, rest = data.read_text(encoding="utf-8").split("\n", 1)
    row = json.loads(first_row)
    row["question"] += " (dəyişdirilib)"
    data.write_text(json.dumps(row, ensure_ascii=False) + "\n" + rest, encoding="utf-8")
    changed = check_file(path, data=DataSource(allow_hub=False, suites=CommittedSuites(root=suites)))
    assert changed.status == "excluded" and "changed since it was frozen" in changed.reasons[0]


def test_board_rules_apply_per_suite(docs, tmp_path) -> None:
    results = tmp_path / "results"
    older = copy.deepcopy(docs["oxu/first"])
    older["created_at"] = "2020-01-01T00:00:00Z"
    named = copy.deepcopy(docs["oxu/random"])
    named["model"]["display_name"] = "first"  # the name of another model on the same board
    named["created_at"] = "2030-01-01T00:00:00Z"  # later: the name stays with the earlier file
    other_suite = copy.deepcopy(docs["hesab/echo"])
    other_suite["model"]["display_name"] = "first"  # fine: another suite's board
    files = {
        "suites/oxu/new.json": docs["oxu/first"],
        "suites/oxu/old.json": finalize(older),
        "suites/oxu/named.json": finalize(named),
        "suites/hesab/echo.json": finalize(other_suite),
    }
    paths = [write_result(doc, results / rel) for rel, doc in files.items()]
    verdicts = {v.key: v for v in admit(paths, data=DataSource(allow_hub=False), root=results)}
    assert verdicts["suites/oxu/new.json"].status == "admitted", verdicts["suites/oxu/new.json"].reasons
    assert verdicts["suites/oxu/old.json"].status == "superseded"
    assert verdicts["suites/oxu/named.json"].status == "excluded"
    assert "names on the board must be unique" in verdicts["suites/oxu/named.json"].reasons[0]
    assert verdicts["suites/hesab/echo.json"].status == "admitted"


def test_the_board_lists_suites_as_boards(docs, tmp_path) -> None:
    from yoxla.board.loading import load_board

    results = tmp_path / "results"
    for name, doc in docs.items():
        write_result(doc, results / "suites" / f"{name}.json")
    board = load_board(results, allow_hub=False, B=50)
    assert board.suites() == ["hesab", "muraciet", "oxu"]
    shown = board.shown("suite:oxu")
    assert {v.name for v in shown} == {"first", "random"}
    assert shown[0].scores["suite"] >= shown[1].scores["suite"]
    meta = board.meta("suite:oxu")
    assert meta.tasks == {"oxu_v1": "Mətni oxuyub anlama"} and meta.breakdowns == {"oxu_v1": ["topic"]}
    rec = shown[0].tasks["oxu_v1"]
    assert rec.ids[0] == "oxu-01" and "per_topic_accuracy" in rec.metrics and rec.block == ""
    boot = board.boot("suite:oxu")
    assert boot.task_ids == ["oxu_v1"] and boot.yoxla_reps.shape == (2, 50)
    assert board.groups("suite:oxu") == ["standard"]
    assert board.model("suite:oxu", shown[0].key) is shown[0]
    assert board.shown("sample") == []  # suite files never reach an edition's board
    item = board.items("suite:oxu", "oxu_v1")["oxu-01"]
    assert item.messages[0]["role"] == "system" and item.messages[-1]["content"].endswith("Cavab:")
    assert board.items("suite:yoxdur", "oxu_v1") == {}


@pytest.mark.parametrize(
    "edit",
    [
        _set("format_version", 2),
        _set("suite.id", "../oxu"),
        _set("suite.path", "/etc/oxu.yaml"),
        _set("tasks.oxu_v1.metrics.accuracy", "0.5"),
        _set("tasks.oxu_v1.metrics.accuracy", True),
        _set("tasks.oxu_v1.predictions.0.outcome", "excellent"),
        _set("tasks.oxu_v1.predictions.0.judgements", [{"sample_id": "x"}]),
        _set("tasks.oxu_v1.counts.outcomes.correct", -1),
        _set("run.conditions.generation.oxu_v1.api_key", "sk-x"),
        _set("model.display_name", "x" * 500),
    ],
    ids=[
        "format version",
        "suite id with a path",
        "absolute manifest path",
        "metric as text",
        "metric as a boolean",
        "unknown outcome",
        "judgement without its fields",
        "negative count",
        "unknown generation field",
        "long name",
    ],
)
def test_record_and_published_schema_agree_on_suite_files(docs, edit) -> None:
    """The typed record refuses what the published schema refuses, for suite files too."""
    import jsonschema

    from yoxla.record.result import ResultFile, parse_record
    from yoxla.record.schema import published_schema

    doc = copy.deepcopy(docs["oxu/first"])
    validator = jsonschema.Draft202012Validator(published_schema())
    assert list(validator.iter_errors(doc)) == []
    assert isinstance(parse_record(doc)[0], ResultFile)
    edit(doc)
    assert list(validator.iter_errors(doc)), "the published schema must refuse it too"
    record, problems = parse_record(doc)
    assert record is None and problems


def test_committed_suite_results_are_admitted_and_give_every_example_a_board() -> None:
    """A fresh machine's board has a suite board per example (results/suites/, suite-baseline)."""
    from yoxla.board.loading import find_result_files

    results = ROOT / "results"
    files = [p for p in find_result_files(results) if "suites" in p.relative_to(results).parts]
    verdicts = admit(files, data=DataSource(allow_hub=False), root=results)
    assert verdicts and all(v.status == "admitted" and v.rechecked for v in verdicts), [
        (v.key, v.reasons) for v in verdicts if v.status != "admitted"
    ]
    assert {v.suite for v in verdicts} == {p.parent.name for p in EXAMPLES.glob("*/*.yaml")}
    assert all(v.key == f"suites/{v.suite}/suite-baseline__{v.model}.json" for v in verdicts)


def _bad_suites(suites: Path) -> None:
    """Three committed suites that attack: an alias bomb, a manifest nested 100,000 deep, and a
    prompt that expands to gigabytes; each with a hash file beside it, as if committed."""
    bomb = ['schema_version: "1"', "metadata: {name: bomb}", 'a0: &a0 ["ha", "ha", "ha", "ha", "ha", "ha"]']
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    deep = 'schema_version: "1"\nmetadata: {name: deep, x: ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    deep_json = '{"schema_version": "1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    texts = {
        "bomb/bomb.yaml": "\n".join(bomb) + "\n",
        "deep/deep.yaml": deep,
        "deepjson/deepjson.json": deep_json,
    }
    for rel, text in texts.items():
        path = suites / "attack" / rel
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        path.with_name(path.stem + ".hashes.json").write_text("{}", encoding="utf-8")
    blowup = suites / "attack" / "blowup"
    shutil.copytree(EXAMPLES / "oxu", blowup)
    manifest = (blowup / "oxu.yaml").read_text(encoding="utf-8").replace("name: oxu", "name: blowup")
    manifest = manifest.replace("prompt_template: |", "prompt_template: |\n      " + "{{row}}" * 14_000, 1)
    assert "{{row}}" in manifest
    (blowup / "oxu.yaml").write_text(manifest, encoding="utf-8")


def test_a_suite_that_cannot_be_loaded_leaves_every_other_board_alone(docs, tmp_path, monkeypatch) -> None:
    """One bad committed suite excludes only the files naming it, each with one reason."""
    from yoxla.board.loading import load_board

    suites = _copy_examples(tmp_path)
    _bad_suites(suites)
    monkeypatch.setenv("YOXLA_SUITES_DIR", str(suites))
    monkeypatch.setenv("YOXLA_CACHE_DIR", str(tmp_path / "cache"))
    results = tmp_path / "results"
    for name, doc in docs.items():
        write_result(doc, results / "suites" / f"{name}.json")
    for sid in ("bomb", "deep", "deepjson", "blowup"):
        forged = copy.deepcopy(docs["oxu/first"])
        forged["suite"]["id"] = sid
        write_result(finalize(forged), results / "suites" / sid / "x.json")
    board = load_board(results, allow_hub=False, B=20)
    by_key = {v.key: v for v in board.verdicts}
    for name in docs:
        v = by_key[f"suites/{name}.json"]
        assert v.status == "admitted" and v.rechecked, (name, v.reasons)
    for sid, why in (
        ("bomb", "cannot be loaded: "),
        ("deep", "nested more than 32 levels deep"),
        ("deepjson", "nested more than 32 levels deep"),
        ("blowup", "renders more than 1,000,000 characters"),
    ):
        v = by_key[f"suites/{sid}/x.json"]
        assert v.status == "excluded" and len(v.reasons) == 1 and why in v.reasons[0], (sid, v.reasons)
        assert "could not be checked" not in v.reasons[0]
    assert "a YAML alias" in by_key["suites/bomb/x.json"].reasons[0]
    assert board.suite_boards() == [
        "blowup",
        "hesab",
        "muraciet",
        "oxu",
    ]  # not the package's benchmark suites: they have no file here, and the editions show them
    assert {v.name for v in board.shown("suite:oxu")} == {"first", "random"}
    assert board.items("suite:blowup", "oxu_v1") == {}
    from yoxla.board.loading import suite_board_id
    from yoxla.board.prepared import prepare

    ready = prepare(board, floors=False)  # what `python app.py` prepares before it serves
    assert len(ready.editions[suite_board_id("oxu")].boards["standard"].models) == 2
    assert ready.editions[suite_board_id("blowup")].boards["standard"].models == []


def test_verify_answers_within_seconds_with_an_alias_bomb_committed(docs, tmp_path) -> None:
    """`yoxla verify` in its own process (a hang would pass the timeout and fail the test)."""
    import os
    import subprocess
    import sys

    suites = _copy_examples(tmp_path)
    _bad_suites(suites)
    results = tmp_path / "results"
    write_result(docs["hesab/echo"], results / "suites" / "hesab" / "echo.json")
    forged = copy.deepcopy(docs["oxu/first"])
    forged["suite"]["id"] = "bomb"
    write_result(finalize(forged), results / "suites" / "bomb" / "x.json")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "YOXLA_SUITES_DIR": str(suites)}
    env["YOXLA_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from yoxla.cli.main import main; main()",
            "verify",
            "--no-hub",
            "--json",
            str(results),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    verdicts = {Path(d["file"]).name: d for d in map(json.loads, lines)}
    assert verdicts["echo.json"]["status"] == "admitted", verdicts["echo.json"]
    assert verdicts["x.json"]["status"] == "excluded"
    assert len(verdicts["x.json"]["reasons"]) == 1 and "a YAML alias" in verdicts["x.json"]["reasons"][0]
