"""Transport policy shared by network providers: what is retried, how long to wait, how many in flight.

Only transport failures are retried (timeouts, connection errors, HTTP 429 and 5xx); an
answer, however bad, is never asked for again. A 429 is treated as a signal about the
*pool*, not about one example: the shared :class:`AdaptiveLimiter` halves the number of
requests allowed in flight and pauses every worker for the server's ``Retry-After``, then
grows back by one request per success (AIMD). A 429 therefore consumes an example's own
retry budget only when the request went alone (the pool down to one, nothing else in
flight), so a storm at 32 workers ends like a run at 1 worker: same answers, no
generation errors.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

THROTTLE_CAP = 200  # 429s one example may absorb while the pool is still shrinking


class TransientError(Exception):
    """A failure worth another attempt: timeout, connection error, 429 or 5xx."""

    def __init__(self, message: str, *, throttled: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.throttled = throttled
        self.retry_after = retry_after


class FatalProviderError(Exception):
    """A failure that no retry and no other example will fix (bad key, unknown model): stop the run."""


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

    def __init__(self, max_inflight: int = 1, delay: float = 0.0) -> None:
        self.max_inflight = max(1, int(max_inflight))
        self.limit = float(self.max_inflight)
        self.delay = max(0.0, float(delay))
        self.inflight = 0
        self.epoch = 0
        self.paused_until = 0.0
        self.throttles = 0
        self._next_start = 0.0
        self._cond = threading.Condition()

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
                now = time.monotonic()
                if now < self.paused_until:
                    self._cond.wait(self.paused_until - now)
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
                if epoch == self.epoch:
                    self.limit = max(1.0, self.limit / 2.0)
                    self.epoch += 1
                wait = retry_after if retry_after is not None else 1.0
                self.paused_until = max(self.paused_until, time.monotonic() + wait)
            elif ok:
                self.limit = min(float(self.max_inflight), self.limit + 1.0)
            self._cond.notify_all()


@dataclass
class RetryPolicy:
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0

    def backoff(self, failures: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter in [½, 1] of the step; Retry-After wins when longer."""
        step = min(self.backoff_max, self.backoff_base * (2 ** max(0, failures - 1)))
        wait = step * random.uniform(0.5, 1.0)
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
    sleep: Callable[[float], None] = time.sleep,
) -> Outcome[T]:
    """Run ``fn`` under the limiter; retry transient failures; never retry anything else.

    ``fn`` raises :class:`TransientError` for failures worth retrying. Any other exception
    propagates (the caller decides whether it is fatal or one example's error).
    """
    attempts = failures = throttles = 0
    while True:
        epoch, alone = limiter.acquire()
        attempts += 1
        try:
            value = fn()
        except TransientError as exc:
            limiter.release(epoch, ok=False, throttled=exc.throttled, retry_after=exc.retry_after)
            if exc.throttled and not alone and throttles < THROTTLE_CAP:
                throttles += 1  # the pool shrinks and pauses; this example's budget is kept
                continue
            failures += 1
            if failures > policy.max_retries:
                return Outcome(None, attempts, f"{exc} (after {attempts} attempts)")
            if exc.throttled:
                continue  # the limiter already pauses the pool for Retry-After
            sleep(policy.backoff(failures, exc.retry_after))
            continue
        except BaseException:
            limiter.release(epoch, ok=False)
            raise
        limiter.release(epoch, ok=True)
        return Outcome(value, attempts, None)
