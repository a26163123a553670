"""Tasks: the spread of every task across models, and a page per task.

One page for every board, read from the board's suite: the task's fields (items, type,
primary metric, breakdowns, definition), its answer space and one real prompt (what a model
sees: a committed suite's first item, a benchmark task's first ``sample`` row), every model's
score on it and its breakdown; and what the board has beside: our notes on the task, its
chance level and cue-only floors. Deep link: ``?task=<id>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from yoxla.board.breakdown import metric_field
from yoxla.board.prepared import EditionData, Ranked
from yoxla.contract.benchmark import task_ids
from yoxla.data.editions import load_edition, load_rows
from yoxla.views import plot
from yoxla.views.base import Context, Table, TaskPickerView, Update, keep_or_first
from yoxla.views.breakdowns import breakdown_heatmap
from yoxla.views.common import components
from yoxla.views.format import (
    NA,
    interval_text,
    judge_text,
    lower_is_better,
    num_text,
    task_label,
    task_short,
)
from yoxla.views.task_notes import note
from yoxla.views.texts import code, md

INTRO = (
    "Each task's spread across models, with its best cue-only floor and its chance level. A task whose "
    "range is within the noise (the median width of its models' intervals) no longer separates models."
)


def task_choices(ed: EditionData) -> list[tuple[str, str]]:
    """(label, task id) for the task picker: the board's tasks, in its suite's order."""
    out = []
    for tid, name in ed.suite.tasks.items():
        short = task_short(tid)  # our short name where we gave one, else the suite's name
        out.append((f"{short} · {tid}" if short != tid else f"{tid} · {name}", tid))
    return out


def _item_count(ed: EditionData, task_id: str) -> int | None:
    """The task's items on the board: its files' (they agree), else the edition's declared rows."""
    r = ed.standard
    if not r.empty and task_id in r.models[0].tasks:
        return len(r.models[0].tasks[task_id].ids)
    if ed.suite.edition is not None:
        task = load_edition(ed.suite.edition).tasks.get(task_id)
        return task.rows if task is not None else None
    return None


def task_markdown(ed: EditionData, task_id: str) -> str:
    """The task's description: our notes on it (where we wrote some), the suite's own fields
    (escaped) and what the board has beside (chance level, cue-only floors); never a result file's text."""
    from yoxla.board.floors import CHANCE_NOTES
    from yoxla.views.format import task_kind

    meta = ed.suite
    group = next((g for g, tids in ed.groups_of_tasks().items() if task_id in tids), None)
    head = f"### {md(meta.tasks.get(task_id, task_id))} · {code(task_id)} · {ed.label_md}"
    lines = [head + (f" · {md(ed.group_title(group))} group" if group is not None else "")]
    n = note(task_id)
    if n is not None:
        lines += [
            f"**What it measures.** {n.measures}",
            f"**Why it is here.** {n.why}",
            f"**Score.** {n.metric}",
        ]
    size = _item_count(ed, task_id)
    lines.append(
        f"**Items:** {size if size is not None else 'n/a'} · **type:** {md(meta.types.get(task_id, 'custom'))} "
        f"(a label for people; scoring never depends on it) · **primary metric:** "
        f"{code(meta.primary.get(task_id, '?'))}"
        + (
            " (lower is better: no 0–100 score, the raw value is shown)"
            if lower_is_better(ed, task_id)
            else " × 100 is the task score"
        )
        + " (result files record every diagnostic besides)"
    )
    if task_id in meta.judge_scored_tasks:
        lines.append(
            "**Judge-scored:** a grader asked a judge model; every judgement is stored in the result file and "
            "replayed on re-scoring. Each file's judge model is beside its score in the table below."
        )
    declared = meta.breakdowns.get(task_id)
    if declared:
        lines.append(
            "**Breakdowns** (from the suite's `metadata.breakdowns`): " + ", ".join(md(f) for f in declared)
        )
    chance = ed.reference.chance.get(task_id)
    if chance is not None:
        why = CHANCE_NOTES.get(task_kind(task_id) or "", "")
        lines.append(f"**Chance level:** {chance:.1f}" + (f" ({why})." if why else "."))
    floor = ed.reference.floors.get(task_id)
    if floor is not None:
        lines.append(
            f"**Best cue-only floor on {ed.label_md}:** {floor.best:.1f} (strategy `{floor.best_strategy}`); "
            "every strategy is in the table below."
        )
    else:
        lines.append(f"**Cue-only floors:** not available here ({md(ed.reference.problem or 'no rows')}).")
    lines.append(f"**Suite definition:** {code(meta.path or 'not committed here')}")
    return "\n\n".join(lines)


