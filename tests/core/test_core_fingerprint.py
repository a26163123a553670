"""Row fingerprints: SHA-256 over rows in order, each as sorted-key JSON plus a newline."""

from __future__ import annotations

import datetime
import hashlib

import pytest

from yoxla.data.editions import fingerprint

ROWS = [
    {"id": "az-2", "text": "Şəki xan sarayı", "score": 4.5},
    {"label": "TƏSDİQ", "id": "az-1", "tags": ["ə", "ı"], "answer": None},
]
# The same rows serialised by hand: keys sorted, ", " and ": " separators, UTF-8 letters unescaped.
LINES = [
    '{"id": "az-2", "score": 4.5, "text": "Şəki xan sarayı"}\n',
    '{"answer": null, "id": "az-1", "label": "TƏSDİQ", "tags": ["ə", "ı"]}\n',
]


def _expected(lines: list[str]) -> str:
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def test_fingerprint_of_known_rows():
    assert fingerprint(ROWS) == _expected(LINES)


def test_fingerprint_is_utf8_not_ascii_escaped():
    escaped = '{"id": "az-2", "score": 4.5, "text": "\\u015e\\u0259ki xan saray\\u0131"}\n'
    assert fingerprint(ROWS[:1]) != _expected([escaped])
    assert fingerprint(ROWS[:1]) == _expected(LINES[:1])


def test_fingerprint_depends_on_row_order():
    assert fingerprint(list(reversed(ROWS))) == _expected(list(reversed(LINES)))
    assert fingerprint(list(reversed(ROWS))) != fingerprint(ROWS)


def test_fingerprint_ignores_key_order_within_a_row():
    reordered = [dict(reversed(list(r.items()))) for r in ROWS]
    assert fingerprint(reordered) == fingerprint(ROWS)


def test_fingerprint_sees_a_one_letter_change():
    changed = [dict(ROWS[0], text="Şeki xan sarayı"), ROWS[1]]  # ə folded to e
    assert fingerprint(changed) != fingerprint(ROWS)


def test_fingerprint_of_no_rows():
    assert fingerprint([]) == "sha256:" + hashlib.sha256(b"").hexdigest()


def test_fingerprint_uses_str_for_other_types():
    row = {"id": "d1", "date": datetime.date(1918, 5, 28)}
    assert fingerprint([row]) == _expected(['{"date": "1918-05-28", "id": "d1"}\n'])


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1]])
def test_fingerprint_format(rows):
    fp = fingerprint(rows)
    assert fp.startswith("sha256:")
    assert len(fp) == len("sha256:") + 64
    int(fp.removeprefix("sha256:"), 16)
