"""A reply's token log-probabilities: read into typed tokens, and compacted for storage.

An OpenAI-compatible server returns, in ``choices[0].logprobs.content``, the generated tokens,
each with its ``logprob``, its ``bytes`` (when the server shows them) and ``top_logprobs`` (the
k most likely tokens at that position). :func:`parse_logprobs` turns that (a dict or an
``openai`` client object) into :class:`TokenLogprob` records, refusing malformed values with
:class:`LogprobsError`; :func:`compact_logprobs` keeps the part the distribution reader
(:mod:`yoxla.score.calibration.logprobs`) reads, bounded, for the run folder.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Token texts that mean "the answer ends here" when a server lists them (OpenAI never does;
# vLLM lists its end token with its text and bytes, e.g. ``</s>``). Nothing else ends an
# answer: an empty token is a token whose bytes the server did not show (see UNKNOWN_*).
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
# Kinds of a token whose bytes are not shown (the empty token):
# * with ``bytes: []`` (vLLM): an incomplete UTF-8 sequence, at least one byte of a letter
#   that needs several (a lone byte of İ, ə, Ə); never an end of the answer;
# * with ``bytes: null`` (llama-cpp-python, which keys alternatives by their text, so that
#   byte tokens and special tokens merge into one ``""`` entry): anything, the end included.
UNKNOWN_PARTIAL = "partial"
UNKNOWN_ANY = "any"
THINK_CLOSE = b"</think>"
POSITIVE_SLACK = 1e-6  # a logprob a hair above 0 is rounding; more than this is refused


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
        """Whether the server marks this token as the end of the answer (never an empty one)."""
        return self.token in END_MARKERS

    @property
    def unknown(self) -> str | None:
        """None when the token's bytes are shown; else what it may stand for (UNKNOWN_*)."""
        if self.token or self.token_bytes:
            return None
        return UNKNOWN_PARTIAL if self.token_bytes is not None else UNKNOWN_ANY


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


MAX_ANSWER_TOKENS = 64  # tokens kept after the reasoning block: far longer than any label
MAX_TOKEN_CHARS = 1_000  # a token's text, or its list of bytes, longer than this is refused


def _get(entry: Any, name: str) -> Any:
    if isinstance(entry, Mapping):
        return entry.get(name)
    return getattr(entry, name, None)


def _token_bytes(entry: Any) -> bytes:
    raw = _get(entry, "bytes")
    if isinstance(raw, list) and len(raw) <= MAX_TOKEN_CHARS:
        try:
            return bytes(raw)
        except (TypeError, ValueError):
            pass
    token = _get(entry, "token")
    return token.encode("utf-8") if isinstance(token, str) else b""


def _kept(entry: Any, i: int, j: int | None = None) -> dict[str, Any]:
    """One token (``i``) or alternative (``i``, ``j``) as stored: its three fields, bounded, its
    logprob finite."""
    if type(entry) is dict or isinstance(entry, Mapping):
        token, lp = entry.get("token"), entry.get("logprob")
        out = {"token": token, "logprob": lp} if "logprob" in entry else {"token": token}
        if "bytes" in entry:
            out["bytes"] = raw = entry["bytes"]
        else:
            raw = None
    elif hasattr(entry, "model_dump"):  # an openai client object: its fields, not its whole dump
        token, lp, raw = entry.token, entry.logprob, entry.bytes
        out = {"token": token, "logprob": lp, "bytes": raw}
    else:
        return {"token": entry}  # malformed: kept, so parse_logprobs refuses it later
    if lp.__class__ is float and not -math.inf < lp < math.inf:
        raise LogprobsError(f"{_where(i, j)}: logprob is {lp}")
    if (token.__class__ is str and len(token) > MAX_TOKEN_CHARS) or (
        raw.__class__ is list and len(raw) > MAX_TOKEN_CHARS
    ):
        raise LogprobsError(f"{_where(i, j)}: a token longer than {MAX_TOKEN_CHARS}")
    return out


def _where(i: int, j: int | None) -> str:
    return f"token {i}" if j is None else f"token {i}, alternative {j}"


def _logprob_key(entry: Any, i: int, j: int) -> float:
    """The entry's logprob to rank it by (a malformed one ranks last); a non-finite one is refused."""
    lp = _get(entry, "logprob")
    if isinstance(lp, float) and not math.isfinite(lp):
        raise LogprobsError(f"{_where(i, j)}: logprob is {lp}")
    return float(lp) if isinstance(lp, int | float) and not isinstance(lp, bool) else -math.inf


def compact_logprobs(
    content: Sequence[Any], max_answer_tokens: int = MAX_ANSWER_TOKENS, top_k: int | None = None
) -> list[dict[str, Any]]:
    """The part of a response's token logprobs that :func:`distribution_from_logprobs` reads, as
    plain dicts for the run folder: the tokens from the one where a closed ``</think>`` tag
    begins (else the first) to ``max_answer_tokens`` past it, which give the same distribution
    for every shorter label; at most ``top_k`` alternatives per position, the most probable.

    Raises :class:`LogprobsError` when a kept logprob is not finite (NaN, Infinity and
    -Infinity cannot be stored) or a token is longer than :data:`MAX_TOKEN_CHARS`.
    """
    entries = list(content)
    data = [_token_bytes(t) for t in entries]
    joined = b"".join(data)
    close = joined.find(THINK_CLOSE)
    lo, hi = 0, max_answer_tokens
    if close >= 0:
        end = close + len(THINK_CLOSE)
        seen, first, last = 0, None, len(entries) - 1
        for i, d in enumerate(data):
            if first is None and seen + len(d) > close:
                first = i
            seen += len(d)
            if seen >= end:
                last = i
                break
        lo, hi = first or 0, last + 1 + max_answer_tokens
    items: list[dict[str, Any]] = []
    for i, entry in enumerate(entries[lo:hi], start=lo):
        item = _kept(entry, i)
        top = _get(entry, "top_logprobs")
        if isinstance(top, list):
            if top_k is not None and len(top) > top_k:  # every one is checked, the top ones kept
                keys = [_logprob_key(alt, i, j) for j, alt in enumerate(top)]
                keep = sorted(heapq.nlargest(top_k, range(len(top)), key=keys.__getitem__))
                top = [top[j] for j in keep]
            item["top_logprobs"] = [_kept(alt, i, j) for j, alt in enumerate(top)]
        elif top is not None:
            item["top_logprobs"] = top  # malformed: parse_logprobs refuses it later
        items.append(item)
    return items
