"""The task contracts are frozen.

The contract and prompt hashes below were computed once, on purpose, from the first contract
file (suite/yoxla.yaml, since deleted) and published in result files. Editing a prompt, an answer
space or any other part of a task's contract in place fails here: a changed contract is a new
task version (e.g. nli_v2), not an edit of nli_v1.

The committed package suites (yoxla/editions/yoxla-{sample,v1}.yaml) are where the benchmark's
tasks are written: each task records its published contract and prompt hash, sends the system
prompt of that prompt hash, and its whole manifest entry but the dataset is frozen below too
(generation settings included, which a suite task's definition hash leaves to the run).
"""

from __future__ import annotations

import pytest
import yaml

from yoxla.contract.benchmark import benchmark_task, prepare_rows, task_ids
from yoxla.contract.canonical import canonical_json, sha256_text
from yoxla.contract.hashing import aggregation, suite_hash
from yoxla.contract.loader import load_document, load_manifest
from yoxla.contract.registry import BENCHMARK_EDITIONS, manifest_path
from yoxla.data.editions import load_edition, load_rows
from yoxla.prompt.prepare import current_hashes

FROZEN_CONTRACTS = {
    "extractive_qa_v1": "sha256:ca7e9a611ef911862a5d3e6d3a47389a181b18e4a01860e29e4814b1e18fdcd4",
    "qa_abstention_v1": "sha256:61460bedff2b4d34d5e76e2f3743dc8731f31c6b25b46135be6fb18d8defc6ac",
    "nli_v1": "sha256:b6e56697a9219a25ec5615b8cff9538e0c50b165f3bb04db21e986d167d54035",
    "sts_v1": "sha256:53f8ec95b3a65cee2fcef13e17c0482fc8e2c147371fa5e3c05472728cc74822",
    "sentiment_v1": "sha256:45f7d16a4968ac36ada4b9e4bb46805b69fd66f4976210804d434f1042c66c3f",
    "intent_v1": "sha256:90d0144054440d294397714624ec37d1577fc51fe179c23f849ab48abd820820",
    "minimal_pairs_v1": "sha256:b4cf9fb838d5f195680e4abca26f7702cf22c40f1114946e31682d71a37f184f",
    "az_tr_interference_v1": "sha256:d2c1069cb69500a2ab74ef85c5f80bf9981fb472d7c8473efd85e677fe7f5b2a",
    "knowledge_choice_v1": "sha256:9bad8aff452b614acce24443c3ea48357b6958e96d55625aa25b433457a4ead6",
    "rag_verification_v1": "sha256:c85487d0bd34b3dfd01b77f7623431df8c99e0bf8ea42238f6f44d3c7201eb42",
    "rag_selection_v1": "sha256:52960612be0d457e365e77eea7c625fff133df998477bfc49495cba92b9afc7c",
}
# The system prompt each task sends, rendered (Task.prompt_hash), as published in result files.
FROZEN_PROMPTS = {
    "extractive_qa_v1": "sha256:6867318861e4e2d2ab8702bc974134f02271bb719486b19ef852064dabd75847",
    "qa_abstention_v1": "sha256:8a143983cf1b0871e075a19dfd2885c9cb0f70bc22cbb1cc9af854b67f480c25",
    "nli_v1": "sha256:6684c586661ca6666b309c496975dbaf84660c9e4b5a0e449552412626ba8b7d",
    "sts_v1": "sha256:7386fa868b05341b9121117c73392d96026f606c8de06e8f0d6b13c4331177c4",
    "sentiment_v1": "sha256:76336a86407274792b2f00d02b036f59f8226d9adc6454544f994b7b2ca6501b",
    "intent_v1": "sha256:141e0b32f04002a95fc21342f39360fac51b38ed2cd94ec118a3af4a4ca9b4fd",
    "minimal_pairs_v1": "sha256:b458afd1208cfeeac4c250ba9360b7ec561946b84f82816d55926b7c34b92b70",
    "az_tr_interference_v1": "sha256:6a3586d69866d52a639a6ea507f541077eec347db08607f7d0ff22e17314a0f4",
    "knowledge_choice_v1": "sha256:2c3256d987f01c9bd68dbb8064543a9a8b5ba6e14bb554e3ceecbfc946bed275",
    "rag_verification_v1": "sha256:2de1ade662531bfd3556667ce24cc56d98d53f8e4b8729fde94e335d31a61cd4",
    "rag_selection_v1": "sha256:e525c0a942cfdfeaaa681a671dcfa84bd388da9779dd00e8f06d25310a58b1ca",
}
# Each package suite task's manifest entry, dataset left out (canonical JSON): the same in both suites.
FROZEN_MANIFEST_TASKS = {
    "extractive_qa_v1": "sha256:c4018a79b6b6647524f7e63da5c235b31c46debe982e748fb89283b22b82a37b",
    "qa_abstention_v1": "sha256:3d69a3e953009af00b5afa3a74a8549a74d16212b73b632167c9478331d43f75",
    "nli_v1": "sha256:dacc18caf4fee87fb5e4de2c9584865d7e2986581777c41f647b10486c4dcfe6",
    "sentiment_v1": "sha256:1fcae3e535e5f896a02f29faf26b585ae7b797d2898b3219acf865d0499af818",
    "intent_v1": "sha256:0d79f1365d9cfc954d5c451fe266de325a44d1533c3b500c3b357c878cd59c7c",
    "minimal_pairs_v1": "sha256:78d6f495e5e6280f847955fccddaef6bae1ec6922dc7e324306f9e485732122d",
    "az_tr_interference_v1": "sha256:b04e136bd7e197b56c0cb0a0f6c97bd712d334bfc0c949d54e3295b6613435e5",
    "rag_verification_v1": "sha256:8fbb54c9f3cd8149ac4aaa87fdba362c83b5bf16c361bc087e522ca2adea6b1e",
    "knowledge_choice_v1": "sha256:9bd4e97f972675de95d60b7e6b287a643220a9a9d70707aa87ae4cd68bda474b",
    "rag_selection_v1": "sha256:895d83fe6c38d80d3e4c541be25ed1de858277bf54f946a4e0f26d48f9936849",
    "sts_v1": "sha256:a21bf47e64585e017378e7bb39e58ef320ddf394ae92c4793b464c3e4b58852c",
}
FROZEN_V1_SUITE_HASH = "sha256:1f92cd7d3fd49dc4e6b6c7f12a3c58eb2297f35c0c136eeb8c482f9802f28cea"


