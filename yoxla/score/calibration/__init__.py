"""How sure a model is: distributions over a task's answer space, and the metrics built on them.

Everything here works on plain data and is pure; docs/calibration.md lists the modules and
gives the formulas. ``label_scoring`` imports torch and is never imported from here.
"""

from yoxla.score.calibration.distribution import LabelDistribution
from yoxla.score.calibration.logprobs import distribution_from_logprobs
from yoxla.score.calibration.token_logprobs import LogprobsError, parse_logprobs

__all__ = ["LabelDistribution", "LogprobsError", "distribution_from_logprobs", "parse_logprobs"]
