"""Transport policy shared by network providers: what is retried, how long to wait, how many in flight.

Only transport failures are retried (timeouts, connection errors, HTTP 429 and 5xx); an answer,
however bad, is never asked for again. A 429 is a signal about the *pool*: the shared
:class:`AdaptiveLimiter` halves the requests in flight and pauses every worker for the server's
``Retry-After`` (capped at ``max_retry_after``), then grows back by one per success (AIMD); it
consumes an example's own retry budget only when the request went alone. After ``patience``
seconds of nothing but 429s, :class:`ProviderRefusing` stops the run (docs/running.md).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

T = TypeVar("T")

THROTTLE_CAP = 200  # 429s one example may absorb while the pool is still shrinking


def _knob(default: Any, help: str, minimum: float) -> Any:
    return field(default=default, metadata={"help": help, "min": minimum})


@dataclass
class TransportSettings:
    """How requests are sent. Each field is one command-line option (``--max-retry-after``, …).

    ``metadata["help"]`` and ``metadata["min"]`` are the option's help text and lowest
    allowed value; the command line is generated from them, so a knob is declared here only.
    These may change between sessions of one run (``--resume``): they do not change answers.
    """

    workers: int = _knob(1, "requests kept in flight", 1)
    timeout: float = _knob(120.0, "seconds per request before it is retried", 0)
    max_retries: int = _knob(6, "retries of a transport failure per example", 0)
    delay: float = _knob(0.0, "at least S seconds between request starts", 0)
    backoff_base: float = _knob(1.0, "first retry wait in seconds, doubling", 0)
    max_retry_after: float = _knob(120.0, "longest wait a server's Retry-After may impose, in seconds", 0)
    patience: float = _knob(
        900.0, "stop when the server has refused (HTTP 429) for this many seconds with no answer", 0
    )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TransportSettings:
        """The known fields of ``data`` (a run.json ``settings`` mapping, old flat ones included)."""
        kinds: dict[str, Callable[[Any], Any]] = {f.name: type(f.default) for f in fields(cls)}
        return cls(**{k: kinds[k](v) for k, v in data.items() if k in kinds and v is not None})


class TransientError(Exception):
    """A failure worth another attempt: timeout, connection error, 429 or 5xx."""

    def __init__(self, message: str, *, throttled: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.throttled = throttled
        self.retry_after = retry_after


class FatalProviderError(Exception):
    """A failure that no retry and no other example will fix (bad key, unknown model): stop the run."""


class ProviderRefusing(FatalProviderError):
    """The server has answered nothing but 429 for longer than the run's patience."""


class RequestRefused(Exception):
    """The server refused this one request (a 4xx such as 400 or 422): it fails at once, unretried.

    ``status_code`` is the HTTP status, from the reply's status line or its body's ``error.code``.
    """

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


FATAL_STATUS = (401, 403, 404)  # a bad key, no access, no such model or route: no request can succeed


def status_error(
    status: int, message: str, fatal_message: str, retry_after: float | None = None
) -> Exception:
    """What an HTTP error status stands for, wherever the server put it (status line or body).

    429 is a throttle, 408 and 5xx are worth another attempt (:class:`TransientError`);
    401, 403 and 404 stop the run (:class:`FatalProviderError`, with ``fatal_message``); any
    other status refuses this request only (:class:`RequestRefused`).
    """
    if status == 429:
        return TransientError(message, throttled=True, retry_after=retry_after)
    if status >= 500 or status == 408:
        return TransientError(message, retry_after=retry_after)
    if status in FATAL_STATUS:
        return FatalProviderError(fatal_message)
    return RequestRefused(message, status)


MAX_ERROR_CHARS = 300  # of a server's error message kept in a stored error


def body_error(body_field: object) -> tuple[int | None, str | None]:
    """(HTTP status, message) of the ``error`` member of a reply body, as OpenRouter sends it
    inside an HTTP 200 (``{"choices": [], "error": {"code": 404, "message": "No such model"}}``).

    The code counts only when it is an HTTP status (an integer 100–599, or its digits as a
    string); the message only when it is a string, cut to :data:`MAX_ERROR_CHARS`. A bare
    string ``error`` is its message.
    """
    if isinstance(body_field, str):
        return None, body_field[:MAX_ERROR_CHARS] or None
    get = getattr(body_field, "get", None)
    if get is None:
        return None, None
    code, message = get("code"), get("message")
    status: int | None = None
    if isinstance(code, str) and code.isascii() and code.isdigit() and len(code) == 3:
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
        status = code
    text = message[:MAX_ERROR_CHARS] if isinstance(message, str) and message else None
    return status, text


class Aborted(Exception):
    """The limiter was closed while a worker waited (the run is stopping)."""