def test_registered_tasks_are_exactly_the_frozen_ones():
    assert sorted(task_ids()) == sorted(FROZEN_CONTRACTS)


@pytest.mark.parametrize("task_id", sorted(FROZEN_CONTRACTS))
def test_contract_hash_is_frozen(task_id):
    assert benchmark_task(task_id).spec.metadata["contract_hash"] == FROZEN_CONTRACTS[task_id], (
        f"the contract of {task_id} changed; publish a new task version instead"
    )


@pytest.mark.parametrize("task_id", sorted(FROZEN_CONTRACTS))
def test_prompt_hash_is_frozen(task_id):
    """The system prompt the runner sends (rendered from the package suite) is the published one."""
    rows = load_rows(load_edition("sample"), task_id)[:2]
    sent = {item.messages[0]["content"] for item in prepare_rows(task_id, rows).items}
    assert [sha256_text(text) for text in sent] == [FROZEN_PROMPTS[task_id]], (
        f"the rendered system prompt of {task_id} changed; publish a new task version instead"
    )


def test_tasks_prints_every_frozen_contract_and_prompt_hash(capsys):
    from yoxla.cli.main import run

    assert run(["tasks", "--full"]) == 0
    full = capsys.readouterr().out
    assert run(["tasks"]) == 0
    short = capsys.readouterr().out
    for tid in FROZEN_CONTRACTS:
        line = next(x for x in full.splitlines() if x.startswith(tid + " "))
        assert FROZEN_CONTRACTS[tid] in line and FROZEN_PROMPTS[tid] in line, line
        line = next(x for x in short.splitlines() if x.startswith(tid + " "))
        assert FROZEN_CONTRACTS[tid][:19] in line and FROZEN_PROMPTS[tid][:19] in line, line
        assert FROZEN_PROMPTS[tid] not in line


def test_v1_edition_suite_hash_is_frozen():
    assert load_edition("v1").suite_hash() == FROZEN_V1_SUITE_HASH


def test_v1_edition_runs_every_frozen_task():
    assert sorted(load_edition("v1").tasks) == sorted(FROZEN_CONTRACTS)


