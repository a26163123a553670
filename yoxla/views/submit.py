"""Submit: how to add a model (static text)."""

from __future__ import annotations

import gradio as gr

from yoxla.views import project as about
from yoxla.views import texts
from yoxla.views.base import Context, View


class SubmitView(View):
    tab_id = "submit"
    title = "Submit"

    def build(self, ctx: Context) -> None:
        gr.Markdown(texts.SUBMIT.format(place=about.pull_request_place()), elem_id="submit")

    def warm(self, ctx: Context, edition: str) -> None:
        pass
