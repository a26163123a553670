"""Submit: how to add a model (static text)."""

from __future__ import annotations

import gradio as gr

from yoxla.leaderboard import texts
from yoxla.leaderboard.views.base import Context, View


class SubmitView(View):
    tab_id = "submit"
    title = "Submit"

    def build(self, ctx: Context) -> None:
        gr.Markdown(texts.SUBMIT)

    def warm(self, ctx: Context, edition: str) -> None:
        pass
