"""The frozen benchmark as package suites: ``yoxla-sample`` and ``yoxla-v1`` in ``yoxla/editions/``.

Both are committed: they are the source of the benchmark's tasks, each frozen by its hash file
(checked without the rows, over the fingerprints its edition publishes: ``python -m
yoxla.contract.benchmark``, run by CI); their task contracts are identical (only the dataset
differs); each task records the published contract and prompt hashes; the analysis section declares every breakdown field
the rows carry without changing a task hash; the registry lists them first and finds them by
id; and a suite-baseline run of ``yoxla-sample`` reproduces the committed benchmark baseline.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml

from yoxla.baselines.strategies import STRATEGIES
from yoxla.cli.main import run as cli_run
from yoxla.contract import benchmark, registry
from yoxla.contract.errors import ManifestError
from yoxla.contract.hashing import analysis_hash, hash_file_path, read_hash_file, task_hash
from yoxla.contract.loader import load_document, load_manifest
from yoxla.contract.registry import (
    BENCHMARK_EDITIONS,
    find_committed,
    load_suite_manifest,
    manifest_path,
    repo_path,
    resolve_suite,
)
from yoxla.data.editions import load_edition, load_rows
from yoxla.prompt.prepare import current_hashes

REPO = Path(__file__).resolve().parents[2]
# The one field each task's board was broken down by before the package suites declared their
# breakdowns (the old contract record's ``breakdown``): each is kept.
FIRST_BREAKDOWN = {
    "minimal_pairs_v1": "phenomenon",
    "az_tr_interference_v1": "interference_type",
    "knowledge_choice_v1": "category",
    "rag_verification_v1": "claim_type",
    "rag_selection_v1": "item_type",
}
# The frozen contracts' exact messages on every sample row (the oracle of test_suites_parity.py).
MESSAGES = json.loads(
    (REPO / "tests" / "suites" / "cases" / "benchmark_messages.json").read_text(encoding="utf-8")
)
TOL = 1e-9
BENCHMARKS = BENCHMARK_EDITIONS
PARITY_TASKS = tuple(load_manifest(manifest_path("sample")).tasks)
# Per task, the row columns the package suites declare as breakdowns (their ``analysis``
# section): those that sort rows into a few named kinds. Left out: ids and sources (one value a
# row), copied words and entities, numbers (counts, scaled scores; their buckets, where the data
# has one, are listed), lists, and copies of the gold answer.
BREAKDOWN_FIELDS: dict[str, tuple[str, ...]] = {
    "extractive_qa_v1": ("answer_type", "context_bucket"),
    "qa_abstention_v1": ("is_answerable", "expected_answer_type", "context_bucket"),
    "nli_v1": ("length_bucket",),
    "sentiment_v1": ("length_bucket",),
    "intent_v1": ("category", "length_bucket"),
    "minimal_pairs_v1": ("phenomenon", "domain", "difficulty"),
    "az_tr_interference_v1": ("interference_type",),
    "rag_verification_v1": ("claim_type",),
    "knowledge_choice_v1": ("category", "probe", "value_kind"),
    "rag_selection_v1": ("item_type", "category", "probe"),
    "sts_v1": ("score_band", "length_bucket"),
}


def _raw(edition: str) -> dict:
    return yaml.safe_load(manifest_path(edition).read_text(encoding="utf-8"))


@pytest.mark.parametrize("edition", BENCHMARKS)
def test_each_package_suite_matches_its_frozen_hashes_without_its_rows(edition) -> None:
    assert load_manifest(manifest_path(edition)).name == f"yoxla-{edition}"
    assert benchmark.frozen_problems(edition) == []


def _copy_editions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the package suites and their hash files, read in place of the package's."""
    folder = tmp_path / "editions"
    folder.mkdir()
    (folder / "sample").symlink_to(manifest_path("sample").parent / "sample")  # the bundled rows
    for edition in BENCHMARKS:
        for path in (manifest_path(edition), hash_file_path(manifest_path(edition))):
            shutil.copy(path, folder / path.name)
    monkeypatch.setattr(registry, "EDITIONS_DIR", folder)
    return folder


