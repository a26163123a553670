"""OpenAI-compatible chat completions through the official ``openai`` client.

Used for OpenRouter, Google AI Studio, OpenAI, vLLM and llama.cpp alike: only the base
URL, the key variable and the reasoning control differ (see providers.yaml). The client's
own retries are off; :mod:`yoxla.providers.transport` decides what is retried.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any

import openai

from yoxla.providers.base import (
    Completion,
    Provider,
    ProviderError,
    ProviderOptions,
    ProviderSpec,
    Request,
    wants_probabilities,
)
from yoxla.providers.registry import api_key, public_url, redact, split_credentials
from yoxla.providers.transport import (
    AdaptiveLimiter,
    FatalProviderError,
    RequestRefused,
    RetryPolicy,
    TransientError,
    body_error,
    call_with_retries,
    parse_retry_after,
    status_error,
)

_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
PLACEHOLDER_KEY = "not-needed"


def split_reasoning(content: str | None, reasoning: str | None) -> tuple[str, str | None]:
    """(answer, reasoning): complete ``<think>`` blocks in the content join the reasoning field.

    An unterminated ``<think>`` stays in the answer verbatim, where the parser reads it as
    "never reached an answer".
    """
    text = content or ""
    parts = [reasoning] if reasoning else []
    found = _THINK_BLOCK.findall(text)
    if found:
        parts.extend(f.strip("\n") for f in found)
        text = _THINK_BLOCK.sub("", text).lstrip()
    return text, ("\n".join(parts) if parts else None)


def _usage(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    out = {k: v for k in keys if isinstance(v := getattr(usage, k, None), int)}
    reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None)
    if isinstance(reasoning, int) and reasoning:
        out["reasoning_tokens"] = reasoning
    return out


class ReplyView(Mapping[str, Any]):
    """A reply's JSON object read the way the openai client's models are read (``resp.choices[0]
    .message.content``), without building those models.

    The client would construct a pydantic object for every token alternative of a reply with
    log-probabilities (hundreds per answer), which the runner reads a handful of fields from and
    turns back into plain JSON to store: per request, that was most of the runner's own cost.
    Attributes give nested objects as views and lists of objects as lists of views; a missing
    key raises AttributeError, as on a model. As a Mapping it is the plain JSON itself.
    """

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return _view(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _view(value: Any) -> Any:
    if isinstance(value, dict):
        return ReplyView(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [ReplyView(v) if isinstance(v, dict) else v for v in value]
    return value


def read_reply(data: bytes) -> ReplyView:
    """The body of a 200 reply as a :class:`ReplyView`; a body that is not a JSON object is a
    transport failure (retried), never an answer."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        raise TransientError(f"the reply is not JSON ({len(data)} bytes)") from None
    if not isinstance(doc, dict):
        raise TransientError(f"the reply is JSON but not an object ({type(doc).__name__})")
    return ReplyView(doc)


def _field(obj: Any, name: str) -> Any:
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


