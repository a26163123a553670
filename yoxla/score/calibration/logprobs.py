"""A distribution over the answer space from OpenAI-style token logprobs.

The response shows a tree of token paths: every first token, and one step off the generated
path at every later position. A path's text is read the way the strict parser reads an answer
(wrappers and white space removed, Azerbaijani and ASCII case, no letter folding); a label's
raw mass is the summed probability of the visible paths that spell it. What the tree cannot
split (a label that another extends with no visible next position, a prefix several labels
share, doubt from a token whose bytes the server did not show) makes those labels *missing*,
with an upper bound on their mass; the unlisted remainder below the top-k cut-off is
``unlisted``. The rules, the server dialects and what can be recovered: docs/calibration.md,
"From token logprobs". The tokens are read by :mod:`yoxla.score.calibration.token_logprobs`.
"""

from __future__ import annotations

import codecs
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from yoxla.extract.parsing import _WRAPPERS
from yoxla.extract.text import az_lower, az_upper, collapse_ws, nfc
from yoxla.score.calibration.distribution import LabelDistribution
from yoxla.score.calibration.token_logprobs import (
    MAX_ANSWER_TOKENS,
    THINK_CLOSE,
    UNKNOWN_ANY,
    UNKNOWN_PARTIAL,
    Alternative,
    TokenLogprob,
)

DEFAULT_TOLERANCE = 1e-3
MAX_UNKNOWN_BYTES = 8  # the most bytes one unshown token is taken to stand for when aligning
MAX_ALIGN_STATES = 256  # positions followed at once while aligning tokens with the answer text


# Matching a path's text against the labels, as the strict parser reads an answer ----------


@dataclass(frozen=True)
class LabelKeys:
    """The comparison forms of one label, as the strict parser compares it."""

    label: str
    az: str  # NFC, collapsed white space, Azerbaijani lower case
    ascii: str | None  # English lower case, for ASCII labels only


def label_keys(space: Sequence[str]) -> list[LabelKeys]:
    return [
        LabelKeys(lb, az_lower(collapse_ws(nfc(lb))), lb.lower() if lb.isascii() else None) for lb in space
    ]


def _split_wrappers(text: str) -> tuple[str, str]:
    """(body, closers): leading white space and opening wrappers removed, as the parser would.

    A dangling part of an opener (``*`` of ``**``) leaves an empty body: any label may follow.
    """
    body, closers = text.lstrip(), ""
    stripped = True
    while stripped:
        stripped = False
        for left, right in _WRAPPERS:
            if body.startswith(left):
                body, closers = body[len(left) :].lstrip(), closers + right
                stripped = True
                break
    if body and any(left.startswith(body) for left, _ in _WRAPPERS):
        return "", closers
    return body, closers


def _norm(body: str) -> str:
    """NFC and collapsed white space, keeping one trailing space (a prefix may end in one)."""
    text = nfc(body)
    core = collapse_ws(text)
    return core + " " if core and text[-1:].isspace() else core


# Characters outside ASCII the parser strips around a label: wrappers and white space.
_MARKS = "«»“”\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _opens_unshown(c: str) -> bool:
    """Whether unshown bytes (the start of a letter of two or more bytes) may begin ``c`` as
    the parser compares it: a letter outside ASCII in some case (``i`` is ``İ`` upper case),
    or white space (``\u00a0`` is white space to the parser)."""
    return c.isspace() or any(not v.isascii() for v in (c, c.upper(), az_upper(c)))


@dataclass(frozen=True)
class PathClass:
    """How one path's text stands to the labels."""

    complete: str | None  # the label it spells
    compat: frozenset[str]  # the labels it spells or is on the way to
    soft: frozenset[str]  # those whose next letter unshown bytes may begin
    open_start: bool  # no letter of a label yet: unshown bytes may be a wrapper (« “) or white space


