"""The facts a leaderboard's filters use, as a contributor states them, and the public name of a model.

``--display-name``, ``--model-card``, ``--license``, ``--weights open|closed`` and ``--params``
(or the same keys in a small YAML file, ``--model-info FILE.yaml``; a flag wins over the file)
are checked here, stored in the run's settings and written into the result file's ``model``
block (:func:`model_info`). A model given as a local folder is never published by its path:
its public id comes from the folder's own ``config.json`` (the Hub id it was saved from), else
its architecture (``local-<model_type>``).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yoxla.run.errors import RunError
from yoxla.safe.text import plain_https

if TYPE_CHECKING:
    from yoxla.record.base import ModelInfo, ModelMetadata

FACT_KEYS = ("display_name", "model_card", "license", "weights", "params")
MAX_INFO_BYTES = 64 * 1024
MAX_CONFIG_BYTES = 1024 * 1024
MAX_PARAMS = 10**14
_PARAMS = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?(?:e[0-9]{1,2})?)\s*([kmbt]?)\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_MODEL_TYPE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")


def parse_params(text: object) -> int:
    """A parameter count: ``8e9``, ``8B``, ``7.6b``, ``350M`` or ``123456`` (one clear error otherwise)."""
    if isinstance(text, bool):
        raise RunError(f"--params: {text!r} is not a parameter count")
    if isinstance(text, int):
        value = text
    else:
        m = _PARAMS.match(str(text)[:40])
        if not m:
            raise RunError(f"--params: {str(text)[:40]!r} is not a parameter count (e.g. 8e9, 8B, 350M)")
        value = round(float(m.group(1)) * _SCALE[m.group(2).lower()])
    if not 0 < value <= MAX_PARAMS:
        raise RunError(f"--params: {value} is out of range (1 to {MAX_PARAMS:.0e})")
    return int(value)


def check_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """The given facts, each checked (``display_name`` is checked by the result record)."""
    out = dict(facts)
    if out.get("model_card") is not None:
        out["model_card"] = str(out["model_card"]).strip()
        if not plain_https(out["model_card"]):
            raise RunError(
                "--model-card must be a plain https address (no spaces, quotes, query or fragment), "
                f"got {out['model_card'][:80]!r}"
            )
    if out.get("license") is not None:
        out["license"] = " ".join(str(out["license"]).split())
        if not out["license"] or len(out["license"]) > 100 or not out["license"].isprintable():
            raise RunError(
                "--license must be one short line of text (at most 100 characters), e.g. apache-2.0"
            )
    if out.get("weights") is not None and out["weights"] not in ("open", "closed"):
        raise RunError(f"--weights must be open or closed, got {str(out['weights'])[:40]!r}")
    if out.get("params") is not None:
        out["params"] = parse_params(out["params"])
    if out.get("display_name") is not None:
        out["display_name"] = " ".join(str(out["display_name"]).split())
    return out


def read_model_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The facts of a ``--model-info`` YAML file: a mapping of :data:`FACT_KEYS` only, ≤ 64 KB."""
    import yaml

    p = Path(path)
    try:
        if not p.is_file():
            raise RunError(f"--model-info: {p} is not a file")
        if p.stat().st_size > MAX_INFO_BYTES:
            raise RunError(f"--model-info: {p} is larger than {MAX_INFO_BYTES // 1024} KB")
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RunError(f"--model-info: {p} cannot be read as YAML: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise RunError(f"--model-info: {p} must hold a mapping of {', '.join(FACT_KEYS)}")
    unknown = sorted(str(k)[:40] for k in data if k not in FACT_KEYS)
    if unknown:
        raise RunError(f"--model-info: unknown key(s) {', '.join(unknown)}; known: {', '.join(FACT_KEYS)}")
    for key in ("display_name", "model_card", "license", "weights"):
        if key in data and not isinstance(data[key], str):
            raise RunError(f"--model-info: {key} must be text")
    return check_facts({k: v for k, v in data.items() if v is not None})


def is_local_path(model: str) -> bool:
    """A filesystem path (absolute, ``./``, ``~``, more than one ``/``, or an existing folder), not an id."""
    return (
        os.path.isabs(model)
        or model.startswith((".", "~"))
        or model.strip("/").count("/") > 1
        or "\\" in model
        or os.path.isdir(os.path.expanduser(model))
    )


def public_model(model: str) -> str:
    """The id a result file publishes for ``model``: the model id itself, or for a local folder the
    Hub id its ``config.json`` names (``_name_or_path``), else ``local-<model_type>``, never the path."""
    if not is_local_path(model):
        return model
    config = Path(os.path.expanduser(model)) / "config.json"
    data: Any = None
    try:
        if config.is_file() and config.stat().st_size <= MAX_CONFIG_BYTES:
            data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if isinstance(data, dict):
        name = data.get("_name_or_path")
        if isinstance(name, str) and _HUB_ID.match(name) and not is_local_path(name) and ".." not in name:
            return name
        kind = data.get("model_type")
        if isinstance(kind, str) and _MODEL_TYPE.match(kind):
            return f"local-{kind}"
    return "local-model"


def without_path(text: str, model: str, public: str) -> str:
    """``text`` (the stored command line) with a local model's path replaced by its public id."""
    if public == model:
        return text
    for form in sorted(
        {model, os.path.expanduser(model), os.path.abspath(os.path.expanduser(model))}, key=len
    )[::-1]:
        text = text.replace(form, public)
    return text


def reported_model(records: list[dict[str, Any]]) -> str | None:
    models = Counter(r.get("model") for r in records if r.get("model"))
    return models.most_common(1)[0][0] if models else None


def model_info(info: dict[str, Any], records: list[dict[str, Any]]) -> ModelInfo:
    """The result file's ``model`` block."""
    from yoxla.providers.registry import public_url
    from yoxla.record.base import ModelInfo

    return ModelInfo(
        provider=info["provider"],
        model=published_model(info),
        reported_model=public_model(reported) if (reported := reported_model(records)) else None,
        base_url=public_url(info.get("base_url")),
        display_name=info.get("display_name") or published_model(info),
        **({"metadata": meta} if (meta := model_metadata(info)) is not None else {}),
    )


def published_model(info: dict[str, Any]) -> str:
    """The model id a result file publishes: never a local folder's path (:func:`public_model`)."""
    stored = info.get("public_model")
    return stored if isinstance(stored, str) and stored else public_model(str(info["model"]))


def model_metadata(info: dict[str, Any]) -> ModelMetadata | None:
    """What the provider could tell about the model (a local model's parameter count, a Hub
    model's repository and commit) and what the contributor stated (``--model-card``,
    ``--license``, ``--weights``, ``--params``: these win); None when nothing is known."""
    from yoxla.record.base import ModelMetadata

    facts = info.get("provider_info") or {}
    found: dict[str, Any] = {}
    if isinstance(facts.get("parameters"), int) and facts["parameters"] > 0:
        found["parameters"] = facts["parameters"]
    if isinstance(facts.get("hub_repo"), str):
        found["hub_repo"] = facts["hub_repo"]
        found["card_url"] = f"https://huggingface.co/{facts['hub_repo']}"
    if isinstance(facts.get("hub_revision"), str) and re.fullmatch(r"[0-9a-f]{40}", facts["hub_revision"]):
        found["hub_revision"] = facts["hub_revision"]
    stated = check_facts(
        {k: v for k, v in (info.get("settings") or {}).items() if k in FACT_KEYS and v is not None}
    )
    if "params" in stated:
        found["parameters"] = stated["params"]
    if "weights" in stated:
        found["open_weights"] = stated["weights"] == "open"
    if "license" in stated:
        found["licence"] = stated["license"]
    if "model_card" in stated:
        found["card_url"] = stated["model_card"]
    return ModelMetadata(**found) if found else None
