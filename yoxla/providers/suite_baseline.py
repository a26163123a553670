"""``suite-baseline``: the offline ``baseline`` provider under its older name (kept as an alias).

Before every run went through the suite engine, ``baseline`` answered the built-in tasks and
``suite-baseline`` suite items; now every run sends suite items, both names are
:class:`~yoxla.providers.baseline.BaselineProvider`, and ``--provider suite-baseline`` is the same
strategies with this name in the result.
"""

from __future__ import annotations

from yoxla.providers.baseline import BaselineProvider


class SuiteBaselineProvider(BaselineProvider):
    name = "suite-baseline"
