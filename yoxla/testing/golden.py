"""The golden oracle: what today's path gives, written down so a new path must match it.

* **sample**: every task of the sample edition under every answer set (:func:`answer_sets`: the
  gold, each cue-only strategy, messy and edge answers), replayed as admission replays a stored
  file: a digest of every prompt, every verdict, every metric, the task, block and YOXLA scores.
* **results**: every committed result file under ``results/`` as admission re-derives it
  (:func:`yoxla.admission.rules.check_file`, no cache).

``python -m yoxla.testing.golden --write`` regenerates ``tests/golden/sample_scores.json``;
``--check`` (the default) compares and prints every difference (:func:`differences`, which
``tests/core/test_golden_oracle.py`` calls). Floats agree within 1e-9, everything else exactly.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from yoxla.contract.canonical import canonical_json, sha256_text

GOLDEN_FORMAT = 1
GOLDEN_PATH = Path("tests") / "golden" / "sample_scores.json"
TOLERANCE = 1e-9
EDITION = "sample"
MESSY = "messy"
PARITY_MESSY = "messy_parity"
EDGE_SETS = ("edges0", "edges1", "edges2")


def digest(obj: Any) -> str:
    """A short, stable digest of a JSON-ready value (16 hex digits of its canonical SHA-256)."""
    return sha256_text(canonical_json(obj)).removeprefix("sha256:")[:16]


# Answer sets -----------------------------------------------------------------------------------

# Ways a model wraps, misspells or loses its answer. Thirteen (a prime), so with errors every
# fifth row and truncation every fourth each task meets many combinations.
_MESSY_FORMS: tuple[Callable[[str], str], ...] = (
    lambda g: f"**{g}**",
    lambda g: f"Cavab: {g}",
    lambda g: f"<think>Əvvəlcə mətni oxuyuram; {g} ola bilər.</think>\n{g}",
    lambda g: f"{g}.",
    lambda g: _upper(g),
    lambda g: "",
    lambda g: f"“{g}”",
    lambda g: "<think>Bu sualı həll etmək üçün əvvəlcə",
    lambda g: g.replace("ə", "e").replace("ı", "i").replace("ş", "s").replace("ğ", "g"),
    lambda g: f"```\n{g}\n```",
    lambda g: f"{g}\n{g}",
    lambda g: g.replace(".", ","),
    lambda g: f"Məncə cavab belədir: {g}. Çünki mətndə belə yazılıb.",
)


# The suite parity test's own wrappers (ten: other combinations with errors and truncation).
_PARITY_FORMS: tuple[Callable[[str], str], ...] = (
    lambda g: f"**{g}**",
    lambda g: f"{g}.",
    lambda g: f"Cavab: {g}",
    lambda g: f"<think>Düşünürəm: {g}?</think>\n{g}",
    lambda g: _upper(g),
    lambda g: "",
    lambda g: f"«{g}»",
    lambda g: "<think>bitmədi",
    lambda g: g.replace("ə", "e").replace("ı", "i"),
    lambda g: f"```\n{g}\n```",
)


def edge_answers(task: Any, item: Any) -> list[str]:
    """Answers at the edges of an item's answer space (out of it, just inside, other casings);
    ``task`` is the item's suite task."""
    spec = task.spec
    mode, g = spec.output_extraction.mode, gold_answer(task, item)
    field = spec.answer_space.options_field if spec.answer_space is not None else None
    if field:
        n = len(item.row[field])
        first = str(item.row[field][0])
        return [str(n), str(n + 1), "0", "HEÇ BIRI", "heç biri", f"1. {first}", f"{g}) {first}", "-1"]
    if mode == "choice":
        return [g.lower(), _upper(g), f"{g} ", "A və B", "None", f"{g} {g}"]
    if mode == "numeric":
        return ["6", "-0.5", "2,5", "təxminən 3", "5.0", "0", "4.99", f"{g}."]
    return [f"{g}.", g[: max(1, len(g) // 2)], "Cavab yoxdur", "cavab yoxdur.", "CAVAB YOXDUR", g * 2]


def _upper(text: str) -> str:
    from yoxla.extract.text import az_upper

    return az_upper(text)


def gold_answer(task: Any, item: Any) -> str:
    """An item's gold as a model would write it: its target, or the task's abstain label when
    the row has no answer (an empty target)."""
    return item.target or str(task.spec.output_extraction.abstain or "")


def _distribution(task: Any, item: Any, i: int) -> dict[str, Any] | None:
    """A deterministic stored distribution over the item's closed answer space (None when open)."""
    from yoxla.prompt.space import probability_space
    from yoxla.score.calibration.distribution import LabelDistribution

    space = probability_space(task.spec, item.choices)
    if not space:
        return None
    # Uneven masses that move with the row; a little mass outside the space on some rows.
    masses = {label: 1.0 / (1 + (k + i) % len(space)) ** 1.5 for k, label in enumerate(space)}
    total = sum(masses.values()) / (0.9 if i % 2 else 1.0)
    masses = {k: v / total for k, v in masses.items()}
    dist = LabelDistribution.from_masses(space, masses, method="label_scoring")
    return None if dist is None else dist.to_dict()


AnswerSet = tuple[list[str | None], list[str | None], list[str | None], list[dict[str, Any] | None] | None]
STRATEGIES = ("first", "majority", "random", "overlap", "longest", "most_linked", "none_of_them", "abstain")


def answer_sets(prepared: Any) -> dict[str, AnswerSet]:
    """Every answer set for one prepared suite task, in item order: name -> (raws, finish
    reasons, errors, distributions). The strategies are the cue-only baselines
    (:func:`yoxla.baselines.strategies.suite_answers`)."""
    from yoxla.baselines.strategies import suite_answers

    task, items = prepared.task, prepared.items
    n = len(items)
    stop: list[str | None] = ["stop"] * n
    none: list[str | None] = [None] * n
    golds = [gold_answer(task, item) for item in items]
    out: dict[str, AnswerSet] = {"gold": (list(golds), stop, none, None)}
    for strategy in STRATEGIES:
        out[strategy] = (list(suite_answers(strategy, prepared)), stop, none, None)
    raws: list[str | None] = []
    finish: list[str | None] = []
    errors: list[str | None] = []
    dists: list[dict[str, Any] | None] = []
    for i, item in enumerate(items):
        err = "HTTP 503 after 6 retries" if i % 5 == 3 else None
        raws.append(None if err else _MESSY_FORMS[i % len(_MESSY_FORMS)](golds[i]))
        finish.append(None if err else ("length" if i % 4 == 1 else "stop"))
        errors.append(err)
        dists.append(None if err or i % 3 == 2 else _distribution(task, item, i))
    out[MESSY] = (raws, finish, errors, dists)
    out[PARITY_MESSY] = (
        [_PARITY_FORMS[i % len(_PARITY_FORMS)](g) for i, g in enumerate(golds)],
        ["length" if i % 4 == 1 else "stop" for i in range(n)],
        ["HTTP 503 after 6 retries" if i % 5 == 3 else None for i in range(n)],
        None,
    )
    for k, name in enumerate(EDGE_SETS):  # each item meets every edge answer across the three sets
        edges = [edge_answers(task, item) for item in items]
        out[name] = ([e[(i + 3 * k) % len(e)] for i, e in enumerate(edges)], stop, none, None)
    return out


# Computing -------------------------------------------------------------------------------------


def _example(pred: Mapping[str, Any]) -> list[Any]:
    """One derived prediction as a compact verdict row (long parsed texts as digests)."""
    parsed = pred["parsed"]
    if isinstance(parsed, str) and len(parsed) > 40:
        parsed = "#" + digest(parsed)
    return [
        pred["id"],
        pred["valid"],
        parsed,
        pred["abstained"],
        pred["outcome"],
        pred["reason"],
        pred["near_miss"],
        pred["score"],
        bool(pred.get("control")),
        "distribution" in pred,
    ]


def _stored(items: Sequence[Any], raws: AnswerSet, i: int) -> dict[str, Any]:
    """Answer ``i`` of an answer set as a prediction line stores it."""
    texts, finish, errors, dists = raws
    line: dict[str, Any] = {
        "id": items[i].id,
        "raw": texts[i],
        "finish_reason": finish[i],
        "error": errors[i],
        "judgements": [],
    }
    if dists is not None and dists[i] is not None:
        line["distribution"] = dists[i]
    return line


def sample_oracle() -> dict[str, Any]:
    """Prompts, verdicts, metrics and scores of every answer set on the sample edition, replayed
    as admission replays a stored file: each task of the package suite ``yoxla-sample`` prepared
    over the edition's rows (:func:`yoxla.admission.v2.prepared_for`),
    the answers re-scored by :func:`yoxla.record.derive.derive_suite_task` and laid out as a
    task's record (:func:`yoxla.admission.v2.legacy_task`)."""
    from yoxla.admission.gold import DataSource
    from yoxla.admission.v2 import legacy_task, prepared_for
    from yoxla.contract.benchmark import benchmark_groups
    from yoxla.contract.loader import load_manifest
    from yoxla.contract.registry import manifest_path
    from yoxla.data.editions import load_edition, load_rows
    from yoxla.record.derive import derive_suite_task
    from yoxla.score.stats import block_scores, yoxla_score

    manifest = load_manifest(manifest_path(EDITION))
    blocks = {tid: g.id for g in manifest.groups for tid in g.tasks}
    edition = load_edition(EDITION)
    data = DataSource()
    prompts: dict[str, Any] = {}
    sets: dict[str, dict[str, Any]] = {}
    try:
        for tid in edition.tasks:
            task = manifest.tasks[tid]
            rows = load_rows(edition, tid)
            prepared = prepared_for(data, edition, task, rows)
            prompts[tid] = {
                "contract_hash": task.spec.metadata["contract_hash"],
                "prompt_hash": task.spec.metadata["prompt_hash"],
                "fingerprint": edition.tasks[tid].fingerprint,
                "messages": [[i.id, digest(list(i.messages))] for i in prepared.items],
            }
            for name, answers in answer_sets(prepared).items():
                stored = [_stored(prepared.items, answers, i) for i in range(len(prepared.items))]
                derived = derive_suite_task(prepared, stored, pool=data.suites.pool)
                doc = legacy_task(prepared, derived, edition.tasks[tid], blocks[tid])
                entry = {
                    "score": doc["score"],
                    "metrics": doc["metrics"],
                    "examples": [_example(p) for p in doc["predictions"]],
                }
                if "calibration" in doc:
                    entry["calibration"] = doc["calibration"]
                sets.setdefault(name, {"tasks": {}})["tasks"][tid] = entry
    finally:
        data.suites.close()
    for entry in sets.values():
        task_scores = {tid: t["score"] for tid, t in entry["tasks"].items()}
        entry["blocks"] = block_scores(benchmark_groups(), task_scores)
        entry["yoxla"] = yoxla_score(entry["blocks"])
    return {"edition": EDITION, "prompts": prompts, "sets": sets}


def result_files(root: Path) -> list[Path]:
    """The committed result files under ``root/results`` (benchmark and suite files), sorted."""
    base = root / "results"
    return sorted(p for p in base.rglob("*.json") if p.is_file()) if base.is_dir() else []


def results_oracle(root: Path) -> dict[str, Any]:
    """Every committed result file as admission re-derives it today."""
    from yoxla.admission.gold import DataSource
    from yoxla.admission.rules import check_file

    data = DataSource()
    out: dict[str, Any] = {}
    try:
        for path in result_files(root):
            v = check_file(path, data=data, use_cache=False, root=root / "results")
            out[path.relative_to(root).as_posix()] = {
                "status": v.status,
                "reasons": list(v.reasons),
                "rechecked": v.rechecked,
                "scores": v.scores,
                "tasks": {
                    tid: {
                        "score": t.score,
                        "metrics": t.metrics,
                        "outcomes": dict(sorted(Counter(t.outcomes).items())),
                    }
                    for tid, t in sorted(v.tasks.items())
                },
            }
    finally:
        data.suites.close()  # the grader workers of Python-graded suites
    return out


def oracle(root: Path) -> dict[str, Any]:
    """The whole golden document for the repository at ``root``."""
    return {
        "format": GOLDEN_FORMAT,
        "tolerance": TOLERANCE,
        "sample": sample_oracle(),
        "results": results_oracle(root),
    }


# Comparing -------------------------------------------------------------------------------------


def _walk(a: Any, b: Any, where: str) -> Iterator[tuple[str, Any, Any]]:
    """Every (path, golden, computed) that differs: floats within TOLERANCE, the rest exactly."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        if type(a) is not type(b) or a != b:
            yield where, a, b
        return
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, int) and isinstance(b, int):
            same = a == b
        else:  # NaN agrees with NaN; an infinity only with itself
            fa, fb = float(a), float(b)
            same = fa == fb or abs(fa - fb) <= TOLERANCE or (math.isnan(fa) and math.isnan(fb))
        if not same:
            yield where, a, b
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                yield f"{where}.{k}", "absent", b[k]
            elif k not in b:
                yield f"{where}.{k}", a[k], "absent"
            else:
                yield from _walk(a[k], b[k], f"{where}.{k}")
        return
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            yield f"{where} (length)", len(a), len(b)
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _walk(x, y, f"{where}[{i}]")
        return
    if type(a) is not type(b) or a != b:
        yield where, a, b


def _jsonable(obj: Any) -> Any:
    """The value as it reads back from JSON (tuples as lists, keys as text)."""
    return json.loads(json.dumps(obj, ensure_ascii=False))


def differences(golden: Mapping[str, Any], computed: Mapping[str, Any]) -> list[str]:
    """One line per difference, naming what differs (task, answer set, metric) and both values.

    ``sample.sets.<answer set>.tasks.<task>.metrics.<metric>``, ``results.<file>.tasks.<task>…``.
    """
    return [
        f"{where}: golden {a!r}, now {b!r}"
        for where, a, b in _walk(_jsonable(golden), _jsonable(computed), "golden")
    ]


def _dump(doc: Any, indent: str = "") -> str:
    """Sorted, one line per list of plain values (a verdict row, a digest pair), so diffs stay readable."""
    inner = indent + " "
    if isinstance(doc, Mapping) and doc:
        items = [
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_dump(doc[k], inner)}" for k in sorted(doc)
        ]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(doc, list | tuple) and any(isinstance(x, Mapping | list | tuple) for x in doc):
        return "[\n" + ",\n".join(inner + _dump(x, inner) for x in doc) + "\n" + indent + "]"
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m yoxla.testing.golden", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--root", default=".", help="the repository (default: the current folder)")
    parser.add_argument("--write", action="store_true", help="write the golden file instead of checking it")
    args = parser.parse_args(argv)
    root = Path(args.root)
    path = root / GOLDEN_PATH
    computed = oracle(root)
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dump(computed) + "\n", encoding="utf-8")
        print(f"wrote {path}")
        return 0
    if not path.is_file():
        print(f"error: no golden file at {path} (write it with --write)", file=sys.stderr)
        return 2
    found = differences(json.loads(path.read_text(encoding="utf-8")), computed)
    for line in found[:50]:
        print(line)
    if found:
        print(f"{len(found)} difference(s) from {path}", file=sys.stderr)
        return 1
    print(f"{path}: no difference")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
