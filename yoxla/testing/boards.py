"""Boards for the app's tests, benches and screenshots: many full-size synthetic models.

:func:`write_synthetic_folder` writes N result files of full ``v1`` size (the sample rows cycled
to v1's row counts, :func:`yoxla.testing.synthetic.synthetic_rows`) with varied skill,
providers, sizes and weights, half of them with answer distributions on the choice tasks
(:func:`synthetic_distributions`), next to copies of the committed ``sample`` and suite files.
:func:`synthetic_board` admits that folder against the synthetic rows. ``python -m
yoxla.testing.boards DIR`` serves such a folder (the browser test and ``bench/screenshots.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yoxla.admission.gold import DataSource, EditionRows
from yoxla.board.loading import Board, load_board
from yoxla.contract.benchmark import benchmark_task, choice_space, gold_field
from yoxla.data.editions import Edition, load_edition
from yoxla.record.signing import finalize, write_result
from yoxla.score.calibration.distribution import LabelDistribution
from yoxla.testing.synthetic import build_result, edition_for_rows, random_answers, synthetic_rows

if TYPE_CHECKING:
    from yoxla.contract.spec import Analysis

REPO = Path(__file__).resolve().parents[2]
PROVIDERS = ("openrouter", "vllm", "transformers", "openai")
PARAMS = (1.5e9, 3e9, 8e9, 14e9, 27e9, 32e9, 70e9, 235e9, None)
REPORTED_MODEL = "openai/gpt-4o-mini"  # one of the models the v1 release notes report


@dataclass(frozen=True)
class SyntheticV1:
    edition: Edition
    rows: dict[str, list[dict[str, Any]]]


def synthetic_analysis(rows: dict[str, list[dict[str, Any]]]) -> Analysis:
    """v1's ranking, with groups on ``nli_v1`` (the copies of one sample row) and three controls
    on ``sentiment_v1``: so group consistency and controls have something to show."""
    from yoxla.admission.v2 import edition_ranking
    from yoxla.contract.spec import Analysis, TaskAnalysis

    groups: dict[str, list[str]] = {}
    for r in rows["nli_v1"]:
        groups.setdefault("g-" + str(r["id"]).rsplit("-", 2)[0], []).append(str(r["id"]))
    tasks = {
        "nli_v1": TaskAnalysis(group_ids=groups),
        "sentiment_v1": TaskAnalysis(control_ids=[str(r["id"]) for r in rows["sentiment_v1"][:3]]),
    }
    return Analysis(ranking=list(edition_ranking(load_edition("v1"))), about="synthetic", tasks=tasks)


def synthetic_v1() -> SyntheticV1:
    rows = synthetic_rows(load_edition("v1"))
    return SyntheticV1(edition_for_rows("v1", rows, analysis=synthetic_analysis(rows)), rows)


def synthetic_distributions(
    seed: int, answers: Any, rows: dict[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any] | None]]:
    """Stored answer distributions (``LabelDistribution.to_dict()``) for every choice task.

    The generated answer usually is the most probable label; its probability is higher when it
    is right, and the model's over-confidence grows with ``seed`` (so high-confidence errors
    vary); about 5% of answers disagree with the most probable label and 2% of distributions
    are partial (one label missing).
    """
    import random

    from yoxla.data.gold import gold_in

    bold = 0.15 + 0.06 * (seed % 7)
    out: dict[str, list[dict[str, Any] | None]] = {}
    for tid, task_rows in rows.items():
        if benchmark_task(tid).spec.strict_mode != "choice":
            continue
        field = gold_field(tid)
        rng = random.Random(f"dist:{seed}:{tid}")
        raws = answers(tid, task_rows)
        dists: list[dict[str, Any] | None] = []
        for row, raw in zip(task_rows, raws, strict=True):
            space = choice_space(tid, row)
            if not space or raw not in space:
                dists.append(None)
                continue
            right = str(raw) == str(gold_in(row, field, "choice"))
            conf = min(0.995, rng.uniform(0.55, 0.97) + (0.1 if right else bold - 0.1))
            others = [lb for lb in space if lb != raw]
            top = raw
            if others and rng.random() < 0.05:  # the text disagrees with the distribution
                top = rng.choice(others)
            weights = [rng.random() + 0.05 for _ in space]
            rest = sum(w for lb, w in zip(space, weights, strict=True) if lb != top)
            masses = {
                lb: conf if lb == top else (1 - conf) * w / rest for lb, w in zip(space, weights, strict=True)
            }
            missing: dict[str, float] = {}
            if len(others) >= 2 and rng.random() < 0.02:
                gone = next(lb for lb in reversed(space) if lb not in (top, raw))
                missing[gone] = masses.pop(gone)
            found = 0.97 * sum(masses.values())
            dist = LabelDistribution.from_masses(
                space, {k: 0.97 * v for k, v in masses.items()}, missing=missing, unlisted=0.0
            )
            assert dist is not None and abs(dist.mass_found - found) < 1e-9
            dists.append(dist.to_dict())
        out[tid] = dists
    return out


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
    for p in sorted((REPO / "results" / "suites").glob("*/*.json")):  # the committed suite boards
        (folder / "suites" / p.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(p, folder / "suites" / p.parent.name / p.name)
    pool = []
    for seed in range(min(distinct, n)):
        answers = random_answers(seed, skill=0.35 + 0.6 * seed / max(1, distinct - 1))
        dists = synthetic_distributions(seed, answers, data.rows) if seed % 2 == 0 else None
        pool.append(
            build_result(
                answers, edition=data.edition, rows=data.rows, model=f"pool-{seed}", distributions=dists
            )
        )
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
