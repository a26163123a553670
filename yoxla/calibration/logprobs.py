"""A distribution over the answer space from OpenAI-style token logprobs.

Input: the generated answer's tokens, each with its logprob and ``top_logprobs`` (the k most
likely tokens at that position, one of which is usually the generated one), exactly as an
OpenAI-compatible server returns them in ``choices[0].logprobs.content``. The provider's
tokenizer is unknown here: everything is matched on the returned token *text* (on their
``bytes`` when present, so a letter split across two tokens is put back together).

What the response shows. Position 1's alternatives are all conditioned on the prompt, so
every first token is visible. Position *i* > 1 is conditioned on the *generated* tokens
1…i−1, so a later position is visible only along the generated continuation. That gives a
tree of visible token paths: the generated path, and one step off it at every position.

How labels are matched. A path spells a label when its text, read the way the strict parser
reads an answer (surrounding white space and symmetric wrappers such as ``**`` or backticks
removed, Azerbaijani case rules, ASCII case rules for ASCII labels, no letter folding),
equals the label. A path is still *on the way* to a label when its text is a prefix of the
label in that sense. A label's raw mass is the summed probability of the visible paths
that spell it, with these rules:

* a path that has spelled a label ends there: what follows (white space, a closing
  wrapper, the end of the answer, or extra text the parser would reject) is not visible in
  general and is not subtracted, except for
* a label that another label extends (``1`` and ``10``–``19``): its mass is split only
  where the next position is visible (the path went through it): the visible continuations
  into the longer labels are taken off, and the rest, including the unlisted remainder
  where the end of the answer normally hides, is the shorter label's. Where the next
  position is not visible, the labels cannot be told apart: all of them are *missing*.
* a path that stops on the way (its next position not visible) counts for a label only
  when it is the *only* label that path can still become (``contr`` → ``contradiction``);
  that label is listed in ``assumed``. When several labels share the prefix (``ne`` →
  ``neutral`` / ``neytral``; ``card_`` → many intents), they are *missing*.
* the mass below the top-k cut-off (the unlisted remainder at a visible position) is not
  attributed; its total is reported as ``unlisted``. A label none of whose paths is visible
  is recovered as 0 when that hidden mass is negligible (at most ``tolerance`` × the label
  mass found), else it is missing.

Missing labels carry an upper bound on their raw mass. Ambiguous mass below the tolerance is
treated like the unlisted remainder (it joins ``unlisted``) instead of making a label
missing. When no label gets any mass, or there is no answer, nothing is derived: ``None``.
"""

from __future__ import annotations

import codecs
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from yoxla.calibration.distribution import LabelDistribution
from yoxla.text import az_lower, az_upper, collapse_ws, nfc

# Token texts that mean "the answer ends here" when a server lists them (OpenAI never does;
# some vLLM and llama.cpp versions do). An empty token with no bytes counts as well.
END_MARKERS = frozenset(
    {
        "<|im_end|>",
        "<|eot_id|>",
        "<|end|>",
        "<|endoftext|>",
        "<|end_of_text|>",
        "<|return|>",
        "</s>",
        "<eos>",
        "<end_of_turn>",
    }
)
# The parser's symmetric wrappers, in its order (yoxla.parsing._WRAPPERS).
WRAPPERS = (("```", "```"), ("**", "**"), ("`", "`"), ('"', '"'), ("'", "'"), ("«", "»"), ("“", "”"))
THINK_CLOSE = b"</think>"
POSITIVE_SLACK = 1e-6  # a logprob a hair above 0 is rounding; more than this is refused
DEFAULT_TOLERANCE = 1e-3


class LogprobsError(ValueError):
    """The logprobs a provider returned are malformed (NaN, positive, wrong shape)."""


@dataclass(frozen=True)
class Alternative:
    """One entry of ``top_logprobs``."""

    token: str
    logprob: float
    token_bytes: bytes | None = None  # the response's "bytes"

    @property
    def data(self) -> bytes:
        """The token's bytes: as returned, else its text in UTF-8."""
        return self.token_bytes if self.token_bytes is not None else self.token.encode("utf-8")

    @property
    def ends(self) -> bool:
        """Whether this token is an end-of-answer marker rather than text."""
        return self.token in END_MARKERS or (self.token == "" and not self.token_bytes)