def prompt_items(ctx: Context, ed: EditionData, task_id: str) -> dict[str, Any]:
    """The task's prepared items by id (``messages`` exactly as a model is sent them): a committed
    suite's from its data, a package suite's over the bundled ``sample`` edition's rows (the edition
    board's own rows may not be here); {} when they cannot be prepared here."""
    if ed.suite.edition is None:
        meta = ed.suite
        return dict(
            ctx.memo("suite-items", meta.id, task_id, make=lambda: ctx.prepared.board.items(ed.name, task_id))
        )

    def sample_items() -> dict[str, Any]:
        from yoxla.contract.benchmark import prepare_rows

        rows = load_rows(load_edition("sample"), task_id)[:1]
        return {item.id: item for item in prepare_rows(task_id, rows).items}

    return dict(ctx.memo("sample-items", task_id, make=sample_items))


def space_text(ed: EditionData, task_id: str, choices: Sequence[str] | None) -> str:
    """The answer space as the model is told it. A package suite's instructions list each answer
    with its Azerbaijani description (their ``- …`` lines), and its strict extraction says whether
    an answer is a quote; any other suite's are its choices."""
    if ed.suite.edition is not None:
        from yoxla.contract.benchmark import benchmark_task, strict_rule

        generation = benchmark_task(task_id).spec.generation
        told = [
            ln
            for ln in ((generation.instructions if generation else None) or "").splitlines()
            if ln[:2] == "- "
        ]
        mode = strict_rule(task_id).mode
        if mode == "text":
            return "A quote copied from the passage (no fixed list of answers)."
        if mode == "text_or_abstain":
            return "A quote copied from the passage, or:\n" + "\n".join(told)
        if told:
            return "\n".join(told)
    return "\n".join(choices) if choices else "An open answer (the task has no fixed list of answers)."


def example(ctx: Context, ed: EditionData, task_id: str) -> tuple[str, str, str, str]:
    """(answer space, system message, the other messages, target) of the task's first prepared
    item: exactly what a model was sent, few-shot included."""
    items = prompt_items(ctx, ed, task_id)
    item = next(iter(items.values()), None)
    choices = item.choices if item is not None and item.choices is not None else ed.suite.choices.get(task_id)
    space = space_text(ed, task_id, choices)
    if item is None:
        msg = "(the suite could not be prepared here, so its prompts are not shown)"
        return space, msg, msg, ""
    system = "\n\n".join(str(m.get("content", "")) for m in item.messages if m.get("role") == "system")
    rest = "\n\n".join(
        f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in item.messages if m.get("role") != "system"
    )
    return space, system or "(no system message)", rest, str(item.target or "")


def breakdown_by(ed: EditionData, task_id: str) -> tuple[str | None, bool]:
    """(what to break the task down by, whether there is anything to draw): the first declared
    field its files store, else whatever they store (its classes); else nothing."""
    metrics = [k for v in ed.standard.models if task_id in v.tasks for k in v.tasks[task_id].metrics]
    stored = [k for k in metrics if metric_field(k) is not None]
    for name in ed.suite.breakdowns.get(task_id) or []:
        key = next((k for k in stored if metric_field(k) == name), None)
        if key is not None:
            return key, True
    return None, bool(stored)


NO_SEPARATION_RATIO = 1.0  # a task whose range is below this many median CI widths no longer separates


