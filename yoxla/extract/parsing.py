"""Strict parsing of model answers.

Only the requested format counts. An answer that is not in the answer space is a result
(invalid, scored as wrong), never a reason to ask again. Beside the strict verdict every
invalid output gets a *near-miss kind* so that diagnostics can show, for instance, a model
that wrote ``YOKDUR`` thirty times. Near-miss kinds never change a score.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, get_args

from yoxla.extract.text import (
    az_key,
    az_lower,
    flatten,
    fold_letters,
    nfc,
    tokens,
    turkish_spelling,
    words_pattern,
)

if TYPE_CHECKING:
    from yoxla.contract.spec_answers import StrictExtraction

# Reasons an output is invalid.
EMPTY = "empty_output"
NOT_IN_SPACE = "not_in_answer_space"
NOT_A_NUMBER = "not_a_number"
OUT_OF_RANGE = "out_of_range"

# Near-miss kinds (diagnostics only; the result file's record, yoxla.record.result, stores these).
NearMiss = Literal[
    "empty",
    "trailing_punctuation",
    "option_with_text",
    "letter_folded",
    "turkish_spelling",
    "label_in_extra_words",
    "other",
]
NEAR_MISS_KINDS: tuple[str, ...] = get_args(NearMiss)

_WRAPPERS = (("```", "```"), ("**", "**"), ("`", "`"), ('"', '"'), ("'", "'"), ("«", "»"), ("“", "”"))
_TRAILING = ".!?,;:…。"
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
_OPTION_WITH_TEXT = re.compile(r"^(\d+)\s*[.):\-–—]\s*\S")
# The tags of <think>.*?</think> (DOTALL, IGNORECASE), with the same case rules.
_THINK_OPEN = re.compile("<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile("</think>", re.IGNORECASE)
# The one-character wrappers other than the backtick (whose runs are shared with ```).
_SINGLE = {left: right for left, right in _WRAPPERS if len(left) == 1 and left != "`"}
_SPACES = "".join(c for c in map(chr, range(0x3001)) if c.isspace())  # all of str.isspace()
_RUNS = {"*": re.compile(r"\**"), "`": re.compile("`*")}
_HAS_SPACE = re.compile(r"\s")
_LEFT_END = re.compile(r"[\s`*\"'«“]*")  # what rounds can take off the left end
_RIGHT_END = re.compile(r"[\s`*\"'»”]*")  # and off the right end
_BULK = 64  # a longer text, after a few rounds one at a time, has its rounds taken in bulk
_ONE_AT_A_TIME = 8
_BACKTICK, _STAR = ord("`"), ord("*")
_PAIR, _LONE_LEFT, _LONE_RIGHT = 1, 2, 3  # token codes no mark has: "**", a lone "*" on each side


@dataclass(frozen=True)
class Parsed:
    valid: bool
    value: Any = None  # canonical label, a float, or the quoted text
    abstained: bool = False
    reason: str | None = None
    near_miss: str | None = None
    text: str = ""  # the answer after removing wrappers


def answer_text(raw: str | None) -> str:
    """The part of a raw output that is scored: reasoning in <think> tags is removed.

    An unterminated ``<think>`` means the model never reached its answer: nothing is scored.
    """
    if not raw:
        return ""
    if "<" not in raw:  # no tag, in any case (no character lower-cases to "<")
        return raw
    text = _drop_think_blocks(raw)
    low = text.lower()
    if "<think>" in low:
        text = text[: low.index("<think>")]
    return text


def _drop_think_blocks(raw: str) -> str:
    """``re.sub(r"<think>.*?</think>", "", raw, flags=re.DOTALL | re.IGNORECASE)`` in linear time.

    That pattern scans to the end of the text again from every ``<think>`` that is never
    closed (quadratic on ``"<think>" * n``). Here each search starts where the last one
    stopped: once an opening tag has no closing tag after it, no later one has either.
    """
    kept: list[str] = []
    pos = 0
    while (opening := _THINK_OPEN.search(raw, pos)) is not None:
        closing = _THINK_CLOSE.search(raw, opening.end())
        if closing is None:
            break
        kept.append(raw[pos : opening.start()])
        pos = closing.end()
    if not kept:
        return raw
    kept.append(raw[pos:])
    return "".join(kept)


def strip_wrappers(text: str) -> str:
    """Remove surrounding white space and symmetric wrappers, repeatedly.

    Each round strips white space, then removes the first wrapper of ``_WRAPPERS`` that
    encloses the text; rounds repeat until one changes nothing. The rounds run on two indices
    into the text, runs of backticks and stars are taken by arithmetic, and in a long text
    many rounds are taken at once (``_lockstep``), so the time is linear in the length.
    """
    i, j = _unwrapped(text)
    return text[i:j]


def _unwrapped(text: str) -> tuple[int, int]:
    """(start, end) of ``strip_wrappers(text)`` within ``text``."""
    i, j = 0, len(text)
    single_rounds = 0
    while True:
        i0, j0 = i, j
        if i < j and text[i].isspace():
            i = _lstrip_index(text, i + 1, j)
        if i < j and text[j - 1].isspace():
            j = _rstrip_index(text, i, j - 1)
        if j - i >= 2:
            first, last = text[i], text[j - 1]
            if single_rounds >= _ONE_AT_A_TIME and j - i > _BULK:
                single_rounds = 0
                bulk = _lockstep(text, i, j)
                if bulk != (i, j):
                    i, j = bulk
                    continue
            if first == last and (first == "*" or first == "`"):
                i, j = _peel_runs(text, i, j, first)
                single_rounds += 1
            elif _SINGLE.get(first) == last:
                i, j = i + 1, j - 1
                single_rounds += 1
        if i == i0 and j == j0:
            return i, j


def _lstrip_index(text: str, i: int, j: int) -> int:
    """Where ``text[i:j].lstrip()`` starts, in time proportional to what is stripped."""
    if i == j or not text[i].isspace():
        return i
    width = 16
    while True:
        end = min(j, i + width)
        kept = len(text[i:end].lstrip())
        if kept or end == j:
            return end - kept
        width *= 2


def _rstrip_index(text: str, i: int, j: int) -> int:
    """Where ``text[i:j].rstrip()`` ends, in time proportional to what is stripped."""
    if i == j or not text[j - 1].isspace():
        return j
    width = 16
    while True:
        start = max(i, j - width)
        kept = len(text[start:j].rstrip())
        if kept or start == i:
            return start + kept
        width *= 2


def _end(m: re.Match[str] | None) -> int:
    assert m is not None  # the pattern matches the empty string
    return m.end()


def _end_runs(text: str, i: int, j: int, mark: str) -> int:
    """The shorter of the runs of ``mark`` that start and end ``text[i:j]`` (``j - i`` if all marks).

    The window doubles until one run ends inside it: time proportional to the shorter run.
    """
    run = _RUNS[mark]
    width = 16
    while True:
        width = min(width, j - i)
        left = _end(run.match(text, i, i + width)) - i
        right = _end(run.match(text[j - width : j][::-1]))
        if min(left, right) < width or width == j - i:
            return min(left, right)
        width *= 2


def _peel_runs(text: str, i: int, j: int, mark: str) -> tuple[int, int]:
    """All the rounds in a row that remove ``**`` (mark ``*``), or ```` ``` ```` and `` ` `` (mark `` ` ``)."""
    run = _end_runs(text, i, j, mark)
    whole = run == j - i  # nothing but marks: both ends eat into the same run
    if mark == "*":
        # "**" needs two marks at each end and four in all.
        k = 2 * (run // 4) if whole else 2 * (run // 2)
    elif whole:
        # "```" while six or more are left, then "`" while two or more are left.
        k = 3 * (run // 6) + (run % 6) // 2
    else:
        # "```" while both runs have three, then "`" while both have one: the shorter run.
        k = run
    return i + k, j - k


def _lockstep(text: str, i: int, j: int) -> tuple[int, int]:
    """Many rounds at once: (start, end) after them (the same pair when none can be taken).

    Read inward from each end (white space left out: rounds strip it), each end is a string
    of tokens: a mark, or ``**`` for each pair of stars in a run, and a lone star closing a
    run of odd length, which no round can take. In a round both ends show their first tokens;
    it removes them when they are the same (left marks read as their right marks): one token
    each (``"``, ``'``, ``«»``, ``“”``, ``**``, `` ` ``) or three backticks each. So, until the
    ends meet, the rounds take exactly the common prefix of the two token strings.

    To stay clear of the meeting point, each end is read only up to the middle; the result is
    then cut back to a state the rounds really pass through (never inside a ```` ``` ````).
    Either the rounds stop there, or each end has used up its half: every call leaves at most
    half of the text, so the calls cost linear time in all.
    """
    import numpy as np

    mid = (i + j) // 2
    _numeric_tables()
    left = text[i : _end(_LEFT_END.match(text, i, mid))]
    right = text[mid:j][::-1]
    right = right[: _end(_RIGHT_END.match(right))]
    lt, ls, le = _tokens(left, _LONE_LEFT, swap=True)
    rt, rs, re_ = _tokens(right, _LONE_RIGHT)
    n = min(len(lt), len(rt))
    differ = np.flatnonzero(lt[:n] != rt[:n])
    r = int(differ[0]) if len(differ) else n
    if r and lt[r - 1] == _BACKTICK and text[i + le[r - 1]] == "`" and text[j - 1 - re_[r - 1]] == "`":
        # A "```" round may take tokens r - 1 and r together: stop where that run of
        # backticks starts on one of the two ends instead.
        r = max(_backtick_run_start(lt, ls, le, r - 1), _backtick_run_start(rt, rs, re_, r - 1))
    if r == 0:
        return i, j
    return i + int(le[r - 1]), j - int(re_[r - 1])


def _tokens(end: str, lone: int, swap: bool = False) -> tuple[Any, Any, Any]:
    """Tokens of one end read inward: codes, and where each starts and stops in ``end``.

    ``end`` holds only marks and white space (all below U+3001); ``swap`` reads « and “ as
    » and ” (the left end, which holds no » or ”).
    """
    import numpy as np

    codes = np.frombuffer(end.encode("utf-32-le"), dtype="<u4")
    if swap:
        codes = _SWAP_CODES[codes]
    index = np.arange(len(codes), dtype=np.int64)
    if _HAS_SPACE.search(end) is None and "*" not in end:
        return codes, index, index + 1
    keep = ~_SPACE_CODES[codes]
    if "*" in end:
        star = codes == _STAR
        first = star & ~np.concatenate(([False], star[:-1]))
        last = star & ~np.concatenate((star[1:], [False]))
        odd = (index - np.maximum.accumulate(np.where(first, index, 0))) % 2 == 1
        second = star & odd  # closes a pair of stars
        alone = last & ~odd  # the last star of an odd run
        keep &= ~star | second | alone
        codes = np.where(second, _PAIR, np.where(alone, lone, codes))
        return codes[keep], np.where(second, index - 1, index)[keep], index[keep] + 1
    return codes[keep], index[keep], index[keep] + 1


_SWAP_CODES: Any = None  # numpy tables, made on first use (numpy is imported lazily)
_SPACE_CODES: Any = None


def _numeric_tables() -> None:
    global _SWAP_CODES, _SPACE_CODES
    if _SWAP_CODES is None:
        import numpy as np

        swap = np.arange(0x3001, dtype=np.uint32)
        for left, right in _SINGLE.items():
            swap[ord(left)] = ord(right)
        space = np.zeros(0x3001, dtype=bool)
        space[[ord(c) for c in _SPACES]] = True
        _SWAP_CODES, _SPACE_CODES = swap, space


def _backtick_run_start(tokens: Any, starts: Any, ends: Any, k: int) -> int:
    """The first token of the run of touching backticks that holds token ``k``."""
    import numpy as np

    tick = tokens[: k + 1] == _BACKTICK
    joined = tick[1:] & tick[:-1] & (starts[1 : k + 1] == ends[:k])  # token t touches token t - 1
    breaks = np.flatnonzero(~joined)
    return int(breaks[-1]) + 1 if len(breaks) else 0


def parse(rule: StrictExtraction, raw: str | None, choices: Sequence[str] = ()) -> Parsed:
    """Parse one raw output by a task's strict extraction ``rule`` (its mode, numeric range or
    abstention phrase); ``choices``: the item's own answer space (a choice task's labels, or a
    row's option numbers then its fixed labels). A rule without a mode is a choice rule when
    there are ``choices``, else a text rule (a suite task's ``strict_mode`` resolves it)."""
    text = strip_wrappers(answer_text(raw))
    mode = rule.mode or ("choice" if choices else "text")
    if mode == "choice":
        return _parse_choice(text, choices if isinstance(choices, tuple) else tuple(choices))
    if mode == "numeric":
        assert rule.range is not None  # the rule's own check: numeric needs a range
        return _parse_number(text, float(rule.range[0]), float(rule.range[1]))
    return _parse_text(text, rule.abstain if mode == "text_or_abstain" else None)


def _invalid(text: str, reason: str, near_miss: str) -> Parsed:
    return Parsed(valid=False, reason=reason, near_miss=near_miss, text=text)


@lru_cache(maxsize=512)
def _choice_keys(values: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
    """(Azerbaijani-case key → label, English-case key → ASCII label) of an answer space."""
    return {az_key(v): v for v in values}, {v.lower(): v for v in values if v.isascii()}


def _parse_choice(text: str, values: tuple[str, ...]) -> Parsed:
    if not text:
        return _invalid(text, EMPTY, "empty")
    keys, ascii_keys = _choice_keys(values)
    flat = flatten(text)
    hit = keys.get(az_lower(flat))
    if hit is None:
        # English (ASCII) labels also follow English case rules: ENTAILMENT is entailment.
        # Azerbaijani labels never do, so HEÇ BIRI stays invalid.
        hit = ascii_keys.get(flat.lower())
    if hit is not None:
        return Parsed(valid=True, value=hit, text=text)
    return _invalid(text, NOT_IN_SPACE, near_miss_kind(text, values))


def near_miss_kind(text: str, values: tuple[str, ...]) -> str:
    """Classify an invalid choice output. The first matching kind wins."""
    return _near_miss(text, values, extra_words=True)


def _near_miss(text: str, values: tuple[str, ...], extra_words: bool) -> str:
    """``near_miss_kind``; without ``extra_words``, "other" where it would look for the label
    among extra words (the last test, and the only one that costs the whole text)."""
    if not text.strip():
        return "empty"
    keys, folded_values, turkish_values = _space_forms(values)
    stripped = strip_wrappers(text.rstrip(_TRAILING + " "))
    if stripped != text and az_key(stripped) in keys:
        return "trailing_punctuation"
    m = _OPTION_WITH_TEXT.match(text)
    if m and m.group(1) in values:
        return "option_with_text"
    # fold_letters keeps the length: only a text as long as a label can fold onto it.
    if any(len(v) == len(stripped) for v in values):
        folded = fold_letters(stripped)
        if folded in folded_values:
            return "letter_folded"
    # turkish_spelling keeps the length but for the spaces it drops (no letter lower-cases to one).
    spaceless = len(stripped) - stripped.count(" ")
    if any(len(t) == spaceless for t in turkish_values):
        turkish = turkish_spelling(stripped)
        if turkish in turkish_values:
            return "turkish_spelling"
    if not extra_words:
        return "other"
    # The words of a label, one after another among the words of the text (``tokens``).
    lowered = az_lower(nfc(text))
    if any(words_pattern(tuple(words)).search(lowered) for v in values if (words := tokens(v))):
        return "label_in_extra_words"
    return "other"


@lru_cache(maxsize=512)
def _space_forms(values: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """An answer space's label keys, letter-folded labels and Turkish spellings (worked out once
    per space: every near miss of a task compares against the same labels)."""
    return (
        frozenset(az_key(v) for v in values),
        tuple(fold_letters(v) for v in values),
        tuple(turkish_spelling(v) for v in values),
    )


def _parse_number(text: str, lo: float, hi: float) -> Parsed:
    if not text:
        return _invalid(text, EMPTY, "empty")
    if not _NUMBER.fullmatch(text):
        if _NUMBER.fullmatch(text.rstrip(_TRAILING + " ")):
            kind = "trailing_punctuation"
        elif _NUMBER.search(text):
            kind = "label_in_extra_words"
        else:
            kind = "other"
        return _invalid(text, NOT_A_NUMBER, kind)
    value = float(text.replace(",", "."))
    if not lo <= value <= hi:
        return _invalid(text, OUT_OF_RANGE, "other")
    return Parsed(valid=True, value=value, text=text)


@lru_cache(maxsize=64)
def _abstain_key(abstain: str) -> str:
    return az_key(abstain)


def _parse_text(text: str, abstain: str | None) -> Parsed:
    if not text:
        return _invalid(text, EMPTY, "empty")
    if abstain is not None:
        if az_key(text) == _abstain_key(abstain):
            return Parsed(valid=True, value=abstain, abstained=True, text=text)
        # "Cavab yoxdur." is neither the abstain value nor a quote: an invalid near miss.
        kind = _near_miss(text, (abstain,), extra_words=False)
        if kind in ("trailing_punctuation", "letter_folded", "turkish_spelling"):
            return _invalid(text, NOT_IN_SPACE, kind)
    return Parsed(valid=True, value=text, text=text)
