"""Placeholder: the runner lands with issue 3."""

import sys

print("runner.py: not yet — the runner arrives with issue 3", file=sys.stderr)
sys.exit(2)
