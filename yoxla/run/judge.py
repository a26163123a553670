"""The judge model of a suite run: asked through the provider layer, every call kept.

A grader's ``ctx.responses_create(...)`` reaches the runner's :class:`RecordingJudge`:

* a request it has answered before is answered from its memo (keyed by the request's
  canonical hash), seeded from the run folder's ``judgements.jsonl``, so a resumed run, a
  second scoring pass and ``yoxla rescore`` never ask twice;
* otherwise, with a judge model configured, it is sent through the same provider registry and
  transport as the run's model (:class:`JudgeClient`) and the pair appended to ``judgements.jsonl``;
* with no judge model (``rescore``, or a run without the flags) an unseen request fails:
  re-scoring never asks a model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoxla.providers.base import Provider, ProviderOptions, Request
from yoxla.providers.registry import MASK, create_provider, get_spec, public_url, with_overrides
from yoxla.run.artifacts import PredictionWriter, read_predictions, repair_predictions
from yoxla.run.errors import RunError
from yoxla.run.settings import RunSettings, precheck_provider
from yoxla.score.judge import JudgeResponse, request_hash

JUDGEMENTS = "judgements.jsonl"
DEFAULT_JUDGE_MAX_TOKENS = 1024


@dataclass(frozen=True)
class JudgeTask:
    """What a judge request carries as its task (providers read only the id)."""

    id: str = "__judge__"


def _text(content: Any) -> str:
    """A message's content as text (Responses-API parts ``{type, text}`` joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def judge_messages(request: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages of a grader's judge request (``instructions`` first, as the system message)."""
    messages: list[dict[str, str]] = []
    if request.get("instructions"):
        messages.append({"role": "system", "content": _text(request["instructions"])})
    given = request.get("input", request.get("messages"))
    if isinstance(given, list):
        for m in given:
            if isinstance(m, dict):
                role = str(m.get("role") or "user")
                messages.append(
                    {"role": "system" if role == "developer" else role, "content": _text(m.get("content"))}
                )
            else:
                messages.append({"role": "user", "content": _text(m)})
    elif given is not None:
        messages.append({"role": "user", "content": _text(given)})
    if not any(m["role"] == "user" for m in messages):
        raise ValueError("a judge request needs input (text or messages)")
    return messages


def _number(request: dict[str, Any], key: str, default: float) -> float:
    value = request.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


class JudgeClient:
    """Sends judge requests to the judge model through a provider of the registry."""

    def __init__(self, provider: Provider, model: str) -> None:
        self.provider = provider
        self.model = model

    def __call__(self, request: dict[str, Any]) -> JudgeResponse:
        max_tokens = request.get("max_output_tokens")
        req = Request(
            task=JudgeTask(),
            row={},
            example_id="judge",
            messages=judge_messages(request),
            max_tokens=max_tokens
            if isinstance(max_tokens, int) and max_tokens > 0
            else DEFAULT_JUDGE_MAX_TOKENS,
            temperature=_number(request, "temperature", 0.0),
            top_p=_number(request, "top_p", 1.0),
        )
        comp = self.provider.generate(req)
        if comp.error:
            raise RuntimeError(f"the judge request failed: {comp.error}")
        return JudgeResponse(
            output_text=comp.text or "", model=comp.model or self.model, usage=comp.usage or None
        )

    def close(self) -> None:
        self.provider.close()


def judge_settings(s: RunSettings) -> RunSettings | None:
    """The judge's provider, model and base URL as settings of their own; None without a judge model.

    The provider is ``--judge-provider`` (default: the run's). The base URL is
    ``--judge-base-url``; without it a judge on the run's own provider asks the run's own
    ``--base-url`` (the server the run talks to), and a judge on another provider its registry URL.
    """
    if not s.judge_model:
        return None
    name = s.judge_provider or s.provider
    judge = RunSettings(provider=name, model=s.judge_model, config=s.config)
    judge.base_url = s.judge_base_url or (s.base_url if name == s.provider else None)
    return judge


def judge_facts(s: RunSettings) -> dict[str, Any] | None:
    """What run.json and the result file record of the judge: provider, model, base URL (no credentials)."""
    judge = judge_settings(s)
    if judge is None:
        return None
    spec = with_overrides(get_spec(judge.provider, judge.config), judge.base_url)
    return {"provider": judge.provider, "model": judge.model, "base_url": public_url(spec.base_url)}


def _refuse_masked(judge: RunSettings) -> None:
    if judge.base_url and MASK in judge.base_url:
        raise RunError(
            "the judge's base URL carried credentials, which are never stored; "
            "give --judge-base-url (or --base-url) again"
        )


def precheck_judge(s: RunSettings) -> None:
    """The judge's provider known, its key present, its base URL whole; nothing without a judge."""
    judge = judge_settings(s)
    if judge is not None:
        _refuse_masked(judge)
        precheck_provider(judge)


def open_judge(s: RunSettings) -> JudgeClient | None:
    """The run's judge client, or None without a judge model."""
    judge = judge_settings(s)
    if judge is None:
        return None
    _refuse_masked(judge)
    spec = with_overrides(get_spec(judge.provider, judge.config), judge.base_url)
    provider = create_provider(spec, judge.model, ProviderOptions(seed=s.seed, transport=s.transport))
    return JudgeClient(provider, judge.model)


class RecordingJudge:
    """The scoring machinery's judge callback: memo first, then the judge model, every call kept
    (:meth:`close` closes the judge model's client too)."""

    def __init__(self, path: Path | None, live: Callable[[dict[str, Any]], JudgeResponse] | None) -> None:
        self.path = path
        self.live = live
        self.calls = 0  # requests sent to the judge model by this object
        self.failures = 0
        self._lock = threading.Lock()
        self._memo: dict[str, JudgeResponse] = {}
        self._writer: PredictionWriter | None = None
        if path is not None:
            # A run that appends cuts a torn last line off first; re-scoring only reads.
            lines = repair_predictions(path)[0] if live is not None else read_predictions(path)[0]
            for line in lines:
                self._memo[str(line["request_sha256"])] = JudgeResponse.model_validate(line["response"])

    def __call__(self, request: dict[str, Any]) -> JudgeResponse:
        digest = request_hash(request)
        with self._lock:
            hit = self._memo.get(digest)
        if hit is not None:
            return hit
        if self.live is None:
            raise RuntimeError("no stored judgement for this request; re-scoring never asks a model")
        try:
            response = self.live(request)
        except Exception:
            with self._lock:
                self.failures += 1
            raise
        with self._lock:
            self.calls += 1
            if digest not in self._memo:
                self._memo[digest] = response
                self._append(
                    {
                        "request_sha256": digest,
                        "request": request,
                        "response": response.model_dump(mode="json"),
                    }
                )
            return self._memo[digest]

    def _append(self, line: dict[str, Any]) -> None:
        if self.path is None:
            return
        if self._writer is None:
            self._writer = PredictionWriter(self.path)
        self._writer.append(line)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        close = getattr(self.live, "close", None)
        if callable(close):
            close()