def _token_logprobs(choice: Any, top_k: int | None) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(the answer's token logprobs as plain JSON: the part that is read, compact_logprobs;
    why they were refused). (None, None) when the server returned none."""
    from yoxla.score.calibration.token_logprobs import LogprobsError, compact_logprobs

    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content or not isinstance(content, list):
        return None, None
    try:
        return compact_logprobs(content, top_k=top_k), None
    except LogprobsError as exc:
        return None, str(exc)[:200]


def _refuses_logprobs(exc: Any) -> bool:
    """A 400/422 whose message names the logprobs parameter: the model does not support it."""
    return getattr(exc, "status_code", None) in (400, 422) and "logprob" in str(exc).lower()


class OpenAICompatProvider(Provider):
    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None:
        if not spec.base_url:
            raise ProviderError(f"provider {spec.name!r} has no base_url")
        if not model:
            raise ProviderError(f"provider {spec.name!r} needs a model id (--model)")
        self.spec = spec
        self.model = model
        self.options = options
        self._key = api_key(spec)
        endpoint = split_credentials(spec.base_url)
        self._secrets = [s for s in (self._key, *endpoint.secrets) if s and len(s) >= 3]
        transport = options.transport
        self.timeout = transport.timeout
        self.limiter = AdaptiveLimiter.for_settings(transport)
        base = spec.settings.get("backoff_base")
        self.policy = RetryPolicy.for_settings(transport, None if base is None else float(base))
        # Whether to ask for token logprobs on closed answer spaces; switched off for the
        # rest of the run when the server refuses the parameter (some models do).
        self.logprobs = bool(spec.logprobs and options.probabilities)
        # Credentials in the URL are used for the requests, never stored: the client gets the
        # bare URL, the query as default parameters and the user info as basic auth.
        self.client = openai.OpenAI(
            base_url=endpoint.url,
            api_key=self._key or PLACEHOLDER_KEY,
            timeout=transport.timeout,
            max_retries=0,
            default_query=endpoint.query or None,
            default_headers=endpoint.headers or None,
        )

    # The request --------------------------------------------------------------------
    def request_body(self, request: Request) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create`` (also what the tests inspect)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
        }
        if self.options.seed is not None:
            body["seed"] = self.options.seed
        body.update(request.options)
        extra = dict(request.passthrough)
        if self.spec.reasoning is not None:
            extra.update(self.spec.reasoning.get("on" if request.thinking else "off") or {})
        if extra:
            body["extra_body"] = extra
        if request.timeout is not None:
            body["timeout"] = request.timeout
        if self.logprobs and wants_probabilities(request):
            body["logprobs"] = True
            body["top_logprobs"] = self.spec.top_logprobs
        return body

    def _once(self, body: dict[str, Any]) -> tuple[Any, float]:
        start = time.perf_counter()
        try:
            # The raw reply: read as JSON here (read_reply), not built into the client's models.
            raw = self.client.chat.completions.with_raw_response.create(**body)
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise self._status(
                status, f"HTTP {status}", exc, parse_retry_after(exc.response.headers)
            ) from None
        except openai.APITimeoutError:
            raise TransientError(f"timeout after {body.get('timeout', self.timeout):g} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc.__context__
            detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
            raise TransientError(self._msg("connection error", detail)) from None
        latency = time.perf_counter() - start
        resp = read_reply(raw.http_response.content)
        if not getattr(resp, "choices", None):
            raise self._body_error(resp, parse_retry_after(raw.headers))
        return resp, latency

    def _body_error(self, resp: Any, retry_after: float | None = None) -> Exception:
        """A reply without choices, read as its body's ``error`` says (OpenRouter answers HTTP 200
        with ``{"choices": [], "error": {"code": 404, "message": …}}``): the code counts as an
        HTTP status, the message is kept. With no status in it, it is retried."""
        status, message = body_error(_field(resp, "error"))
        if status is None:
            return TransientError(
                self._msg("response without choices", message) if message else "response without choices"
            )
        return self._status(status, f"HTTP {status} in the reply body", message, retry_after)

    def _status(self, status: int, where: str, detail: object, retry_after: float | None) -> Exception:
        """:func:`status_error` with this provider's messages: the fatal one names the server."""
        fatal = self._msg(f"{where} from {public_url(self.spec.base_url)}", detail)
        return status_error(status, self._msg(where, detail), fatal, retry_after)

    def _msg(self, prefix: str, exc: object) -> str:
        text = str(exc).replace("\n", " ")
        return redact(f"{prefix}: {text}"[:500], self._secrets)

    def generate(self, request: Request) -> Completion:
        body = self.request_body(request)
        policy = self.policy
        if request.max_retries is not None:
            policy = dataclasses.replace(policy, max_retries=request.max_retries)
        try:
            try:
                outcome = call_with_retries(lambda: self._once(body), self.limiter, policy)
            except RequestRefused as exc:
                if "logprobs" not in body or not _refuses_logprobs(exc):
                    raise
                self.logprobs = False  # this model takes no logprobs: ask without them from now on
                body = self.request_body(request)
                outcome = call_with_retries(lambda: self._once(body), self.limiter, policy)
        except FatalProviderError as exc:
            raise ProviderError(redact(str(exc), self._secrets)) from None
        except RequestRefused as exc:  # this request only (400, 422, …): fails at once
            return Completion(error=str(exc), attempts=1)
        if outcome.error is not None or outcome.value is None:
            return Completion(
                error=redact(outcome.error or "no response", self._secrets), attempts=outcome.attempts
            )
        resp, latency = outcome.value
        choice = resp.choices[0]
        message = choice.message
        reasoning = _field(message, "reasoning") or _field(message, "reasoning_content")
        text, reasoning = split_reasoning(
            getattr(message, "content", None), reasoning if isinstance(reasoning, str) else None
        )
        asked = "logprobs" in body
        logprobs, refused = _token_logprobs(choice, body.get("top_logprobs")) if asked else (None, None)
        return Completion(
            text=text,
            reasoning=reasoning,
            finish_reason=choice.finish_reason,
            model=getattr(resp, "model", None),
            usage=_usage(getattr(resp, "usage", None)),
            latency_s=latency,
            attempts=outcome.attempts,
            logprobs=logprobs,
            probabilities_asked=asked,
            logprobs_refused=refused,
        )

    # Checks -------------------------------------------------------------------------
    def check_reachable(self) -> None:
        """Fail fast, in one line, when the base URL does not answer at all."""
        try:
            self.client.with_options(timeout=min(10.0, self.timeout)).models.list()
        except (openai.APITimeoutError, openai.APIConnectionError):
            raise ProviderError(
                f"cannot reach {public_url(self.spec.base_url)} (provider {self.spec.name!r}); is the server running?"
            ) from None
        except openai.AuthenticationError as exc:
            raise ProviderError(
                self._msg(f"the server at {public_url(self.spec.base_url)} refused the key", exc)
            ) from None
        except openai.APIStatusError:
            pass  # some servers have no /models; reachable is all we ask here

    def describe(self) -> dict[str, Any]:
        return {
            "base_url": public_url(self.spec.base_url),
            "api_key_env": self.spec.api_key_env,
            "reasoning_control": self.spec.reasoning,
            "logprobs": self.logprobs,
            "top_logprobs": self.spec.top_logprobs if self.logprobs else None,
        }

    def close(self) -> None:
        self.limiter.close()  # workers waiting out a Retry-After or a backoff stop now
        self.client.close()
