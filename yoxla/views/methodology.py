"""Methodology: how scores, intervals and ranks are computed; every file's admission verdict; how
much of an edition's rows people have reviewed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from yoxla.admission.verdict import NOT_RECHECKED
from yoxla.board.loading import Board, model_key
from yoxla.board.prepared import GROUP_TITLES, EditionData
from yoxla.contract.benchmark import benchmark_task, task_ids
from yoxla.views import texts
from yoxla.views.base import Context, Table, Update, View
from yoxla.views.common import components
from yoxla.views.format import NA


def excluded_table(board: Board, board_id: str | None = None) -> pd.DataFrame:
    """Excluded and superseded files of one board (of every board when none is given), and
    the files that name no board here (unreadable, an unknown edition or suite)."""
    return pd.DataFrame(
        [
            {
                "File": v.key or Path(v.path).name,
                "Board": v.edition or (f"suite {v.suite}" if v.suite else "none"),
                "Status": v.status,
                "Reasons": " | ".join(v.reasons),
            }
            for v in board.listed(board_id)
            if not v.shown
        ],
        columns=["File", "Board", "Status", "Reasons"],
    )


def review_table(board: Board, edition: str, root: Path) -> tuple[pd.DataFrame, list[str]]:
    """(review status per task, problems): how many rows of each task people have reviewed
    (``yoxla.annotation.review_status`` on ``root/<edition>``; model annotations never count)."""
    from yoxla.annotation import review_status
    from yoxla.annotation.sheets import SheetError
    from yoxla.safe.text import one_line

    cols = ["Task", "Rows", "Reviewed", "Reviewed %", "By agreement", "By resolution", "Open"]
    cols += ["Not annotated", "People", "Model annotators (never count)"]
    try:
        rows = board.rows(edition)
    except Exception as exc:  # a broken data source leaves the table out, never the app
        return pd.DataFrame(columns=cols), [f"the {edition} rows could not be read ({type(exc).__name__})"]
    if rows is None:
        return pd.DataFrame(columns=cols), [
            f"the {edition} rows are not available here, so the review status is not shown"
        ]
    try:  # unreadable sheets are problems already; anything else leaves the table out, never the app
        status, problems = review_status(
            root / edition, {tid: benchmark_task(tid) for tid in task_ids()}, rows
        )
    except (SheetError, OSError) as exc:
        return pd.DataFrame(columns=cols), [one_line(str(exc))]
    out = []
    for s in status.values():
        annotatable = s.annotatable
        out.append(
            {
                "Task": s.task,
                "Rows": s.rows,
                "Reviewed": s.reviewed if annotatable else NA,
                "Reviewed %": f"{100 * s.reviewed / s.rows:.0f}%" if annotatable and s.rows else NA,
                "By agreement": s.by_agreement if annotatable else NA,
                "By resolution": s.by_resolution if annotatable else NA,
                "Open": s.open if annotatable else NA,
                "Not annotated": s.not_annotated if annotatable else "not annotatable (open answers)",
                "People": ", ".join(s.people) or "none",
                "Model annotators (never count)": ", ".join(s.models) or "none",
            }
        )
    return pd.DataFrame(out, columns=cols), list(problems)


def admitted_table(ed: EditionData) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "File": model_key(v),
                "Model": v.name,
                "Provider": v.provider,
                "Trust": v.trust,
                "Board": GROUP_TITLES.get(v.group, v.group) if v.rechecked else NOT_RECHECKED,
                "Signing key": v.key_id or "",
                "Notes": " | ".join(v.notes),
            }
            for v in ed.all_models()
        ],
        columns=["File", "Model", "Provider", "Trust", "Board", "Signing key", "Notes"],
    )


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
        stem = ed.name.replace(":", "-")
        out: Update = {
            self.suite_note: gr.update(value=texts.SUITE_METHOD, visible=ed.suite.edition is None),
            self.line: f"**{ed.label_md[:1].upper()}{ed.label_md[1:]}:** {board.admission_line(ed.name)}.",
            **self.admitted.update(
                ctx.downloads,
                admitted_table(ed),
                empty=f"No admitted file on {ed.label}.",
                stem=f"admitted-{stem}",
            ),
            **self.excluded.update(
                ctx.downloads,
                ctx.memo("excluded", ed.name, make=lambda: excluded_table(board, ed.name)),
                empty="Every file of this board was admitted.",
                stem=f"excluded-{stem}",
            ),
        }
        if ed.suite.edition is None:  # a committed suite's data is reviewed with its pull request
            out[self.review_line] = (
                "Review status is kept for the benchmark's editions (`annotations/<edition>/`); a suite's data "
                "is reviewed with its pull request."
            )
            out.update(self.review.update(ctx.downloads, pd.DataFrame(), empty="Not kept for suites."))
            out[self.review_problems] = gr.update(value="", visible=False)
            return out
        frame, problems = ctx.memo(
            "review", ed.name, make=lambda: review_table(board, ed.name, ctx.prepared.annotations_root)
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
