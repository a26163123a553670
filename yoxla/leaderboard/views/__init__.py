"""The app's views: one module per tab, each building its own section and wiring its own events.

:data:`VIEWS` is the order of the tabs. A new view is one new module with a :class:`View`
subclass, added here.
"""

from __future__ import annotations

from yoxla.leaderboard.views.about import AboutView
from yoxla.leaderboard.views.base import Context, Downloads, Update, View
from yoxla.leaderboard.views.blocks import BlocksView
from yoxla.leaderboard.views.breakdowns import BreakdownsView
from yoxla.leaderboard.views.calibration import CalibrationView
from yoxla.leaderboard.views.compare import CompareView
from yoxla.leaderboard.views.diagnostics import DiagnosticsView
from yoxla.leaderboard.views.explorer import ExplorerView
from yoxla.leaderboard.views.leaderboard import LeaderboardView
from yoxla.leaderboard.views.methodology import MethodologyView
from yoxla.leaderboard.views.model import ModelView
from yoxla.leaderboard.views.submit import SubmitView
from yoxla.leaderboard.views.tasks import TasksView

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