def classify_text(text: str, pending: bytes, keys: list[LabelKeys]) -> PathClass:
    """How ``text`` (and ``pending``, the bytes of a letter not finished yet) stands to the labels."""
    body, closers = _split_wrappers(text)
    norm = _norm(body)
    done = collapse_ws(nfc(body.rstrip(closers + " \t\r\n\f\v")))  # the answer once closed
    # Each label in the forms the parser compares: Azerbaijani case, and English case for ASCII.
    forms = [(k.label, k.az, az_lower(norm), az_lower(done)) for k in keys]
    forms += [(k.label, k.ascii, norm.lower(), done.lower()) for k in keys if k.ascii is not None]
    compat: set[str] = set()
    soft: set[str] = set()
    complete = None
    separator = bool(pending) and any(m.encode("utf-8").startswith(pending) for m in _MARKS)
    for label, key, have, finished in forms:
        if pending:  # a letter split across tokens: a prefix whose next letter starts so
            if len(key) > len(have) and key.startswith(have):
                c = key[len(have)]
                if any(v.encode("utf-8").startswith(pending) for v in {c, c.upper(), az_upper(c)}):
                    compat.add(label)
                    soft.add(label)
            if separator:  # or a wrapper (« “ ” ») or white space outside ASCII
                if not have:
                    compat.add(label)
                    soft.add(label)
                elif complete is None and finished == key:
                    complete = label
                    compat.add(label)
            continue
        if key.startswith(have):
            compat.add(label)
            if len(key) > len(have) and _opens_unshown(key[len(have)]):
                soft.add(label)
        if complete is None and finished == key:
            complete = label
            compat.add(label)
    return PathClass(complete, frozenset(compat), frozenset(soft), not pending and not norm.strip())


# The tree of visible paths ---------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    data: bytes  # the answer's bytes along this path
    logp: float  # log probability of the path
    next_position: int | None  # whose alternatives are this node's children; None: not visible
    ends: bool = False
    generated: bool = False  # on the generated path
    blind: bool = False  # generated, but its bytes are not known (``data``: the last known)


@dataclass(frozen=True)
class _Kid:
    """One listed alternative at a node's next position, with its conditional probability."""

    node: _Node | None  # None: its bytes are not known (an unshown token)
    p: float
    unknown: str | None = None  # what an unknown kid may stand for (UNKNOWN_*)


def _same_token(a: Alternative, chosen: Alternative) -> bool:
    if a.token != chosen.token:
        return False
    if a.token_bytes is None and chosen.token_bytes is None:
        return True  # keyed by text: one entry per text, whatever it merged (llama-cpp-python)
    return a.token_bytes == chosen.token_bytes and abs(a.logprob - chosen.logprob) <= 1e-4


def _listed(chosen: TokenLogprob) -> tuple[list[Alternative], int]:
    """(the alternatives at a position, each listed once, the generated token's index among them).

    Entries keyed by text (``bytes: null``) are merged by their text: one entry per text, so a
    merged ``""`` entry is not counted twice. The generated token is added when not listed.
    """
    alts: list[Alternative] = []
    texts: set[str] = set()
    for a in chosen.top:
        if a.token_bytes is None:
            if a.token in texts:
                continue
            texts.add(a.token)
        alts.append(a)
    match = next((i for i, a in enumerate(alts) if _same_token(a, chosen)), None)
    if match is None:
        alts.append(chosen)
        return alts, len(alts) - 1
    alts[match] = chosen  # the generated token's own logprob (a merged entry may carry another's)
    return alts, match


def _children(node: _Node, tokens: Sequence[TokenLogprob], path: Sequence[bytes | None]) -> list[_Kid] | None:
    """Every listed alternative at the node's next position; None when that is not visible.

    ``path[i]`` is the answer's bytes along the generated path after token ``i`` (None where
    they are not known).
    """
    pos = node.next_position
    if pos is None or node.ends:
        return None
    alts, match = _listed(tokens[pos])
    nxt = pos + 1 if pos + 1 < len(tokens) else None
    out = []
    for i, a in enumerate(alts):
        p = math.exp(a.logprob)
        if a.ends:
            out.append(_Kid(_Node(node.data, node.logp + a.logprob, None, ends=True), p))
            continue
        if i == match:
            data = path[pos]
            if data is not None:
                out.append(_Kid(_Node(data, node.logp + a.logprob, nxt, generated=True), p))
            elif any(d is not None for d in path[pos + 1 :]):  # known again further on: go through
                out.append(_Kid(_Node(node.data, node.logp + a.logprob, nxt, generated=True, blind=True), p))
            else:
                out.append(_Kid(None, p, a.unknown or UNKNOWN_ANY))
            continue
        if a.unknown is not None:
            out.append(_Kid(None, p, a.unknown))
            continue
        out.append(_Kid(_Node(node.data + a.data, node.logp + a.logprob, None), p))
    return out


