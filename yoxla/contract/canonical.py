"""Canonical JSON and its SHA-256: the text every frozen hash in YOXLA is taken over.

A hash is taken over the *parsed* content (keys sorted, no whitespace, text as is: Azerbaijani
letters are never escaped), so reformatting a manifest changes nothing while any change of
meaning changes the hash. Task contracts, prompt hashes, suite, definition, task and analysis
hashes, judge and annotation records all use these two functions.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(obj: Any) -> str:
    """``obj`` as canonical JSON: sorted keys, no spaces, non-ASCII text kept as it is."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    """``sha256:`` and the hex SHA-256 of ``text`` in UTF-8."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