def spreads_table(ed: EditionData) -> pd.DataFrame:
    """Per task: lowest, highest and range across models; floor and chance; does it separate?"""
    r = ed.standard
    cols = [
        "Task",
        "Block",
        "Lowest",
        "Highest",
        "Range",
        "Median 95% interval width",
        "Best floor",
        "Chance",
        "Separates models",
    ]
    if r.empty:
        return pd.DataFrame(columns=cols)
    groups = ed.groups_of_tasks()  # a task's group (the benchmark's block) names its row
    out: list[dict[str, Any]] = []
    for ti, tid in enumerate(r.task_ids):
        s = np.array([v.tasks[tid].score if tid in v.tasks else np.nan for v in r.models])
        s = s[np.isfinite(s)]
        block = next((ed.group_title(g) for g, tasks in groups.items() if tid in tasks), "suite")
        if not len(s):  # a suite task whose primary metric is lower-is-better: no 0-100 score
            out.append({"Task": tid, "Block": block, "Separates models": "no 0–100 score (lower is better)"})
            continue
        widths = r.task_hi[:, ti] - r.task_lo[:, ti]
        widths = widths[np.isfinite(widths)]
        width = float(np.median(widths)) if len(widths) else float("nan")
        rng = float(s.max() - s.min())
        separates = len(r.models) > 1 and rng > NO_SEPARATION_RATIO * width
        chance = ed.reference.chance.get(tid)
        out.append(
            {
                "Task": tid,
                "Block": block,
                "Lowest": round(float(s.min()), 1),
                "Highest": round(float(s.max()), 1),
                "Range": round(rng, 1),
                "Median 95% interval width": round(width, 1) if np.isfinite(width) else NA,
                "Best floor": num_text(ed.reference.best(tid) or float("nan")),
                "Chance": NA if chance is None else num_text(chance),
                "Separates models": "yes"
                if separates
                else (
                    "one model only"
                    if len(r.models) < 2
                    else (
                        "no interval to compare with"
                        if not np.isfinite(width)
                        else "no: range within the noise"
                    )
                ),
            }
        )
    frame = pd.DataFrame(out, columns=cols)
    order = frame["Range"].astype(float).fillna(-1.0).sort_values(ascending=False, kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def task_models_table(r: Ranked, task_id: str) -> pd.DataFrame:
    """Every model's score on one task, best first, with interval, rank range and primary metric."""
    cols = ["Rank on task", "Model", "Score", "95% interval", "Primary metric (raw)", "Invalid %"]
    if r.empty or task_id not in r.task_ids:
        return pd.DataFrame(columns=cols)
    ti = r.task_ids.index(task_id)
    here = [i for i in range(len(r.models)) if task_id in r.models[i].tasks]
    lower = any(not r.models[i].tasks[task_id].higher_is_better for i in here)

    def key(i: int) -> tuple[float, str]:
        t = r.models[i].tasks[task_id]
        value = t.primary_raw if lower else -t.score
        return (value if np.isfinite(value) else float("inf"), r.models[i].name)

    judged = any(r.models[i].tasks[task_id].judge_scored for i in here)
    out = []
    for i in sorted(here, key=key):
        v = r.models[i]
        t = v.tasks[task_id]
        rec: dict[str, Any] = {
            "Rank on task": r.task_rank(i, task_id),
            "Model": v.name,
            "Score": round(t.score, 1) if np.isfinite(t.score) else NA,
            "95% interval": interval_text(r.task_lo[i, ti], r.task_hi[i, ti])
            if np.isfinite(r.task_lo[i, ti])
            else NA,
            "Primary metric (raw)": round(t.primary_raw, 4) if np.isfinite(t.primary_raw) else NA,
            "Invalid %": f"{100 * float(t.metrics.get('invalid_output_rate', 0.0)):.1f}",
        }
        if judged:
            rec["Judge"] = judge_text(v, task_id)
        out.append(rec)
    return pd.DataFrame(out, columns=cols + (["Judge"] if judged else []))


def floors_table(ed: EditionData, task_id: str) -> pd.DataFrame:
    cols = ["Strategy", "Score", "Best"]
    f = ed.reference.floors.get(task_id)
    if f is None:
        return pd.DataFrame(columns=cols)
    rows = sorted(f.strategies.items(), key=lambda kv: -kv[1])
    return pd.DataFrame(
        [
            {"Strategy": s, "Score": round(x, 1), "Best": "◀ best" if s == f.best_strategy else ""}
            for s, x in rows
        ],
        columns=cols,
    )


def spreads_figure(ed: EditionData) -> plot.Figure:
    """Every task's model scores on one row, with its best floor and chance level marked."""
    r = ed.standard
    title = "Task scores across models" + (
        ", with each task's best floor and chance level" if ed.has_reference else ""
    )
    if r.empty:
        return plot.empty_figure(title, plot.no_models_message(ed.label))
    spreads = spreads_table(ed)
    order = [t for t, lo in zip(spreads["Task"], spreads["Lowest"], strict=True) if pd.notna(lo)]
    if not order:
        return plot.empty_figure(
            title, "No task of this board has a 0–100 score (every one is lower-is-better)."
        )
    labels = [plot.plain(task_label(ed, t)) for t in order]
    rng = np.random.default_rng(0)
    xs: list[float] = []
    ys: list[float] = []
    cds: list[list[Any]] = []
    for j, tid in enumerate(order):
        ti = r.task_ids.index(tid)
        for i, v in enumerate(r.models):
            if tid not in v.tasks:
                continue
            xs.append(float(v.tasks[tid].score))
            ys.append(j + float(rng.uniform(-0.2, 0.2)))
            cds.append(
                [
                    plot.plain(v.name),
                    labels[j],
                    plot.json_number(r.task_lo[i, ti]),
                    plot.json_number(r.task_hi[i, ti]),
                ]
            )
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": plot.json_numbers(xs),
            "y": ys,
            "mode": "markers",
            "name": "a model",
            "marker": {"color": plot.OKABE_ITO[0], "size": 7, "opacity": 0.7},
            "customdata": cds,
            "hovertemplate": "%{customdata[0]} on %{customdata[1]}<br>score %{x:.2f} "
            "(95% interval %{customdata[2]:.2f}–%{customdata[3]:.2f})<extra></extra>",
        }
    ]
    data += plot.reference_markers(
        [ed.reference.best(t) for t in order],
        [ed.reference.chance.get(t) for t in order],
        list(range(len(order))),
        labels,
        24,
    )
    return plot.figure(
        data,
        title,
        "task score (0–100)",
        "task (sorted by range)",
        height=max(380 if ed.has_reference else 320, 42 * len(order) + 170),
        xaxis=plot.score_axis("task score (0–100)"),
        yaxis=plot.axis(
            "task (sorted by range)",
            tickmode="array",
            tickvals=list(range(len(order))),
            ticktext=labels,
            # one row per task, whatever their number: a one-task board's jitter stays on its row
            range=[len(order) - 0.5, -0.5],
        ),
    )


