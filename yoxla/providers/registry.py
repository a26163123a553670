"""The provider registry: names → connection specs, backends → classes, imported lazily.

The bundled ``providers.yaml`` names the connections; ``--config FILE`` adds to it (an entry
with the same name replaces the bundled one). Backends are imported only when a provider
of that backend is created, so listing providers never imports openai or torch.
"""

from __future__ import annotations

import base64
import importlib
import os
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

import yaml

from yoxla.providers.base import Provider, ProviderError, ProviderOptions, ProviderSpec

BACKENDS: dict[str, str] = {
    "openai": "yoxla.providers.openai_compat:OpenAICompatProvider",
    "transformers": "yoxla.providers.transformers_local:TransformersProvider",
    "baseline": "yoxla.providers.baseline:BaselineProvider",
    "suite-baseline": "yoxla.providers.baseline:SuiteBaselineProvider",
}
_SPEC_KEYS = set("backend base_url api_key_env reasoning settings description logprobs top_logprobs".split())
MAX_TOP_LOGPROBS = 20  # what the OpenAI API accepts (and vLLM's default max_logprobs)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ProviderError(f"{where} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ProviderError(f"{where} must be a mapping")
    return data


def _bundled(name: str) -> str:
    return resources.files("yoxla").joinpath("providers", name).read_text(encoding="utf-8")


def _spec(name: str, entry: Any, where: str) -> ProviderSpec:
    def bad(problem: str) -> ProviderError:
        return ProviderError(f"{where}: provider {name!r}{problem}")

    if not isinstance(entry, dict):
        raise bad(" must be a mapping")
    unknown = set(entry) - _SPEC_KEYS
    if unknown:
        raise bad(f" has unknown keys: {', '.join(sorted(unknown))}")
    backend = entry.get("backend")
    if not isinstance(backend, str) or (backend not in BACKENDS and ":" not in backend):
        raise bad(f" needs a backend ({', '.join(BACKENDS)} or 'module:Class'), got {backend!r}")
    env = entry.get("api_key_env")
    if env is not None and not (isinstance(env, str) and _ENV_NAME.match(env)):
        raise bad(": api_key_env must be the NAME of an environment variable")
    reasoning = entry.get("reasoning")
    if isinstance(reasoning, dict):  # YAML 1.1 reads unquoted on/off as booleans
        reasoning = {
            ({True: "on", False: "off"}.get(k, k) if isinstance(k, bool) else k): v
            for k, v in reasoning.items()
        }
    if reasoning is not None and not (
        isinstance(reasoning, dict)
        and set(reasoning) <= {"off", "on"}
        and all(isinstance(v, dict) for v in reasoning.values())
    ):
        raise bad(": reasoning must map 'off' and 'on' to request fields")
    logprobs = entry.get("logprobs", False)
    if not isinstance(logprobs, bool):
        raise bad(": logprobs must be true or false")
    top = entry.get("top_logprobs", 20)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP_LOGPROBS:
        raise bad(f": top_logprobs must be a whole number from 1 to {MAX_TOP_LOGPROBS}")
    return ProviderSpec(
        name=name,
        backend=backend,
        base_url=entry.get("base_url"),
        api_key_env=env,
        reasoning=reasoning,
        settings=dict(entry.get("settings") or {}),
        logprobs=logprobs,
        top_logprobs=top,
    )


def load_registry(config: str | os.PathLike[str] | None = None) -> dict[str, ProviderSpec]:
    """Bundled providers, plus (and overridden by) those of ``config``."""
    specs: dict[str, ProviderSpec] = {}
    sources = [("bundled providers.yaml", _bundled("providers.yaml"))]
    if config:
        path = Path(config)
        if not path.is_file():
            raise ProviderError(f"provider config {config} does not exist")
        sources.append((str(path), path.read_text(encoding="utf-8")))
    for where, text in sources:
        data = _read_yaml(text, where)
        entries = data.get("providers", data)
        if not isinstance(entries, dict):
            raise ProviderError(f"{where}: 'providers' must be a mapping of name → entry")
        for name, entry in entries.items():
            specs[str(name)] = _spec(str(name), entry, where)
    return specs


def load_presets() -> dict[str, dict[str, Any]]:
    data = _read_yaml(_bundled("presets.yaml"), "bundled presets.yaml")
    return {str(k): dict(v) for k, v in (data.get("presets") or {}).items()}


def get_spec(name: str, config: str | os.PathLike[str] | None = None) -> ProviderSpec:
    specs = load_registry(config)
    if name not in specs:
        raise ProviderError(f"unknown provider {name!r}; known providers: {', '.join(specs)}")
    return specs[name]


