"""A server's Retry-After is capped, and a server that keeps refusing stops the run in one line, answers kept."""

from __future__ import annotations

import threading
import time

import pytest
from runner_helpers import one_error_line

from yoxla.providers.transport import (
    Aborted,
    AdaptiveLimiter,
    ProviderRefusing,
    RetryPolicy,
    TransientError,
    call_with_retries,
)
from yoxla.testing.fakeserver import FakeServer, Reply

A_DAY = 86400.0
STALL = 60.0  # generous: a stalled run would wait a day


def test_one_retry_after_of_a_day_does_not_stall_the_pool(runner, env_key, answers, examples) -> None:
    first = next(k for t, _, k in examples if t == "nli_v1")

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if key == first and attempt == 1:
            return Reply(status=429, retry_after=A_DAY)
        return Reply(content=answers[key])

    with FakeServer(responder=responder) as srv:
        t0 = time.monotonic()
        rc, _, err = runner.api(srv, "day", "--task", "nli_v1", "--workers", "4", "--max-retry-after", "0.2")
        assert rc == 0, err
        assert time.monotonic() - t0 < STALL
        assert srv.statuses[429] == 1
    assert not [r for r in runner.predictions("day") if r["outcome"] == "generation_error"]
    assert runner.json("day", "run.json")["settings"]["transport"]["max_retry_after"] == 0.2


def test_server_that_keeps_refusing_stops_the_run_and_resume_continues(
    runner, env_key, answers, examples
) -> None:
    keys = [k for t, _, k in examples if t in ("nli_v1", "sts_v1")]
    answered = set(keys[:5])
    refusing = {"on": True}

    def responder(key: str, attempt: int, body: dict) -> Reply:
        if refusing["on"] and key not in answered:
            return Reply(status=429, retry_after=A_DAY)
        return Reply(content=answers[key])

    tasks = ("--task", "nli_v1", "--task", "sts_v1")
    with FakeServer(responder=responder) as srv:
        t0 = time.monotonic()
        rc, _, err = runner.api(
            srv, "refused", *tasks, "--workers", "4", "--max-retry-after", "0.1", "--patience", "1",
            "--max-retries", "1000",
        )  # fmt: skip
        assert time.monotonic() - t0 < STALL
        one_error_line(rc, err, "keeps refusing", "--patience 1", "--run-id refused", "--resume")
        on_disk = runner.predictions("refused")
        assert len(on_disk) == 5 and all(r["outcome"] != "generation_error" for r in on_disk)
        info = runner.json("refused", "run.json")
        assert info["status"] == "interrupted" and not (runner.results / "partial").exists()

        refusing["on"] = False
        before = dict(srv.counts)
        rc, _, err = runner("run", "--run-id", "refused", "--resume")
        assert rc == 0, err
        assert all(srv.counts[k] == before[k] for k in keys[:5])  # answered ones are not asked again
    assert [r["id"] for r in runner.predictions("refused")[:5]] == [r["id"] for r in on_disk]
    assert len(runner.predictions("refused")) == len(keys)


def test_retry_after_is_capped() -> None:
    policy = RetryPolicy(backoff_base=0.0, max_retry_after=2.0)
    assert policy.cap(A_DAY) == 2.0 and policy.cap(0.5) == 0.5 and policy.cap(None) is None
    assert policy.backoff(1, retry_after=A_DAY) == 2.0
    limiter = AdaptiveLimiter(1)
    calls = {"n": 0}

    def throttled_once() -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise TransientError("HTTP 429", throttled=True, retry_after=A_DAY)
        return "ok"

    t0 = time.monotonic()
    out = call_with_retries(throttled_once, limiter, RetryPolicy(max_retries=3, max_retry_after=0.05))
    assert out.value == "ok" and time.monotonic() - t0 < STALL


def test_patience_counts_refusals_since_the_last_answer() -> None:
    limiter = AdaptiveLimiter(2, patience=0.2)
    epoch, _ = limiter.acquire()
    limiter.release(epoch, throttled=True, retry_after=0.05)
    epoch, _ = limiter.acquire()  # within patience: goes on after the pause
    limiter.release(epoch, ok=True)  # an answer: the clock starts again
    assert limiter.refusing_since is None
    epoch, _ = limiter.acquire()
    limiter.release(epoch, throttled=True, retry_after=A_DAY)
    t0 = time.monotonic()
    with pytest.raises(ProviderRefusing, match="keeps refusing"):
        limiter.acquire()
    assert time.monotonic() - t0 < STALL


def test_closing_the_limiter_wakes_waiting_workers() -> None:
    limiter = AdaptiveLimiter(1)
    epoch, _ = limiter.acquire()
    limiter.release(epoch, throttled=True, retry_after=A_DAY)
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            limiter.acquire()
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=wait)
    worker.start()
    limiter.close()
    worker.join(timeout=STALL)
    assert not worker.is_alive() and isinstance(errors[0], Aborted)
    with pytest.raises(Aborted):
        limiter.sleep(A_DAY)
