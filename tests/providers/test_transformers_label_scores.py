"""The local provider's exact label scoring: what it returns, when it returns nothing, and a run.

On the tiny random model, each example's distribution equals the softmax over the labels'
log masses computed by hand from the model's logits (every label's tokens summed, plus the
end of the answer), on the very prompt the provider generates from.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from yoxla.contract.benchmark import benchmark_task, choice_space, prepare_rows  # noqa: E402
from yoxla.prompt.space import probability_space  # noqa: E402
from yoxla.providers.base import ProviderOptions, ProviderSpec, Request  # noqa: E402
from yoxla.providers.transformers_local import TransformersProvider  # noqa: E402

SETTINGS = {"dtype": "float32", "device_map": "cpu"}
NLI_ROWS = [
    {"id": "a", "premise": "Bakı Azərbaycanın paytaxtıdır.", "hypothesis": "Bakı şəhərdir."},
    {"id": "b", "premise": "Yağış yağdı.", "hypothesis": "Yer quru qaldı."},
]
KC_ROW = {"id": "k", "question": "Sual?", "candidates": [f"variant {i}" for i in range(20)]}


def make(path: Path, probabilities: bool = True, **settings) -> TransformersProvider:
    spec = ProviderSpec(name="local", backend="transformers", settings={**SETTINGS, **settings})
    return TransformersProvider(spec, str(path), ProviderOptions(batch_size=2, probabilities=probabilities))


def request(task_id: str, row: dict, thinking: bool = False) -> Request:
    """The request the runner sends for one row: its messages and, for a closed answer, its space."""
    task, item = benchmark_task(task_id), prepare_rows(task_id, [row]).items[0]
    return Request(
        task=task,
        row=row,
        example_id=row["id"],
        messages=list(item.messages),
        max_tokens=4,
        thinking=thinking,
        space=probability_space(task.spec, item.choices),
    )


def by_hand(p: TransformersProvider, prompt: str, labels: tuple[str, ...]) -> dict[str, float]:
    """softmax over labels of Σ log p(label tokens) + log Σ_end p(end), one full forward pass per label."""
    tok, model = p.tokenizer, p.model
    prompt_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    logmass = {}
    for label in labels:
        ids = tok(prompt + label, add_special_tokens=False)["input_ids"]
        if ids[: len(prompt_ids)] != prompt_ids:  # merged at the boundary: the label alone
            ids = prompt_ids + tok(label, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
        n = len(prompt_ids)
        total = sum(float(logp[n - 1 + j, t]) for j, t in enumerate(ids[n:]))
        total += float(torch.logsumexp(logp[len(ids) - 1, p.eos_ids], dim=0))
        logmass[label] = total
    top = max(logmass.values())
    norm = sum(math.exp(v - top) for v in logmass.values())
    return {label: math.exp(v - top) / norm for label, v in logmass.items()}


@pytest.fixture(scope="module")
def local(tiny_model_dir: Path) -> TransformersProvider:
    return make(tiny_model_dir)


def test_generation_comes_with_the_exact_distribution_over_the_space(local: TransformersProvider) -> None:
    reqs = [request("nli_v1", r) for r in NLI_ROWS] + [request("knowledge_choice_v1", KC_ROW)]
    done = local.generate_batch(reqs)
    for req, comp in zip(reqs, done, strict=True):
        assert comp.error is None and comp.label_scores is not None
        space = choice_space(req.task.id, req.row)
        assert space is not None
        scores = comp.label_scores
        assert scores["method"] == "label_scoring" and list(scores["probs"]) == list(space)
        want = by_hand(local, local.render(req.messages), space)
        assert [scores["probs"][lb] for lb in space] == pytest.approx([want[lb] for lb in space], abs=1e-5)
        assert scores["top"] == max(want, key=lambda lb: want[lb])
        assert 0.0 <= scores["mass_outside"] <= 1.0 and "missing" not in scores  # always complete


def test_no_distribution_where_none_is_asked_for(local: TransformersProvider, tiny_model_dir: Path) -> None:
    sts = {"id": "s", "sentence1": "Bakı böyükdür.", "sentence2": "Bakı kiçikdir."}
    thinking, open_answer = local.generate_batch(
        [request("nli_v1", NLI_ROWS[0], thinking=True), request("sts_v1", sts)]
    )
    assert thinking.label_scores is None and open_answer.label_scores is None
    for off in (make(tiny_model_dir, label_scoring=False), make(tiny_model_dir, probabilities=False)):
        (comp,) = off.generate_batch([request("nli_v1", NLI_ROWS[0])])
        assert comp.label_scores is None and comp.error is None
        assert off.describe()["label_scoring"] is False


def test_label_scoring_setting_must_be_a_boolean(tiny_model_dir: Path) -> None:
    from yoxla.providers.base import ProviderError

    with pytest.raises(ProviderError, match="label_scoring must be true or false"):
        make(tiny_model_dir, label_scoring="yes")


def test_a_local_run_stores_the_distribution_and_its_calibration(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yoxla.cli.main import run

    monkeypatch.chdir(tmp_path)
    rc = run(
        [
            "run", "--provider", "transformers", "--model", str(tiny_model_dir), "--edition", "sample",
            "--task", "nli_v1", "--limit", "3", "--run-id", "local", "--dtype", "float32",
            "--device-map", "cpu", "--no-progress",
        ]
    )  # fmt: skip
    assert rc == 0
    lines = [
        json.loads(x) for x in (tmp_path / "runs" / "local" / "predictions.jsonl").read_text().splitlines()
    ]
    assert all(r["distribution"]["method"] == "label_scoring" for r in lines)
    (written,) = (tmp_path / "results" / "partial" / "sample").glob("transformers__*.json")
    assert _slug(tiny_model_dir) not in written.name  # a local folder's path is never published
    doc = json.loads(written.read_text())
    task = doc["tasks"]["nli_v1"]
    assert [p["distribution"] for p in task["predictions"]] == [r["distribution"] for r in lines]
    assert task["calibration"]["n_with_probs"] == 3 and task["calibration"]["n_partial"] == 0
    assert task["calibration"]["mean_gold_p"] is not None


def _slug(path: Path) -> str:
    from yoxla.record.signing import model_slug

    return model_slug(str(path))


def test_a_suite_item_is_scored_over_the_space_its_request_carries(local: TransformersProvider) -> None:
    space = ("1", "2", "HEÇ BİRİ")  # a row-dependent suite space: two options and a fixed label
    messages = [{"role": "user", "content": "Seçim: Paytaxt?\n1. Bakı\n2. Gəncə"}]
    suite_item = Request(task=object(), row={}, example_id="s1", messages=messages, max_tokens=4, space=space)
    open_item = Request(task=object(), row={}, example_id="s2", messages=messages, max_tokens=4)
    scored, unscored = local.generate_batch([suite_item, open_item])
    assert unscored.label_scores is None  # no space carried, no benchmark answer space: none
    assert scored.label_scores is not None and list(scored.label_scores["probs"]) == list(space)
    want = by_hand(local, local.render(messages), space)
    assert [scored.label_scores["probs"][lb] for lb in space] == pytest.approx(
        [want[lb] for lb in space], abs=1e-5
    )
