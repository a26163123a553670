"""Built-in graders: no Python needed, deterministic, and the project's own scorers reused.

Each grader scores a sample (a mapping of metric -> float) and aggregates a task (the means
of its per-sample metrics, plus task-level metrics); the graders, their metrics and options
are tabled in docs/suites.md ("Built-in graders"). The benchmark's own scorers are used
(:mod:`yoxla.score.spans`, :mod:`yoxla.score.stats`): a parity test holds that the built-in
benchmark tasks score as the benchmark always has.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Any

from yoxla.contract.spec_grading import BuiltinGrader
from yoxla.extract.extractors import Extracted
from yoxla.extract.numbers import parse_number
from yoxla.extract.text import az_lower, nfc
from yoxla.prompt.templates import lookup
from yoxla.score.spans import ZERO, score_span, token_f1
from yoxla.score.stats import macro_f1, mean, pearson, spearman

# A SpanScore's fields (yoxla.score.spans) and the span metrics they are reported as, in their order.
SPAN_KEYS = (
    ("span_recall", "span_recall"),
    ("span_precision", "span_precision"),
    ("exact_span", "exact_span_rate"),
    ("unsupported", "unsupported_rate"),
    ("over_sentence", "over_sentence_rate"),
    ("token_f1", "token_f1"),
    ("normalized_em", "normalized_em"),
    ("strict_em", "strict_em"),
)
SPAN_METRICS = tuple(name for _, name in SPAN_KEYS)
_SPAN_VALUES = attrgetter(*(key for key, _ in SPAN_KEYS))  # a SpanScore's values, in SPAN_METRICS order
_SPAN_ZERO = dict(zip(SPAN_METRICS, _SPAN_VALUES(ZERO), strict=True)) | {"unsupported_rate": 0.0}


class GraderFailure(Exception):
    """A built-in grader cannot score this sample (e.g. the row lacks the passage)."""


_STR = frozenset((str,))


def cells(keys: Sequence[Any], values: Sequence[float]) -> dict[str, dict[str, float]]:
    """Mean per key value, as the result record's cells: {value: {accuracy, n}}."""
    texts = keys if set(map(type, keys)) <= _STR else list(map(str, keys))  # usually text already
    groups: defaultdict[str, list[float]] = defaultdict(list)
    for k, v in zip(texts, values, strict=True):
        groups[k].append(v)
    return {k: {"accuracy": mean(v), "n": len(v)} for k, v in sorted(groups.items())}


def _same_text(a: str, b: str, case_sensitive: bool) -> bool:
    a, b = nfc(a.strip()), nfc(b.strip())
    if a == b:
        return True
    if case_sensitive:
        return False
    return az_lower(a) == az_lower(b) or (a.isascii() and b.isascii() and a.lower() == b.lower())


def _number(ex: Extracted) -> float | None:
    if not ex.valid or ex.value is None:
        return None
    return ex.number if ex.number is not None else parse_number(ex.value)


def _target_value(target: str) -> float | None:
    """A target's number; a short one is remembered (every scoring of a task reads the same ones)."""
    return _short_target_value(target) if len(target) <= 64 else parse_number(target)


@lru_cache(maxsize=65_536)
def _short_target_value(target: str) -> float | None:
    return parse_number(target)


def _target_number(target: str) -> float:
    value = _target_value(target)
    if value is None:
        raise GraderFailure(f"the target {target[:40]!r} is not a number")
    return value


