"""The facts the board's filters use, stated by the contributor, reach the result file and the board;
a local folder's path is never published (name, file name, command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import one_error_line

from yoxla.admission.gold import DataSource
from yoxla.board.loading import load_board
from yoxla.board.prepared import prepare
from yoxla.cli.main import run as cli_run
from yoxla.run.finalize import result_path
from yoxla.run.model_facts import model_info, parse_params, public_model
from yoxla.run.settings import RunSettings, run_record
from yoxla.views.leaderboard_tables import Filters, leaderboard_frame, leaderboard_view
from yoxla.views.model_tables import model_facts

FACTS = [
    "--display-name",
    "Overlap Eight",
    "--model-card",
    "https://huggingface.co/org/overlap-8b",
    "--license",
    "apache-2.0",
    "--weights",
    "open",
    "--params",
    "8B",
]


def _run(tmp_path: Path, *extra: str, run_id: str = "facts") -> int:
    return cli_run(
        [
            "run",
            "--provider",
            "baseline",
            "--model",
            "overlap",
            "--edition",
            "sample",
            "--run-id",
            run_id,
            "--runs-dir",
            str(tmp_path / "runs"),
            "--results-dir",
            str(tmp_path / "results"),
            "--no-progress",
            *extra,
        ]
    )


def test_the_five_facts_are_stored_verified_and_placed_by_the_filters(tmp_path: Path) -> None:
    assert _run(tmp_path, *FACTS) == 0
    path = tmp_path / "results" / "sample" / "baseline__overlap.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["model"]["display_name"] == "Overlap Eight"
    assert doc["model"]["metadata"] == {
        "parameters": 8_000_000_000,
        "open_weights": True,
        "licence": "apache-2.0",
        "card_url": "https://huggingface.co/org/overlap-8b",
    }
    assert cli_run(["verify", str(path)]) == 0
    ed = prepare(load_board(tmp_path / "results", data=DataSource(allow_hub=False), B=50)).edition("sample")
    frame = leaderboard_frame(ed)
    for f in (Filters(weights="open"), Filters(size="4–15B")):
        view = leaderboard_view(frame, ed, filters=f)
        assert "Overlap Eight" in list(view.table["Model"]), f
        assert (
            view.links[list(view.table["Model"]).index("Overlap Eight")]
            == doc["model"]["metadata"]["card_url"]
        )
    assert leaderboard_view(frame, ed, filters=Filters(weights="closed")).shown == 0
    assert frame.loc[frame["Model"] == "Overlap Eight", "Licence"].iloc[0] == "apache-2.0"
    # The tokens the run used: a column of the board and a line of the model page.
    row = frame[frame["Model"] == "Overlap Eight"].iloc[0]
    assert (row["Prompt tokens"], row["Completion tokens"]) == (
        doc["usage"]["prompt_tokens"],
        doc["usage"]["completion_tokens"],
    )
    wide = leaderboard_view(frame, ed, columns=["diagnostics"]).table
    assert {"Tokens in", "Tokens out", "Licence", "Weights"} <= set(wide.columns)
    verdict = next(v for v in ed.standard.models if v.name == "Overlap Eight")
    facts = dict(zip(*(model_facts(verdict, ed)[c] for c in ("Field", "Value")), strict=True))
    assert (
        facts["Prompt tokens"] == f"{doc['usage']['prompt_tokens']:,}" or doc["usage"]["prompt_tokens"] == 0
    )
    assert facts["Model card"] == "https://huggingface.co/org/overlap-8b" and facts["Weights"] == "open"


def test_a_model_info_file_gives_the_facts_and_a_flag_beside_it_wins(tmp_path: Path) -> None:
    info = tmp_path / "model.yaml"
    info.write_text(
        "display_name: From File\nmodel_card: https://example.org/card\nlicense: mit\nweights: closed\n"
        "params: 350M\n",
        encoding="utf-8",
    )
    assert _run(tmp_path, "--model-info", str(info), "--weights", "open") == 0
    doc = json.loads((tmp_path / "results" / "sample" / "baseline__overlap.json").read_text(encoding="utf-8"))
    meta = doc["model"]["metadata"]
    assert doc["model"]["display_name"] == "From File" and meta["parameters"] == 350_000_000
    assert meta["open_weights"] is True and meta["licence"] == "mit"


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--params", "eight"], "--params"),
        (["--params", "0"], "out of range"),
        (["--model-card", "javascript:alert(1)"], "--model-card"),
        (["--model-card", 'https://x.org/"><b>'], "--model-card"),
        (["--license", "x" * 200], "--license"),
    ],
)
def test_bad_facts_give_one_line_and_no_run(tmp_path: Path, capsys, flags: list[str], needle: str) -> None:
    rc = _run(tmp_path, *flags)
    one_error_line(rc, capsys.readouterr().err, needle)
    assert not (tmp_path / "results").exists()


def test_a_model_info_file_with_an_unknown_key_is_refused(tmp_path: Path, capsys) -> None:
    info = tmp_path / "model.yaml"
    info.write_text("display_name: x\nowner_secret: y\n", encoding="utf-8")
    one_error_line(_run(tmp_path, "--model-info", str(info)), capsys.readouterr().err, "unknown key")


def test_parameter_counts_read_as_written() -> None:
    assert [parse_params(x) for x in ("8e9", "8B", "7.6b", "350M", "123456", "1.5T")] == [
        8_000_000_000,
        8_000_000_000,
        7_600_000_000,
        350_000_000,
        123456,
        1_500_000_000_000,
    ]


def test_a_local_folder_is_published_by_its_own_config_never_by_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "private-dir" / "tiny-az"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"_name_or_path": str(folder), "model_type": "llama"}))
    assert public_model(str(folder)) == "local-llama"  # the config names only the path: its architecture
    s = RunSettings(provider="transformers", model=str(folder), run_id="r", results_dir=str(tmp_path / "res"))
    s.command = f"runner.py --provider transformers --model {folder}"
    info = run_record(
        s,
        task_ids=[],
        facts={},
        provider_facts={"provider_info": {"model_path": str(folder), "parameters": 1000}},
        dataset={},
        suite_hash="",
        conditions={},
        workers=1,
        batch_size=1,
        secrets=[],
    )
    published = model_info(info, [])
    assert published.model == published.display_name == "local-llama"
    assert (
        "private-dir" not in str(result_path({**info, "suite": {"id": "yoxla-v1"}}, True).name)
        and "private-dir" not in info["command"]
    )
    assert published.metadata is not None and published.metadata.parameters == 1000
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "org/tiny-az", "model_type": "llama"}))
    assert public_model(str(folder)) == "org/tiny-az"  # the Hub id it was saved from
    assert public_model("org/tiny-az") == "org/tiny-az" and public_model("gpt-4o-mini") == "gpt-4o-mini"
