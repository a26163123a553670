"""Generation settings of a suite task, and which of them an upstream may receive.

The manifest's ``generation`` carries normalized fields, lm-eval aliases (``max_gen_toks``,
``until``), execution controls and provider passthrough (:data:`PASSTHROUGH_KEYS`).

Passthrough goes only to OpenAI-compatible upstreams that are not OpenAI itself
(:func:`passthrough_allowed`); the real OpenAI API would refuse unknown fields. Sending is the
runner's job: it asks :meth:`GenerationSettings.passthrough` for the body fields it may add.

Only ``instructions`` (the system message) is part of a task's hash; the other settings are
run-specific and recorded on the run.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

PASSTHROUGH_KEYS = (
    "top_k",
    "min_p",
    "repetition_penalty",
    "do_sample",
    "extra_body",
    "chat_template_kwargs",
    "prefill_think",
    "use_cache",
)
# extra_body keys that would override the request itself, its credentials, or its transport.
UNSAFE_EXTRA_BODY_KEYS = frozenset(
    {
        "model",
        "messages",
        "input",
        "prompt",
        "instructions",
        "stream",
        "stream_options",
        "n",
        "best_of",
        "echo",
        "suffix",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "tools",
        "tool_choice",
        "functions",
        "function_call",
        "response_format",
        "user",
        "store",
        "metadata",
        "api_key",
        "authorization",
        "headers",
        "extra_headers",
        "base_url",
        "timeout",
    }
)
# Responses-API settings of the MKA1 gateway that YOXLA does not send.
UNSUPPORTED = (
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_tool_calls",
    "reasoning",
    "text",
    "truncation",
)
UNSUPPORTED_ALSO = ("service_tier",)
MAX_BODY_JSON = 16_384
OPENAI_HOSTS = ("api.openai.com",)
OPENAI_HOST_SUFFIXES = (".openai.com", ".openai.azure.com")


def is_openai(base_url: str | None) -> bool:
    """Is this base URL the OpenAI API itself (or Azure OpenAI)? None means the provider's default."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    return host in OPENAI_HOSTS or host.endswith(OPENAI_HOST_SUFFIXES)


def passthrough_allowed(backend: str, base_url: str | None) -> bool:
    """Passthrough fields go only to OpenAI-compatible upstreams that are not OpenAI."""
    return backend == "openai" and not is_openai(base_url)


def bounded_json(value: Any, where: str) -> Any:
    """``value`` when it is plain JSON data of at most MAX_BODY_JSON characters; ValueError else."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where} must be plain JSON data ({exc})") from None
    if len(text) > MAX_BODY_JSON:
        raise ValueError(f"{where} is {len(text)} characters as JSON (at most {MAX_BODY_JSON})")
    return value


class GenerationSettings(BaseModel):
    """Typed, validated generation settings (aliases resolved, unsafe extra_body keys removed)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    instructions: Annotated[str, Field(max_length=100_000)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    top_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    max_output_tokens: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    stop: (
        Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]], Field(max_length=16)] | None
    ) = None
    presence_penalty: Annotated[float, Field(ge=-2.0, le=2.0)] | None = None
    frequency_penalty: Annotated[float, Field(ge=-2.0, le=2.0)] | None = None
    max_retries: Annotated[int, Field(ge=0, le=10)] | None = None
    max_empty_retries: Annotated[int, Field(ge=0, le=10)] | None = None
    timeout_seconds: Annotated[float, Field(ge=1.0, le=3600.0)] | None = None
    # passthrough
    top_k: Annotated[int, Field(ge=-1, le=100_000)] | None = None
    min_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    repetition_penalty: Annotated[float, Field(gt=0.0, le=10.0)] | None = None
    do_sample: bool | None = None
    extra_body: dict[str, Any] | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    prefill_think: bool | None = None
    use_cache: bool | None = None

    _removed: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _normalize(cls, data: Any, handler: Any) -> Any:
        removed: list[str] = []
        if isinstance(data, dict):
            data = dict(data)
            for key in (*UNSUPPORTED, *UNSUPPORTED_ALSO):
                if key in data:
                    raise ValueError(f"{key} is a Responses-API setting that YOXLA does not send; remove it")
            for alias, name in (("max_gen_toks", "max_output_tokens"), ("until", "stop")):
                if alias in data:
                    value = data.pop(alias)
                    if name in data and data[name] != value:
                        raise ValueError(f"{alias} is an alias of {name}; they disagree")
                    data[name] = value
            if isinstance(data.get("stop"), str):
                data["stop"] = [data["stop"]]
            body = data.get("extra_body")
            if isinstance(body, dict):
                removed = sorted(k for k in body if str(k).lower() in UNSAFE_EXTRA_BODY_KEYS)
                data["extra_body"] = {k: v for k, v in body.items() if k not in removed}
            for key in ("extra_body", "chat_template_kwargs"):
                if data.get(key) is not None:
                    bounded_json(data[key], key)
        model = handler(data)
        if removed:
            model.__pydantic_private__["_removed"] = tuple(removed)
        return model

    @property
    def removed_extra_body_keys(self) -> tuple[str, ...]:
        """extra_body keys dropped as unsafe (validate prints them)."""
        return self._removed

    def sampling(self) -> dict[str, Any]:
        """The normalized request fields that are set (every upstream may receive these)."""
        keys = (
            "temperature",
            "top_p",
            "max_output_tokens",
            "stop",
            "presence_penalty",
            "frequency_penalty",
        )
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}

    def passthrough(self, backend: str, base_url: str | None) -> dict[str, Any]:
        """Body fields to add for this upstream: {} for OpenAI itself and non-HTTP backends.

        ``extra_body``'s own (safe) keys are merged in at the top level, as an
        OpenAI-compatible server expects them; the explicit passthrough fields win.
        """
        if not passthrough_allowed(backend, base_url):
            return {}
        out: dict[str, Any] = dict(self.extra_body or {})
        for key in PASSTHROUGH_KEYS:
            value = getattr(self, key)
            if key != "extra_body" and value is not None:
                out[key] = value
        return out
