"""``--revision`` and ``--data-dir`` on a suite run: its Hugging Face datasets read at another
revision or from a local folder in the Hub layout, recorded in the result file's ``run.dataset``;
the data's identity stays its fingerprint, which admission compares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from suite_run_helpers import ROWS, SuiteRunner, make_suite, manifest

from yoxla.admission.committed import CommittedSuites
from yoxla.admission.gold import DataSource
from yoxla.admission.rules import check_document
from yoxla.record.result import ResultFile, parse_record
from yoxla.testing.fakehub import COMMIT, FakeHub

RESULT = "suite-baseline__echo.json"
HUB = {"source": "huggingface", "path": "acme/toplama", "revision": "v1.0"}


def _rows_file(folder: Path, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


@pytest.fixture
def runner(tmp_path: Path, capsys, monkeypatch) -> SuiteRunner:
    monkeypatch.chdir(tmp_path)
    return SuiteRunner(tmp_path, capsys, monkeypatch)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch) -> FakeHub:
    _rows_file(tmp_path / "remote", ROWS)
    return FakeHub(tmp_path / "remote", tmp_path / "hf-cache").install(monkeypatch)


@pytest.fixture
def hub_suite(tmp_path: Path, fake: FakeHub) -> Path:
    return make_suite(tmp_path, manifest(dataset=HUB))


def _run(runner: SuiteRunner, suite: Path, *extra: str) -> tuple[int, str]:
    rc, _, err = runner(
        "run", "--suite", str(suite), "--provider", "suite-baseline", "--model", "echo", *extra
    )
    return rc, err


def _admit(doc: dict, root: Path):
    return check_document(doc, data=DataSource(allow_hub=False, suites=CommittedSuites(root=root / "suites")))


def test_revision_overrides_the_hub_revision_and_is_recorded(runner, hub_suite, fake, tmp_path) -> None:
    fake.commit_calls.clear()
    rc, err = _run(runner, hub_suite, "--revision", "v2.0")
    assert rc == 0, err
    assert {rev for _, rev in fake.commit_calls} == {"v2.0"}  # never the manifest's v1.0
    doc = runner.result(RESULT)
    assert doc["run"]["dataset"] == {"source": doc["suite"]["path"], "revision": "v2.0"}
    record, problems = parse_record(doc)
    assert isinstance(record, ResultFile), problems
    verdict = _admit(doc, tmp_path)  # the same rows: the same fingerprint, admitted
    assert verdict.status == "admitted", verdict.reasons


def test_data_dir_reads_the_hub_dataset_from_a_local_folder(runner, hub_suite, fake, tmp_path) -> None:
    local = tmp_path / "kopiya"
    _rows_file(local / "acme" / "toplama", ROWS)
    fake.calls.clear()
    fake.commit_calls.clear()
    rc, err = _run(runner, hub_suite, "--data-dir", str(local))
    assert rc == 0, err
    assert fake.calls == [] and fake.commit_calls == []  # nothing asked of the Hub
    doc = runner.result(RESULT)
    assert doc["run"]["dataset"] == {"source": "kopiya", "revision": None}  # under the working directory
    assert "commits" not in doc["suite"]["tasks"]["toplama_v1"]
    assert _admit(doc, tmp_path).status == "admitted"


def test_a_local_folder_is_recorded_without_the_users_folders(
    runner, hub_suite, tmp_path, tmp_path_factory, monkeypatch
) -> None:
    """``run.dataset.source`` and ``run.command``: a path under the working directory relative
    to it, any other as ``<local>/<its name>``; the file is read and admitted as before."""
    home = tmp_path_factory.mktemp("home")  # a folder beside the working directory
    local = home / "kopiya"
    _rows_file(local / "acme" / "toplama", ROWS)
    rc, err = _run(runner, hub_suite.resolve(), "--data-dir", str(local))
    assert rc == 0, err
    doc = runner.result(RESULT)
    assert doc["run"]["dataset"] == {"source": "<local>/kopiya", "revision": None}
    assert doc["run"]["command"] == (
        "yoxla run --suite suites/sinaq/sinaq.yaml --provider suite-baseline --model echo "
        "--data-dir <local>/kopiya --runs-dir runs --results-dir results --no-progress"
    )
    text = json.dumps(doc, ensure_ascii=False)
    assert str(home) not in text and str(tmp_path) not in text
    record, problems = parse_record(doc)
    assert isinstance(record, ResultFile), problems
    assert _admit(doc, tmp_path).status == "admitted"


def test_a_local_copy_with_other_rows_is_refused_by_its_fingerprint(runner, hub_suite, tmp_path) -> None:
    local = tmp_path / "kopiya"
    _rows_file(local, [{**r, "cavab": "0"} if r["id"] == "m01" else r for r in ROWS])  # DIR itself
    rc, err = _run(runner, hub_suite, "--data-dir", str(local))
    assert rc == 0, err
    verdict = _admit(runner.result(RESULT), tmp_path)
    assert verdict.status == "excluded"
    assert any("fingerprint of its dataset differs" in r for r in verdict.reasons), verdict.reasons


def test_a_run_without_the_options_records_no_dataset(runner, hub_suite) -> None:
    rc, err = _run(runner, hub_suite)
    assert rc == 0, err
    assert "dataset" not in runner.result(RESULT)["run"]


def test_a_missing_data_dir_is_one_line_exit_2(runner, hub_suite, tmp_path) -> None:
    rc, err = _run(runner, hub_suite, "--data-dir", str(tmp_path / "yoxdur"))
    assert rc == 2
    assert err.strip().splitlines() == [f"yoxla: error: --data-dir {tmp_path / 'yoxdur'}: no such folder"]


@pytest.mark.parametrize("option", [("--revision", "v2.0"), ("--data-dir", ".")])
def test_a_suite_without_a_hub_dataset_refuses_the_options(runner, tmp_path, option) -> None:
    suite = make_suite(tmp_path)  # local data.jsonl only
    rc, err = _run(runner, suite, *option)
    assert rc == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"yoxla: error: {option[0]}: suite ") and "reads no Hugging Face dataset" in line


def test_commit_of_the_manifest_is_what_a_plain_run_stores(runner, hub_suite) -> None:
    rc, err = _run(runner, hub_suite)
    assert rc == 0, err
    assert runner.result(RESULT)["suite"]["tasks"]["toplama_v1"]["commits"] == {
        "dataset": {"acme/toplama": COMMIT}
    }


@pytest.mark.parametrize("cwd", ["above", "elsewhere"])
def test_the_offline_note_quotes_the_manifest_without_the_users_folders(
    runner, hub_suite, tmp_path, tmp_path_factory, monkeypatch, cwd
) -> None:
    """The suite is named by its absolute path (as run.json keeps it): the note shows it relative
    to the working directory when under it, else only its file name."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing cached: the Hub dataset cannot be read
    if cwd == "elsewhere":
        monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # a folder beside it
    rc, err = _run(runner, hub_suite.resolve())
    assert rc == 2
    (line,) = err.strip().splitlines()
    shown = "suites/sinaq/sinaq.yaml" if cwd == "above" else "sinaq.yaml"
    assert line.startswith(f"yoxla: error: {shown}: task 'toplama_v1', dataset: could not load"), line
    assert "Offline?" in line and "--data-dir DIR" in line
    assert str(tmp_path) not in line
