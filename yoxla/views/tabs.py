"""The app's views: one module per tab, each building its own section and wiring its own events.

:data:`VIEWS` is the order of the tabs. A new view is one new module with a :class:`View`
subclass, added here.
"""

from __future__ import annotations

from yoxla.views.about import AboutView
from yoxla.views.base import Context, Downloads, Update, View
from yoxla.views.blocks import BlocksView
from yoxla.views.breakdowns import BreakdownsView
from yoxla.views.calibration import CalibrationView
from yoxla.views.compare import CompareView
from yoxla.views.diagnostics import DiagnosticsView
from yoxla.views.explorer import ExplorerView
from yoxla.views.leaderboard import LeaderboardView
from yoxla.views.methodology import MethodologyView
from yoxla.views.model import ModelView
from yoxla.views.submit import SubmitView
from yoxla.views.tasks import TasksView

VIEWS: tuple[type[View], ...] = (
    LeaderboardView,
    ModelView,
    TasksView,
    BlocksView,
    BreakdownsView,
    DiagnosticsView,
    CalibrationView,
    ExplorerView,
    CompareView,
    MethodologyView,
    SubmitView,
    AboutView,
)

__all__ = ["VIEWS", "Context", "Downloads", "Update", "View"]
