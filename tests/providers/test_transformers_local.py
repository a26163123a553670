"""The local Transformers provider, on a tiny random model built in a temporary folder."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from yoxla.contract.benchmark import benchmark_task, prepare_rows  # noqa: E402
from yoxla.providers.base import Completion, ProviderError, ProviderOptions, ProviderSpec, Request  # noqa: E402
from yoxla.providers.transformers_local import TransformersProvider, split_reasoning  # noqa: E402

ROWS = [
    {"id": "r1", "premise": "Bakı Azərbaycanın paytaxtıdır.", "hypothesis": "Bakı şəhərdir."},
    {
        "id": "r2",
        "premise": "Uşaqlar parkda oynayırdılar, çünki hava gözəl idi və məktəb tətil idi.",
        "hypothesis": "Hava pis idi.",
    },
    {"id": "r3", "premise": "Qız kitab oxudu.", "hypothesis": "Qız yazıçıdır."},
    {
        "id": "r4",
        "premise": "Həkim xəstəyə istirahət etməyi məsləhət gördü, xəstə də bir həftə evdə qaldı və sağaldı.",
        "hypothesis": "Xəstə işə getdi.",
    },
    {"id": "r5", "premise": "Yağış yağdı.", "hypothesis": "Yer yaş idi."},
    {
        "id": "r6",
        "premise": "Şirkət ötən il gəlirini iki dəfə artırdığını bildirdi və yeni işçilər götürdü.",
        "hypothesis": "Şirkətin gəliri azalıb.",
    },
    {"id": "r7", "premise": "Nizami Gəncəvi şair idi.", "hypothesis": "Nizami şeir yazıb."},
]
SPEC = ProviderSpec(name="local", backend="transformers", settings={"dtype": "float32", "device_map": "cpu"})


def requests(max_tokens: int = 12, thinking: bool = False) -> list[Request]:
    task = benchmark_task("nli_v1")
    items = prepare_rows("nli_v1", ROWS).items
    return [
        Request(
            task=task,
            row=row,
            example_id=row["id"],
            messages=list(item.messages),
            max_tokens=max_tokens,
            thinking=thinking,
        )
        for row, item in zip(ROWS, items, strict=True)
    ]


def provider(path: Path, batch_size: int | None = None, **settings) -> TransformersProvider:
    spec = ProviderSpec(name="local", backend="transformers", settings={**SPEC.settings, **settings})
    return TransformersProvider(spec, str(path), ProviderOptions(batch_size=batch_size))


def outcome(c: Completion) -> tuple:
    return (c.text, c.reasoning, c.finish_reason, c.usage, c.error)


@pytest.fixture(scope="module")
def tiny(tiny_model_dir: Path) -> TransformersProvider:
    return provider(tiny_model_dir, batch_size=4)


@pytest.fixture(scope="module")
def stopping(tiny: TransformersProvider, copy_model) -> tuple[TransformersProvider, int, str]:
    """The tiny model with one extra end token: the 4th token greedy decoding gives for ROWS[0].

    Returns the provider, the number of tokens ROWS[0] then generates (the stop included)
    and its text (the stop token excluded), so that a batch mixes rows that stop early with
    rows that run to max_tokens.
    """
    prompt = tiny.render(requests()[0].messages)
    enc = tiny.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")
    out = tiny.model.generate(**enc, max_new_tokens=4, do_sample=False, pad_token_id=tiny.pad_id)
    new = out[0, enc["input_ids"].shape[1] :].tolist()
    assert len(new) == 4 and not set(new) & set(tiny.eos_ids), "pick another row: it stops by itself"
    stop_id = new[3]
    eos = [*tiny.eos_ids, stop_id]
    path = copy_model("stopping", {"generation_config.json": {"eos_token_id": eos}})
    stop_at = new.index(stop_id) + 1
    return provider(path, batch_size=4), stop_at, tiny.tokenizer.decode(new[: stop_at - 1])


def test_generates_for_a_batch_of_benchmark_prompts(tiny: TransformersProvider, tiny_model_dir: Path):
    reqs = requests()
    out = tiny.generate_batch(reqs)
    assert len(out) == len(reqs)
    for c, r in zip(out, reqs, strict=True):
        assert c.error is None
        assert isinstance(c.text, str)
        assert c.finish_reason in ("stop", "length")
        assert c.model == str(tiny_model_dir)
        assert c.latency_s > 0
        assert 0 < c.usage["completion_tokens"] <= r.max_tokens
        if c.finish_reason == "length":
            assert c.usage["completion_tokens"] == r.max_tokens
        assert c.usage["total_tokens"] == c.usage["prompt_tokens"] + c.usage["completion_tokens"]
        # the prompt is the chat template applied to the task's messages, nothing more
        prompt = tiny.render(r.messages)
        assert c.usage["prompt_tokens"] == len(tiny.tokenizer(prompt, add_special_tokens=False)["input_ids"])
    assert len({c.usage["prompt_tokens"] for c in out}) > 1  # lengths differ: the batch was padded


def test_batched_and_one_at_a_time_are_identical(tiny: TransformersProvider):
    reqs = requests(max_tokens=16)
    batched = tiny.generate_batch(reqs)  # batch_size 4: chunks of 4 and 3
    single = [tiny.generate(r) for r in reqs]
    assert [outcome(c) for c in batched] == [outcome(c) for c in single]
    whole = provider(Path(tiny.path), batch_size=len(reqs)).generate_batch(reqs)
    assert [outcome(c) for c in whole] == [outcome(c) for c in single]


def test_batched_identical_when_rows_stop_at_different_steps(stopping):
    p, stop_at, text = stopping
    reqs = requests(max_tokens=10)
    batched = p.generate_batch(reqs)
    single = [p.generate(r) for r in reqs]
    assert [outcome(c) for c in batched] == [outcome(c) for c in single]
    assert batched[0].finish_reason == "stop"
    assert batched[0].usage["completion_tokens"] == stop_at
    assert batched[0].text == text
    assert {c.finish_reason for c in batched} == {"stop", "length"}


def test_max_tokens_is_respected(stopping):
    p, stop_at, _ = stopping
    short = p.generate_batch(requests(max_tokens=stop_at - 1))
    assert short[0].finish_reason == "length"
    assert all(c.usage["completion_tokens"] <= stop_at - 1 for c in short)
    exact = p.generate(requests(max_tokens=stop_at)[0])  # the stop token is the last allowed one
    assert exact.finish_reason == "stop"
    assert exact.usage["completion_tokens"] == stop_at
    for max_tokens in (1, 3):
        out = p.generate_batch(requests(max_tokens=max_tokens))
        assert "length" in {c.finish_reason for c in out}
        for c in out:
            n = c.usage["completion_tokens"]
            assert (c.finish_reason, n) == ("length", max_tokens) or (
                c.finish_reason == "stop" and n <= max_tokens
            )


def test_mixed_max_tokens_in_one_batch(tiny: TransformersProvider):
    reqs = requests(max_tokens=8)[:3] + requests(max_tokens=4)[3:]
    out = tiny.generate_batch(reqs)
    assert all(c.usage["completion_tokens"] <= r.max_tokens for c, r in zip(out, reqs, strict=True))
    assert {c.usage["completion_tokens"] for c in out if c.finish_reason == "length"} == {8, 4}
    assert [outcome(c) for c in out] == [outcome(tiny.generate(r)) for r in reqs]


def test_enable_thinking_reaches_the_template(tiny: TransformersProvider):
    messages = requests()[0].messages
    assert tiny.render(messages, thinking=False).endswith("<|assistant|>\n<think>\n\n</think>\n\n")
    assert tiny.render(messages, thinking=True).endswith("<|assistant|>\n")


def test_template_without_thinking_variable(copy_model):
    template = (
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}>{% endif %}"
    )
    p = provider(with_template(copy_model, "plain_template", template))
    assert p.render([{"role": "user", "content": "Salam"}], thinking=False) == "Salam\n>"
    assert p.generate(requests(max_tokens=2)[0]).error is None
    assert "system_prompt" not in p.describe()


def with_template(copy_model, name: str, template: str) -> Path:
    path = copy_model(name, remove=("chat_template.jinja",))
    (path / "chat_template.jinja").write_text(template, encoding="utf-8")
    return path


def test_template_without_system_role_gets_the_system_prompt_in_the_user_turn(copy_model):
    template = (
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    p = provider(with_template(copy_model, "no_system", template))
    req = requests(max_tokens=3)[0]
    system, user = (m["content"] for m in req.messages)
    assert p.render(req.messages) == f"<|user|>\n{system}\n\n{user}</s>\n<|assistant|>\n"
    assert p.generate(req).error is None
    assert "system_prompt" in p.describe()


def test_a_prompt_the_template_rejects_fails_alone(copy_model):
    template = (
        "{% for m in messages %}{% if 'BOOM' in m['content'] %}{{ raise_exception('bad message') }}{% endif %}"
        "<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    p = provider(with_template(copy_model, "picky", template), batch_size=4)
    reqs = requests(max_tokens=4)
    bad = [*reqs[2].messages[:1], {"role": "user", "content": "BOOM"}]
    reqs[2] = Request(task=reqs[2].task, row={}, example_id="bad", messages=bad, max_tokens=4)
    out = p.generate_batch(reqs)
    assert out[2].error is not None and "bad message" in out[2].error and out[2].text is None
    good = [i for i in range(len(reqs)) if i != 2]
    assert all(out[i].error is None for i in good)
    assert [outcome(out[i]) for i in good] == [outcome(p.generate(reqs[i])) for i in good]


def test_sampling_defaults_are_neutralised_without_warnings(tiny: TransformersProvider, copy_model):
    """A generation_config.json made for sampling (like Qwen3's) neither changes greedy output nor warns."""
    path = copy_model(
        "sampling_defaults",
        {
            "generation_config.json": {
                "do_sample": True,
                "temperature": 0.6,
                "top_p": 0.95,
                "top_k": 20,
                "repetition_penalty": 5.0,
                "no_repeat_ngram_size": 1,
            }
        },
    )
    p = provider(path)
    cache_clear = getattr(transformers.utils.logging.warning_once, "cache_clear", None)
    if cache_clear is not None:  # transformers warns once per process: make this test see it
        cache_clear()
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    hf_logger = logging.getLogger("transformers")
    hf_logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = p.generate_batch(requests(max_tokens=16)[:3])
    finally:
        hf_logger.removeHandler(handler)
    messages = [r.getMessage() for r in records] + [str(w.message) for w in caught]
    assert not [m for m in messages if re.search(r"do_sample|temperature|top_p|top_k|not valid", m)], messages
    plain = tiny.generate_batch(requests(max_tokens=16)[:3])
    assert [outcome(c) for c in first] == [outcome(c) for c in plain]  # the defaults were neutralised


def test_describe(tiny: TransformersProvider, tiny_model_dir: Path):
    facts = tiny.describe()
    template = (tiny_model_dir / "chat_template.jinja").read_text(encoding="utf-8")
    assert facts == {
        "model_path": str(tiny_model_dir),
        "device": "cpu",
        "dtype": "float32",
        "chat_template_hash": "sha256:" + hashlib.sha256(template.encode("utf-8")).hexdigest(),
        "batch_size": 4,
        "parameters": sum(p.numel() for p in tiny.model.parameters()),
        "label_scoring": "shared",
    }
    assert facts["parameters"] > 1000
    json.dumps(facts)
    assert provider(tiny_model_dir).batch_size == 8  # the CPU default


def test_missing_path_is_a_clear_error(tmp_path: Path):
    missing = tmp_path / "no" / "such-model"
    with pytest.raises(ProviderError) as err:
        provider(missing)
    message = str(err.value)
    assert str(missing) in message and "does not exist" in message
    assert "\n" not in message and "Traceback" not in message


def test_folder_without_model_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ProviderError) as err:
        provider(tmp_path)
    assert "without config.json" in str(err.value) and "\n" not in str(err.value)


