"""Boards: every admitted file keyed by suite, prepared ranks, bootstrap intervals, floors, breakdowns, published results."""
