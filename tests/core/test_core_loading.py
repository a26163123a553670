"""One loading path: a folder in the Hub layout read by content, the Hub as a pinned snapshot of
such a folder, and clear errors offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from yoxla.cli.main import run
from yoxla.data import hub as hub_module
from yoxla.data.editions import DataUnavailable, bundled_path, download, fingerprint, load_edition, load_rows
from yoxla.testing.fakehub import COMMIT, FakeHub

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = list(load_edition("v1").tasks)


def _copy_sample(dest: Path) -> Path:
    shutil.copytree(bundled_path("sample"), dest)
    return dest


def test_v1_offline_without_a_copy_names_both_remedies_quickly(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("YOXLA_DATA_DIR", raising=False)
    monkeypatch.setattr(hub_module, "_SNAPSHOTS", {})
    start = time.perf_counter()
    with pytest.raises(DataUnavailable) as info:
        load_rows(load_edition("v1"), "nli_v1", revision="0" * 40)
    message = str(info.value)
    assert "--data-dir" in message and "yoxla download" in message
    assert time.perf_counter() - start < 10


def test_v1_from_a_local_folder_goes_through_the_same_loader(tmp_path, capsys):
    """A local copy in the Hub layout loads; its differing rows are caught by the manifest."""
    copy = _copy_sample(tmp_path / "copy")
    rows = load_rows(load_edition("v1"), "nli_v1", data_dir=copy)
    assert rows[0]["id"] == "nli-s-01"
    status = run(["validate-benchmark", "--edition", "v1", "--data-dir", str(copy), "--task", "nli_v1"])
    out = capsys.readouterr().out
    assert status == 1
    assert "expected 100 rows, found 12" in out
    assert "DIFFERS" in out


def test_yoxla_data_dir_environment_variable_is_honoured(tmp_path, monkeypatch):
    copy = _copy_sample(tmp_path / "envcopy")
    monkeypatch.setenv("YOXLA_DATA_DIR", str(copy))
    assert len(load_rows(load_edition("v1"), "sentiment_v1")) == 12


# --- read by content, never by a folder's name ----------------------------------------------


def _relabel(path: Path, line: int, new: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[line])
    row["label"] = new
    lines[line] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_folders_with_the_same_name_are_each_read_from_their_own_files(tmp_path):
    sample = load_edition("sample")
    first = _copy_sample(tmp_path / "a" / "copy")
    second = _copy_sample(tmp_path / "b" / "copy")
    _relabel(second / "nli_v1" / "test.jsonl", 0, "contradiction")
    assert load_rows(sample, "nli_v1", data_dir=first)[0]["label"] == "entailment"
    assert load_rows(sample, "nli_v1", data_dir=second)[0]["label"] == "contradiction"


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["new-mtime", "same-size-same-mtime"])
def test_a_copy_edited_in_place_is_read_again_in_the_same_process(tmp_path, capsys, keep_mtime):
    sample = load_edition("sample")
    copy = _copy_sample(tmp_path / "copy")
    path = copy / "nli_v1" / "test.jsonl"
    before = load_rows(sample, "nli_v1", data_dir=copy)
    assert fingerprint(before) == sample.tasks["nli_v1"].fingerprint
    stat = path.stat()
    # "neutral" -> "neutrax": same size, so only the bytes tell the two versions apart
    path.write_bytes(path.read_bytes().replace(b'"label": "neutral"', b'"label": "neutrax"', 1))
    if keep_mtime:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert path.stat().st_size == stat.st_size
    after = load_rows(sample, "nli_v1", data_dir=copy)
    changed = [r["id"] for r in after if r["label"] == "neutrax"]
    assert changed == ["nli-s-03"]
    status = run(["validate-benchmark", "--edition", "sample", "--data-dir", str(copy), "--task", "nli_v1"])
    out = capsys.readouterr().out
    assert status == 1
    assert "nli-s-03" in out and "gold_in_answer_space" in out and "DIFFERS" in out


def test_loading_sample_leaves_the_environment_alone(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    before = dict(os.environ)
    sample = load_edition("sample")
    for tid in sample.tasks:
        load_rows(sample, tid)
    assert dict(os.environ) == before


def test_a_v1_load_after_a_sample_load_still_asks_the_hub(hub):
    """No process-wide offline switch: reading a bundled or local folder leaves the Hub path online."""
    load_rows(load_edition("sample"), "nli_v1")
    rows = load_rows(load_edition("v1"), "nli_v1")
    assert hub.commit_calls == [("LocalDoc/YOXLA-Benchmark", None)]
    assert [c["local_files_only"] for c in hub.calls] == [False]
    assert fingerprint(rows) == load_edition("sample").tasks["nli_v1"].fingerprint


def test_loading_imports_neither_datasets_nor_the_hub_client_nor_pyarrow():
    code = (
        "import sys, yoxla.data.editions as e; "
        "[e.load_rows(e.load_edition('sample'), t) for t in e.load_edition('sample').tasks]; "
        "print(sorted(m for m in ('datasets', 'huggingface_hub', 'pyarrow') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the Hub: a pinned snapshot of the same layout, read by the same reader ---------------


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    remote = _copy_sample(tmp_path / "remote")
    (remote / "not_a_yoxla_config").mkdir()
    (remote / "not_a_yoxla_config" / "test.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    (remote / "nli_v1" / "train.jsonl").write_text('{"id": "t"}\n', encoding="utf-8")
    (remote / "raw").mkdir()
    (remote / "raw" / "big.bin").write_bytes(b"\0" * 1024)
    monkeypatch.delenv("YOXLA_DATA_DIR", raising=False)
    return FakeHub(remote, tmp_path / "hf-cache").install(monkeypatch)


def test_the_hub_path_downloads_only_the_edition_configs_at_a_pinned_commit(hub):
    v1 = load_edition("v1")
    rows = {tid: load_rows(v1, tid) for tid in v1.tasks}
    assert len(hub.calls) == 1  # once per process, not once per task
    call = hub.calls[0]
    assert call["repo_id"] == "LocalDoc/YOXLA-Benchmark"
    assert call["repo_type"] == "dataset" and call["revision"] == COMMIT
    assert call["allow_patterns"][0] == "README.md"
    # only the card and the configs' test split: no other config, no train split, no raw files
    assert hub.fetched() == {"README.md", *(f"{c}/test.jsonl" for c in CONFIGS)}
    # the same reader as for a local folder: the sample's rows, byte for byte
    sample = load_edition("sample")
    assert {tid: fingerprint(r) for tid, r in rows.items()} == {
        t: e.fingerprint for t, e in sample.tasks.items()
    }


def test_an_explicit_revision_is_resolved_to_a_commit_and_downloaded_at_it(hub):
    load_rows(load_edition("v1"), "sts_v1", revision="v1.0")
    assert hub.commit_calls == [("LocalDoc/YOXLA-Benchmark", "v1.0")]
    assert hub.calls[0]["revision"] == COMMIT


def test_a_card_that_declares_other_paths_gets_them_in_a_second_request_at_the_same_commit(hub):
    card = hub.remote / "README.md"
    text = card.read_text(encoding="utf-8").replace("path: nli_v1/test.jsonl", "path: nli/part-*.jsonl")
    card.write_text(text, encoding="utf-8")
    (hub.remote / "nli").mkdir()
    shutil.move(hub.remote / "nli_v1" / "test.jsonl", hub.remote / "nli" / "part-0.jsonl")
    rows = load_rows(load_edition("v1"), "nli_v1")
    assert fingerprint(rows) == load_edition("sample").tasks["nli_v1"].fingerprint
    assert [c["revision"] for c in hub.calls] == [COMMIT, COMMIT]
    assert "nli/part-*.jsonl" in hub.calls[1]["allow_patterns"]


def test_an_unreachable_hub_fails_in_seconds_naming_both_remedies(hub, monkeypatch):
    def unreachable(repo: str, revision: str | None, timeout: float = 3.0) -> str:
        raise ConnectionError("no route to host")

    monkeypatch.setattr(hub_module, "hub_commit", unreachable)
    with pytest.raises(DataUnavailable) as info:
        load_rows(load_edition("v1"), "nli_v1")
    message = str(info.value)
    assert "did not answer (ConnectionError)" in message
    assert "--data-dir" in message and "yoxla download" in message
    assert hub.calls == []


def test_offline_mode_reads_only_the_local_hugging_face_cache(hub, monkeypatch):
    online = load_rows(load_edition("v1"), "nli_v1", revision=COMMIT)  # fills the cache
    monkeypatch.setattr(hub_module, "_SNAPSHOTS", {})  # a new process
    hub.calls.clear()
    hub.commit_calls.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert load_rows(load_edition("v1"), "nli_v1", revision=COMMIT) == online
    assert hub.commit_calls == []
    assert hub.calls and all(c["local_files_only"] is True for c in hub.calls)


def test_download_makes_a_local_copy_of_the_configs_that_loads_like_the_hub(hub, tmp_path):
    out = download(tmp_path / "copy")
    assert out == tmp_path / "copy"
    assert hub.calls[0]["local_dir"] == str(out) and hub.calls[0]["revision"] == COMMIT
    assert not (out / "raw").exists() and (out / "README.md").is_file()
    rows = load_rows(load_edition("v1"), "intent_v1", data_dir=out)
    assert fingerprint(rows) == load_edition("sample").tasks["intent_v1"].fingerprint