class Builtin:
    """Base: per-sample metrics and a task aggregate (means of the per-sample metrics).

    A grader sees a sample as its row, its rendered target and what extraction gave
    (:meth:`score`), and a task as those of its graded samples, aligned (:meth:`aggregate`).
    """

    def __init__(self, spec: BuiltinGrader, strict_range: tuple[float, float] | None, closed: bool) -> None:
        self.spec = spec
        self.strict_range = strict_range
        self.closed = closed
        self.metric = spec.metric_id or spec.name

    def sample_metrics(self) -> tuple[str, ...]:
        return (self.metric,)

    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        return {}

    @property
    def decides(self) -> bool:
        """Does this grader set each sample's score and verdict (:meth:`sample_score`, :meth:`correct`)?"""
        return False

    def sample_score(self, scores: Mapping[str, float]) -> float | None:
        """The sample's score when this grader sets it (None: the task's primary metric decides)."""
        return None

    def correct(self, scores: Mapping[str, float]) -> bool | None:
        """Whether the sample is correct when this grader decides it (None: score ≥ 1)."""
        return None

    def aggregate(
        self, targets: Sequence[str], extracted: Sequence[Extracted], scores: Sequence[Mapping[str, float]]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self.sample_metrics():
            values = [s[key] for s in scores if key in s]
            out[key] = mean(values)
        return out


class ExactMatch(Builtin):
    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        ok = ex.valid and ex.value is not None
        cs = self.spec.case_sensitive is not False
        return {self.metric: float(ok and _same_text(str(ex.value), target, cs))}


class Accuracy(Builtin):
    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        if not ex.valid or ex.value is None:
            return {self.metric: 0.0}
        if ex.number is not None:
            number = _target_value(target)
            return {self.metric: float(number is not None and ex.number == number)}
        return {self.metric: float(ex.value == target)}

    def aggregate(
        self, targets: Sequence[str], extracted: Sequence[Extracted], scores: Sequence[Mapping[str, float]]
    ) -> dict[str, Any]:
        out = super().aggregate(targets, extracted, scores)
        if self.spec.per_class or (self.spec.per_class is None and self.closed):
            pairs = [(t, s[self.metric]) for t, s in zip(targets, scores, strict=True) if self.metric in s]
            out[f"per_class_{self.metric}"] = cells([p[0] for p in pairs], [p[1] for p in pairs])
        return out


class MacroF1(Builtin):
    def sample_metrics(self) -> tuple[str, ...]:
        return ()

    def aggregate(
        self, targets: Sequence[str], extracted: Sequence[Extracted], scores: Sequence[Mapping[str, float]]
    ) -> dict[str, Any]:
        pred = [e.value if e.valid else None for e in extracted]
        return {"macro_f1": macro_f1(list(targets), pred)}


class NumericTolerance(Builtin):
    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        number = _target_number(target)
        pred = _number(ex)
        if pred is None:
            return {self.metric: 0.0}
        allowed = max(self.spec.tolerance or 0.0, (self.spec.relative_tolerance or 0.0) * abs(number))
        return {self.metric: float(abs(pred - number) <= allowed)}


class TokenF1(Builtin):
    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        pred = str(ex.value) if ex.valid and ex.value is not None else ""
        return {self.metric: token_f1(pred, target)}


class Spearman(Builtin):
    """Rank correlation over the task; with ``closeness``, a per-sample score and verdict too.

    ``closeness``: 1 - |prediction - target| / (max - min) of the strict range, an invalid
    answer taking the imputed value (as the correlation does); ``correct_within``: the sample
    is correct when |prediction - target| is at most this.
    """

    def __init__(self, spec: BuiltinGrader, strict_range: tuple[float, float] | None, closed: bool) -> None:
        super().__init__(spec, strict_range, closed)
        self.impute: float | None = None
        if spec.impute is not None:
            self.impute = spec.impute
        elif strict_range is not None:
            self.impute = (strict_range[0] + strict_range[1]) / 2

    def sample_metrics(self) -> tuple[str, ...]:
        return ("closeness",) if self.spec.closeness else ()

    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        number = _target_number(target)  # a sample with a non-numeric target is a grader error
        if not self.spec.closeness:
            return {}
        assert self.strict_range is not None  # the spec requires a strict range with closeness
        lo, hi = self.strict_range
        pred = _number(ex)
        if pred is None:
            pred = self.impute if self.impute is not None else (lo + hi) / 2
        err = abs(pred - number)
        return {"closeness": 1.0 - err / (hi - lo), "abs_error": err}

    @property
    def decides(self) -> bool:
        return bool(self.spec.closeness)

    def sample_score(self, scores: Mapping[str, float]) -> float | None:
        return scores.get("closeness") if self.spec.closeness else None

    def correct(self, scores: Mapping[str, float]) -> bool | None:
        within = self.spec.correct_within
        if within is None or "abs_error" not in scores:
            return None
        return scores["abs_error"] <= within

    def aggregate(
        self, targets: Sequence[str], extracted: Sequence[Extracted], scores: Sequence[Mapping[str, float]]
    ) -> dict[str, Any]:
        out = super().aggregate(targets, extracted, scores)
        impute = self.impute
        gold: list[float] = []
        pred: list[float] = []
        vg: list[float] = []
        vp: list[float] = []
        for text, ex in zip(targets, extracted, strict=True):
            target = _target_value(text)
            if target is None:
                continue
            p = _number(ex)
            if p is not None:
                vg.append(target)
                vp.append(p)
            if p is None and impute is not None:
                p = impute
            if p is not None:
                gold.append(target)
                pred.append(p)
        errors = [abs(p - g) for p, g in zip(vp, vg, strict=True)]
        return {
            **out,
            "spearman": spearman(pred, gold),
            "pearson": pearson(pred, gold),
            "spearman_valid": spearman(vp, vg),
            "pearson_valid": pearson(vp, vg),
            # no valid answer: no error to report (0.0 would read as a perfect one), like the score
            "mae": mean(errors) if errors else None,
            "rmse": math.sqrt(mean([e * e for e in errors])) if errors else None,
        }


class Span(Builtin):
    def sample_metrics(self) -> tuple[str, ...]:
        return SPAN_METRICS

    def __init__(self, spec: BuiltinGrader, strict_range: tuple[float, float] | None, closed: bool) -> None:
        super().__init__(spec, strict_range, closed)
        self._passage_path = (spec.passage_field or "").split(".")
        self._start_path = spec.answer_start_field.split(".") if spec.answer_start_field else None
        # top-level fields (the usual case): of a plain row, its get is what lookup gives
        self._top = (
            (self._passage_path[0], self._start_path[0] if self._start_path else None)
            if len(self._passage_path) == 1 and (self._start_path is None or len(self._start_path) == 1)
            else None
        )

    def _passage(self, row: Mapping[str, Any]) -> tuple[str, int | None]:
        top = self._top
        if top is not None and type(row) is dict:
            passage = row.get(top[0])
            value = row.get(top[1]) if top[1] is not None else None
        else:
            passage = lookup(row, self._passage_path)
            value = lookup(row, self._start_path) if self._start_path is not None else None
        if not isinstance(passage, str):
            raise GraderFailure(f"the row has no text in {self.spec.passage_field or ''!r}")
        return passage, value if isinstance(value, int) and not isinstance(value, bool) else None

    @staticmethod
    def _found(target: str, ex: Extracted, passage: str, start: int | None) -> dict[str, float]:
        return dict(
            zip(SPAN_METRICS, _SPAN_VALUES(score_span(passage, target, str(ex.value), start)), strict=True)
        )

    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        passage, start = self._passage(row)
        if ex.valid and ex.value is not None:
            return self._found(target, ex, passage, start)
        return dict(_SPAN_ZERO)


class Abstention(Span):
    """1 for abstaining on an unanswerable item, 0 on an answerable one, else the span recall.

    An item is unanswerable when its target renders empty (a null gold).
    """

    def sample_metrics(self) -> tuple[str, ...]:
        return ("overall_score",)

    def score(self, row: Mapping[str, Any], target: str, ex: Extracted) -> dict[str, float]:
        passage, start = self._passage(row)
        answerable = target != ""
        if not ex.valid:
            return {"overall_score": 0.0}
        if ex.abstained:
            return {"overall_score": float(not answerable)}
        if not answerable:
            return {"overall_score": 0.0}
        found = self._found(target, ex, passage, start)
        return {"overall_score": found["span_recall"], **found}

    def aggregate(
        self, targets: Sequence[str], extracted: Sequence[Extracted], scores: Sequence[Mapping[str, float]]
    ) -> dict[str, Any]:
        pairs = [
            (t, e, s) for t, e, s in zip(targets, extracted, scores, strict=True) if "overall_score" in s
        ]
        answerable = [t != "" for t, _, _ in pairs]
        abstained = [e.valid and e.abstained for _, e, _ in pairs]
        valid = [e.valid for _, e, _ in pairs]
        out: dict[str, Any] = {
            "overall_score": mean([s["overall_score"] for _, _, s in pairs]),
            "answerability_accuracy": mean(
                [float(ok and ab != a) for ok, ab, a in zip(valid, abstained, answerable, strict=True)]
            ),
            "unanswerable_accuracy": mean(
                [float(ab) for ab, a in zip(abstained, answerable, strict=True) if not a]
            ),
            "abstention_rate": mean([float(ab) for ab in abstained]),
        }
        answered = [s for (_, _, s), a in zip(pairs, answerable, strict=True) if a]
        for name in SPAN_METRICS:
            out[name] = mean([s.get(name, 0.0) for s in answered])
        out["n_answerable"] = len(answered)
        return out


GRADERS: dict[str, type[Builtin]] = {
    "exact_match": ExactMatch,
    "accuracy": Accuracy,
    "macro_f1": MacroF1,
    "numeric_tolerance": NumericTolerance,
    "token_f1": TokenF1,
    "spearman": Spearman,
    "span": Span,
    "abstention": Abstention,
}


def build(spec: BuiltinGrader, strict_range: tuple[float, float] | None, closed: bool) -> Builtin:
    return GRADERS[spec.name](spec, strict_range, closed)


def default_metric_ids(spec: BuiltinGrader) -> list[str]:
    """The metric a built-in grader contributes when a task omits ``metrics`` (its headline)."""
    headline = {
        "macro_f1": "macro_f1",
        "spearman": "spearman",
        "span": "span_recall",
        "abstention": "overall_score",
    }
    return [headline.get(spec.name) or spec.metric_id or spec.name]
