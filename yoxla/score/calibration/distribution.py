"""One example's probabilities over its task's answer space (docs/calibration.md).

*Absent is not zero*: a label in ``missing`` has an unknown probability (with an upper bound on
its raw mass), while a label in ``probs`` with 0.0 was recovered as (numerically) zero; no
distribution at all is ``None``. ``probs[l] = m(l) / mass_found`` (normalised over the recovered
labels) and ``mass_outside = 1 − mass_found`` (with the missing labels' mass when partial).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

METHODS = ("token_logprobs", "label_scoring")
SUM_TOLERANCE = 1e-6  # how far a stored distribution's sum may be from 1


def _finite_unit(name: str, value: float, upper: float = 1.0) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < -SUM_TOLERANCE or value > upper + SUM_TOLERANCE:
        raise ValueError(f"{name} must lie in [0, {upper:g}], got {value!r}")


@dataclass(frozen=True)
class LabelDistribution:
    """Probabilities over one example's answer space (see the module docstring)."""

    space: tuple[str, ...]
    probs: Mapping[str, float]  # recovered labels, in space order, normalised: Σ = 1
    mass_found: float  # raw mass on the recovered labels, before normalising
    missing: Mapping[str, float] = field(default_factory=dict)  # label → upper bound on its raw mass
    unlisted: float = 0.0  # raw label mass below the provider's top-k cut-off (not attributed)
    assumed: tuple[str, ...] = ()  # labels whose mass includes a path assumed to complete the label
    method: str = "token_logprobs"

    def __post_init__(self) -> None:
        if not self.space or len(set(self.space)) != len(self.space):
            raise ValueError("the answer space must be non-empty and without repeated labels")
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; known: {', '.join(METHODS)}")
        known = set(self.space)
        for label in [*self.probs, *self.missing, *self.assumed]:
            if label not in known:
                raise ValueError(f"label {label!r} is not in the answer space")
        if set(self.probs) & set(self.missing):
            raise ValueError("a label cannot be both recovered and missing")
        absent = known - set(self.probs) - set(self.missing)
        if absent:
            raise ValueError(f"labels neither recovered nor missing: {sorted(absent)}")
        if not self.probs:
            raise ValueError("no label recovered: use None for 'no distribution'")
        for label, p in self.probs.items():
            _finite_unit(f"probability of {label!r}", p)
        for label, bound in self.missing.items():
            _finite_unit(f"bound of missing {label!r}", bound)
        _finite_unit("mass_found", self.mass_found)
        _finite_unit("unlisted", self.unlisted)
        total = math.fsum(self.probs.values())
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise ValueError(f"probabilities sum to {total!r}, not 1")
        # Keep the space's order in both mappings (ties in `top` are broken by it).
        for name in ("probs", "missing"):
            held = getattr(self, name)
            object.__setattr__(self, name, {lb: float(held[lb]) for lb in self.space if lb in held})

    @classmethod
    def from_masses(
        cls,
        space: Sequence[str],
        masses: Mapping[str, float],
        *,
        missing: Mapping[str, float] | None = None,
        unlisted: float = 0.0,
        assumed: Sequence[str] = (),
        method: str = "token_logprobs",
    ) -> LabelDistribution | None:
        """Normalise raw masses of the recovered labels; None when they hold no mass at all."""
        found = math.fsum(masses.values())
        if not found > 0.0:
            return None
        return cls(
            space=tuple(space),
            probs={lb: m / found for lb, m in masses.items()},
            mass_found=min(1.0, found),
            missing=dict(missing or {}),
            unlisted=unlisted,
            assumed=tuple(assumed),
            method=method,
        )

    # Derived facts ----------------------------------------------------------------------
    @property
    def partial(self) -> bool:
        """Some labels could not be recovered: the distribution is over part of the space."""
        return bool(self.missing)

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def top(self) -> str:
        """The recovered label with the highest probability; ties go to the earlier label in the space."""
        best = max(self.probs.values())
        return next(lb for lb, p in self.probs.items() if p == best)

    @property
    def mass_outside(self) -> float:
        return max(0.0, 1.0 - self.mass_found)

    def p(self, label: str) -> float | None:
        """The normalised probability of ``label``; None when it is missing (absent, not zero)."""
        if label not in self.space:
            raise KeyError(f"{label!r} is not in the answer space")
        return self.probs.get(label)

    # Storage ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored per prediction (the space itself comes from the task and row)."""
        out: dict[str, Any] = {
            "method": self.method,
            "probs": dict(self.probs),
            "top": self.top,
            "mass_outside": self.mass_outside,
        }
        if self.missing:
            out["missing"] = dict(self.missing)
        if self.unlisted:
            out["unlisted"] = self.unlisted
        if self.assumed:
            out["assumed"] = list(self.assumed)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], space: Sequence[str]) -> LabelDistribution:
        """Read a stored distribution back for ``space``; ValueError on anything inconsistent.

        Admission uses this: the stored ``top`` must be the one the probabilities give.
        """
        allowed = {"method", "probs", "top", "mass_outside", "missing", "unlisted", "assumed"}
        extra = set(data) - allowed
        if extra:
            raise ValueError(f"unknown distribution fields: {sorted(extra)}")
        probs = data.get("probs")
        if not isinstance(probs, Mapping):
            raise ValueError("a distribution needs a mapping 'probs'")
        outside = data.get("mass_outside")
        _finite_unit("mass_outside", outside)  # type: ignore[arg-type]
        dist = cls(
            space=tuple(space),
            probs=dict(probs),
            mass_found=1.0 - float(outside),  # type: ignore[arg-type]
            missing=dict(data.get("missing") or {}),
            unlisted=float(data.get("unlisted", 0.0)),
            assumed=tuple(data.get("assumed") or ()),
            method=str(data.get("method", "")),
        )
        if data.get("top") != dist.top:
            raise ValueError(f"stored top label {data.get('top')!r} is not the most probable ({dist.top!r})")
        return dist
