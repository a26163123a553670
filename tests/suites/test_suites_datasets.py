"""Datasets: local JSONL/CSV read by content; Hugging Face through the one loading path
(:mod:`yoxla.data.hub` and :mod:`yoxla.data.files`, the Hub played by :class:`FakeHub`)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from suites_helpers import ROWS, task, write_jsonl, write_manifest

from yoxla.cli.main import run as cli_run
from yoxla.contract.errors import DatasetError
from yoxla.contract.spec_data import HubDataset, LocalDataset
from yoxla.data import datasets as D
from yoxla.data import files as datafiles
from yoxla.data import hub as hub_module
from yoxla.data.editions import bundled_path, fingerprint, load_edition, load_rows
from yoxla.testing.fakehub import COMMIT, FakeHub


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


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_a_dataset_over_the_row_limit_is_refused_with_the_limit_named(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr(D, "MAX_ROWS", 5)  # the real limit is 1,000,000: the rule, on a small file
    rows = [{"id": str(i), "mətn": f"sətir {i}"} for i in range(6)]
    if suffix == "csv":
        body = "id,mətn\n" + "".join(f"{r['id']},{r['mətn']}\n" for r in rows)
        (tmp_path / "d.csv").write_text(body, encoding="utf-8")
    else:
        write_jsonl(tmp_path / "d.jsonl", rows)
    with pytest.raises(DatasetError, match=r"dataset: 6 rows, more than the 5 a suite dataset may have"):
        D.load_dataset(local(f"d.{suffix}"), tmp_path)
    got = D.load_dataset(local(f"d.{suffix}", max_rows=3), tmp_path)  # asked for: the first ones
    assert [r["id"] for r in got.rows] == ["0", "1", "2"]
    write_jsonl(tmp_path / "five.jsonl", rows[:5])
    assert len(D.load_dataset(local("five.jsonl"), tmp_path).rows) == 5  # at the limit: all of it


def test_explicit_format_overrides_suffix(tmp_path):
    write_jsonl(tmp_path / "d.txt", ROWS[:1])
    assert D.load_dataset(local("d.txt", format="jsonl"), tmp_path).rows == (ROWS[0],)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("d.jsonl", '{"a": 1}\n[1, 2]\n', "d.jsonl, line 2: a JSON list, not an object"),
        ("d.jsonl", '{"a": 1}\n\n{"a": \n', "d.jsonl, line 3: not valid JSON"),
        ("d.jsonl", "", "no rows were read"),
        ("d.csv", "", "empty CSV file"),
        ("d.csv", "a,b\n1,2\n3\n", "d.csv, line 3: 1 fields, the header has 2"),
        ("d.csv", "a,a\n1,2\n", "line 1: header columns repeat"),
        ("d.csv", "a,\n1,2\n", "line 1: a header column is empty"),
    ],
)
def test_bad_rows_name_their_line(tmp_path, name, content, message):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message) as info:
        D.load_dataset(local(name), tmp_path, where="task 't', dataset")
    assert str(info.value).startswith("task 't', dataset: ") and "\n" not in str(info.value)


def test_not_utf8_names_the_line(tmp_path):
    (tmp_path / "d.jsonl").write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(DatasetError, match="line 2: not UTF-8"):
        D.load_dataset(local("d.jsonl"), tmp_path)


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match=r"file yoxdur\.jsonl not found"):
        D.load_dataset(local("yoxdur.jsonl"), tmp_path)


# Hugging Face: the one loading path, the Hub played by a local folder --------------------------


@pytest.fixture
def fake_hub(tmp_path, monkeypatch) -> FakeHub:
    """An empty dataset repository behind the stand-in Hub (online, resolving to COMMIT)."""
    remote = tmp_path / "repo"
    remote.mkdir()
    datafiles.clear_cache()
    return FakeHub(remote, tmp_path / "hf-cache").install(monkeypatch)


def test_hub_dataset_is_read_at_the_resolved_commit_and_records_it(fake_hub):
    (fake_hub.remote / "nli").mkdir()
    write_jsonl(fake_hub.remote / "nli" / "test.jsonl", ROWS[:2])
    write_jsonl(fake_hub.remote / "nli" / "train.jsonl", ROWS[2:])
    (fake_hub.remote / "other").mkdir()
    write_jsonl(fake_hub.remote / "other" / "test.jsonl", ROWS)
    got = D.load_dataset(hub(path="acme/az", name="nli", revision="v1.0"), Path("."))
    assert list(got.rows) == ROWS[:2] and got.fingerprint == fingerprint(ROWS[:2])
    assert got.files == ("nli/test.jsonl",)
    # the revision is resolved once, and everything is downloaded at that commit
    assert fake_hub.commit_calls == [("acme/az", "v1.0")]
    assert fake_hub.calls and all(
        c["repo_type"] == "dataset" and c["revision"] == COMMIT and c["local_files_only"] is False
        for c in fake_hub.calls
    )
    assert fake_hub.calls[0]["allow_patterns"][0] == "README.md"
    assert fake_hub.fetched() == {"nli/test.jsonl"}  # not the train split, not another config
    assert got.commits == {"acme/az": COMMIT}
    assert got.identity["revision"] == "v1.0"  # what the manifest says; the commit is provenance
    assert f"@ {COMMIT[:12]} (v1.0)" in got.describe()


def test_hub_dataset_is_downloaded_once_per_process(fake_hub):
    write_jsonl(fake_hub.remote / "test.jsonl", ROWS)
    spec = hub(path="acme/az", revision=COMMIT)
    assert D.load_dataset(spec, Path(".")).rows == D.load_dataset(spec, Path(".")).rows
    assert len(fake_hub.calls) == 1 and len(fake_hub.commit_calls) == 1


def test_hub_fewshot_split_defaults_to_train(fake_hub):
    (fake_hub.remote / "nli").mkdir()
    write_jsonl(fake_hub.remote / "nli" / "test.jsonl", ROWS[:2])
    write_jsonl(fake_hub.remote / "nli" / "train.jsonl", ROWS[2:])
    got = D.load_dataset(hub(path="acme/az", name="nli"), Path("."), default_split="train")
    assert list(got.rows) == ROWS[2:]
    assert got.identity["split"] == "train"
    assert fake_hub.commit_calls == [("acme/az", None)]  # the default branch, resolved


def test_hub_card_configs_and_parquet(fake_hub):
    repo = fake_hub.remote
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: az\n  data_files:\n  - split: test\n    path: parts/az-test-*.parquet\n"
        "---\n# kart\n",
        encoding="utf-8",
    )
    (repo / "parts").mkdir()
    pq.write_table(pa.Table.from_pylist(ROWS[:2]), repo / "parts" / "az-test-00000.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS[2:]), repo / "parts" / "az-test-00001.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS), repo / "parts" / "az-train-00000.parquet")
    got = D.load_dataset(hub(path="acme/az", name="az", max_rows=3), Path("."))
    assert list(got.rows) == ROWS[:3]
    # the card named other paths: a second request, at the same commit, for exactly those
    assert [c["revision"] for c in fake_hub.calls] == [COMMIT, COMMIT]
    assert fake_hub.calls[1]["allow_patterns"] == ["README.md", "parts/az-test-*.parquet"]
    assert "parts/az-train-00000.parquet" not in fake_hub.fetched()


def spy_reader(monkeypatch, fmt: str) -> list[str]:
    """The names of the files the shared reader (yoxla.data.files) reads as ``fmt`` from now on."""
    seen: list[str] = []
    real = datafiles._READERS[fmt]

    def spy(path, data, id_field):
        seen.append(path.name)
        return real(path, data, id_field)

    monkeypatch.setitem(datafiles._READERS, fmt, spy)
    return seen


def test_hub_json_file_goes_through_the_shared_reader(fake_hub, monkeypatch):
    seen = spy_reader(monkeypatch, "json")
    (fake_hub.remote / "data").mkdir()
    (fake_hub.remote / "data" / "test-00000.json").write_text(
        json.dumps({"data": ROWS}, ensure_ascii=False), encoding="utf-8"
    )
    (fake_hub.remote / "data" / "validation.csv").write_text("a\n1\n", encoding="utf-8")
    got = D.load_dataset(hub(path="acme/az"), Path("."))
    assert list(got.rows) == ROWS and got.files == ("data/test-00000.json",)
    assert seen == ["test-00000.json"]


def test_hub_csv_file_goes_through_the_shared_reader(fake_hub, monkeypatch):
    seen = spy_reader(monkeypatch, "csv")
    (fake_hub.remote / "test.csv").write_text('id,mətn\n1,"Salam, dünya"\n2,Sağ ol\n', encoding="utf-8")
    url = "https://huggingface.co/datasets/acme/evals/resolve/main/test.csv"
    got = D.load_dataset(hub(path="csv", data_files={"test": url}), Path("."))
    assert list(got.rows) == [{"id": "1", "mətn": "Salam, dünya"}, {"id": "2", "mətn": "Sağ ol"}]
    assert seen == ["test.csv"] and got.commits == {"acme/evals": COMMIT}


def test_a_bad_hub_file_is_one_line_naming_file_line_and_row(fake_hub):
    (fake_hub.remote / "test.csv").write_text("id,a\nx1,1\nx2\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        D.load_dataset(hub(path="acme/az"), Path("."), where="task 't', dataset")
    message = str(info.value)
    assert message.startswith("task 't', dataset: ") and "\n" not in message
    assert "test.csv, line 3 (row x2): 1 fields, the header has 2" in message


def test_hub_unknown_config_lists_the_known(fake_hub):
    (fake_hub.remote / "README.md").write_text(
        "---\nconfigs:\n- config_name: a\n  data_files: a.jsonl\n---\n", encoding="utf-8"
    )
    with pytest.raises(DatasetError, match=r"config 'b' not found: README.md in .* declares only a"):
        D.load_dataset(hub(path="acme/az", name="b"), Path("."))


def test_hub_no_files_for_split(fake_hub):
    write_jsonl(fake_hub.remote / "train.jsonl", ROWS)
    with pytest.raises(DatasetError, match=r"no 'test' data for the default config .*\(Hub dataset acme/az"):
        D.load_dataset(hub(path="acme/az"), Path("."))


def test_json_builder_reads_hub_file_urls_at_the_resolved_commit(fake_hub):
    write_jsonl(fake_hub.remote / "val.jsonl", ROWS)
    url = "https://huggingface.co/datasets/acme/evals/resolve/0123abc/val.jsonl"
    got = D.load_dataset(hub(path="json", split="validation", data_files={"validation": url}), Path("."))
    assert list(got.rows) == ROWS
    assert fake_hub.commit_calls == [("acme/evals", "0123abc")]
    assert [(c["repo_id"], c["revision"], c["allow_patterns"]) for c in fake_hub.calls] == [
        ("acme/evals", COMMIT, ["val.jsonl"])
    ]
    assert got.commits == {"acme/evals": COMMIT}


def test_json_builder_hf_scheme(fake_hub):
    write_jsonl(fake_hub.remote / "x.jsonl", ROWS[:1])
    spec = hub(path="json", dataset_kwargs={"data_files": {"test": ["hf://datasets/acme/evals@v1/x.jsonl"]}})
    assert D.load_dataset(spec, Path(".")).rows == (ROWS[0],)
    assert fake_hub.commit_calls == [("acme/evals", "v1")]


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/data.jsonl",
        "https://huggingface.co.evil.example/datasets/a/b/resolve/main/x.jsonl",
        "http://huggingface.co/datasets/a/b/resolve/main/x.jsonl",
        "https://user:pw@huggingface.co/datasets/a/b/resolve/main/x.jsonl",
        "file:///etc/passwd",
        "https://huggingface.co/a/b/blob/main/x.jsonl",
        "https://huggingface.co/datasets/a/b/resolve/main/../../../x.jsonl",
    ],
)
def test_json_builder_refuses_other_urls_before_any_request(fake_hub, url):
    with pytest.raises(DatasetError, match=r"data_files must be|is not a|outside its repository") as info:
        D.load_dataset(hub(path="json", data_files={"test": url}), Path("."))
    assert "\n" not in str(info.value) and "pw" not in str(info.value).replace(url, "")
    assert fake_hub.calls == [] and fake_hub.commit_calls == []


def test_an_unreachable_hub_is_one_message(fake_hub, monkeypatch):
    def unreachable(repo, revision, timeout=3.0):
        raise OSError("network is unreachable")

    monkeypatch.setattr(hub_module, "hub_commit", unreachable)
    with pytest.raises(DatasetError) as info:
        D.load_dataset(hub(path="acme/az", revision="v2"), Path("."))
    message = str(info.value)
    assert "could not load Hub dataset acme/az at v2: the Hub did not answer (OSError)" in message
    assert "Offline?" in message and "\n" not in message
    assert fake_hub.calls == []


def test_a_failed_download_is_one_message(fake_hub, monkeypatch):
    def broken(repo_id, **kw):
        raise OSError("disk full\nsecond line")

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", broken)
    with pytest.raises(
        DatasetError, match="could not load Hub dataset acme/az at v2: OSError: disk full"
    ) as info:
        D.load_dataset(hub(path="acme/az", revision="v2"), Path("."))
    assert "\n" not in str(info.value) and "second line" not in str(info.value)


# Offline ---------------------------------------------------------------------------------


def test_offline_with_nothing_cached_fails_fast_in_one_line(monkeypatch, capsys, tmp_path):
    """The real Hub client, offline, over the tests' empty Hugging Face cache: no request, one line."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_module, "_SNAPSHOTS", {})
    start = time.perf_counter()
    with pytest.raises(DatasetError) as info:
        D.load_dataset(hub(path="acme/az", revision="0" * 40), Path("."), where="task 't', dataset")
    assert time.perf_counter() - start < 5
    message = str(info.value)
    assert message.startswith("task 't', dataset: could not load Hub dataset acme/az at 0000")
    assert "not in the local Hugging Face cache (offline mode)" in message and "Offline?" in message
    assert "\n" not in message
    # and through the command line: exit 2, one line, no traceback
    spec = {"source": "huggingface", "path": "acme/az", "revision": "0" * 40}
    path = write_manifest(tmp_path, [task(dataset=spec)])
    code = cli_run(["suite", "validate", str(path)])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out.count("\n") <= 1 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("yoxla: error: ") and "not in the local Hugging Face cache" in lines[0]