def test_folder_without_weights_is_a_clear_error(copy_model):
    path = copy_model("no_weights", remove=("model.safetensors",))
    with pytest.raises(ProviderError) as err:
        provider(path)
    message = str(err.value)
    assert message.startswith(f"cannot load the model of {str(path)!r}") and "\n" not in message


def test_tokenizer_without_chat_template_is_an_error(copy_model):
    path = copy_model(
        "no_template", {"tokenizer_config.json": {"chat_template": None}}, remove=("chat_template.jinja",)
    )
    with pytest.raises(ProviderError, match="no chat template"):
        provider(path)


def test_bad_settings_are_errors(tiny_model_dir: Path):
    with pytest.raises(ProviderError, match="unknown dtype"):
        provider(tiny_model_dir, dtype="float8")
    with pytest.raises(ProviderError, match="unknown transformers setting"):
        provider(tiny_model_dir, dtpye="float32")


@pytest.mark.parametrize(
    ("raw", "text", "reasoning"),
    [
        ("entailment", "entailment", None),
        ("<think>\nhmm\n</think>\n\nneutral", "neutral", "hmm"),
        ("hmm</think>contradiction", "contradiction", "hmm"),  # the template opened the block
        ("<think>still thinking", "", "still thinking"),  # cut off before the answer
        ("<think>\n\n</think>\n\nentailment", "entailment", None),  # thinking off
    ],
)
def test_split_reasoning(raw: str, text: str, reasoning: str | None):
    assert split_reasoning(raw) == (text, reasoning)


