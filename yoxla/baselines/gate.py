"""The shortcut gate: no cue-only strategy may score far above chance on any task.

One gate for every suite (``yoxla suite floors FILE --gate``, ``yoxla floors --edition X --gate``),
by the rule of the manifest's ``analysis`` section: its gated strategies and margin (default
:data:`yoxla.baselines.strategies.GATED` at chance + 15 points; ``--margin`` overrides), and a
task's declared ``gate_threshold`` with its ``gate_reason`` for the strategies ``gate_strategies``
names. Chance is :func:`yoxla.baselines.strategies.chance_score`; docs/suites.md says how it is
computed for each kind of answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yoxla.cli.common import table

DEFAULT_MARGIN = 15.0


def chance_score(task_id: str, rows: Sequence[Mapping[str, Any]]) -> float:
    """The chance of a benchmark task over an edition's rows (0 when there are none)."""
    from yoxla.baselines.strategies import chance_score as item_chance
    from yoxla.contract.benchmark import prepare_rows

    return item_chance(prepare_rows(task_id, rows)) if rows else 0.0


def checked_threshold(value: str | None, reason: str | None) -> tuple[float | None, str | None]:
    """A declared threshold (text, 0–100) with its reason; (None, None) unless both are usable."""
    if value is None or not reason:
        return None, None
    try:
        number = float(value)
    except ValueError:
        return None, None
    return (number, reason) if 0.0 <= number <= 100.0 else (None, None)


@dataclass(frozen=True)
class GateRule:
    """What a suite gates: its strategies, and the points above chance each may score."""

    strategies: tuple[str, ...]
    margin: float


def gate_rule(manifest: Any, margin: float | None = None) -> GateRule:
    """The manifest's ``analysis.gate`` (defaults where it says nothing); ``margin``: an override."""
    from yoxla.baselines.strategies import GATED

    spec = getattr(manifest, "spec", None)
    declared = spec.analysis.gate if spec is not None and spec.analysis is not None else None
    strategies = tuple(declared.strategies) if declared is not None and declared.strategies else GATED
    if margin is None:
        margin = declared.margin if declared is not None and declared.margin is not None else DEFAULT_MARGIN
    return GateRule(strategies, margin)


@dataclass(frozen=True)
class GateVerdict:
    task: str
    chance: float
    threshold: float  # chance + margin, or the declared threshold when it applies to every strategy
    reason: str | None  # the declared reason when a gated strategy has a declared threshold
    scores: dict[str, float]  # gated strategy → task score (strategies without a 0–100 score left out)
    failures: tuple[tuple[str, float], ...]  # strategies above their threshold, worst first
    thresholds: dict[str, float] = field(default_factory=dict)  # gated strategy → its threshold
    declared_for: tuple[str, ...] = ()  # the gated strategies the declared threshold applies to

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
    manifest: Any,
    floors: Mapping[str, Mapping[str, float | None]],
    chances: Mapping[str, float],
    margin: float | None = None,
) -> list[GateVerdict]:
    """One verdict per task of ``floors`` (strategy → task score), by :func:`gate_rule`."""
    rule = gate_rule(manifest, margin)
    out = []
    for tid, scores in floors.items():
        spec = manifest.tasks[tid].spec
        declared, reason = checked_threshold(*spec.gate)  # metadata or the analysis section
        applies = spec.gate_applies_to
        chance = chances[tid]
        default = chance + rule.margin
        gated = {s: float(v) for s in rule.strategies if (v := scores.get(s)) is not None}
        declared_for = tuple(s for s in gated if declared is not None and (not applies or s in applies))
        thresholds = {s: declared if s in declared_for and declared is not None else default for s in gated}
        threshold = declared if declared is not None and not applies else default
        failures = tuple(sorted(((s, v) for s, v in gated.items() if v > thresholds[s]), key=lambda x: -x[1]))
        why = reason if declared_for else None
        out.append(GateVerdict(tid, chance, threshold, why, gated, failures, thresholds, declared_for))
    return out


def suite_chances(manifest: Any, pool: Any = None) -> dict[str, float]:
    """Each task's chance over the suite's own items."""
    from yoxla.baselines.strategies import chance_score as item_chance
    from yoxla.prompt.prepare import prepare_task

    return {tid: item_chance(prepare_task(task, pool), pool) for tid, task in manifest.tasks.items()}


def _declared(v: GateVerdict) -> str:
    """The declared threshold as the table shows it: ``-``, ``75.00`` (all), ``75.00 (overlap)``."""
    if not v.declared_for:
        return "-"
    limit = v.threshold_of(v.declared_for[0])
    return f"{limit:.2f}" if v.threshold == limit else f"{limit:.2f} ({', '.join(v.declared_for)})"


def notes(verdicts: Sequence[GateVerdict], rule: GateRule) -> tuple[list[str], int]:
    """The declared reasons, each failure and the summary line; exit status 1 when a task fails."""
    lines = []
    for v in verdicts:
        if v.reason:
            declared = v.threshold_of(v.declared_for[0])
            which = "" if v.threshold == declared else f" for {', '.join(v.declared_for)}"
            lines.append(f"note: {v.task}: threshold {declared:.2f}{which} declared because: {v.reason}")
    failed = [v for v in verdicts if not v.passed]
    for v in failed:
        for strategy, score in v.failures:
            limit = v.threshold_of(strategy)
            rule_text = (
                f"declared threshold {limit:.2f}"
                if strategy in v.declared_for
                else f"threshold {limit:.2f} = chance {v.chance:.2f} + {rule.margin:g}"
            )
            lines.append(f"gate failed: {v.task}: {strategy} scores {score:.2f} > {rule_text}")
    if failed:
        lines.append(f"shortcut gate failed on {len(failed)} of {len(verdicts)} task(s)")
        return lines, 1
    lines.append(f"shortcut gate passed on all {len(verdicts)} task(s)")
    return lines, 0


def report(verdicts: Sequence[GateVerdict], edition: str, rule: GateRule) -> tuple[str, int]:
    """(text for the terminal, exit status: 1 when any task fails the gate)."""
    lines = [
        f"shortcut gate, edition {edition}: a cue-only strategy "
        f"({', '.join(rule.strategies)}) may score at most chance + "
        f"{rule.margin:g} points, unless the edition declares a task's threshold with a reason",
        table(
            ["task", "chance", "threshold", "declared", "best cue", "score", "gate"],
            [
                [v.task, v.chance, v.threshold, _declared(v), *v.best, "ok" if v.passed else "FAILS"]
                for v in verdicts
            ],
        ),
    ]
    more, status = notes(verdicts, rule)
    return "\n".join(lines + more), status