def test_offline_reads_what_an_online_load_left_in_the_cache(fake_hub, monkeypatch):
    write_jsonl(fake_hub.remote / "test.jsonl", ROWS)
    online = D.load_dataset(hub(path="acme/az", revision=COMMIT), Path("."))
    monkeypatch.setattr(hub_module, "_SNAPSHOTS", {})  # a new process
    fake_hub.calls.clear()
    fake_hub.commit_calls.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = D.load_dataset(hub(path="acme/az", revision=COMMIT), Path("."))
    assert offline.rows == online.rows and offline.commits == {"acme/az": COMMIT}
    assert fake_hub.commit_calls == []  # no request to the Hub
    assert fake_hub.calls and all(c["local_files_only"] is True for c in fake_hub.calls)


# The v1 edition and a suite dataset: one loading path ---------------------------------------


def test_the_v1_edition_and_a_suite_dataset_share_the_loading_path(tmp_path, monkeypatch):
    shutil.copytree(bundled_path("sample"), tmp_path / "remote")
    monkeypatch.delenv("YOXLA_DATA_DIR", raising=False)
    datafiles.clear_cache()
    fake = FakeHub(tmp_path / "remote", tmp_path / "hf-cache").install(monkeypatch)
    v1 = load_edition("v1")
    edition_rows = load_rows(v1, "nli_v1")
    suite_rows = D.load_dataset(hub(path=v1.source, name="nli_v1", revision=v1.revision), Path("."))
    # the same helpers: both asked the (fake) Hub through yoxla.data.hub, at the same commit ...
    assert {c["repo_id"] for c in fake.calls} == {v1.source}
    assert {c["revision"] for c in fake.calls} == {COMMIT}
    assert len(hub_module._SNAPSHOTS) == 2  # the edition's configs, and the suite's one config
    # ... and the same reader: the same rows, with the fingerprint the edition pins
    assert list(suite_rows.rows) == edition_rows
    assert suite_rows.fingerprint == load_edition("sample").tasks["nli_v1"].fingerprint
    assert suite_rows.commits == {v1.source: COMMIT}
