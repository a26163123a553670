"""The provider a run asks: checked before anything is loaded, opened with its facts, and the
secrets scrubbed from everything the run stores."""

from __future__ import annotations

from typing import Any

from yoxla.providers.base import Provider
from yoxla.providers.registry import (
    MASK,
    api_key,
    create_provider,
    get_spec,
    known_secrets,
    public_url,
    split_credentials,
    with_overrides,
)
from yoxla.run.errors import RunError
from yoxla.run.settings import RunSettings, provider_options


def precheck_provider(s: RunSettings) -> None:
    """Unknown provider, missing key, or a stored base URL without its credentials: say so first."""
    if s.base_url and MASK in s.base_url:
        raise RunError(
            "this run's base URL carried credentials, which are never stored; give --base-url again"
        )
    spec = get_spec(s.provider, s.config)
    if spec.backend == "openai":
        api_key(with_overrides(spec, s.base_url, **s.provider_settings))


def open_provider(s: RunSettings) -> tuple[Provider, dict[str, Any]]:
    """Create the provider (one-line ProviderError on any problem) and facts about it."""
    precheck_provider(s)
    spec = with_overrides(get_spec(s.provider, s.config), s.base_url, **s.provider_settings)
    provider = create_provider(spec, s.model, provider_options(s))
    check = getattr(provider, "check_reachable", None)
    if s.check_connection and callable(check):
        try:
            check()
        except BaseException:
            provider.close()
            raise
    facts = {
        "backend": spec.backend,
        "base_url": public_url(spec.base_url),
        "api_key_env": spec.api_key_env,
        "reasoning_control": spec.reasoning,
        "provider_info": {
            k: v for k, v in provider.describe().items() if k not in ("base_url", "api_key_env")
        },
    }
    return provider, facts


def run_secrets(s: RunSettings) -> list[str]:
    """Values to scrub from every stored text: the registry's keys and the base URLs' credentials."""
    return [
        *known_secrets(),
        *split_credentials(s.base_url).secrets,
        *split_credentials(s.judge_base_url).secrets,
    ]