def test_the_frozen_check_names_a_changed_task(tmp_path, monkeypatch, capsys) -> None:
    folder = _copy_editions(tmp_path, monkeypatch)
    assert benchmark.main([]) == 0
    assert "ok: yoxla-sample.yaml, yoxla-v1.yaml match" in capsys.readouterr().out
    v1 = folder / "yoxla-v1.yaml"
    text = v1.read_text(encoding="utf-8")
    assert text.count("Müddəa: {{premise}}") == 1  # nli_v1's prompt template
    v1.write_text(text.replace("Müddəa: {{premise}}", "Müddəa : {{premise}}"), encoding="utf-8")
    problems = benchmark.frozen_problems("v1")
    assert problems and all(p.startswith("yoxla-v1.yaml: ") for p in problems)
    assert (
        "yoxla-v1.yaml: nli_v1: changed its definition (templates, extraction, metrics, graders, …)"
        in problems
    )
    assert any("suite hash" in p for p in problems), problems
    assert benchmark.frozen_problems("sample") == []
    assert benchmark.main([]) == 1
    assert "error: yoxla-v1.yaml: " in capsys.readouterr().out
    assert benchmark.main(["--write"]) == 2  # no arguments: nothing is ever generated


def test_the_frozen_check_names_instructions_that_are_not_the_published_prompt(tmp_path, monkeypatch) -> None:
    folder = _copy_editions(tmp_path, monkeypatch)
    doc = _raw("sample")
    doc["tasks"][0]["generation"]["instructions"] += " "  # one space: another system prompt
    # (its metadata still records the published prompt hash: tests/core/test_core_contract_freeze.py)
    (folder / "yoxla-sample.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    problems = benchmark.frozen_problems("sample")
    tid = doc["tasks"][0]["id"]
    assert (
        f"yoxla-sample.yaml: {tid}: its instructions are not the system prompt its prompt_hash records"
        in problems
    )
    (folder / "yoxla-sample.yaml").write_text("tasks: [\n", encoding="utf-8")
    with pytest.raises(ManifestError):
        benchmark.frozen_problems("sample")
    assert benchmark.main([]) == 2


def test_the_two_suites_have_identical_contracts() -> None:
    sample, v1 = _raw("sample"), _raw("v1")
    # The analysis is each edition's own (the sample's gate declares thresholds for its rows),
    # but both break their scores down by the same fields.
    breakdowns = [
        {tid: t.get("breakdowns") for tid, t in doc["analysis"]["tasks"].items()} for doc in (sample, v1)
    ]
    assert breakdowns[0] == breakdowns[1] and len(breakdowns[0]) == 11
    # Their datasets differ in where the rows are, not in the columns a row must carry.
    required = [{t["id"]: t["dataset"].get("required_columns") for t in doc["tasks"]} for doc in (sample, v1)]
    assert required[0] == required[1] and all(required[0].values())
    for doc in (sample, v1):
        del doc["metadata"], doc["analysis"]
        for task in doc["tasks"]:
            task.pop("dataset")
    assert sample == v1
    ed = load_edition("v1")
    for task in _raw("v1")["tasks"]:
        assert task["dataset"]["path"] == ed.source and task["dataset"]["name"] == ed.tasks[task["id"]].config
        assert task["dataset"].get("revision") == ed.revision and task["dataset"]["split"] == "test"
    for task in _raw("sample")["tasks"]:
        assert task["dataset"]["path"] == f"sample/{task['id']}/test.jsonl"
        assert set(task["dataset"]) == {"path", "required_columns"}


def test_v1_hashes_rest_on_the_published_fingerprints() -> None:
    """yoxla-v1's rows are not fetched: its frozen task hashes are over v1.json's fingerprints
    (the same function a loaded suite dataset is fingerprinted with) and its definitions."""
    manifest = load_manifest(manifest_path("v1"))
    frozen = read_hash_file(hash_file_path(manifest_path("v1")))
    ed = load_edition("v1")
    for tid, task in manifest.tasks.items():
        data = {"dataset": ed.tasks[tid].fingerprint}
        assert frozen[tid].data == data and frozen[tid].definition == task.definition_hash
        assert frozen[tid].hash == task_hash(task, data)


@pytest.mark.parametrize("edition", BENCHMARKS)
def test_each_frozen_item_count_is_the_published_row_count(edition) -> None:
    """The hash files record each task's item count: yoxla-v1's from v1.json's row counts (its
    rows are not fetched), which is right because an item is a row, as the bundled sample shows."""
    frozen = read_hash_file(hash_file_path(manifest_path(edition)))
    ed = load_edition(edition)
    assert {tid: h.items for tid, h in frozen.items()} == {tid: e.rows for tid, e in ed.tasks.items()}
    if edition == "sample":
        manifest = load_manifest(manifest_path(edition))
        counted = {tid: h.items for tid, h in current_hashes(manifest).items()}
        assert counted == {tid: e.rows for tid, e in ed.tasks.items()}


def test_breakdown_fields_are_row_columns_every_sample_row_has() -> None:
    sample = load_edition("sample")
    for tid in PARITY_TASKS:
        fields = BREAKDOWN_FIELDS[tid]
        if tid in FIRST_BREAKDOWN:
            assert FIRST_BREAKDOWN[tid] in fields, tid
        rows = load_rows(sample, tid)
        for fld in fields:
            values = {r.get(fld) for r in rows}
            assert None not in values and all(isinstance(v, str | bool) for v in values), (tid, fld)
            assert len(values) > 1, (tid, fld)


@pytest.mark.parametrize("edition", BENCHMARKS)
def test_declaring_the_breakdowns_changes_no_task_hash(edition) -> None:
    path = manifest_path(edition)
    manifest = load_manifest(path)
    bare_raw = copy.deepcopy(manifest.raw)
    del bare_raw["analysis"]
    bare = load_document(bare_raw, path.parent, str(path), path)
    assert {t: m.definition_hash for t, m in bare.tasks.items()} == {
        t: m.definition_hash for t, m in manifest.tasks.items()
    }
    assert analysis_hash(bare) is None and analysis_hash(manifest) is not None
    for tid, task in manifest.tasks.items():
        assert set(task.spec.breakdowns) == set(BREAKDOWN_FIELDS[tid])
        assert bare.tasks[tid].spec.breakdowns == ()
    frozen = json.loads(hash_file_path(path).read_text(encoding="utf-8"))
    assert frozen["analysis_hash"] == analysis_hash(manifest)


def test_the_registry_lists_the_package_suites_first(tmp_path) -> None:
    found = find_committed(REPO / "suites")
    assert [c.path for c in found[:2]] == [manifest_path("sample"), manifest_path("v1")]
    assert any(c.path.is_relative_to(REPO / "suites") for c in found[2:])
    assert [c.path for c in find_committed(tmp_path / "none")] == [manifest_path(e) for e in BENCHMARKS]
    assert find_committed(tmp_path / "none", package=False) == []
    assert repo_path(manifest_path("sample")) == "yoxla/editions/yoxla-sample.yaml"


def test_suites_are_found_by_id_as_well_as_by_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no repository here: the package suites are still found
    assert resolve_suite("yoxla-sample") == manifest_path("sample")
    assert resolve_suite("yoxla-v1") == manifest_path("v1")
    assert resolve_suite("no-such-suite") is None and resolve_suite("../x") is None
    assert load_suite_manifest("yoxla-sample").path == manifest_path("sample")
    with pytest.raises(ManifestError, match="no committed suite has this id"):
        load_suite_manifest("no-such-suite")
    # The repository's suites, by id, from an explicit root.
    assert resolve_suite("oxu", root=REPO) == REPO / "suites" / "examples" / "oxu" / "oxu.yaml"


def test_cli_checks_and_renders_a_suite_by_id(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_run(["suite", "check", "yoxla-sample"]) == 0
    assert "ok: every frozen task is unchanged" in capsys.readouterr().out
    assert cli_run(["suite", "render", "yoxla-sample", "--task", "nli_v1", "-n", "1"]) == 0
    out = capsys.readouterr().out
    assert MESSAGES["tasks"]["nli_v1"]["system"] in out and "Müddəa:" in out
    assert cli_run(["suite", "check", "no-such-suite"]) != 0
    assert "no committed suite has this id" in capsys.readouterr().err


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_suite_baseline_run_reproduces_the_committed_benchmark_baseline(
    tmp_path, monkeypatch, strategy
) -> None:
    """runner.py --suite yoxla-sample --provider suite-baseline --model S, in-process, for each
    of the eight cue-only strategies: every task score of the committed benchmark file."""
    monkeypatch.chdir(tmp_path)
    runs, results = tmp_path / "runs", tmp_path / "results"
    argv = ["run", "--suite", "yoxla-sample", "--provider", "suite-baseline", "--model", strategy]
    assert cli_run([*argv, "--no-progress", "--runs-dir", str(runs), "--results-dir", str(results)]) == 0
    [made] = (results / "sample").glob("*.json")  # where the sample edition's results always went
    doc = json.loads(made.read_text(encoding="utf-8"))
    assert doc["suite"]["path"] == "yoxla/editions/yoxla-sample.yaml"
    # The built-in engine's file of the strategy (format yoxla-result v2), as committed before every
    # run went through the suite engine (results/sample/ now holds the suite engine's own files).
    committed_path = (
        REPO / "tests" / "leaderboard" / "cases" / "legacy-v2" / "sample" / f"baseline__{strategy}.json"
    )
    committed = json.loads(committed_path.read_text(encoding="utf-8"))
    assert set(doc["tasks"]) == set(committed["tasks"])
    for tid, want in committed["tasks"].items():
        got = doc["tasks"][tid]["score"]
        assert abs(got - want["score"]) <= TOL, (tid, got, want["score"])
    # Admitted with the package suite onto the sample edition's own board (no suite board).
    from yoxla.admission.committed import CommittedSuites
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import check_document

    v = check_document(
        doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites"))
    )
    assert v.status == "admitted" and v.edition == "sample" and v.suite is None, v.reasons
    assert v.source_suite == "yoxla-sample"
    assert v.scores["yoxla"] == pytest.approx(committed["scores"]["yoxla"], abs=TOL)
    assert not any("names the manifest" in note for note in v.notes), v.notes  # the path it has
    if strategy == STRATEGIES[0]:  # once: a file of it is on the edition's board, not a suite's
        from yoxla.board.loading import load_board

        board = load_board(
            results, data=DataSource(allow_hub=False, suites=CommittedSuites(root=tmp_path / "suites")), B=20
        )
        assert "yoxla-sample" not in board.suite_boards() and "yoxla-v1" not in board.suite_boards()
        assert [m.name for m in board.shown("sample")] == [strategy]


def test_the_repository_is_an_explicit_root_never_the_package_location(tmp_path, monkeypatch) -> None:
    from yoxla.admission.rules import default_trusted_keys_path
    from yoxla.board.loading import default_results_dir
    from yoxla.board.prepared import default_annotations_root
    from yoxla.contract.registry import suites_root

    for name in ("YOXLA_ROOT", "YOXLA_RESULTS_DIR", "YOXLA_SUITES_DIR", "YOXLA_ANNOTATIONS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # a folder that is no repository: nothing of REPO is read
    assert default_results_dir() == tmp_path / "results"
    assert suites_root() == tmp_path / "suites"
    assert default_annotations_root() == tmp_path / "annotations"
    assert default_trusted_keys_path() is None
    # Given explicitly, or by $YOXLA_ROOT.
    assert default_results_dir(REPO) == REPO / "results" and suites_root(REPO) == REPO / "suites"
    assert default_trusted_keys_path(REPO) == REPO / "trusted_keys.json"
    monkeypatch.setenv("YOXLA_ROOT", str(REPO))
    assert default_results_dir() == REPO / "results" and default_annotations_root() == REPO / "annotations"
    # A single folder named by its own variable still wins.
    monkeypatch.setenv("YOXLA_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert default_results_dir(REPO) == tmp_path / "elsewhere"