def task_figure(ed: EditionData, task_id: str) -> plot.Figure:
    """One task: every model's score with its interval, the best floor and the chance level."""
    r = ed.standard
    title = f"{plot.plain(task_id)}: model scores with 95% intervals"
    if r.empty:
        return plot.empty_figure(title, plot.no_models_message(ed.label))
    if lower_is_better(ed, task_id):
        return plot.empty_figure(
            title,
            f"{task_id}'s primary metric is lower-is-better: it has no 0–100 score (its raw values are in the table).",
        )
    ti = r.task_ids.index(task_id)
    order = sorted(
        (i for i in range(len(r.models)) if task_id in r.models[i].tasks),
        key=lambda i: -r.models[i].tasks[task_id].score,
    )
    cut = ""
    if len(order) > plot.MAX_PLOT_MODELS:
        cut = f" (best {plot.MAX_PLOT_MODELS} of {len(order)}; the table has all)"
        order = order[: plot.MAX_PLOT_MODELS]
    names = [plot.plain(r.models[i].name) for i in order]
    data = [
        plot.dots(
            [r.models[i].tasks[task_id].score for i in order],
            names,
            [float(r.task_lo[i, ti]) for i in order],
            [float(r.task_hi[i, ti]) for i in order],
            name="model (95% interval)",
            color=plot.OKABE_ITO[0],
            what="score",
        )
    ]
    floor_shapes, floor_legend = plot.reference_line(
        ed.reference.best(task_id), "best cue-only floor", plot.FLOOR_COLOUR, "dash"
    )
    chance_shapes, chance_legend = plot.reference_line(
        ed.reference.chance.get(task_id), "chance", plot.CHANCE_COLOUR, "dot"
    )
    shapes = floor_shapes + chance_shapes
    data += floor_legend + chance_legend
    return plot.figure(
        data,
        title + cut,
        "task score (0–100)",
        "model",
        height=max(300, plot.ROW_PX * len(order) + 170),
        xaxis=plot.score_axis("task score (0–100)"),
        yaxis=plot.category_axis(names, "model"),
        shapes=shapes,
    )


