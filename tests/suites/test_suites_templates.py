"""Templates: field references only (cases/template_cases.yaml)."""

from __future__ import annotations

import pytest
from suites_helpers import cases

from yoxla.contract.errors import TemplateError
from yoxla.prompt.templates import Template

DATA = cases("template_cases.yaml")


def _row(case):
    row = case["row"]
    return DATA["rows"][row] if isinstance(row, str) else row


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["cases"]])
def test_render(case):
    got = Template.parse(case["template"]).render(_row(case), case.get("choices"))
    assert got == case["expected"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DATA["invalid"]])
def test_anything_but_a_field_reference_is_refused(case):
    with pytest.raises(TemplateError, match="templates only insert fields"):
        Template.parse(case["template"], "prompt_template")


def test_extra_values_win_over_row_fields():
    t = Template.parse("{{prompt}} → {{target}} ({{sual}})")
    out = t.render({"prompt": "sətir", "sual": "S"}, None, {"prompt": "P", "target": "T"})
    assert out == "P → T (S)"


def test_missing_fields_are_reported_for_validation():
    t = Template.parse("{{sual}} {{suall}} {{row}} {{choices}} {{a.b}}")
    assert t.missing_fields([{"sual": 1, "a": {"b": 2}}, {"sual": 2}]) == ["suall"]