def _decode(data: bytes) -> tuple[str, bytes]:
    """(complete text, trailing bytes of a letter not finished yet)."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = dec.decode(data, final=False)
    return text, dec.getstate()[0]


def _root(tokens: Sequence[TokenLogprob]) -> tuple[_Node, bool] | None:
    """(where the answer starts, whether a ``<think>`` block came before it), or None when
    reasoning never closed (no answer was given)."""
    if not tokens:
        return None
    joined = b"".join(t.data for t in tokens)
    close = joined.find(THINK_CLOSE)
    if close < 0:
        if joined.lstrip().startswith(b"<think>"):
            return None  # reasoning never closed: no answer was given
        return _Node(b"", 0.0, 0, generated=True), False
    end, seen = close + len(THINK_CLOSE), 0
    for i, t in enumerate(tokens):
        seen += len(t.data)
        if seen >= end:  # token i finishes the block; what it holds past it is given
            leftover = joined[end:seen]
            nxt = i + 1 if i + 1 < len(tokens) else None
            if nxt is None and not leftover.strip():
                return None
            return _Node(leftover, 0.0, nxt, generated=True), True
    return None  # pragma: no cover - close was found inside the joined bytes


def _concatenated(tokens: Sequence[TokenLogprob], start: int, leftover: bytes) -> list[bytes | None]:
    """The generated path's bytes from the tokens alone: unknown from the first unshown token."""
    path: list[bytes | None] = [None] * len(tokens)
    data: bytes | None = leftover
    for i in range(start, len(tokens)):
        t = tokens[i]
        if data is not None and not t.ends:
            data = None if t.unknown is not None else data + t.data
        path[i] = data
    return path


_WS = b" \t\r\n\f\v"
_REPLACEMENT = "\ufffd".encode()


def _aligned(
    tokens: Sequence[TokenLogprob], start: int, leftover: bytes, answer: bytes, after_think: bool
) -> list[bytes | None] | None:
    """The generated path's bytes read from the answer text, where the tokens fix them.

    The shown tokens are anchors in the answer's bytes; a run of unshown tokens between two
    anchors stands for the bytes between them. A position's bytes are known when every way of
    laying the tokens over the answer puts it at the same offset. None when the tokens cannot
    be laid over the answer at all (or too many ways are open).
    """
    toks = list(tokens[start:])
    n = len(toks)
    skip = after_think  # the answer text lost its leading white space after the reasoning
    lead = leftover.lstrip(_WS) if skip else leftover
    if skip and lead:
        skip = False
    if not answer.startswith(lead):
        return None
    # Forward: the offsets each token may start at; a state is (offset, still skipping).
    fwd: list[set[tuple[int, bool]]] = [{(len(lead), skip)}]
    steps: list[list[tuple[tuple[int, bool], tuple[int, bool]]]] = []
    for t in toks:
        nxt: set[tuple[int, bool]] = set()
        moves = []
        for state in fwd[-1]:
            pos, skipping = state
            if t.ends:
                targets = [(pos, skipping)]
            elif t.unknown is not None:
                if skipping:
                    return None  # unshown bytes where white space was removed: not decidable
                low = 1 if t.unknown == UNKNOWN_PARTIAL else 0
                targets = [
                    (pos + k, False) for k in range(low, MAX_UNKNOWN_BYTES + 1) if pos + k <= len(answer)
                ]
            else:
                data = t.data.lstrip(_WS) if skipping else t.data
                still = skipping and not data
                targets = [(pos + len(data), still)] if answer.startswith(data, pos) else []
            for target in targets:
                nxt.add(target)
                moves.append((state, target))
        if not nxt or len(nxt) > MAX_ALIGN_STATES:
            return None
        fwd.append(nxt)
        steps.append(moves)
    complete = n < MAX_ANSWER_TOKENS  # the stored tokens are all of the answer's
    ends = {st for st in fwd[-1] if st[0] == len(answer)} if complete else set(fwd[-1])
    if not ends:
        return None
    # Backward: keep the states from which the rest of the tokens can still be laid.
    alive = ends
    out: list[bytes | None] = [None] * len(tokens)
    for j in range(n - 1, -1, -1):
        offsets = {pos for pos, _ in alive}
        # A text that drops the bytes it cannot decode (keyed by text) may begin with the end of
        # the letter an unshown token began: where the two meet is not known.
        hides = toks[j].unknown is not None and j + 1 < n and toks[j + 1].token_bytes is None
        # A letter the server could not decode reads as U+FFFD in its text: not the token's bytes.
        end = max(offsets)
        hides = hides or (
            toks[j].unknown is not None and end >= 3 and answer.startswith(_REPLACEMENT, end - 3)
        )
        out[start + j] = answer[: offsets.pop()] if len(offsets) == 1 and not hides else None
        alive = {a for a, b in steps[j] if b in alive}
    return out


