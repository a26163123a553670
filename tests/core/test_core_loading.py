"""One loading path: the Hub id or a local folder in the Hub layout, and clear errors offline."""

from __future__ import annotations

import shutil
import time

import pytest

from yoxla.cli import run
from yoxla.editions import DataUnavailable, bundled_path, load_edition, load_rows


def test_v1_offline_without_a_copy_names_both_remedies_quickly(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("YOXLA_DATA_DIR", raising=False)
    start = time.perf_counter()
    with pytest.raises(DataUnavailable) as info:
        load_rows(load_edition("v1"), "nli_v1", revision="0" * 40)
    message = str(info.value)
    assert "--data-dir" in message and "yoxla download" in message
    assert time.perf_counter() - start < 10


def test_v1_from_a_local_folder_goes_through_the_same_loader(tmp_path, capsys):
    """A local copy in the Hub layout loads; its differing rows are caught by the manifest."""
    copy = tmp_path / "copy"
    shutil.copytree(bundled_path("sample"), copy)
    rows = load_rows(load_edition("v1"), "nli_v1", data_dir=copy)
    assert rows[0]["id"] == "nli-s-01"
    status = run(["validate-benchmark", "--edition", "v1", "--data-dir", str(copy), "--task", "nli_v1"])
    out = capsys.readouterr().out
    assert status == 1
    assert "expected 100 rows, found 12" in out
    assert "DIFFERS" in out


def test_yoxla_data_dir_environment_variable_is_honoured(tmp_path, monkeypatch):
    copy = tmp_path / "envcopy"
    shutil.copytree(bundled_path("sample"), copy)
    monkeypatch.setenv("YOXLA_DATA_DIR", str(copy))
    assert len(load_rows(load_edition("v1"), "sentiment_v1")) == 12
