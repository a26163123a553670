"""Local Hugging Face Transformers backend: batched greedy generation with the model's chat template.

Imported lazily by the provider registry; torch and transformers are imported here only.

Settings (``ProviderSpec.settings``):

- ``device_map``: passed to ``from_pretrained``; default ``"auto"`` when CUDA and accelerate are
  available, else ``"cpu"``.
- ``dtype``: ``"auto"`` (the checkpoint's dtype, default), ``"bfloat16"``, ``"float16"``, ``"float32"``.
- ``trust_remote_code``: default False; remote code runs only when asked for.
- ``attn_implementation``, ``revision``: optional, passed through to ``from_pretrained``.
- ``label_scoring``: default True. On a closed answer space (choice tasks, reasoning off),
  every label is also scored as a continuation of the same prompt
  (:func:`yoxla.score.calibration.label_scoring.score_labels`), which gives the exact
  distribution over the space; it costs about half a generation (bench/bench_label_scoring.py,
  docs/calibration.md). ``--no-probabilities`` turns it off for a run.

Decoding is greedy and nothing else: the sampling and penalty defaults in the model's
``generation_config.json`` (temperature, top_p, top_k, repetition_penalty, ...) are
neutralised, so every backend answers the same question the same way.
"""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict
from typing import Any

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

from yoxla.contract.canonical import sha256_text
from yoxla.providers.base import (
    Completion,
    Provider,
    ProviderError,
    ProviderOptions,
    ProviderSpec,
    Request,
    wants_probabilities,
)
from yoxla.score.calibration.label_scoring import default_end_ids, score_labels

KNOWN_SETTINGS = tuple(
    "device_map dtype trust_remote_code attn_implementation revision label_scoring".split()
)
DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}
DTYPES.update(dict.fromkeys(("float16", "fp16", "half"), torch.float16))
# Generation settings that would change greedy decoding, forced to their neutral values (top_k:
# transformers' neutral default, unused when do_sample is False).
GREEDY = {"do_sample": False, "num_beams": 1, "temperature": 1.0, "top_p": 1.0, "top_k": 50}
GREEDY.update({"typical_p": 1.0, "repetition_penalty": 1.0, "no_repeat_ngram_size": 0})
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def split_reasoning(text: str) -> tuple[str, str | None]:
    """Split decoded output into (answer, reasoning).

    ``<think>r</think>a`` gives ``(a, r)``; ``r</think>a`` (the template opened the block)
    gives ``(a, r)``; an unterminated ``<think>r`` gives ``("", r)``: no answer was reached.
    """
    close = text.find(_THINK_CLOSE)
    if close >= 0:
        head, tail = text[:close], text[close + len(_THINK_CLOSE) :]
        open_ = head.find(_THINK_OPEN)
        before, reasoning = ("", head) if open_ < 0 else (head[:open_], head[open_ + len(_THINK_OPEN) :])
        return (before + tail).strip(), reasoning.strip() or None
    open_ = text.find(_THINK_OPEN)
    if open_ >= 0:
        return text[:open_].strip(), text[open_ + len(_THINK_OPEN) :].strip() or None
    return text, None


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    msg = re.sub(r"\s*Traceback.*$", "", msg)
    return (msg[:300] + "…") if len(msg) > 300 else msg or type(exc).__name__


def _is_oom(exc: BaseException) -> bool:
    kinds = tuple(
        k
        for k in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
        if k
    )
    text = str(exc).lower()
    return (
        isinstance(exc, (MemoryError, *kinds)) or "out of memory" in text or "can't allocate memory" in text
    )


def resolve_hub_model(repo: str, revision: str | None) -> tuple[str, str | None]:
    """(local folder, commit) of a Hub model: a complete snapshot in the local cache as is, else
    after one request with a short timeout resolves the revision (``from_pretrained`` on an
    unreachable Hub retries for a minute); offline or unanswered, one line says what to do."""
    from huggingface_hub import HfApi, snapshot_download

    from yoxla.data.hub import HUB_TIMEOUT_S, hub_offline

    try:
        folder = snapshot_download(repo, revision=revision, local_files_only=True)
        return folder, _cached_commit(folder)
    except Exception:
        pass  # not (completely) in the local cache
    remedy = (
        "download it where the Hub is reachable (`hf download REPO --local-dir DIR`) and pass "
        "--model DIR, or fill the Hugging Face cache (HF_HOME)"
    )
    if hub_offline():
        raise ProviderError(
            f"model {repo!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; {remedy}"
        )
    try:
        info = HfApi().model_info(repo, revision=revision, timeout=HUB_TIMEOUT_S)
    except Exception as exc:
        raise ProviderError(
            f"model {repo!r} is not a local folder, not in the local cache, and the Hugging Face Hub "
            f"did not answer ({type(exc).__name__}); {remedy}"
        ) from None
    commit = info.sha or revision
    try:
        return snapshot_download(repo, revision=commit), commit
    except Exception as exc:
        raise ProviderError(f"cannot download {repo!r} at {commit}: {_one_line(exc)}") from None