def parse_retry_after(headers: object) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    ms = get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class AdaptiveLimiter:
    """AIMD limit on requests in flight, shared by all workers of one run.

    ``acquire`` blocks while the pool is paused (after a 429), while ``limit`` requests are
    already in flight, or until ``delay`` seconds have passed since the previous start.
    It returns the current *epoch*; a 429 halves the limit only once per epoch, so a burst
    of 429s answered to requests sent together counts as one congestion signal.
    """

    def __init__(self, max_inflight: int = 1, delay: float = 0.0, patience: float | None = None) -> None:
        self.max_inflight = max(1, int(max_inflight))
        self.limit = float(self.max_inflight)
        self.delay = max(0.0, float(delay))
        self.patience = patience
        self.inflight = 0
        self.epoch = 0
        self.paused_until = 0.0
        self.throttles = 0
        self.refusing_since: float | None = None  # first 429 since the last answer
        self.closed = False
        self._next_start = 0.0
        self._cond = threading.Condition()

    @classmethod
    def for_settings(cls, t: TransportSettings) -> AdaptiveLimiter:
        return cls(t.workers, t.delay, t.patience)

    def close(self) -> None:
        """Wake every waiting worker with :class:`Aborted`: the run is stopping."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less when the limiter is closed (then raise :class:`Aborted`)."""
        end = time.monotonic() + seconds
        with self._cond:
            while not self.closed and (left := end - time.monotonic()) > 0:
                self._cond.wait(left)
            if self.closed:
                raise Aborted("the run is stopping")

    def _refusal_deadline(self) -> float | None:
        if self.patience is None or self.refusing_since is None:
            return None
        return self.refusing_since + self.patience

    def resize(self, max_inflight: int) -> None:
        with self._cond:
            self.max_inflight = max(1, int(max_inflight))
            self.limit = float(self.max_inflight)
            self._cond.notify_all()

    @property
    def at_floor(self) -> bool:
        return int(self.limit) <= 1

    def acquire(self) -> tuple[int, bool]:
        """Wait for a slot; returns (epoch, whether this request goes alone: pool at one, none in flight)."""
        with self._cond:
            while True:
                if self.closed:
                    raise Aborted("the run is stopping")
                now = time.monotonic()
                deadline = self._refusal_deadline()
                if deadline is not None and now >= deadline:
                    raise ProviderRefusing(
                        f"the server keeps refusing: nothing but HTTP 429 for {self.patience:g} s "
                        f"({self.throttles} refusals; --patience {self.patience:g})"
                    )
                if now < self.paused_until:
                    until = self.paused_until if deadline is None else min(self.paused_until, deadline)
                    self._cond.wait(max(0.0, until - now))
                    continue
                if self.inflight >= int(self.limit):
                    self._cond.wait(0.5)
                    continue
                if self.delay and now < self._next_start:
                    self._cond.wait(self._next_start - now)
                    continue
                alone = self.at_floor and self.inflight == 0
                self.inflight += 1
                self._next_start = max(now, self._next_start) + self.delay
                return self.epoch, alone

    def release(
        self, epoch: int, *, ok: bool = True, throttled: bool = False, retry_after: float | None = None
    ) -> None:
        with self._cond:
            self.inflight = max(0, self.inflight - 1)
            if throttled:
                self.throttles += 1
                if self.refusing_since is None:
                    self.refusing_since = time.monotonic()
                if epoch == self.epoch:
                    self.limit = max(1.0, self.limit / 2.0)
                    self.epoch += 1
                wait = retry_after if retry_after is not None else 1.0
                self.paused_until = max(self.paused_until, time.monotonic() + wait)
            elif ok:
                self.limit = min(float(self.max_inflight), self.limit + 1.0)
                self.refusing_since = None
            self._cond.notify_all()


@dataclass
class RetryPolicy:
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_retry_after: float = 120.0

    @classmethod
    def for_settings(cls, t: TransportSettings, backoff_base: float | None = None) -> RetryPolicy:
        base = t.backoff_base if backoff_base is None else backoff_base
        return cls(max_retries=t.max_retries, backoff_base=base, max_retry_after=t.max_retry_after)

    def cap(self, retry_after: float | None) -> float | None:
        """A server's Retry-After, at most ``max_retry_after`` seconds."""
        return None if retry_after is None else min(retry_after, self.max_retry_after)

    def backoff(self, failures: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter in [½, 1] of the step; Retry-After wins when longer."""
        step = min(self.backoff_max, self.backoff_base * (2 ** max(0, failures - 1)))
        wait = step * random.uniform(0.5, 1.0)
        retry_after = self.cap(retry_after)
        return max(wait, retry_after) if retry_after is not None else wait


@dataclass
class Outcome(Generic[T]):
    value: T | None
    attempts: int
    error: str | None


def call_with_retries(
    fn: Callable[[], T],
    limiter: AdaptiveLimiter,
    policy: RetryPolicy,
    sleep: Callable[[float], None] | None = None,
) -> Outcome[T]:
    """Run ``fn`` under the limiter; retry transient failures; never retry anything else.

    ``fn`` raises :class:`TransientError` for failures worth retrying. Any other exception
    propagates (the caller decides whether it is fatal or one example's error), and so do
    :class:`ProviderRefusing` (patience spent) and :class:`Aborted` (the run is stopping).
    Backoff waits use ``limiter.sleep`` unless ``sleep`` is given, so closing the limiter
    ends them at once.
    """
    sleep = sleep or limiter.sleep
    attempts = failures = throttles = 0
    while True:
        epoch, alone = limiter.acquire()
        attempts += 1
        try:
            value = fn()
        except TransientError as exc:
            retry_after = policy.cap(exc.retry_after)
            limiter.release(epoch, ok=False, throttled=exc.throttled, retry_after=retry_after)
            if exc.throttled and not alone and throttles < THROTTLE_CAP:
                throttles += 1  # the pool shrinks and pauses; this example's budget is kept
                continue
            failures += 1
            if failures > policy.max_retries:
                return Outcome(None, attempts, f"{exc} (after {attempts} attempts)")
            if exc.throttled:
                continue  # the limiter already pauses the pool for Retry-After
            sleep(policy.backoff(failures, retry_after))
            continue
        except BaseException:
            limiter.release(epoch, ok=False)
            raise
        limiter.release(epoch, ok=True)
        return Outcome(value, attempts, None)