def test_import_yoxla_stays_light():
    code = "import sys, yoxla, yoxla.providers.base; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# A model id that is not a folder: resolved through the local cache or one quick look. -------


def test_hub_id_offline_and_not_cached_fails_at_once_naming_the_remedy(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    called = []
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: called.append(a))
    with pytest.raises(ProviderError) as err:
        provider("yoxla-test/not-in-any-cache")
    message = str(err.value)
    assert "not in the local Hugging Face cache" in message and "--model DIR" in message
    assert "\n" not in message and not called  # no loading, so no minute of retries


def test_hub_id_when_the_hub_does_not_answer_fails_in_one_line(monkeypatch: pytest.MonkeyPatch):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    asked: list[float] = []

    def unreachable(self, repo, revision=None, timeout=None, **kw):  # type: ignore[no-untyped-def]
        asked.append(timeout)
        raise ConnectionError("no route to host")

    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", unreachable)
    with pytest.raises(ProviderError) as err:
        provider("yoxla-test/unreachable")
    assert "did not answer (ConnectionError)" in str(err.value) and "\n" not in str(err.value)
    assert asked and all(t is not None and t <= 5 for t in asked)  # one request with a short timeout


def test_hub_model_in_the_local_cache_loads_offline_and_records_its_commit(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    import shutil

    from huggingface_hub import constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo_dir = Path(constants.HF_HUB_CACHE) / "models--yoxla-test--tiny"
    shutil.copytree(tiny_model_dir, repo_dir / "snapshots" / commit, dirs_exist_ok=True)
    (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
    (repo_dir / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = provider("yoxla-test/tiny")
    facts = p.describe()
    assert facts["hub_repo"] == "yoxla-test/tiny" and facts["hub_revision"] == commit


def test_a_local_run_records_the_model_metadata_it_can_find(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch
):
    from yoxla.cli.main import run as cli_run

    monkeypatch.chdir(tmp_path)
    args = ["run", "--provider", "transformers", "--model", str(tiny_model_dir), "--edition", "sample"]
    args += ["--task", "nli_v1", "--limit", "2", "--batch-size", "2", "--no-progress", "--run-id", "meta"]
    assert cli_run(args) == 0
    files = list((tmp_path / "results" / "partial" / "sample").glob("*.json"))
    doc = json.loads(files[0].read_text(encoding="utf-8"))
    meta = doc["model"]["metadata"]
    assert meta["parameters"] > 1000 and "hub_repo" not in meta  # a local folder has no Hub commit
    # Its path is published nowhere: not as its name, its file name or in the stored command.
    assert str(tiny_model_dir) not in files[0].read_text(encoding="utf-8")
    assert tiny_model_dir.name not in files[0].name and "tmp" not in files[0].name
    assert (
        doc["model"]["model"] == doc["model"]["display_name"] and "/" not in doc["model"]["display_name"][:1]
    )
