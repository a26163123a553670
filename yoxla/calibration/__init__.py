"""How sure a model is: distributions over a task's answer space, and the metrics built on them.

Everything here works on plain data and is pure; docs/calibration.md lists the modules and
gives the formulas. ``label_scoring`` imports torch and is never imported from here.
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
