"""The shortcut gate of an edition: no cue-only strategy may score far above chance on any task.

``yoxla floors --gate`` scores the cue-only strategies on the package suite's tasks over the
edition's rows (:func:`yoxla.suites.baselines.benchmark_floors`: the suite path's strategies and built-in
scoring, the numbers ``yoxla suite floors`` gives) and fails
when one of the gated strategies scores above the task's threshold: chance + the edition's
margin (15 points by default), or a threshold the edition declares for that task with a
written reason (:mod:`yoxla.declarations`).

Chance, per task, on the task score's 0–100 scale:

* closed answer space (classification): the expected accuracy of a uniformly random valid
  answer, ``100 × mean over rows of 1 / |answer space of the row|`` (1/3 for NLI, 1/20 for
  20 numbered candidates, 1/7 for six passages or HEÇ BİRİ);
* span tasks (extractive QA, QA with abstention): the expected score of quoting one sentence
  of the passage chosen uniformly at random (abstention: the sentences and the abstain
  answer), computed exactly with the task's own evaluator: a span answer's "space" is the
  passage, and a sentence is the unit the cue-only strategies quote;
* STS (Spearman): 0, the expected correlation of an answer that ignores the gold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yoxla.cli_common import table
from yoxla.declarations import EditionDeclarations

CORRELATIONS = frozenset(("spearman", "pearson"))  # graders whose chance is 0, not a random answer's


def chance_score(task_id: str, rows: Sequence[Mapping[str, Any]]) -> float:
    """The task score of answering at random, as defined in the module docstring (0–100).

    Computed over the task's suite items (:func:`yoxla.suites.baselines.chance_score`, the suite
    gate's chance), except a correlation's, which is 0."""
    from yoxla.suites.baselines import chance_score as item_chance
    from yoxla.suites.benchmark import benchmark_task, prepare_rows

    if not rows or any(
        getattr(g, "name", None) in CORRELATIONS for g in benchmark_task(task_id).spec.graders
    ):
        return 0.0
    return item_chance(prepare_rows(task_id, rows))


@dataclass(frozen=True)
class GateVerdict:
    task: str
    chance: float
    threshold: float  # chance + margin, or the declared threshold when it applies to every strategy
    reason: str | None  # the declared reason when a threshold is not chance + margin
    scores: dict[str, float]  # gated strategy → task score
    failures: tuple[tuple[str, float], ...]  # strategies above their threshold, worst first
    thresholds: dict[str, float] = field(default_factory=dict)  # gated strategy → its threshold
    declared_for: tuple[str, ...] = ()  # strategies the declared threshold applies to (all: every one)

    def threshold_of(self, strategy: str) -> float:
        return self.thresholds.get(strategy, self.threshold)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def best(self) -> tuple[str, float]:
        strategy = max(self.scores, key=lambda s: self.scores[s])
        return strategy, self.scores[strategy]


def gate(
    floors: Mapping[str, Mapping[str, float]],
    rows_by_task: Mapping[str, Sequence[Mapping[str, Any]]],
    declarations: EditionDeclarations,
) -> list[GateVerdict]:
    """One verdict per task of ``floors`` (:func:`yoxla.suites.baselines.benchmark_floors`' output)."""
    out = []
    for tid, scores in floors.items():
        decl = declarations.task(tid)
        chance = chance_score(tid, rows_by_task[tid])
        default = chance + declarations.gate_margin
        gated = {s: float(scores[s]) for s in declarations.gate_strategies if s in scores}
        thresholds = {
            s: (declared if (declared := decl.threshold_for(s)) is not None else default) for s in gated
        }
        declared_for = tuple(s for s in gated if decl.threshold_for(s) is not None)
        everywhere = decl.gate_threshold is not None and not decl.gate_applies_to
        threshold = decl.gate_threshold if everywhere and decl.gate_threshold is not None else default
        failures = tuple(sorted(((s, v) for s, v in gated.items() if v > thresholds[s]), key=lambda x: -x[1]))
        reason = decl.gate_reason if declared_for else None
        out.append(GateVerdict(tid, chance, threshold, reason, gated, failures, thresholds, declared_for))
    return out


def _declared(v: GateVerdict) -> str:
    """The declared threshold as the table shows it: ``-``, ``75.00`` (all), ``75.00 (overlap)``."""
    if not v.declared_for:
        return "-"
    limit = v.threshold_of(v.declared_for[0])
    return f"{limit:.2f}" if v.threshold == limit else f"{limit:.2f} ({', '.join(v.declared_for)})"


def report(verdicts: Sequence[GateVerdict], declarations: EditionDeclarations) -> tuple[str, int]:
    """(text for the terminal, exit status: 1 when any task fails the gate)."""
    lines = [
        f"shortcut gate, edition {declarations.edition}: a cue-only strategy "
        f"({', '.join(declarations.gate_strategies)}) may score at most chance + "
        f"{declarations.gate_margin:g} points, unless the edition declares a task's threshold with a reason",
        table(
            ["task", "chance", "threshold", "declared", "best cue", "score", "gate"],
            [
                [
                    v.task,
                    v.chance,
                    v.threshold,
                    _declared(v),
                    v.best[0],
                    v.best[1],
                    "ok" if v.passed else "FAILS",
                ]
                for v in verdicts
            ],
        ),
    ]
    for v in verdicts:
        if v.reason:
            declared = v.threshold_of(v.declared_for[0])
            which = "" if v.threshold == declared else f" for {', '.join(v.declared_for)}"
            lines.append(f"note: {v.task}: threshold {declared:.2f}{which} declared because: {v.reason}")
    failed = [v for v in verdicts if not v.passed]
    for v in failed:
        for strategy, score in v.failures:
            limit = v.threshold_of(strategy)
            rule = (
                f"declared threshold {limit:.2f}"
                if strategy in v.declared_for
                else f"threshold {limit:.2f} = chance {v.chance:.2f} + {declarations.gate_margin:g}"
            )
            lines.append(f"gate failed: {v.task}: {strategy} scores {score:.2f} > {rule}")
    if failed:
        lines.append(f"shortcut gate failed on {len(failed)} of {len(verdicts)} task(s)")
        return "\n".join(lines), 1
    lines.append(f"shortcut gate passed on all {len(verdicts)} task(s)")
    return "\n".join(lines), 0
