"""The strict JSON reader: its fast path accepts exactly what the strict parse accepts.

:func:`yoxla.safe.strictjson.loads_strict` first parses without a Python call per object and
counts the keys; anything it cannot vouch for is parsed again with every check. Each case
here is judged twice, on the fast path and with the strict parse forced, and must get the
same document or the same one-line reason.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yoxla.safe.strictjson as sj
from yoxla.safe.strictjson import StrictJSONError, loads_strict


def _strict_only(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(sj, "_loads_plain", lambda *a: sj._UNSURE)
        return _judged(data)


def _judged(data: bytes) -> tuple[str, Any]:
    try:
        return "ok", loads_strict(data)
    except StrictJSONError as exc:
        return "error", str(exc)


# Objects as lists of pairs, so that a key can repeat; texts from an alphabet that makes keys
# and texts hold quotes, backslashes and colons.
_TEXT = st.text(alphabet='ab":\\ ə\u00e7', max_size=6)
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**22), 10**22),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)
_TREE = st.recursive(
    _SCALAR,
    lambda kids: (
        st.lists(kids, max_size=4).map(lambda v: ("list", v))
        | st.lists(st.tuples(_TEXT, kids), max_size=4).map(lambda v: ("obj", v))
    ),
    max_leaves=20,
)
_COLON = st.sampled_from([":", ": ", " :", "\n:", ":\t"])


def _dump(node: Any, colon: str) -> str:
    if isinstance(node, tuple) and node[0] == "list":
        return "[" + ",".join(_dump(v, colon) for v in node[1]) + "]"
    if isinstance(node, tuple):
        return "{" + ",".join(json.dumps(k) + colon + _dump(v, colon) for k, v in node[1]) + "}"
    return json.dumps(node, ensure_ascii=False)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=_TREE, colon=_COLON)
def test_the_fast_path_agrees_with_the_strict_parse(tree: Any, colon: str, monkeypatch) -> None:
    data = _dump(tree, colon).encode("utf-8")
    assert _judged(data) == _strict_only(data, monkeypatch)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"a":2}',
        '{"a":1,"a" :2}',  # white space before a colon
        '{"a":":x","a":2}',  # a text that starts with a colon makes one key more to count
        '{"a":"\\":","a":2}',  # an escaped quote before a colon, in a text
        '{"a\\\\":1,"a\\\\":2}',  # keys that end in a backslash
        '{"a":"\\\\\\":","a":2}',  # an escaped backslash, then an escaped quote
        '[{"x":{"k":1}},{"x":{"k":1,"k":1}}]',
        '{"a":[1,2,{"b":3,"b":3}]}',
    ],
)
def test_a_repeated_key_is_refused_however_it_hides(text: str, monkeypatch) -> None:
    got = _judged(text.encode("utf-8"))
    assert got[0] == "error" and "appears twice" in got[1], got
    assert got == _strict_only(text.encode("utf-8"), monkeypatch)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 33 + "]" * 33, "nested more than 32 levels deep"),
        ('{"n":' + "1" * 21 + "}", "an integer has 21 digits"),
        ('{"n":-' + "9" * 5000 + "}", "an integer has 5000 digits"),
        ('{"x":1.' + "0" * 40 + "}", "written with 42 characters"),
        ('{"x":1e999}', "overflows"),
        ('{"x":NaN}', "NaN or an infinite number"),
        ('{"x":"\\ud800"}', "lone surrogate"),
        ('{"x":', "looks truncated"),
    ],
)
def test_the_limits_hold_on_both_paths(text: str, reason: str, monkeypatch) -> None:
    got = _judged(text.encode("utf-8"))
    assert got[0] == "error" and reason in got[1], got
    assert got == _strict_only(text.encode("utf-8"), monkeypatch)


def test_a_plain_result_file_needs_no_python_call_per_object(monkeypatch) -> None:
    """The point of the fast path: a result file as the runner writes it is parsed without
    the duplicate-key hook (a call per object), and equals the strict parse's document."""
    from yoxla.testing.synthetic import random_answers
    from yoxla.testing.synthetic_v3 import sample_result

    doc = sample_result(random_answers(7, skill=0.6), model="m", display_name="m")
    data = json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")
    strict = _strict_only(data, monkeypatch)
    monkeypatch.setattr(sj, "_pairs", lambda pairs: pytest.fail("the strict parse ran"))
    assert _judged(data) == strict == ("ok", doc)


def test_a_file_is_checked_with_the_collector_paused_and_left_as_found(monkeypatch) -> None:
    """Admission pauses the cyclic garbage collector while it checks one file (the parsed
    document is freed by reference counting), and leaves it as it found it, on or off."""
    import gc

    import yoxla.admission.rules as admission

    seen: list[bool] = []
    real = admission.check_document
    monkeypatch.setattr(
        admission, "check_document", lambda *a, **kw: seen.append(gc.isenabled()) or real(*a, **kw)
    )
    assert gc.isenabled()
    admission.check_bytes(b'{"format": "nothing"}')
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        with sj.gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(StrictJSONError), sj.gc_paused():
        raise StrictJSONError("stops the check")
    assert gc.isenabled()
