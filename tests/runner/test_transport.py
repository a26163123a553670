"""Retry policy, adaptive limiter, registry and secrets: small units of the runner's transport."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from yoxla.providers.base import Completion, Provider, ProviderError, Request
from yoxla.providers.registry import load_registry, public_url, redact
from yoxla.providers.transport import (
    AdaptiveLimiter,
    RetryPolicy,
    TransientError,
    TransportSettings,
    call_with_retries,
    parse_retry_after,
)
from yoxla.run.executor import execute
from yoxla.run.settings import RunSettings


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


def test_limiter_halves_once_per_epoch_and_grows_back() -> None:
    lim = AdaptiveLimiter(32)
    a, b = lim.acquire(), lim.acquire()
    lim.release(a[0], throttled=True, retry_after=0.0)
    lim.release(b[0], throttled=True, retry_after=0.0)  # same burst: no second halving
    assert int(lim.limit) == 16
    e, _ = lim.acquire()
    lim.release(e, ok=True)
    assert int(lim.limit) == 17
    for _ in range(40):
        lim.release(lim.acquire()[0], ok=True)
    assert int(lim.limit) == 32


def test_limiter_caps_in_flight_and_pauses() -> None:
    lim = AdaptiveLimiter(2)
    peak, current, lock = 0, 0, threading.Lock()

    def worker() -> None:
        nonlocal peak, current
        epoch, _ = lim.acquire()
        with lock:
            current += 1
            peak = max(peak, current)
        time.sleep(0.01)
        with lock:
            current -= 1
        lim.release(epoch)

    threads = [threading.Thread(target=worker) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 2
    e, _ = lim.acquire()
    lim.release(e, throttled=True, retry_after=0.2)
    t0 = time.monotonic()
    lim.release(lim.acquire()[0])
    assert time.monotonic() - t0 >= 0.15


def test_retries_only_transient_failures() -> None:
    policy = RetryPolicy(max_retries=2, backoff_base=0.0)
    calls = {"n": 0}

    def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise TransientError("HTTP 500")
        return "ok"

    out = call_with_retries(flaky, AdaptiveLimiter(1), policy, sleep=lambda s: None)
    assert (out.value, out.attempts, out.error) == ("ok", 3, None)

    def dead() -> str:
        raise TransientError("HTTP 503")

    out = call_with_retries(dead, AdaptiveLimiter(1), policy, sleep=lambda s: None)
    assert out.value is None and out.attempts == 3 and "HTTP 503" in (out.error or "")

    def broken() -> str:
        raise ValueError("not transport")

    with pytest.raises(ValueError):
        call_with_retries(broken, AdaptiveLimiter(1), policy)


def test_throttles_do_not_burn_retries_while_the_pool_can_shrink() -> None:
    lim = AdaptiveLimiter(8)
    calls = {"n": 0}

    def throttled_then_ok() -> str:
        calls["n"] += 1
        if calls["n"] <= 3:  # 8 → 4 → 2 → 1: three 429s absorbed by the pool
            raise TransientError("HTTP 429", throttled=True, retry_after=0.0)
        return "ok"

    out = call_with_retries(throttled_then_ok, lim, RetryPolicy(max_retries=0), sleep=lambda s: None)
    assert out.value == "ok" and out.attempts == 4


def test_backoff_grows_and_honours_retry_after() -> None:
    p = RetryPolicy(backoff_base=1.0, backoff_max=8.0)
    assert 0.5 <= p.backoff(1) <= 1.0 and 2.0 <= p.backoff(3) <= 4.0 and p.backoff(10) <= 8.0
    assert p.backoff(1, retry_after=5.0) == 5.0


def test_registry_and_secrets(tmp_path) -> None:
    specs = load_registry()
    assert specs["openrouter"].reasoning == {
        "off": {"reasoning": {"enabled": False}},
        "on": {"reasoning": {"enabled": True}},
    }
    assert specs["llamacpp"].reasoning == {
        "off": {"chat_template_kwargs": {"enable_thinking": False}},
        "on": {"chat_template_kwargs": {"enable_thinking": True}},
    }
    assert all(specs[n].reasoning is None for n in ("google", "openai", "vllm", "transformers", "baseline"))
    assert specs["transformers"].settings["trust_remote_code"] is False
    custom = tmp_path / "p.yaml"
    custom.write_text(
        "providers:\n  vllm:\n    backend: openai\n    base_url: http://gpu-box:8000/v1\n", encoding="utf-8"
    )
    assert load_registry(custom)["vllm"].base_url == "http://gpu-box:8000/v1"
    custom.write_text("providers:\n  bad:\n    backend: carrier-pigeon\n", encoding="utf-8")
    with pytest.raises(ProviderError, match="backend"):
        load_registry(custom)
    custom.write_text(
        "providers:\n  bad:\n    backend: openai\n    api_key_env: sk-live-abc\n", encoding="utf-8"
    )
    with pytest.raises(ProviderError, match="NAME"):
        load_registry(custom)
    assert redact("boom sk-123456 and Bearer abcdefghijkl", ["sk-123456"]) == "boom *** and Bearer ***"
    assert public_url("https://user:pw@host:8443/v1?key=abc#x") == "https://host:8443/v1"


class _BatchProvider(Provider):
    parallel = False
    batch_size = 3

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def generate(self, request: Request) -> Completion:  # pragma: no cover - batches only
        raise AssertionError

    def generate_batch(self, requests: list[Request]) -> list[Completion]:
        self.batches.append([r.task.id for r in requests])
        return [Completion(text="x", finish_reason="stop") for _ in requests]


class _EchoJob:
    """The executor's job at its simplest: one request per item, its line the item and the answer."""

    def request(self, task: Any, item: dict[str, Any]) -> Request:
        return Request(task=task, row=item, example_id=item["id"], messages=[], max_tokens=8)

    def record(
        self, provider: Provider, request: Request, task: Any, item: Any, comp: Completion
    ) -> dict[str, Any]:
        return {"task": task.id, "id": request.example_id, "raw": comp.raw}


def test_batched_providers_get_same_task_batches_in_order() -> None:
    tasks = [SimpleNamespace(id="nli_v1"), SimpleNamespace(id="sts_v1")]
    items = [(t, {"id": f"{t.id}-{k}"}) for t in tasks for k in range(4)]
    provider = _BatchProvider()
    out: list[dict[str, Any]] = []
    settings = RunSettings(provider="x", model="y", progress=False, transport=TransportSettings(workers=8))
    execute(provider, items, settings, out.append, job=_EchoJob())
    assert [len(b) for b in provider.batches] == [3, 1, 3, 1]
    assert all(len(set(b)) == 1 for b in provider.batches)
    assert [(r["task"], r["id"]) for r in out] == [(t.id, row["id"]) for t, row in items]
