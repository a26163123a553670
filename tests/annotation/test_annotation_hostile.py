"""Hostile annotation sheets (cases/hostile_sheets.yaml): one line each, a non-zero exit, no
traceback; the other sheets still count; ``--task`` skips the rows of other tasks; exported
cells that a spreadsheet would run carry an apostrophe and are read back as written."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from yoxla.annotation import review_status
from yoxla.annotation.sheets import COLUMNS, export_sheet, read_annotations, sheet_path
from yoxla.cli.main import run
from yoxla.contract.benchmark import benchmark_task, gold_field
from yoxla.data.editions import load_edition, load_rows
from yoxla.safe.csvcells import runnable

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "hostile_sheets.yaml").read_text(encoding="utf-8"))
EDITION = load_edition("sample")


def _export(folder: Path, name: str, *extra: str) -> Path:
    args = ["annotate", "export", "--edition", "sample", "--annotator", name, "--dir", str(folder), *extra]
    assert run(args) == 0
    return folder / f"{name}.csv"


def _read(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8-sig"))))


def _write(path: Path, records: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(records)


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        text, times = value["repeat"]
        return text * times
    return str(value)


def _apply(path: Path, edit: dict[str, Any]) -> None:
    """Rewrite an exported sheet with one hostile edit."""
    text = path.read_bytes().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header = rows[0]
    if "duplicate_row" in edit:
        rows.append(list(rows[edit["duplicate_row"]]))
    if "cell" in edit:
        r, col, value = edit["cell"]
        rows[r][header.index(col)] = _cell(value)
        if "duplicate_row" in edit:
            rows[-1][header.index(col)] = _cell(value)
    if "drop_column" in edit:
        k = header.index(edit["drop_column"])
        rows = [row[:k] + row[k + 1 :] for row in rows]
    if "duplicate_column" in edit:
        k = header.index(edit["duplicate_column"])
        rows = [[*row, row[k]] for row in rows]
    if "extra_cell" in edit:
        r, value = edit["extra_cell"]
        rows[r].append(value)
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    body = out.getvalue() + edit.get("append_raw", "")
    if "replace_all" in edit:
        body = edit["replace_all"]
    encoding = edit.get("encode")
    data = ("\ufeff" + body).encode("utf-8") if encoding is None else body.encode(encoding, errors="replace")
    path.write_bytes(edit.get("prefix", "").encode("utf-8") + data)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _export(tmp_path_factory.mktemp("template"), "alice").read_bytes()


def test_cases_are_named_once_and_cover_both_outcomes():
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    assert any("error" in c for c in CASES) and any(c.get("problem") for c in CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_hostile_sheet(case, template, tmp_path, capsys):
    folder = tmp_path / "sample"
    folder.mkdir()
    sheet = folder / "alice.csv"
    sheet.write_bytes(template)
    _apply(sheet, case["edit"])
    good = _export(folder, "bob")  # a readable sheet beside it, with one answered row
    records = _read(good)
    first = records[0]
    row = next(r for r in load_rows(EDITION, first["task"]) if str(r["id"]) == first["id"])
    first["label"] = str(row[gold_field(first["task"])])
    _write(good, records)

    compare = ["annotate", "compare", "--edition", "sample", "--annotator", "alice", "--dir", str(folder)]
    rc = run(compare)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if "error" in case:
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1, (rc, out, err)
        assert case["error"] in lines[0] and "alice.csv" in lines[0]
    elif case.get("problem"):
        assert rc == 1, (out, err)
        assert [p for p in out.splitlines() if p.startswith("problem:") and case["problem"] in p], out
    else:
        assert rc == 0, (out, err)

    rc = run(["annotate", "status", "--edition", "sample", "--dir", str(folder)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    problems = [p for p in out.splitlines() if p.startswith("problem:")]
    if "error" in case:
        assert rc == 1 and len(problems) == 1 and case["error"] in problems[0], out
        assert "(the sheet is left out)" in problems[0]
    elif case.get("problem"):
        assert rc == 1 and any(case["problem"] in p for p in problems), out
    else:
        assert rc == 0 and not problems, out
    assert all(p.isprintable() for p in problems)
    status, _ = review_status(folder, {tid: benchmark_task(tid) for tid in EDITION.task_ids},
                              {tid: load_rows(EDITION, tid) for tid in EDITION.task_ids})  # fmt: skip
    assert status[first["task"]].by_agreement >= 1 and "bob" in status[first["task"]].people


def test_compare_with_task_skips_the_rows_of_the_other_exported_tasks(tmp_path, capsys):
    folder = tmp_path / "sample"
    path = _export(folder, "alice", "--task", "nli_v1", "--task", "sentiment_v1")
    records = _read(path)
    assert {r["task"] for r in records} == {"nli_v1", "sentiment_v1"}
    for r in records:
        r["label"] = "?"
    _write(path, records)
    args = ["annotate", "compare", "--edition", "sample", "--annotator", "alice", "--dir", str(folder)]
    assert run([*args, "--task", "nli_v1"]) == 0
    out = capsys.readouterr().out
    assert "problem:" not in out and "sentiment_v1" not in out
    n_nli = sum(r["task"] == "nli_v1" for r in records)
    assert out.count("unsure: ") == n_nli
    records[0]["task"] = "yox_v1"  # a task the edition does not have is still a problem
    _write(path, records)
    assert run([*args, "--task", "nli_v1"]) == 1
    assert "no such row in this edition" in capsys.readouterr().out


FORMULAS = ["=1+1", "+cmd|' /C calc'!A0", "@SUM(A1:A9)", '-1+HYPERLINK("http://x")', "\t=1"]


def test_export_escapes_runnable_cells_and_reads_them_back(tmp_path):
    task = benchmark_task("nli_v1")
    rows = [dict(r) for r in load_rows(EDITION, "nli_v1")[: len(FORMULAS) + 1]]
    for row, evil in zip(rows, FORMULAS, strict=False):
        if not evil[0].isspace():  # ids are read back without surrounding white space
            row["id"] = evil
        for f in ("premise", "hypothesis"):  # what the prompt shows
            row[f] = evil
    rows[-1]["id"] = "-1.5"  # a plain number stays a number
    path = sheet_path(tmp_path, "alice")
    export_sheet(path, [task], {"nli_v1": rows}, shuffle_key="x")
    cells = [c for r in csv.reader(io.StringIO(path.read_bytes().decode("utf-8-sig"))) for c in r]
    assert not [c for c in cells if runnable(c)]
    assert "-1.5" in cells and "'=1+1" in cells and "'+cmd|' /C calc'!A0" in cells
    # Read back: the apostrophes are undone, so every id is found (no "no such row").
    records = _read(path)
    for r in records:
        r["label"] = "?"
    _write(path, records)
    anns, problems = read_annotations(path, "alice", "person", {"nli_v1": task}, {"nli_v1": rows})
    assert problems == []
    assert sorted(a.id for a in anns) == sorted(str(r["id"]) for r in rows)


def test_a_sheet_over_the_size_limit_is_one_line(template, tmp_path, capsys, monkeypatch):
    from yoxla.annotation import sheets

    monkeypatch.setattr(sheets, "MAX_SHEET_BYTES", 1000)  # the real limit is 20 MB: the rule, on a sheet
    folder = tmp_path / "sample"
    folder.mkdir()
    (folder / "alice.csv").write_bytes(template)
    args = ["annotate", "compare", "--edition", "sample", "--annotator", "alice", "--dir", str(folder)]
    assert run(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"alice.csv: {len(template):,} bytes, more than the 1,000 a sheet may have"), err