@dataclass(frozen=True)
class TokenLogprob(Alternative):
    """One generated token with the alternatives the provider listed at its position."""

    top: tuple[Alternative, ...] = ()


def _logprob(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LogprobsError(f"{where}: logprob must be a number, got {type(value).__name__}")
    lp = float(value)
    if math.isnan(lp) or lp == math.inf:
        raise LogprobsError(f"{where}: logprob is {lp}")
    if lp > POSITIVE_SLACK:
        raise LogprobsError(f"{where}: logprob {lp} is above 0")
    return min(lp, 0.0)


def _alternative(entry: Any, where: str, cls: type[Alternative] = Alternative, **extra: Any) -> Any:
    if hasattr(entry, "model_dump"):
        entry = entry.model_dump()
    if not isinstance(entry, Mapping):
        raise LogprobsError(f"{where}: expected an object, got {type(entry).__name__}")
    token = entry.get("token")
    if not isinstance(token, str):
        raise LogprobsError(f"{where}: 'token' must be text")
    raw = entry.get("bytes")
    if raw is not None:
        if not isinstance(raw, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in raw
        ):
            raise LogprobsError(f"{where}: 'bytes' must be a list of byte values")
        raw = bytes(raw)
    return cls(token=token, logprob=_logprob(entry.get("logprob"), where), token_bytes=raw, **extra)


def parse_logprobs(logprobs: Any) -> list[TokenLogprob]:
    """Typed tokens from a response's logprobs: ``choice.logprobs`` (with ``content``), its
    ``content`` list, or an ``openai`` client object of either. None or empty gives ``[]``.

    Raises :class:`LogprobsError` on malformed data; the caller stores no distribution then.
    """
    if logprobs is None:
        return []
    if hasattr(logprobs, "model_dump"):
        logprobs = logprobs.model_dump()
    if isinstance(logprobs, Mapping):
        logprobs = logprobs.get("content") or []
    if not isinstance(logprobs, Sequence) or isinstance(logprobs, str | bytes):
        raise LogprobsError("logprobs content must be a list of tokens")
    out: list[TokenLogprob] = []
    for i, entry in enumerate(logprobs):
        if hasattr(entry, "model_dump"):
            entry = entry.model_dump()
        if not isinstance(entry, Mapping):
            raise LogprobsError(f"token {i}: expected an object, got {type(entry).__name__}")
        top_raw = entry.get("top_logprobs") or []
        if not isinstance(top_raw, Sequence) or isinstance(top_raw, str | bytes):
            raise LogprobsError(f"token {i}: top_logprobs must be a list")
        top = tuple(_alternative(t, f"token {i}, alternative {j}") for j, t in enumerate(top_raw))
        out.append(_alternative(entry, f"token {i}", TokenLogprob, top=top))
    return out


# Matching text against labels ---------------------------------------------------------------


@dataclass(frozen=True)
class _Keys:
    """The comparison forms of one label, as the strict parser compares it."""

    label: str
    az: str  # NFC, collapsed white space, Azerbaijani lower case
    ascii: str | None  # English lower case, for ASCII labels only


def _label_keys(space: Sequence[str]) -> list[_Keys]:
    return [_Keys(lb, az_lower(collapse_ws(nfc(lb))), lb.lower() if lb.isascii() else None) for lb in space]


def _split_wrappers(text: str) -> tuple[str, str]:
    """(body, closers): leading white space and opening wrappers removed, as the parser would.

    A dangling part of an opener (``*`` of ``**``) leaves an empty body: any label may follow.
    """
    body, closers = text.lstrip(), ""
    stripped = True
    while stripped:
        stripped = False
        for left, right in WRAPPERS:
            if body.startswith(left):
                body, closers = body[len(left) :].lstrip(), closers + right
                stripped = True
                break
    if body and any(left.startswith(body) for left, _ in WRAPPERS):
        return "", closers
    return body, closers


def _norm(body: str) -> str:
    """NFC and collapsed white space, keeping one trailing space (a prefix may end in one)."""
    text = nfc(body)
    core = collapse_ws(text)
    return core + " " if core and text[-1:].isspace() else core


def _classify(text: str, pending: bytes, keys: list[_Keys]) -> tuple[str | None, frozenset[str]]:
    """(the label this text spells or None, the labels it spells or is on the way to)."""
    body, closers = _split_wrappers(text)
    norm = _norm(body)
    done = collapse_ws(nfc(body.rstrip(closers + " \t\r\n\f\v")))  # the answer once closed
    # Each label in the forms the parser compares: Azerbaijani case, and English case for ASCII.
    forms = [(k.label, k.az, az_lower(norm), az_lower(done)) for k in keys]
    forms += [(k.label, k.ascii, norm.lower(), done.lower()) for k in keys if k.ascii is not None]
    compat: set[str] = set()
    complete = None
    for label, key, have, finished in forms:
        if pending:  # a letter split across tokens: a prefix whose next letter starts so
            if len(key) > len(have) and key.startswith(have):
                c = key[len(have)]
                if any(v.encode("utf-8").startswith(pending) for v in {c, c.upper(), az_upper(c)}):
                    compat.add(label)
            continue
        if key.startswith(have):
            compat.add(label)
        if complete is None and finished == key:
            complete = label
            compat.add(label)
    return complete, frozenset(compat)


# The tree of visible paths ---------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    data: bytes  # the answer's bytes along this path
    logp: float  # log probability of the path
    next_position: int | None  # whose alternatives are this node's children; None: not visible
    ends: bool = False


def _children(node: _Node, tokens: Sequence[TokenLogprob]) -> list[tuple[_Node, float]] | None:
    """(child, conditional probability) for every listed alternative; None when not visible."""
    pos = node.next_position
    if pos is None or node.ends:
        return None
    chosen = tokens[pos]
    alts = list(chosen.top)
    match = next(
        (
            i
            for i, a in enumerate(alts)
            if a.data == chosen.data
            and (a.logprob == chosen.logprob or abs(a.logprob - chosen.logprob) <= 1e-4)
        ),
        None,
    )
    if match is None:
        alts.append(chosen)
        match = len(alts) - 1
    nxt = pos + 1 if pos + 1 < len(tokens) else None
    out = []
    for i, a in enumerate(alts):
        child = _Node(
            data=node.data if a.ends else node.data + a.data,
            logp=node.logp + a.logprob,
            next_position=nxt if i == match else None,
            ends=a.ends,
        )
        out.append((child, math.exp(a.logprob)))
    return out


def _decode(data: bytes) -> tuple[str, bytes]:
    """(complete text, trailing bytes of a letter not finished yet)."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = dec.decode(data, final=False)
    return text, dec.getstate()[0]


def _root(tokens: Sequence[TokenLogprob]) -> _Node | None:
    """Where the answer starts: after a closed ``<think>`` block when the content has one."""
    if not tokens:
        return None
    joined = b"".join(t.data for t in tokens)
    close = joined.find(THINK_CLOSE)
    if close < 0:
        if joined.lstrip().startswith(b"<think>"):
            return None  # reasoning never closed: no answer was given
        return _Node(b"", 0.0, 0)
    end, seen = close + len(THINK_CLOSE), 0
    for i, t in enumerate(tokens):
        seen += len(t.data)
        if seen >= end:  # token i finishes the block; what it holds past it is given
            leftover = joined[end:seen]
            nxt = i + 1 if i + 1 < len(tokens) else None
            if nxt is None and not leftover.strip():
                return None
            return _Node(leftover, 0.0, nxt)
    return None  # pragma: no cover - close was found inside the joined bytes


MAX_ANSWER_TOKENS = 64  # tokens kept after the reasoning block: far longer than any label


def _token_bytes(entry: Mapping[str, Any]) -> bytes:
    raw = entry.get("bytes")
    if isinstance(raw, list):
        try:
            return bytes(raw)
        except (TypeError, ValueError):
            pass
    token = entry.get("token")
    return token.encode("utf-8") if isinstance(token, str) else b""


def compact_logprobs(
    content: Sequence[Any], max_answer_tokens: int = MAX_ANSWER_TOKENS
) -> list[dict[str, Any]]:
    """The part of a response's token logprobs that :func:`distribution_from_logprobs` reads.

    Plain dicts (``token``, ``logprob``, ``bytes``, ``top_logprobs``) of: the tokens from the
    one where a closed ``</think>`` block ends its reasoning (earlier tokens are never read),
    and at most ``max_answer_tokens`` after it; without a reasoning block, the first
    ``max_answer_tokens``. The distribution derived from the kept tokens equals the one from
    all of them for every label shorter than that. Stored in the run folder.
    """
    items: list[dict[str, Any]] = []
    for entry in content:
        if hasattr(entry, "model_dump"):
            entry = entry.model_dump()
        if isinstance(entry, Mapping):
            items.append(
                {
                    k: (
                        [dict(a.model_dump() if hasattr(a, "model_dump") else a) for a in v]
                        if k == "top_logprobs" and isinstance(v, list)
                        else v
                    )
                    for k, v in entry.items()
                    if k in ("token", "logprob", "bytes", "top_logprobs")
                }
            )
        else:
            items.append({"token": entry})  # malformed: kept, so parse_logprobs refuses it later
    data = [_token_bytes(t) for t in items]
    joined = b"".join(data)
    close = joined.find(THINK_CLOSE)
    if close < 0:
        return items[:max_answer_tokens]
    end = close + len(THINK_CLOSE)
    seen, first, last = 0, None, len(items) - 1
    for i, d in enumerate(data):
        if first is None and seen + len(d) > close:
            first = i
        seen += len(d)
        if seen >= end:
            last = i
            break
    return items[(first or 0) : last + 1 + max_answer_tokens]


def distribution_from_logprobs(
    tokens: Sequence[TokenLogprob], space: Sequence[str], *, tolerance: float = DEFAULT_TOLERANCE
) -> LabelDistribution | None:
    """The distribution over ``space`` that the visible token paths give (module docstring).

    ``tokens`` come from :func:`parse_logprobs`; ``space`` from
    :func:`yoxla.calibration.distribution.answer_space`. Returns None when nothing can be
    derived (no tokens, an unfinished reasoning block, or no mass on any label).
    """
    if not 0.0 <= tolerance < 1.0:
        raise ValueError(f"tolerance must lie in [0, 1), got {tolerance!r}")
    if not space:
        return None
    root = _root(tokens)
    if root is None:
        return None
    keys = _label_keys(space)
    memo: dict[tuple[bytes, bool], tuple[str | None, frozenset[str]]] = {}

    def classify(node: _Node) -> tuple[str | None, frozenset[str]]:
        key = (node.data, node.ends)
        if key not in memo:
            complete, compat = _classify(*_decode(node.data), keys)
            if node.ends:  # the answer stops here: it is a label or nothing
                compat = frozenset([complete] if complete is not None else [])
            memo[key] = complete, compat
        return memo[key]

    found: dict[str, float] = defaultdict(float)
    doubt: dict[str, float] = defaultdict(float)  # visible mass that cannot be split
    hidden: dict[str, float] = defaultdict(float)  # bound on mass below the top-k cut-off
    assumed: set[str] = set()
    unlisted = 0.0
    stack = [root]
    while stack:
        node = stack.pop()
        complete, compat = classify(node)
        if not compat:
            continue  # this path left the answer space
        mass = math.exp(node.logp)
        kids = _children(node, tokens)
        if complete is not None:
            longer = compat - {complete}
            if not longer:
                found[complete] += mass
            elif kids is None:  # "1" or "10"–"19"? the next position is not visible
                for label in compat:
                    doubt[label] += mass
            else:
                going_on = 0.0
                for child, p in kids:
                    if classify(child)[1] & longer:
                        going_on += p
                        stack.append(child)
                found[complete] += mass * max(0.0, 1.0 - going_on)
                rest = max(0.0, 1.0 - sum(p for _, p in kids))
                least = min((p for _, p in kids), default=1.0)
                for label in longer:
                    hidden[label] += mass * min(rest, least)
            continue
        if node.ends:
            continue  # the answer ended half-way through a label: outside the space
        if kids is None:
            if len(compat) == 1:
                (label,) = compat
                found[label] += mass
                assumed.add(label)
            else:
                for label in compat:
                    doubt[label] += mass
            continue
        rest = max(0.0, 1.0 - sum(p for _, p in kids))
        least = min((p for _, p in kids), default=1.0)
        unlisted += mass * rest
        for label in compat:
            hidden[label] += mass * min(rest, least)
        stack.extend(child for child, _ in kids)

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
