"""Boards for the app's tests, benches and screenshots: many full-size synthetic models.

:func:`write_synthetic_folder` writes N result files of full ``v1`` size (1,443 predictions
each; the bundled sample rows cycled under new ids to v1's row counts, see
:func:`yoxla.leaderboard.synthetic.synthetic_rows`) with varied skill, providers, sizes,
open and closed weights, a few thinking runs and one model the release notes report, next to
copies of the committed ``sample`` files. :func:`synthetic_board` admits that folder against
the synthetic rows, so every file is re-checked. ``python -m yoxla.testing.boards DIR`` serves
such a folder (the browser test and ``bench/screenshots.py`` use it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.editions import Edition, load_edition
from yoxla.leaderboard.board import Board, load_board
from yoxla.leaderboard.data import DataSource, EditionRows
from yoxla.leaderboard.synthetic import build_result, edition_for_rows, random_answers, synthetic_rows
from yoxla.results import finalize, write_result

REPO = Path(__file__).resolve().parents[2]
PROVIDERS = ("openrouter", "vllm", "transformers", "openai")
PARAMS = (1.5e9, 3e9, 8e9, 14e9, 27e9, 32e9, 70e9, 235e9, None)
REPORTED_MODEL = "openai/gpt-4o-mini"  # one of the models the v1 release notes report


@dataclass(frozen=True)
class SyntheticV1:
    edition: Edition
    rows: dict[str, list[dict[str, Any]]]


def synthetic_v1() -> SyntheticV1:
    rows = synthetic_rows(load_edition("v1"))
    return SyntheticV1(edition_for_rows("v1", rows), rows)


def _metadata(i: int) -> dict[str, Any]:
    params = PARAMS[i % len(PARAMS)]
    md: dict[str, Any] = {}
    if params is not None:
        md["parameters"] = int(params)
    if i % 4 != 3:
        md["open_weights"] = i % 4 != 2
    if md.get("open_weights"):
        md["licence"] = "apache-2.0"
        md["hub_repo"] = f"synthetic-org/model-{i:03d}"
        md["hub_revision"] = f"{i:040x}"
        md["card_url"] = f"https://huggingface.co/synthetic-org/model-{i:03d}"
    return md


def write_synthetic_folder(
    folder: Path, n: int = 100, *, distinct: int = 12, thinking: int = 5, data: SyntheticV1 | None = None
) -> SyntheticV1:
    """``n`` full-size v1 files under ``folder/v1`` and the committed sample files under ``folder/sample``."""
    data = data or synthetic_v1()
    (folder / "v1").mkdir(parents=True, exist_ok=True)
    (folder / "sample").mkdir(parents=True, exist_ok=True)
    for p in sorted((REPO / "results" / "sample").glob("*.json")):
        shutil.copy(p, folder / "sample" / p.name)
    pool = [
        build_result(
            random_answers(seed, skill=0.35 + 0.6 * seed / max(1, distinct - 1)),
            edition=data.edition,
            rows=data.rows,
            model=f"pool-{seed}",
        )
        for seed in range(min(distinct, n))
    ]
    for i in range(n):
        doc = json.loads(json.dumps(pool[i % len(pool)]))
        provider = PROVIDERS[i % len(PROVIDERS)]
        model = REPORTED_MODEL if i == 1 else f"synthetic-org/model-{i:03d}"
        doc["model"].update(provider=provider, model=model, reported_model=model, display_name=model)
        doc["model"]["metadata"] = _metadata(i)
        doc["created_at"] = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        doc["run"]["run_id"] = f"synthetic-{i:03d}"
        if i >= n - thinking:
            doc["run"]["conditions"]["thinking"] = True
        write_result(finalize(doc), folder / "v1" / f"{provider}__model-{i:03d}.json")
    return data


def synthetic_board(folder: Path, data: SyntheticV1 | None = None, **kw: Any) -> Board:
    """The folder admitted against the synthetic v1 rows (every file re-checked)."""
    data = data or synthetic_v1()
    source = DataSource()
    source._cache["v1"] = EditionRows(data.rows, "synthetic rows")
    return load_board(
        folder, data=source, editions={"v1": data.edition, "sample": load_edition("sample")}, **kw
    )


def main() -> None:
    """Serve a results folder; ``--synthetic`` admits it against the synthetic v1 rows."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("results")
    ap.add_argument(
        "--synthetic", action="store_true", help="write (if empty) and admit N synthetic v1 files"
    )
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--trusted-keys")
    ap.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    args = ap.parse_args()
    import sys

    sys.path.insert(0, str(REPO))
    import app

    folder = Path(args.results)
    board = None
    if args.synthetic:
        data = synthetic_v1()
        if not any(folder.glob("v1/*.json")):
            app.say(f"writing {args.n} synthetic full-size v1 files under {folder}")
            write_synthetic_folder(folder, args.n, data=data)
        board = synthetic_board(folder, data, trusted_keys=args.trusted_keys, log=app.say)
    demo = app.build_app(folder, board=board, trusted_keys=args.trusted_keys, log=app.say)
    _, url, _ = app.launch(
        demo, server_name="127.0.0.1", server_port=args.port, prevent_thread_lock=True, quiet=True
    )
    app.say(f"ready at {url}")
    demo.block_thread()


if __name__ == "__main__":
    main()