def _cached_commit(folder: str) -> str | None:
    """The commit of a snapshot folder of the Hugging Face cache (``…/snapshots/<commit>``)."""
    name = os.path.basename(os.path.normpath(folder))
    return name if re.fullmatch(r"[0-9a-f]{40}", name) else None


def _looks_local(model: str) -> bool:
    """A filesystem path rather than a Hub id ("org/name")."""
    return (
        os.path.isabs(model)
        or model.startswith((".", "~"))
        or os.sep in model.strip("/").replace("/", "", 1)  # more than one "/": not org/name
        or (os.altsep is not None and os.altsep in model)
    )


class TransformersProvider(Provider):
    """Runs a local (or Hub-cached) causal LM with ``transformers``, a batch at a time."""

    parallel = False

    def __init__(self, spec: ProviderSpec, model: str, options: ProviderOptions) -> None:
        self.spec = spec
        self.model_id = model
        self.options = options
        settings = dict(spec.settings or {})
        unknown = sorted(set(settings) - set(KNOWN_SETTINGS))
        if unknown:
            raise ProviderError(
                f"provider {spec.name!r}: unknown transformers setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(KNOWN_SETTINGS)}"
            )
        dtype = _parse_dtype(settings.get("dtype", "auto"))
        if options.seed is not None:
            torch.manual_seed(options.seed)  # greedy decoding needs none; custom model code might

        path = os.path.expanduser(model)
        if _looks_local(model) and not os.path.isdir(path):
            raise ProviderError(f"model path {model!r} does not exist or is not a folder")
        if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "config.json")):
            raise ProviderError(f"{model!r} is a folder without config.json, not a Hugging Face model folder")
        self.hub_repo: str | None = None
        self.hub_commit: str | None = None
        if not os.path.isdir(path):  # a Hub id: resolve it in seconds, never a minute of retries
            path, self.hub_commit = resolve_hub_model(model, settings.get("revision"))
            self.hub_repo = model
        self.path = path

        self.label_scoring = _flag(settings, "label_scoring", True) and options.probabilities
        self.scoring_mode = "shared"  # one pass over the prompt, its cache shared by every label
        common: dict[str, Any] = {"trust_remote_code": _flag(settings, "trust_remote_code", False)}
        if settings.get("revision"):
            common["revision"] = settings["revision"]

        self.tokenizer = self._load_tokenizer(common)
        template = self._template()
        if not template:
            raise ProviderError(
                f"the tokenizer of {model!r} has no chat template; YOXLA sends chat messages, "
                "so use an instruction-tuned model or add a chat_template"
            )
        self.chat_template: str = template
        self.merge_system = self._probe_system_role()
        if self.tokenizer.pad_token_id is None:
            if self.tokenizer.eos_token is None:
                raise ProviderError(f"the tokenizer of {model!r} has neither a pad nor an eos token")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"  # generation continues from the right edge

        self.device_map = settings.get("device_map") or _default_device_map()
        self.model = self._load_model(common, settings, dtype)
        self.model.eval()
        self.device = _first_device(self.model)
        self.eos_ids = self._eos_ids()
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.batch_size = options.batch_size or (16 if self.device.type == "cuda" else 8)
        if self.batch_size < 1:
            raise ProviderError(f"batch size must be at least 1, got {self.batch_size}")

    # Loading ---------------------------------------------------------------------------------
    def _load_tokenizer(self, common: dict[str, Any]) -> Any:
        try:
            return AutoTokenizer.from_pretrained(self.path, **common)
        except Exception as exc:
            raise ProviderError(self._load_message("tokenizer", exc)) from None

    def _load_model(self, common: dict[str, Any], settings: dict[str, Any], dtype: Any) -> Any:
        kwargs: dict[str, Any] = dict(common)
        if self.device_map != "cpu" or _has_accelerate():  # older transformers need accelerate for it
            kwargs["device_map"] = self.device_map
        kwargs["dtype" if _has_dtype_kwarg() else "torch_dtype"] = dtype
        if settings.get("attn_implementation"):
            kwargs["attn_implementation"] = settings["attn_implementation"]
        try:
            return AutoModelForCausalLM.from_pretrained(self.path, **kwargs)
        except Exception as exc:
            if _is_oom(exc):
                _free_memory()
                raise ProviderError(
                    f"out of memory while loading {self.model_id!r} on {self.device_map!r}; "
                    "try a smaller dtype (bfloat16), another device_map or a smaller model"
                ) from None
            raise ProviderError(self._load_message("model", exc)) from None

    def _load_message(self, what: str, exc: BaseException) -> str:
        if isinstance(exc, OSError) and not os.path.isdir(self.path):
            return (
                f"cannot load the {what} of {self.model_id!r}: it is neither a local folder "
                f"nor a model on the Hugging Face Hub that can be reached ({_one_line(exc)})"
            )
        return f"cannot load the {what} of {self.model_id!r}: {_one_line(exc)}"

    def _template(self) -> str | None:
        template = getattr(self.tokenizer, "chat_template", None)
        if isinstance(template, dict):  # several named templates: the default one is used
            template = template.get("default")
        return template or None

    def _probe_system_role(self) -> bool:
        """Whether the template rejects a system turn (Gemma 2, older Mistral): then the system
        prompt is put before the first user message instead. Decided once, at load time."""
        probe = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        try:
            self._apply(probe, thinking=False)
            return False
        except Exception:
            pass
        try:
            self._apply(_merge_system(probe), thinking=False)
        except Exception as exc:
            raise ProviderError(
                f"the chat template of {self.model_id!r} cannot render a system and a user message: "
                f"{_one_line(exc)}"
            ) from None
        return True

    def _eos_ids(self) -> list[int]:
        ids = default_end_ids(self.model, self.tokenizer)
        if not ids:
            raise ProviderError(
                f"{self.model_id!r} defines no end-of-sequence token; cannot tell when to stop"
            )
        return ids

    # Generation ------------------------------------------------------------------------------
    def render(self, messages: list[dict[str, str]], thinking: bool = False) -> str:
        """The prompt string the model sees (chat template, generation prompt added)."""
        return self._apply(_merge_system(messages) if self.merge_system else messages, thinking)

    def _apply(self, messages: list[dict[str, str]], thinking: bool) -> str:
        return self.tokenizer.apply_chat_template(
            messages,
            tokenize=False,
            add_generation_prompt=True,
            enable_thinking=thinking,  # a template variable; templates that don't use it ignore it
        )

    def generate(self, request: Request) -> Completion:
        return self.generate_batch([request])[0]

    def generate_batch(self, requests: list[Request]) -> list[Completion]:
        """Greedy completions in the order given, ``batch_size`` prompts per generate() call.

        One call needs one ``max_tokens``, so requests are grouped by it; within a group,
        prompts are sorted by length before chunking, so that little padding is computed.
        (Greedy decoding makes the outputs independent of how requests are batched.)
        """
        results: list[Completion | None] = [None] * len(requests)
        prompts: list[str] = []
        groups: dict[int, list[int]] = defaultdict(list)
        for i, req in enumerate(requests):
            try:
                prompts.append(self.render(req.messages, req.thinking))
            except Exception as exc:  # a template that rejects this conversation
                prompts.append("")
                results[i] = Completion(model=self.model_id, error=f"chat template failed: {_one_line(exc)}")
                continue
            groups[req.max_tokens].append(i)
        lengths: list[int] = []
        if any(len(idx) > self.batch_size for idx in groups.values()):
            lengths = [len(ids) for ids in self.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        for max_tokens, idx in groups.items():
            if lengths:
                idx.sort(key=lambda i: lengths[i])
            for start in range(0, len(idx), self.batch_size):
                chunk = idx[start : start + self.batch_size]
                done = self._run([prompts[i] for i in chunk], max_tokens)
                for i, completion in zip(chunk, done, strict=True):
                    results[i] = completion
        if self.label_scoring:
            for req, prompt, done_one in zip(requests, prompts, results, strict=True):
                if done_one is not None and not done_one.error:
                    done_one.label_scores = self.score(req, prompt)
        return [c for c in results if c is not None]

    def score(self, request: Request, prompt: str) -> dict[str, Any] | None:
        """The exact distribution over the request's answer space (stored form), or None when
        the task has no closed space, reasoning is on, or scoring fails (absent, never zeros)."""
        if not wants_probabilities(request):
            return None
        space = request.space
        if not space:
            return None
        for _ in range(2):
            try:
                scores = score_labels(
                    self.model, self.tokenizer, prompt, space, end_ids=self.eos_ids, mode=self.scoring_mode
                )
                return scores.distribution.to_dict()
            except Exception as exc:
                if _is_oom(exc):
                    _free_memory()
                    return None
                if self.scoring_mode == "full":
                    return None
                self.scoring_mode = "full"  # this model's cache cannot be shared: one pass per label
        return None

    def _run(self, prompts: list[str], max_tokens: int) -> list[Completion]:
        """One generate() call; on out-of-memory the batch is halved, down to single prompts.

        Any other failure becomes an ``error`` on each completion of the batch: a local model
        has nothing to retry, and the runner records errors per example.
        """
        try:
            return self._generate(prompts, max_tokens)
        except Exception as exc:
            if not _is_oom(exc):
                error = f"generation failed: {type(exc).__name__}: {_one_line(exc)}"
                return [Completion(model=self.model_id, error=error) for _ in prompts]
            _free_memory()
            if len(prompts) > 1:
                half = len(prompts) // 2
                return self._run(prompts[:half], max_tokens) + self._run(prompts[half:], max_tokens)
            return [Completion(model=self.model_id, error=f"out of memory on {self.device} for one request")]

    @torch.inference_mode()
    def _generate(self, prompts: list[str], max_tokens: int) -> list[Completion]:
        started = time.perf_counter()
        # The template writes its own special tokens (BOS, role markers): add none here.
        enc = self.tokenizer(prompts, add_special_tokens=False, padding=True, return_tensors="pt")
        input_ids = enc["input_ids"].to(self.device)
        attention_mask = enc["attention_mask"].to(self.device)
        # Left padding + attention mask: generate() derives position ids from the mask
        # (cumsum - 1), so a padded prompt is computed like the same prompt alone.
        out = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=max_tokens,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            **GREEDY,
        )
        new = out[:, input_ids.shape[1] :].tolist()
        prompt_lens = attention_mask.sum(dim=1).tolist()
        eos = set(self.eos_ids)
        completions: list[Completion] = []
        rows: list[tuple[list[int], str]] = []
        for tokens in new:
            stop = next((k for k, t in enumerate(tokens) if t in eos), None)
            rows.append((tokens, "length") if stop is None else (tokens[: stop + 1], "stop"))
        texts = self.tokenizer.batch_decode(
            [t[:-1] if reason == "stop" else t for t, reason in rows], skip_special_tokens=True
        )
        latency = (time.perf_counter() - started) / len(prompts)
        for (tokens, reason), text, n_prompt in zip(rows, texts, prompt_lens, strict=True):
            answer, reasoning = split_reasoning(text)
            completions.append(
                Completion(
                    text=answer,
                    reasoning=reasoning,
                    finish_reason=reason,
                    model=self.model_id,
                    usage={
                        "prompt_tokens": int(n_prompt),
                        "completion_tokens": len(tokens),
                        "total_tokens": int(n_prompt) + len(tokens),
                    },
                    latency_s=latency,
                )
            )
        return completions

    # Facts -----------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        devices = _multi_device(self.model)
        facts = {
            "model_path": self.model_id,
            "device": f"auto ({devices})" if devices else str(self.device),
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "chat_template_hash": sha256_text(self.chat_template),
            "batch_size": self.batch_size,
            "label_scoring": self.scoring_mode if self.label_scoring else False,
        }
        if self.hub_repo:
            facts["hub_repo"] = self.hub_repo
            facts["hub_revision"] = self.hub_commit
        facts["parameters"] = int(sum(p.numel() for p in self.model.parameters()))
        if self.merge_system:
            facts["system_prompt"] = "merged into the first user message (the template has no system role)"
        return facts

    def close(self) -> None:
        self.model = None
        _free_memory()