def _generated_path(
    tokens: Sequence[TokenLogprob], root: _Node, after_think: bool, text: str | None
) -> list[bytes | None]:
    """The answer's bytes along the generated path after each token (None where not known).

    From the tokens alone while every token shows its bytes; where one does not (or where
    the server keys tokens by their text, which may hide a letter's bytes), from the answer
    text the server returned, where the tokens fix them; else unknown from there on.
    """
    start = root.next_position
    if start is None:
        return [None] * len(tokens)
    rest = tokens[start:]
    if text is not None and any(t.unknown is not None or t.token_bytes is None for t in rest):
        aligned = _aligned(tokens, start, root.data, text.encode("utf-8"), after_think)
        if aligned is not None:
            return aligned
        if any(t.token_bytes is None and not t.ends for t in rest):
            return [None] * len(tokens)  # texts that do not spell the answer: nothing is known
    return _concatenated(tokens, start, root.data)


def distribution_from_logprobs(
    tokens: Sequence[TokenLogprob],
    space: Sequence[str],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    text: str | None = None,
    finish_reason: str | None = None,
) -> LabelDistribution | None:
    """The distribution over ``space`` that the visible token paths give (module docstring).

    ``tokens`` come from :func:`parse_logprobs`; ``space`` from
    :func:`yoxla.score.calibration.distribution.answer_space`. ``text`` is the answer the server
    returned (reasoning removed): it gives the bytes of generated tokens the server did not
    show. ``finish_reason`` ``"stop"`` says the answer ended after the last generated token.
    Returns None when nothing can be derived (no tokens, an unfinished reasoning block, or no
    mass on any label).
    """
    if not 0.0 <= tolerance < 1.0:
        raise ValueError(f"tolerance must lie in [0, 1), got {tolerance!r}")
    if not space:
        return None
    start = _root(tokens)
    if start is None:
        return None
    root, after_think = start
    path = _generated_path(tokens, root, after_think, text)
    stopped = finish_reason == "stop" and len(tokens) - (root.next_position or 0) < MAX_ANSWER_TOKENS
    keys = label_keys(space)
    memo: dict[tuple[bytes, bool], PathClass] = {}

    def classify(node: _Node) -> PathClass:
        key = (node.data, node.ends)
        if key not in memo:
            c = classify_text(*_decode(node.data), keys)
            if node.ends:  # the answer stops here: it is a label or nothing
                c = PathClass(c.complete, frozenset([c.complete] if c.complete else []), frozenset(), False)
            memo[key] = c
        return memo[key]

    found: dict[str, float] = defaultdict(float)
    doubt: dict[str, float] = defaultdict(float)  # visible mass that cannot be split
    hidden: dict[str, float] = defaultdict(float)  # bound on mass below the top-k cut-off
    assumed: set[str] = set()
    unlisted = 0.0

    def unsure(mass: float, labels: frozenset[str] | set[str]) -> None:
        for label in labels:
            doubt[label] += mass

    def leads_to(kind: str | None, c: PathClass) -> tuple[set[str], set[str]]:
        """(labels an unshown token may go on to, those it reaches only by way of an unshown
        wrapper, white space or a special token: counted like the unlisted remainder)."""
        if kind == UNKNOWN_ANY:  # the end, a byte, or a token without text and then anything
            could = set(c.soft) | ({c.complete} if c.complete is not None else set())
            return could, set(c.compat) - could
        could = set(c.soft) - {c.complete}
        return could, (set(c.compat) - could - {c.complete}) if c.open_start else set()

    def cut_off(kids: list[_Kid]) -> tuple[float, float]:
        """(the unlisted remainder at a position, a bound on one unlisted token's mass)."""
        rest = max(0.0, 1.0 - sum(k.p for k in kids))
        if any(k.unknown == UNKNOWN_ANY for k in kids):
            return rest, rest  # a merged entry: the listed order bounds nothing
        return rest, min((k.p for k in kids), default=1.0)

    stack = [root]
    while stack:
        node = stack.pop()
        c = classify(node)
        complete, compat = c.complete, c.compat
        if not compat:
            continue  # this path left the answer space
        mass = math.exp(node.logp)
        kids = _children(node, tokens, path)
        if node.blind:  # the generated path through tokens whose bytes are not fixed yet
            rest, least = cut_off(kids or [])
            unlisted += mass * rest
            for label in compat:
                hidden[label] += mass * min(rest, least)
            for kid in kids or []:
                if kid.node is not None and kid.node.generated:
                    stack.append(kid.node)
                else:  # a branch off a prefix that is not known: any label it was on the way to
                    unsure(mass * kid.p, compat)
            continue
        if complete is not None:
            longer = compat - {complete}
            if not longer:
                found[complete] += mass
            elif kids is None:  # "1" or "10"–"19"? the next position is not visible
                unsure(mass, compat)
            else:
                going_on = 0.0
                for kid in kids:
                    if kid.node is None:
                        could, loose = leads_to(kid.unknown, c)
                        if could & longer:  # the end (this label) or on to a longer one: cannot split
                            going_on += kid.p
                            unsure(mass * kid.p, (could & longer) | {complete})
                        for label in loose & longer:
                            hidden[label] += mass * kid.p
                    elif classify(kid.node).compat & longer:
                        going_on += kid.p
                        stack.append(kid.node)
                found[complete] += mass * max(0.0, 1.0 - going_on)
                rest, least = cut_off(kids)
                for label in longer:
                    hidden[label] += mass * min(rest, least)
            continue
        if node.ends:
            continue  # the answer ended half-way through a label: outside the space
        if kids is None:
            if len(compat) == 1 and not (node.generated and stopped):
                (label,) = compat
                found[label] += mass
                assumed.add(label)
            else:  # several labels, or the answer is known to have stopped here: cannot tell
                unsure(mass, compat)
            continue
        rest, least = cut_off(kids)
        unlisted += mass * rest
        for label in compat:
            hidden[label] += mass * min(rest, least)
        for kid in kids:
            if kid.node is not None:
                stack.append(kid.node)
                continue
            could, loose = leads_to(kid.unknown, c)
            unsure(mass * kid.p, could)
            if loose:
                unlisted += mass * kid.p
                for label in loose:
                    hidden[label] += mass * kid.p

    total = math.fsum(found.values())
    if not total > 0.0:
        return None
    negligible = tolerance * total
    missing: dict[str, float] = {}
    for label in space:
        if doubt[label] > negligible or (found[label] == 0.0 and hidden[label] > negligible):
            missing[label] = min(1.0, found[label] + doubt[label] + hidden[label])
        else:
            unlisted += doubt[label]
    masses = {label: found[label] for label in space if label not in missing}
    return LabelDistribution.from_masses(
        space,
        masses,
        missing=missing,
        unlisted=min(1.0, unlisted),
        assumed=[label for label in space if label in assumed and label not in missing],
        method="token_logprobs",
    )
