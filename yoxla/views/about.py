"""About: the repository, the dataset, the docs, a citation, what YOXLA does not measure, and
when each board was last updated with which code and data (static, but for the versions)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.board.versions import board_versions
from yoxla.views import project as about
from yoxla.views.base import Context, Update, View


class AboutView(View):
    tab_id = "about"
    title = "About"

    def build(self, ctx: Context) -> None:
        gr.Markdown(about.about_markdown(), elem_id="about")
        self.versions = gr.Markdown(elem_id="about-versions")

    def outputs(self) -> list[Any]:
        return [self.versions]

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        return {self.versions: "### This board\n" + board_versions(ctx.prepared, edition)}
