"""The result file: one self-contained, optionally signed JSON document per model.

``content_sha256`` is SHA-256 over the canonical JSON of the document without the
``content_sha256`` and ``signature`` fields; the signature is Ed25519 over that digest string.
docs/result-format.md gives the format; ``yoxla/schema/result.schema.json`` is generated from
:mod:`yoxla.record.result`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

SIGNATURE_FIELDS = ("content_sha256", "signature")
SIGN_KEY_ENV = "YOXLA_SIGN_KEY"


def canonical_bytes(doc: dict[str, Any]) -> bytes:
    body = {k: v for k, v in doc.items() if k not in SIGNATURE_FIELDS}
    # no circular check: a document read from JSON has no cycles (one built with a cycle still
    # fails, on the recursion limit); the check costs a dictionary entry per object
    return json.dumps(
        body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
    ).encode("utf-8")


def content_digest(doc: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(doc)).hexdigest()


def model_slug(model: str) -> str:
    """File-name-safe form of a model id: ``Qwen/Qwen3-8B`` → ``qwen--qwen3-8b``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", model.lower().replace("/", "--")).strip("-.")
    return slug or "model"


def result_filename(provider: str, model: str) -> str:
    return f"{model_slug(provider)}__{model_slug(model)}.json"


# Keys -------------------------------------------------------------------------------


def key_id(public_raw: bytes) -> str:
    return "ed25519:" + hashlib.sha256(public_raw).hexdigest()[:16]


def keygen(out: str | Path) -> tuple[Path, Path, str]:
    """Write an Ed25519 key pair: ``out`` (private, PEM) and ``out.pub`` (public, base64 raw)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    priv = Path(out)
    priv.parent.mkdir(parents=True, exist_ok=True)
    priv.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    priv.chmod(0o600)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    pub = priv.with_name(priv.name + ".pub")
    pub.write_text(base64.b64encode(raw).decode() + "\n", encoding="utf-8")
    return priv, pub, key_id(raw)


def sign(doc: dict[str, Any], private_key_path: str | Path) -> dict[str, Any]:
    """Set ``content_sha256`` and an Ed25519 ``signature`` on the document (in place)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = serialization.load_pem_private_key(Path(private_key_path).read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{private_key_path} is not an Ed25519 private key")
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    doc["content_sha256"] = content_digest(doc)
    doc["signature"] = {
        "algorithm": "ed25519",
        "key_id": key_id(raw),
        "public_key": base64.b64encode(raw).decode(),
        "value": base64.b64encode(key.sign(doc["content_sha256"].encode("utf-8"))).decode(),
    }
    return doc


def verify_signature(doc: dict[str, Any]) -> tuple[bool, str | None]:
    """(ok, key_id). ok is False when the signature, its key or its key id does not check out."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    sig = doc.get("signature")
    if not isinstance(sig, dict):
        return False, None
    try:
        raw = base64.b64decode(sig["public_key"], validate=True)
        if key_id(raw) != sig.get("key_id") or sig.get("algorithm") != "ed25519":
            return False, sig.get("key_id")
        Ed25519PublicKey.from_public_bytes(raw).verify(
            base64.b64decode(sig["value"], validate=True), str(doc.get("content_sha256", "")).encode("utf-8")
        )
    except (InvalidSignature, KeyError, ValueError, TypeError):
        return False, sig.get("key_id") if isinstance(sig.get("key_id"), str) else None
    return True, sig["key_id"]


def finalize(doc: dict[str, Any], sign_key: str | Path | None = None) -> dict[str, Any]:
    """Add the digest, and the signature when a key is given."""
    if sign_key:
        return sign(doc, sign_key)
    doc.pop("signature", None)
    doc["content_sha256"] = content_digest(doc)
    return doc


def write_result(doc: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
