"""Scoring stored answers: built-in graders, the one replay, tallies, user Python in a worker, statistics, spans."""
