"""Datasets: local JSONL/CSV read by content, Hugging Face through snapshot_download (faked here)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from suites_helpers import ROWS, write_jsonl

from yoxla.editions import fingerprint
from yoxla.suites import datasets as D
from yoxla.suites.errors import DatasetError
from yoxla.suites.spec import HubDataset, LocalDataset


def local(path: str, **kw) -> LocalDataset:
    return LocalDataset.model_validate({"path": path, **kw})


def hub(**kw) -> HubDataset:
    return HubDataset.model_validate({"source": "huggingface", **kw})


# Local files -----------------------------------------------------------------------------------


def test_jsonl_rows_and_fingerprint(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", ROWS)
    got = D.load_dataset(local("d.jsonl"), tmp_path)
    assert list(got.rows) == ROWS
    assert got.fingerprint == fingerprint(ROWS)
    assert got.identity == {"source": "local", "path": "d.jsonl", "format": "jsonl", "max_rows": None}


def test_fingerprint_is_over_content_not_formatting(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"a": 1, "b": "ə"}\n\n', encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"b":"ə","a":1}\n', encoding="utf-8")
    a = D.load_dataset(local("a.jsonl"), tmp_path)
    b = D.load_dataset(local("b.jsonl"), tmp_path)
    assert a.fingerprint == b.fingerprint


def test_csv_header_and_rows(tmp_path):
    (tmp_path / "d.csv").write_text(
        'id,mətn,etiket\n1,"Salam, dünya",müsbət\n2,Sağ ol,neytral\n', encoding="utf-8"
    )
    got = D.load_dataset(local("d.csv"), tmp_path)
    assert list(got.rows) == [
        {"id": "1", "mətn": "Salam, dünya", "etiket": "müsbət"},
        {"id": "2", "mətn": "Sağ ol", "etiket": "neytral"},
    ]


def test_max_rows_and_relative_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "d.jsonl", ROWS)
    got = D.load_dataset(local("sub/d.jsonl", max_rows=2), tmp_path)
    assert [r["id"] for r in got.rows] == ["s1", "s2"]


def test_explicit_format_overrides_suffix(tmp_path):
    write_jsonl(tmp_path / "d.txt", ROWS[:1])
    assert D.load_dataset(local("d.txt", format="jsonl"), tmp_path).rows == (ROWS[0],)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("d.jsonl", '{"a": 1}\n[1, 2]\n', "d.jsonl line 2: a row must be a JSON object, found list"),
        ("d.jsonl", '{"a": 1}\n\n{"a": \n', "d.jsonl line 3: not valid JSON"),
        ("d.jsonl", "", "no rows were read"),
        ("d.csv", "", "empty CSV file"),
        ("d.csv", "a,b\n1,2\n3\n", "d.csv line 3: 1 fields, the header has 2"),
        ("d.csv", "a,a\n1,2\n", "line 1: header columns repeat"),
        ("d.csv", "a,\n1,2\n", "line 1: a header column is empty"),
    ],
)
def test_bad_rows_name_their_line(tmp_path, name, content, message):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        D.load_dataset(local(name), tmp_path, where="task 't', dataset")


def test_not_utf8_names_the_line(tmp_path):
    (tmp_path / "d.jsonl").write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(DatasetError, match="line 2: not UTF-8"):
        D.load_dataset(local("d.jsonl"), tmp_path)


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match=r"file yoxdur\.jsonl not found"):
        D.load_dataset(local("yoxdur.jsonl"), tmp_path)


# Hugging Face (snapshot_download replaced by a local folder) ---------------------------------


@pytest.fixture
def hub_folder(tmp_path, monkeypatch):
    """A fake Hub repo; records every snapshot_download call."""
    repo = tmp_path / "repo"
    repo.mkdir()
    calls: list[dict] = []

    def fake(repo_id, repo_type, revision, allow_patterns, **kw):
        calls.append(
            {"repo_id": repo_id, "repo_type": repo_type, "revision": revision, "allow": allow_patterns}
        )
        return str(repo)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    return repo, calls


def test_hub_config_folder_layout(hub_folder):
    repo, calls = hub_folder
    (repo / "nli").mkdir()
    write_jsonl(repo / "nli" / "test.jsonl", ROWS[:2])
    write_jsonl(repo / "nli" / "train.jsonl", ROWS[2:])
    got = D.load_dataset(hub(path="acme/az", name="nli", revision="abc123"), Path("."))
    assert list(got.rows) == ROWS[:2]
    assert got.files == ("nli/test.jsonl",)
    assert all(c["repo_type"] == "dataset" and c["revision"] == "abc123" for c in calls)
    assert calls[0]["allow"] == ["README.md"]
    assert "nli/test.*" in calls[1]["allow"]


def test_hub_fewshot_split_defaults_to_train(hub_folder):
    repo, _ = hub_folder
    (repo / "nli").mkdir()
    write_jsonl(repo / "nli" / "test.jsonl", ROWS[:2])
    write_jsonl(repo / "nli" / "train.jsonl", ROWS[2:])
    got = D.load_dataset(hub(path="acme/az", name="nli"), Path("."), default_split="train")
    assert list(got.rows) == ROWS[2:]
    assert got.identity["split"] == "train"


def test_hub_card_configs_and_parquet(hub_folder):
    repo, calls = hub_folder
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: az\n  data_files:\n  - split: test\n    path: data/az-test-*.parquet\n---\n# kart\n",
        encoding="utf-8",
    )
    (repo / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(ROWS[:2]), repo / "data" / "az-test-00000.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS[2:]), repo / "data" / "az-test-00001.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS), repo / "data" / "az-train-00000.parquet")
    got = D.load_dataset(hub(path="acme/az", name="az", max_rows=3), Path("."))
    assert list(got.rows) == ROWS[:3]
    assert calls[1]["allow"] == ["data/az-test-*.parquet"]


def test_hub_default_layout_without_config(hub_folder):
    repo, _ = hub_folder
    (repo / "data").mkdir()
    (repo / "data" / "test-00000.json").write_text(json.dumps(ROWS, ensure_ascii=False), encoding="utf-8")
    (repo / "data" / "validation.csv").write_text("a\n1\n", encoding="utf-8")
    assert list(D.load_dataset(hub(path="acme/az"), Path(".")).rows) == ROWS


def test_hub_unknown_config_lists_the_known(hub_folder):
    repo, _ = hub_folder
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: a\n  data_files: a.jsonl\n---\n", encoding="utf-8"
    )
    with pytest.raises(DatasetError, match="has no config 'b' \\(it has a\\)"):
        D.load_dataset(hub(path="acme/az", name="b"), Path("."))


def test_hub_no_files_for_split(hub_folder):
    with pytest.raises(DatasetError, match="no data files for split 'test'"):
        D.load_dataset(hub(path="acme/az"), Path("."))


def test_json_builder_reads_hub_file_urls(hub_folder):
    repo, calls = hub_folder
    write_jsonl(repo / "val.jsonl", ROWS)
    url = "https://huggingface.co/datasets/acme/evals/resolve/0123abc/val.jsonl"
    got = D.load_dataset(hub(path="json", split="validation", data_files={"validation": url}), Path("."))
    assert list(got.rows) == ROWS
    assert calls == [
        {"repo_id": "acme/evals", "repo_type": "dataset", "revision": "0123abc", "allow": ["val.jsonl"]}
    ]


def test_json_builder_hf_scheme(hub_folder):
    repo, calls = hub_folder
    write_jsonl(repo / "x.jsonl", ROWS[:1])
    spec = hub(path="json", dataset_kwargs={"data_files": {"test": ["hf://datasets/acme/evals@v1/x.jsonl"]}})
    assert D.load_dataset(spec, Path(".")).rows == (ROWS[0],)
    assert calls[0]["revision"] == "v1"


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/data.jsonl",
        "http://huggingface.co/datasets/a/b/resolve/main/x.jsonl",
        "https://user:pw@huggingface.co/datasets/a/b/resolve/main/x.jsonl",
        "file:///etc/passwd",
        "https://huggingface.co/a/b/blob/main/x.jsonl",
    ],
)
def test_json_builder_refuses_other_urls(hub_folder, url):
    with pytest.raises(DatasetError, match=r"data_files must be|is not a"):
        D.load_dataset(hub(path="json", data_files={"test": url}), Path("."))


def test_hub_failure_is_one_message(monkeypatch):
    import huggingface_hub

    def offline(**kw):
        raise OSError("network is unreachable")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(DatasetError, match="could not fetch Hugging Face dataset acme/az at v2: OSError"):
        D.load_dataset(hub(path="acme/az", revision="v2"), Path("."))