def backend_class(backend: str) -> type[Provider]:
    target = BACKENDS.get(backend, backend)
    module_name, _, cls_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = (
            " (install the local extras: pip install -r requirements-local.txt)"
            if backend == "transformers"
            else ""
        )
        raise ProviderError(f"backend {backend!r} cannot be imported: {exc}{hint}") from None
    cls = getattr(module, cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        raise ProviderError(f"backend {backend!r}: {target} is not a Provider class")
    return cls


def create_provider(spec: ProviderSpec, model: str, options: ProviderOptions) -> Provider:
    """Instantiate the backend of ``spec`` for ``model``; raises ProviderError in one line."""
    return backend_class(spec.backend)(spec, model, options)


def with_overrides(spec: ProviderSpec, base_url: str | None = None, **settings: Any) -> ProviderSpec:
    """A copy of ``spec`` with a different base URL and/or extra backend settings."""
    extra = {k: v for k, v in settings.items() if v is not None}
    return replace(spec, base_url=base_url or spec.base_url, settings={**spec.settings, **extra})


# Secrets ----------------------------------------------------------------------------------


def api_key(spec: ProviderSpec) -> str | None:
    """The key named by ``spec.api_key_env`` (environment or .env), or a one-line error."""
    if not spec.api_key_env:
        return None
    value = os.environ.get(spec.api_key_env, "").strip()
    if value:
        return value
    if spec.settings.get("api_key_required", True):
        raise ProviderError(
            f"provider {spec.name!r} needs an API key: set {spec.api_key_env} in the environment or in ./.env"
        )
    return None


def known_secrets(specs: dict[str, ProviderSpec] | None = None) -> list[str]:
    """Values of every key variable the registry names (to scrub them from any text)."""
    specs = specs if specs is not None else load_registry()
    names = {s.api_key_env for s in specs.values() if s.api_key_env}
    return [v for v in (os.environ.get(n, "").strip() for n in names) if len(v) >= 4]


# A query parameter whose name contains one of these is a credential: its value is never stored.
_SECRET_PARAM = re.compile(r"(?i)key|token|secret|passw|pwd|sig|auth|credential|session")
# A URL inside free text (a command line, an error message): up to white space or a quote.
_URL_IN_TEXT = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s'\"<>]+")
MASK = "***"


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """``text`` with every secret replaced by ``***``: the given values, bearer tokens, and the
    user info and credential-like query parameters of every URL in it (:func:`scrub_url`)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    text = _URL_IN_TEXT.sub(lambda m: scrub_url(m.group(0)) or "", text)
    return re.sub(r"((?i:bearer)\s+|Basic\s+)[A-Za-z0-9._\-+/=]{8,}", r"\1***", text)


def scrub_url(url: str | None) -> str | None:
    """``url`` with its user info and the values of credential-like query parameters
    (``key``, ``api_key``, ``token``, ``sig``, ``x-api-key``, …) replaced by ``***``.
    Everything else is kept, so the URL still says where the run went."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK  # not parsable: store nothing of it
    netloc = (f"{MASK}@" if "@" in parts.netloc else "") + parts.netloc.rpartition("@")[2]
    query = "&".join(
        f"{name}={MASK if _SECRET_PARAM.search(unquote(name)) else value}" if sep else name
        for name, sep, value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


@dataclass(frozen=True)
class Endpoint:
    """A base URL taken apart for a client: credentials out of the URL, ready to send separately."""

    url: str | None  # scheme, host, port and path only
    query: dict[str, str] = field(default_factory=dict)  # every query parameter, sent with each request
    headers: dict[str, str] = field(default_factory=dict)  # basic auth from the user info
    secrets: tuple[str, ...] = ()  # values to scrub from any text (password, credential parameters)


def split_credentials(url: str | None) -> Endpoint:
    """Split ``url`` so that no client, error message or log line ever sees its credentials.

    User info becomes an ``Authorization: Basic`` header (what HTTP clients do with it),
    and it then wins over the API key; query parameters are sent with every request.
    """
    if not url:
        return Endpoint(url)
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    secrets = [v for k, v in query.items() if _SECRET_PARAM.search(k) and len(v) >= 3]
    headers: dict[str, str] = {}
    if parts.username is not None or parts.password is not None:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        secrets += [s for s in (password, quote(password, safe=""), token) if len(s) >= 3]
    return Endpoint(public_url(url), query, headers, tuple(secrets))


def public_url(url: str | None) -> str | None:
    """A base URL without credentials, query or fragment (safe to store)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
