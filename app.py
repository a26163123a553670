"""Placeholder: the leaderboard app lands with issue 4."""

import sys

print("app.py: not yet — the leaderboard arrives with issue 4", file=sys.stderr)
sys.exit(2)
