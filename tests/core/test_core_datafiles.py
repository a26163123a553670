"""Reading a config's files: which files (Hub layouts), the schema datasets gave the rows, and
one clear error for a bad file."""

from __future__ import annotations

import datetime
import decimal
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from yoxla.cli.main import run
from yoxla.data import files as datafiles
from yoxla.data.editions import bundled_path, fingerprint, load_edition
from yoxla.data.files import DataUnavailable, config_files, read_config

CASES = Path(__file__).parent / "cases" / "jsonl_schema_cases.json"
SAMPLE = load_edition("sample")
NLI = bundled_path("sample") / "nli_v1" / "test.jsonl"
NLI_FP = SAMPLE.tasks["nli_v1"].fingerprint


def _typed(value: Any) -> Any:
    """A value with its types and key order spelled out, so 1 != 1.0 and {a, b} != {b, a}."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


def _sample_rows(config: str) -> list[dict[str, Any]]:
    path = bundled_path("sample") / config / "test.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


# --- the rows datasets gave, reproduced -------------------------------------------------------

SCHEMA_CASES = {k: v for k, v in json.loads(CASES.read_text(encoding="utf-8")).items() if k != "_about"}


@pytest.mark.parametrize("name", sorted(SCHEMA_CASES))
def test_jsonl_rows_have_the_schema_datasets_gave_them(tmp_path, name):
    case = SCHEMA_CASES[name]
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "test.jsonl").write_text("\n".join(case["lines"]) + "\n", encoding="utf-8")
    rows = read_config(tmp_path, "c", "test")
    assert _typed(rows) == _typed(case["rows"])
    assert fingerprint(rows) == fingerprint(case["rows"])


@pytest.mark.parametrize("task_id", sorted(SAMPLE.tasks))
def test_parquet_copies_of_the_sample_keep_the_pinned_fingerprints(tmp_path, task_id):
    config = SAMPLE.tasks[task_id].config
    _write_parquet(tmp_path / config / "test-00000-of-00001.parquet", _sample_rows(config))
    rows = read_config(tmp_path, config, "test")
    assert _typed(rows) == _typed(read_config(bundled_path("sample"), config, "test"))
    assert fingerprint(rows) == SAMPLE.tasks[task_id].fingerprint


def test_parquet_values_json_cannot_hold_become_the_strings_the_fingerprint_used(tmp_path):
    row = {
        "id": "p1",
        "when": datetime.datetime(1918, 5, 28, 12, 0),
        "day": datetime.date(1918, 5, 28),
        "amount": decimal.Decimal("1.50"),
        "blob": b"az",
        "n": 3,
        "x": 0.5,
        "ok": True,
        "tags": ["ə", None],
        "meta": {"k": 1, "v": None},
    }
    _write_parquet(tmp_path / "c" / "test.parquet", [row])
    [got] = read_config(tmp_path, "c", "test")
    assert _typed(got) == _typed(
        {
            "id": "p1",
            "when": "1918-05-28 12:00:00",
            "day": "1918-05-28",
            "amount": "1.50",
            "blob": "b'az'",
            "n": 3,
            "x": 0.5,
            "ok": True,
            "tags": ["ə", None],
            "meta": {"k": 1, "v": None},
        }
    )
    assert fingerprint([got]) == fingerprint([row])  # what default=str made of the Arrow values


# --- which files: the Hub layouts we support ---------------------------------------------------


def _declare(root: Path, config: str, body: str) -> None:
    (root / "README.md").write_text(f"---\nconfigs:\n- config_name: {config}\n{body}---\n# card\n")


def _layout_plain(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_jsonl(root / "nli_v1" / "test.jsonl", rows)


def _layout_data_folder(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_jsonl(root / "data" / "nli_v1" / "test.jsonl", rows)


def _layout_jsonl_shards(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_jsonl(root / "nli_v1" / "test-00001-of-00002.jsonl", rows[5:])
    _write_jsonl(root / "nli_v1" / "test-00000-of-00002.jsonl", rows[:5])


def _layout_parquet_shards(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_parquet(root / "nli_v1" / "test-00000-of-00002.parquet", rows[:7])
    _write_parquet(root / "nli_v1" / "test-00001-of-00002.parquet", rows[7:])


def _layout_parquet_conversion(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_parquet(root / "nli_v1" / "test" / "0000.parquet", rows)


def _layout_data_parquet(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_parquet(root / "data" / "nli_v1" / "test-00000-of-00001.parquet", rows)


def _layout_card_paths(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_jsonl(root / "files" / "nli-a.jsonl", rows[:3])
    _write_jsonl(root / "files" / "nli-b.jsonl", rows[3:])
    _write_jsonl(root / "nli_v1" / "test.jsonl", rows[:1])  # the card wins over the convention
    _declare(root, "nli_v1", "  data_files:\n  - split: test\n    path: files/nli-*.jsonl\n")


def _layout_card_path_list(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_jsonl(root / "files" / "z.jsonl", rows[:4])  # the card's order, not the names'
    _write_jsonl(root / "files" / "a.jsonl", rows[4:])
    _declare(root, "nli_v1", "  data_files:\n  - split: test\n    path: [files/z.jsonl, files/a.jsonl]\n")


def _layout_card_data_dir(root: Path, rows: list[dict[str, Any]]) -> None:
    _write_jsonl(root / "elsewhere" / "nli" / "test.jsonl", rows)
    _declare(root, "nli_v1", "  data_dir: elsewhere/nli\n")


LAYOUTS = {
    "<config>/test.jsonl": _layout_plain,
    "data/<config>/test.jsonl": _layout_data_folder,
    "<config>/test-0000N-of-00002.jsonl": _layout_jsonl_shards,
    "<config>/test-0000N-of-00002.parquet": _layout_parquet_shards,
    "<config>/test/0000.parquet": _layout_parquet_conversion,
    "data/<config>/test-00000-of-00001.parquet": _layout_data_parquet,
    "README data_files": _layout_card_paths,
    "README data_files list": _layout_card_path_list,
    "README data_dir": _layout_card_data_dir,
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_supported_layout_reads_the_same_rows(tmp_path, layout):
    LAYOUTS[layout](tmp_path, _sample_rows("nli_v1"))
    assert fingerprint(read_config(tmp_path, "nli_v1", "test")) == NLI_FP


def test_the_bundled_sample_declares_its_layout_in_its_card():
    for task_id, entry in SAMPLE.tasks.items():
        files = config_files(bundled_path("sample"), entry.config, "test")
        assert [f.relative_to(bundled_path("sample")).as_posix() for f in files] == [
            f"{entry.config}/test.jsonl"
        ], task_id


BAD_LAYOUTS = {
    "no folder": ({}, "config 'nli_v1' not found"),
    "no test file": ({"nli_v1/train.jsonl": "{}"}, "found: train.jsonl"),
    "mixed formats": ({"nli_v1/test.jsonl": "{}", "nli_v1/test-1.parquet": ""}, "mixes .jsonl and .parquet"),
    "card without the split": (
        {
            "README.md": "---\nconfigs:\n- config_name: nli_v1\n  data_files:\n  - split: train\n    path: a.jsonl\n---\n"
        },
        "without a 'test' split (splits: train)",
    ),
    "card naming a missing file": (
        {"README.md": "---\nconfigs:\n- config_name: nli_v1\n  data_files: {test: gone/*.jsonl}\n---\n"},
        "no such file exists",
    ),
    "card leaving the folder": (
        {"README.md": "---\nconfigs:\n- config_name: nli_v1\n  data_files: {test: ../x.jsonl}\n---\n"},
        "must stay inside the folder",
    ),
    "card naming a csv": (
        {
            "README.md": "---\nconfigs:\n- config_name: nli_v1\n  data_files: {test: t.csv}\n---\n",
            "t.csv": "id\n",
        },
        "use .jsonl or .parquet",
    ),
    "card that is not yaml": ({"README.md": "---\nconfigs: [\n---\n"}, "front matter is not valid YAML"),
}


@pytest.mark.parametrize("case", BAD_LAYOUTS)
def test_a_layout_that_does_not_fit_says_what_is_wrong(tmp_path, case):
    files, message = BAD_LAYOUTS[case]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(DataUnavailable, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_config(tmp_path, "nli_v1", "test")


# --- a malformed file: one clear error naming the file, the line and the row ----------------


def _replace_line(lines: list[bytes], number: int, new: bytes) -> bytes:
    lines = list(lines)
    lines[number - 1] = new
    return b"\n".join(lines) + b"\n"


def _third_line_cut(lines: list[bytes]) -> bytes:
    return _replace_line(lines, 3, lines[2][:-5])


MALFORMED = {
    "cut JSON": (_third_line_cut, "line 3 (row nli-s-03): not valid JSON"),
    "two objects on a line": (
        lambda ls: _replace_line(ls, 7, ls[6] + b' {"id": "x"}'),
        "line 7 (row nli-s-07): not valid JSON: Extra data",
    ),
    "not an object": (lambda ls: _replace_line(ls, 2, b'["nli-s-02"]'), "line 2: a JSON list, not an object"),
    "NaN": (
        lambda ls: _replace_line(ls, 4, b'{"id": "nli-s-04", "score": NaN}'),
        "line 4 (row nli-s-04): not valid JSON: NaN is not a JSON value",
    ),
    "not UTF-8": (
        lambda ls: _replace_line(ls, 5, b'{"id": "nli-s-05", "premise": "\xe6"}'),
        "line 5 (row nli-s-05): not UTF-8 text",
    ),
    "too long a line": (
        lambda ls: _replace_line(ls, 6, b'{"id": "nli-s-06", "premise": "' + b"a" * 2000 + b'"}'),
        "line 6 (row nli-s-06): a line of 2,033 characters; lines over 1,000 are refused",
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_line_is_one_clear_error_not_a_traceback(tmp_path, capsys, monkeypatch, case):
    edit, message = MALFORMED[case]
    monkeypatch.setattr(datafiles, "MAX_LINE_CHARS", 1000)
    copy = tmp_path / "copy"
    shutil.copytree(bundled_path("sample"), copy)
    path = copy / "nli_v1" / "test.jsonl"
    path.write_bytes(edit(path.read_bytes().splitlines()))
    status = run(["validate-benchmark", "--edition", "sample", "--data-dir", str(copy), "--task", "nli_v1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith(f"yoxla: error: {path}, {message}")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(datafiles, "MAX_FILE_BYTES", 1000)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "test.jsonl").write_bytes(NLI.read_bytes())
    with pytest.raises(
        DataUnavailable, match=r"test.jsonl is 3,006 bytes; data files over 1,000 bytes are refused"
    ):
        read_config(tmp_path, "c", "test")


def test_a_damaged_parquet_file_is_named(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "test.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataUnavailable, match=r"test.parquet: not a readable Parquet file"):
        read_config(tmp_path, "c", "test")


def test_blank_lines_a_byte_order_mark_crlf_and_padding_are_tolerated(tmp_path):
    lines = NLI.read_bytes().splitlines()
    lines[1] = b"  " + lines[1] + b" \t"
    (tmp_path / "nli_v1").mkdir()
    (tmp_path / "nli_v1" / "test.jsonl").write_bytes(b"\xef\xbb\xbf" + b"\r\n\r\n".join(lines) + b"\r\n")
    assert fingerprint(read_config(tmp_path, "nli_v1", "test")) == NLI_FP