def _package_tasks(edition: str) -> dict[str, dict]:
    doc = yaml.safe_load(manifest_path(edition).read_text(encoding="utf-8"))
    return {t["id"]: t for t in doc["tasks"]}


@pytest.mark.parametrize("edition", BENCHMARK_EDITIONS)
def test_each_package_suite_task_records_its_published_hashes(edition):
    tasks = _package_tasks(edition)
    assert sorted(tasks) == sorted(FROZEN_CONTRACTS)
    for tid, entry in tasks.items():
        assert entry["metadata"]["contract_hash"] == FROZEN_CONTRACTS[tid], tid
        assert entry["metadata"]["prompt_hash"] == FROZEN_PROMPTS[tid], tid
        assert sha256_text(entry["generation"]["instructions"]) == FROZEN_PROMPTS[tid], tid


@pytest.mark.parametrize("edition", BENCHMARK_EDITIONS)
def test_each_package_suite_task_is_frozen_in_place(edition):
    for tid, entry in _package_tasks(edition).items():
        body = {k: v for k, v in entry.items() if k != "dataset"}
        assert sha256_text(canonical_json(body)) == FROZEN_MANIFEST_TASKS[tid], (
            f"the manifest entry of {tid} in yoxla-{edition}.yaml changed in place; add a new task version"
        )


def test_a_package_suite_task_edit_is_seen():
    entry = _package_tasks("v1")["sts_v1"]
    entry["generation"]["max_output_tokens"] += 1  # left to the run by a suite task's definition hash
    assert (
        sha256_text(canonical_json({k: v for k, v in entry.items() if k != "dataset"}))
        != (FROZEN_MANIFEST_TASKS["sts_v1"])
    )


# What the hash sees ---------------------------------------------------------------------


def _reverse_keys(obj):
    if isinstance(obj, dict):
        return {k: _reverse_keys(obj[k]) for k in reversed(list(obj))}
    if isinstance(obj, list):
        return [_reverse_keys(x) for x in obj]
    return obj


@pytest.mark.parametrize(
    "dump",
    [
        pytest.param(
            lambda d: yaml.safe_dump(d, allow_unicode=True, sort_keys=True, indent=4, width=60),
            id="sorted_indent4",
        ),
        pytest.param(
            lambda d: yaml.safe_dump(
                _reverse_keys(d), allow_unicode=False, sort_keys=False, default_flow_style=True
            ),
            id="reversed_flow_ascii",
        ),
        pytest.param(
            lambda d: yaml.safe_dump(d, allow_unicode=True, sort_keys=False, default_style='"'),
            id="all_quoted",
        ),
    ],
)
def test_reformatting_the_package_suite_changes_no_hash(dump):
    path = manifest_path("sample")
    committed = load_manifest(path)
    text = dump(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert text != path.read_text(encoding="utf-8")
    reparsed = load_document(yaml.safe_load(text), path.parent, str(path), path)
    before, after = current_hashes(committed), current_hashes(reparsed)
    assert {t: h.hash for t, h in after.items()} == {t: h.hash for t, h in before.items()}
    assert suite_hash({t: h.hash for t, h in after.items()}, aggregation(reparsed)) == suite_hash(
        {t: h.hash for t, h in before.items()}, aggregation(committed)
    )


@pytest.mark.parametrize(
    ("task_id", "edit"),
    [
        pytest.param(
            "nli_v1",
            lambda e: e["generation"].update(instructions=e["generation"]["instructions"] + " "),
            id="prompt_whitespace",
        ),
        pytest.param(
            "nli_v1", lambda e: e.update(prompt_template=e["prompt_template"] + "\n"), id="user_template"
        ),
        pytest.param("sentiment_v1", lambda e: e["choices"].reverse(), id="label_order"),
        pytest.param("minimal_pairs_v1", lambda e: e["metrics"].reverse(), id="primary_metric"),
    ],
)
def test_a_change_of_meaning_changes_only_that_tasks_hash(task_id, edit):
    path = manifest_path("sample")
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    before = {t: h.hash for t, h in current_hashes(load_manifest(path)).items()}
    edit(next(t for t in doc["tasks"] if t["id"] == task_id))
    after = {t: h.hash for t, h in current_hashes(load_document(doc, path.parent, str(path), path)).items()}
    assert after[task_id] != before[task_id]
    assert {k: v for k, v in after.items() if k != task_id} == {
        k: v for k, v in before.items() if k != task_id
    }
