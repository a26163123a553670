"""Admission: the one rule that decides whether a result file is on a board, re-derived from the stored answers."""
