"""How sure a model is: distributions over a task's answer space, and the metrics built on them.

* :mod:`~yoxla.calibration.distribution`: :class:`LabelDistribution`, one per example.
* :mod:`~yoxla.calibration.token_logprobs`: a reply's token logprobs, typed and compacted for storage.
* :mod:`~yoxla.calibration.label_match`: a token path's text against the labels, as the parser reads it.
* :mod:`~yoxla.calibration.logprobs`: a distribution from OpenAI-style token logprobs.
* :mod:`~yoxla.calibration.label_scoring`: the exact distribution of a local Transformers
  model, each label scored as a continuation (imports torch; never imported from here).
* :mod:`~yoxla.calibration.metrics`: mean gold probability, high-confidence error rate,
  Brier, ECE with its reliability bins, answer/top agreement, group consistency, controls.
* :mod:`~yoxla.calibration.ranking`: a declared ranking order, applied and explained.
* :mod:`~yoxla.calibration.stored`: what the run folder and the result file keep, and the
  task and pooled reports derived from it (the one derivation calls it).

Everything here works on plain data and is pure; see docs/calibration.md for the formulas.
"""

from yoxla.calibration.distribution import LabelDistribution
from yoxla.calibration.logprobs import distribution_from_logprobs
from yoxla.calibration.metrics import CalibrationReport, Case, calibration_report
from yoxla.calibration.ranking import DEFAULT_ORDER, explain_order, rank
from yoxla.calibration.token_logprobs import LogprobsError, TokenLogprob, parse_logprobs

__all__ = [
    "DEFAULT_ORDER",
    "CalibrationReport",
    "Case",
    "LabelDistribution",
    "LogprobsError",
    "TokenLogprob",
    "calibration_report",
    "distribution_from_logprobs",
    "explain_order",
    "parse_logprobs",
    "rank",
]
