"""`yoxla test`: one connection request, named after a task of the package suite."""

from __future__ import annotations

from yoxla.cli.main import run
from yoxla.providers.base import Completion

SENT: list = []  # the requests the fake provider was given


class _Recorder:
    def __init__(self, spec, model, options) -> None:
        self.model = model

    def generate(self, request):
        SENT.append(request)
        return Completion(text="Bakı", finish_reason="stop", model=self.model, usage={"prompt_tokens": 9})

    def close(self) -> None:
        pass


def test_connection_request_names_a_package_suite_task_and_asks_no_probabilities(monkeypatch, capsys):
    from yoxla.contract.benchmark import task_ids
    from yoxla.providers import base
    from yoxla.providers import registry as providers

    monkeypatch.setattr(
        providers, "create_provider", lambda spec, model, options: _Recorder(spec, model, options)
    )
    SENT.clear()
    assert run(["test", "--provider", "vllm", "--model", "yerli"]) == 0
    out = capsys.readouterr().out
    assert "reply: 'Bakı'" in out and "model: yerli" in out
    (request,) = SENT
    assert request.task.id == task_ids()[0]
    assert base.wants_probabilities(request) is False