class TasksView(TaskPickerView):
    tab_id = "tasks"
    title = "Tasks"
    url_param = "task"

    def build(self, ctx: Context) -> None:
        gr.Markdown(INTRO)
        self.spreads_plot = gr.Plot(label="Task spreads", elem_classes=["yoxla-plot"], elem_id="spreads-plot")
        self.spreads = Table("Spread of task scores across models", "task-spreads", elem_id="spreads-table")
        gr.Markdown("## A task in detail")
        self.picker = gr.Dropdown(
            [(f"{task_short(t)} · {t}", t) for t in task_ids()],
            value=task_ids()[0],
            label="Task",
            elem_id="task-picker",
            allow_custom_value=True,
        )
        self.about = gr.Markdown(elem_id="task-about")
        with gr.Row():
            self.space = gr.Textbox(label="Answer space (as the prompt lists it)", lines=6, interactive=False)
            self.gold = gr.Textbox(label="Gold answer of this example", lines=1, interactive=False)
        with gr.Accordion("One real prompt (exactly what a model sees)", open=True):
            with gr.Row():
                self.system = gr.Textbox(
                    label="System message", lines=8, interactive=False, elem_id="task-system"
                )
                self.user = gr.Textbox(
                    label="User message (and any others)", lines=8, interactive=False, elem_id="task-user"
                )
        with gr.Row():
            with gr.Column(scale=3):
                self.plot = gr.Plot(
                    label="Models on this task", elem_classes=["yoxla-plot"], elem_id="task-plot"
                )
            with gr.Column(scale=2):
                self.floors = Table("Cue-only floors on this task", "task-floors", elem_id="task-floors")
        self.models = Table("Every model on this task", "task-models", elem_id="task-models")
        self.breakdown = gr.Plot(label="Breakdown", elem_classes=["yoxla-plot"], elem_id="task-breakdown")

    def page_outputs(self) -> list[Any]:
        prompt = [self.space, self.gold, self.system, self.user]
        return components(self.about, prompt, self.plot, self.floors, self.models, self.breakdown)

    def outputs(self) -> list[Any]:
        return components(self.spreads_plot, self.spreads, self.picker, self.page_outputs())

    def page(self, ctx: Context, edition: str, task_id: str | None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first(task_id, ed.standard.task_ids)
        models = ed.standard.models
        about = task_markdown(ed, task_id)
        space, system, user, gold = example(ctx, ed, task_id)
        key, draw = breakdown_by(ed, task_id)
        why = f"No result file here stores a breakdown of {task_id} (by a row field or by class)."
        floors = floors_table(ed, task_id)
        no_floors = f"Cue-only floors: not available here ({ed.reference.problem or 'no rows'})."
        stem = f"{ed.name.replace(':', '-')}-{task_id}"
        return {
            self.about: about,
            self.space: space,
            self.gold: gold,
            self.system: system,
            self.user: user,
            self.plot: ctx.plot("task-fig", ed.name, task_id, make=lambda: task_figure(ed, task_id)),
            self.breakdown: ctx.plot(
                "task-breakdown",
                ed.name,
                task_id,
                make=lambda: (
                    breakdown_heatmap(models, task_id, ed.label, key)
                    if draw
                    else plot.empty_figure(f"{task_id}: breakdown", why)
                ),
            ),
            **self.floors.update(ctx.downloads, floors, empty=no_floors, stem=f"floors-{stem}"),
            **self.models.update(
                ctx.downloads,
                task_models_table(ed.standard, task_id),
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"task-models-{stem}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first((params or {}).get("task"), ed.standard.task_ids)
        out: Update = {
            self.spreads_plot: ctx.plot("spreads", ed.name, make=lambda: spreads_figure(ed)),
            self.picker: gr.update(choices=task_choices(ed), value=task_id),
            **self.spreads.update(
                ctx.downloads,
                ctx.memo("spreads", ed.name, make=lambda: spreads_table(ed)),
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"spreads-{ed.name.replace(':', '-')}",
            ),
            **self.page(ctx, ed.name, task_id),
        }
        return out
