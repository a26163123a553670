"""What a run is asked to do (:class:`RunSettings`), the provider it asks, and its ``run.json`` record.

``run.json`` keeps the settings a run was started with (``settings``), the conditions that
decide whether its scores compare with another run's (``conditions``), and the facts of
what it ran (tasks, fingerprints, hashes, provider). The conditions are gathered here, in
one place, so the result file can carry the same block.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yoxla.providers.base import Provider, ProviderOptions, ProviderSpec
from yoxla.providers.registry import (
    MASK,
    api_key,
    create_provider,
    get_spec,
    known_secrets,
    public_url,
    redact,
    scrub_url,
    split_credentials,
    with_overrides,
)
from yoxla.providers.transport import TransportSettings
from yoxla.record.signing import SIGN_KEY_ENV
from yoxla.run.errors import RunError
from yoxla.run.model_facts import public_model, without_path

# What defines a run: a resumed session must not change it.
IDENTITY = (
    "provider",
    "model",
    "edition",
    "tasks",
    "limit",
    "thinking",
    "thinking_budget",
    "data_dir",
    "revision",
    "filters",
    "scored_only",
    "probabilities",
    "suite",
    "judge_provider",
    "judge_model",
)
# Where and how to connect, and where to write: a resumed session may change these (when given;
# else the stored value holds, so a resumed run writes its result file where it started).
SESSION = ("config", "base_url", "sign_key", "judge_base_url", "results_dir", *TransportSettings.names())
# Taken from the current command line on every session, given or not.
CURRENT = ("progress", "check_connection", "runs_dir", "command")
NOT_STORED = ("sign_key", "progress", "check_connection", "command", "resume")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class RunSettings:
    """Everything a run needs; what it was started with is stored in run.json under ``settings``."""

    provider: str
    model: str
    edition: str = "v1"
    tasks: list[str] = field(default_factory=list)  # empty: every task of the edition
    data_dir: str | None = None
    revision: str | None = None
    limit: int | None = None
    filters: dict[str, list[str]] = field(default_factory=dict)  # row filters: column → accepted values
    scored_only: bool = False  # skip the rows declared as controls
    probabilities: bool = True  # ask for answer probabilities (logprobs, label scoring)
    thinking: bool = False
    thinking_budget: int = 4096
    batch_size: int | None = None
    seed: int | None = None
    config: str | None = None
    base_url: str | None = None
    provider_settings: dict[str, Any] = field(default_factory=dict)
    display_name: str | None = None
    # What the leaderboard's filters use (yoxla.run.model_facts): checked, stored in run.json's
    # settings, written into the result file's model.metadata.
    model_card: str | None = None
    license: str | None = None
    weights: str | None = None  # open | closed
    params: int | None = None
    run_id: str | None = None
    resume: bool = False
    runs_dir: str = "runs"
    results_dir: str = "results"
    sign_key: str | None = None
    progress: bool = True
    check_connection: bool = True
    command: str = ""
    transport: TransportSettings = field(default_factory=TransportSettings)
    # Eval suites (python runner.py --suite FILE): the manifest, and the judge model that
    # graders may ask through ctx.responses_create (None: no judge; a grader that asks fails).
    suite: str | None = None
    judge_provider: str | None = None
    judge_model: str | None = None
    judge_base_url: str | None = None

    def set(self, key: str, value: Any) -> None:
        """Set a field, or a transport field by its own name (``workers``, ``timeout``, …)."""
        setattr(self.transport if key in TransportSettings.names() else self, key, value)

    def get(self, key: str) -> Any:
        return getattr(self.transport if key in TransportSettings.names() else self, key)


def settings_from(info: dict[str, Any]) -> RunSettings:
    """The settings stored in run.json (also the flat transport fields of older run folders)."""
    stored = dict(info["settings"])
    transport = TransportSettings.from_dict({**stored, **(stored.pop("transport", None) or {})})
    known = set(RunSettings.__dataclass_fields__) - {"transport"}
    return RunSettings(**{k: v for k, v in stored.items() if k in known}, transport=transport)


def stored_settings(s: RunSettings) -> dict[str, Any]:
    """``settings`` of run.json: no key path, no credentials of the base URL."""
    d = asdict(s)
    for key in NOT_STORED:
        d.pop(key, None)
    d["base_url"] = scrub_url(s.base_url)
    d["judge_base_url"] = scrub_url(s.judge_base_url)
    return d


def provider_options(s: RunSettings) -> ProviderOptions:
    return ProviderOptions(
        thinking=s.thinking,
        batch_size=s.batch_size,
        seed=s.seed,
        transport=s.transport,
        probabilities=s.probabilities,
    )


# The provider a run asks: checked before anything is loaded, opened with its facts, and the
# secrets scrubbed from everything the run stores.


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
    described = {k: v for k, v in provider.describe().items() if k not in ("base_url", "api_key_env")}
    return provider, provider_facts(spec, public_url(spec.base_url), described)


def provider_facts(spec: ProviderSpec, base_url: str | None, provider_info: dict[str, Any]) -> dict[str, Any]:
    """run.json's facts of the provider: its backend, public base URL, key variable, reasoning
    control and what it describes of itself (a result file's, for a run folder seeded from one)."""
    return {
        "backend": spec.backend,
        "base_url": base_url,
        "api_key_env": spec.api_key_env,
        "reasoning_control": spec.reasoning,
        "provider_info": provider_info,
    }


def run_secrets(s: RunSettings) -> list[str]:
    """Values to scrub from every stored text: the registry's keys and the base URLs' credentials."""
    return [
        *known_secrets(),
        *split_credentials(s.base_url).secrets,
        *split_credentials(s.judge_base_url).secrets,
    ]


def resumed_settings(saved: RunSettings, given: RunSettings, explicit: set[str]) -> RunSettings:
    """The stored settings, with what a new session may change taken from ``given``."""
    for key in IDENTITY:
        if key in explicit and given.get(key) != saved.get(key):
            raise RunError(
                f"--resume: {key} {given.get(key)!r} differs from the run's {saved.get(key)!r}; "
                "start a new run (another --run-id) to change it"
            )
    for key in SESSION:
        if key in explicit:
            saved.set(key, given.get(key))
    for key in CURRENT:
        saved.set(key, given.get(key))
    return saved


def resolve_sign_key(s: RunSettings) -> None:
    key = s.sign_key or os.environ.get(SIGN_KEY_ENV)
    if key and not Path(key).is_file():
        raise RunError(f"signing key {key} does not exist (make one with `yoxla keygen`)")
    s.sign_key = key


# Local paths in the record ---------------------------------------------------------------------

LOCAL = "<local>"  # a folder outside the working directory, as a result file names it
PATH_SETTINGS = ("suite", "data_dir", "results_dir", "runs_dir", "config", "sign_key")


def stored_path(path: str | os.PathLike[str]) -> str:
    """A local file or folder as a result file records it: relative to the working directory
    when under it (``.`` for the working directory itself), else ``<local>/<its name>``, so the
    user's folders (a home directory) are never written into it."""
    found = Path(path).expanduser()
    try:
        found = found.resolve()
        return found.relative_to(Path.cwd().resolve()).as_posix()
    except (OSError, RuntimeError, ValueError):
        return f"{LOCAL}/{found.name}"


def without_local_paths(command: str, s: RunSettings) -> str:
    """The stored command line with every absolute form of the run's paths (``--suite``,
    ``--data-dir``, the runs and results folders, ``--config``, ``--sign-key``) written as
    :func:`stored_path` writes them; a relative path stays as given."""
    forms: dict[str, str] = {}
    for name in PATH_SETTINGS:
        value = getattr(s, name)
        if not value:
            continue
        given = os.fspath(value)
        expanded = os.path.expanduser(given)
        candidates = {given, expanded, os.path.abspath(expanded)}
        try:
            candidates.add(str(Path(expanded).resolve()))
        except (OSError, RuntimeError):
            pass
        for form in candidates:
            if os.path.isabs(form) and form != os.sep:
                forms.setdefault(form, stored_path(given))
    if not forms:
        return command
    # One pass, the longest form first (a folder inside another), so nothing is replaced twice.
    pattern = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    return re.sub(pattern, lambda m: forms[m.group(0)], command)


# Run ids -------------------------------------------------------------------------------------


def check_run_id(run_id: str) -> str:
    """A run id names one folder inside the runs folder: no path separators, not . or .."""
    if not run_id or run_id in (".", "..") or any(c in run_id for c in "/\\\0"):
        raise RunError(f"--run-id {run_id!r} must be a plain folder name (no '/', not '.' or '..')")
    return run_id


# The record ----------------------------------------------------------------------------------


def run_record(
    s: RunSettings,
    *,
    task_ids: list[str],
    facts: dict[str, Any],
    provider_facts: dict[str, Any],
    dataset: dict[str, Any],
    suite_hash: str,
    conditions: dict[str, Any],
    workers: int,
    batch_size: int,
    secrets: list[str],
) -> dict[str, Any]:
    """run.json of a new run: what it is, the conditions it runs under, how it was started."""
    import platform

    from yoxla import __version__

    return {
        "run_id": s.run_id,
        "status": "running",
        "framework_version": __version__,
        "provider": s.provider,
        "model": s.model,
        "display_name": s.display_name or public_model(s.model),
        "public_model": public_model(s.model),  # never a local folder's path
        **provider_facts,
        "edition": s.edition,
        "dataset": dataset,
        "task_ids": task_ids,
        "tasks": facts,
        "limit": s.limit,
        "suite_hash": suite_hash,
        "chat_template_hash": provider_facts["provider_info"].get("chat_template_hash"),
        "conditions": conditions,
        "thinking": s.thinking,
        "workers": workers,
        "batch_size": batch_size,
        "started_at": now_iso(),
        "finished_at": None,
        "wall_s": 0.0,
        "command": without_local_paths(
            without_path(redact(s.command, secrets), s.model, public_model(s.model)), s
        ),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "sessions": [],
        "settings": stored_settings(s),
    }