def _flag(settings: dict[str, Any], name: str, default: bool) -> bool:
    value = settings.get(name, default)
    if not isinstance(value, bool):
        raise ProviderError(f"{name} must be true or false, got {value!r}")
    return value


def _parse_dtype(value: Any) -> Any:
    if value in (None, "auto"):
        return "auto"
    name = str(value).removeprefix("torch.")
    if name not in DTYPES:
        raise ProviderError(f"unknown dtype {value!r}; use auto, float32, float16 or bfloat16")
    return DTYPES[name]


def _merge_system(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Move system turns into the first user message: "<system>\n\n<user>"."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system:
        user = next((m for m in rest if m["role"] == "user"), None)
        if user is None:
            rest.insert(0, {"role": "user", "content": "\n\n".join(system)})
        else:
            user["content"] = "\n\n".join([*system, user["content"]])
    return rest


def _has_dtype_kwarg() -> bool:
    """transformers >= 4.56 takes ``dtype=``; older versions ``torch_dtype=``."""
    try:
        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= (4, 56)


def _has_accelerate() -> bool:
    try:
        import accelerate  # noqa: F401
    except ImportError:
        return False
    return True


def _default_device_map() -> str:
    return "auto" if torch.cuda.is_available() and _has_accelerate() else "cpu"


def _first_device(model: Any) -> torch.device:
    try:
        return next(model.parameters()).device
    except StopIteration:
        return torch.device("cpu")


def _multi_device(model: Any) -> str:
    devices = sorted({str(d) for d in (getattr(model, "hf_device_map", None) or {}).values()})
    return ",".join(devices) if len(devices) > 1 else ""


def _free_memory() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
