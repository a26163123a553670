"""Methodology: how scores, intervals and ranks are computed; every file's admission verdict; how
much of an edition's rows people have reviewed."""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.leaderboard import tables, texts
from yoxla.leaderboard.views.base import Context, Table, Update, View
from yoxla.leaderboard.views.common import components


class MethodologyView(View):
    tab_id = "methodology"
    title = "Methodology"

    def build(self, ctx: Context) -> None:
        gr.Markdown(texts.METHODOLOGY)
        self.suite_note = gr.Markdown(visible=False, elem_id="suite-method")
        self.line = gr.Markdown(elem_id="admission-line")
        gr.Markdown("### Admitted files of this board")
        self.admitted = Table("Admitted", "admitted", elem_id="admitted-table")
        gr.Markdown(
            "### Excluded and superseded files\nThose of this board, and files that name no board shown here "
            "(unreadable, an unknown edition or suite)."
        )
        self.excluded = Table(
            "Excluded and superseded, with every reason", "excluded", elem_id="excluded-table"
        )
        gr.Markdown(texts.REVIEW)
        self.review_line = gr.Markdown(elem_id="review-line")
        self.review = Table("Review status per task", "review-status", elem_id="review-table")
        self.review_problems = gr.Textbox(
            label="Problems with the annotation files", visible=False, interactive=False, lines=3
        )

    def outputs(self) -> list[Any]:
        review = [self.review_line, self.review, self.review_problems]
        return components(self.suite_note, self.line, self.admitted, self.excluded, review)

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        board = ctx.prepared.board
        where = (ed.name, None) if not ed.is_suite else (None, ed.suite_id)
        stem = ed.name.replace(":", "-")
        out: Update = {
            self.suite_note: gr.update(value=texts.SUITE_METHOD, visible=ed.is_suite),
            self.line: f"**{'Suite' if ed.is_suite else 'Edition'} {texts.code(ed.suite_id or ed.name)}:** "
            f"{board.admission_line(*where)}.",
            **self.admitted.update(
                ctx.downloads,
                tables.admitted_table(ed),
                empty=f"No admitted file on {ed.label}.",
                stem=f"admitted-{stem}",
            ),
            **self.excluded.update(
                ctx.downloads,
                ctx.memo("excluded", ed.name, make=lambda: tables.excluded_table(board, *where)),
                empty="Every file of this board was admitted.",
                stem=f"excluded-{stem}",
            ),
        }
        if ed.is_suite:
            out[self.review_line] = (
                "Review status is kept for the benchmark's editions (`annotations/<edition>/`); a suite's data "
                "is reviewed with its pull request."
            )
            out.update(self.review.update(ctx.downloads, tables.pd.DataFrame(), empty="Not kept for suites."))
            out[self.review_problems] = gr.update(value="", visible=False)
            return out
        frame, problems = ctx.memo(
            "review", ed.name, make=lambda: tables.review_table(board, ed.name, ctx.prepared.annotations_root)
        )
        n = len(problems)
        reviewed = int(sum(x for x in frame.get("Reviewed", []) if isinstance(x, int)))
        out[self.review_line] = (
            f"**{reviewed} row(s) of edition `{ed.name}` reviewed by people** (of the annotatable tasks' rows)."
            + (f" {n} problem(s) with the annotation files (below)." if n and not frame.empty else "")
        )
        out[self.review_problems] = gr.update(
            value="\n".join(problems), visible=bool(problems) and not frame.empty
        )
        out.update(
            self.review.update(
                ctx.downloads,
                frame,
                empty=problems[0] if problems else "No task.",
                stem=f"review-{stem}",
            )
        )
        return out
