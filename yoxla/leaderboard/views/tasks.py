"""Tasks: the spread of every task across models, and a page per task.

The page says what the task measures and why, shows its answer space and one real prompt
from the bundled ``sample`` edition (what a model sees), its primary metric, chance level
and cue-only floors, every model's score on it, and its breakdown. Deep link: ``?task=<id>``.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from yoxla.editions import load_edition, load_rows
from yoxla.leaderboard import figures, tables
from yoxla.leaderboard.prepared import EditionData, block_title
from yoxla.leaderboard.task_notes import note
from yoxla.leaderboard.texts import code, md
from yoxla.leaderboard.views.base import Context, Table, TaskPickerView, Update, keep_or_first
from yoxla.leaderboard.views.common import components
from yoxla.suite import load_suite

INTRO = (
    "Each task's spread across models, with its best cue-only floor and its chance level. A task whose "
    "range is within the noise (the median width of its models' intervals) no longer separates models."
)
NO_SUITE_FLOORS = (
    "Suites have no cue-only floors here: the suite-baseline files on the board (if any) are the floors."
)


def task_choices(ed: EditionData) -> list[tuple[str, str]]:
    if ed.suite is not None:
        return [(f"{tid} · {name}", tid) for tid, name in ed.suite.tasks.items()]
    return [(f"{tables.task_short(t)} · {t}", t) for t in ed.standard.task_ids]


def suite_task_markdown(ed: EditionData, task_id: str) -> str:
    """A suite task's description: the committed manifest's fields (escaped) and our words."""
    meta = ed.suite
    assert meta is not None
    name = meta.tasks.get(task_id, task_id)
    r = ed.standard
    n = len(r.models[0].tasks[task_id].ids) if not r.empty and task_id in r.models[0].tasks else None
    lower = tables.lower_is_better(ed, task_id)
    lines = [
        f"### {md(name)} · {code(task_id)} · suite {code(meta.id)}",
        f"**Items:** {n if n is not None else 'n/a'} · **type:** {md(meta.types.get(task_id, 'custom'))} "
        f"(a label for people; scoring never depends on it) · **primary metric:** "
        f"{code(meta.primary.get(task_id, '?'))}"
        + (
            " (lower is better: no 0–100 score, the raw value is shown)"
            if lower
            else " × 100 is the task score"
        ),
    ]
    if task_id in meta.judge_scored_tasks:
        lines.append(
            "**Judge-scored:** a grader asked a judge model; every judgement is stored in the result file and "
            "replayed on re-scoring. Each file's judge model is beside its score in the table below."
        )
    fields = meta.breakdowns.get(task_id)
    if fields:
        lines.append(
            "**Breakdowns** (from the manifest's `metadata.breakdowns`): " + ", ".join(md(f) for f in fields)
        )
    lines.append(f"**Manifest:** {code(meta.path or 'not committed here')}")
    return "\n\n".join(lines)


def suite_example(ctx: Context, ed: EditionData, task_id: str) -> tuple[str, str, str, str]:
    """(answer space, system message, the other messages, target) of the suite task's first item:
    exactly what a model was sent, few-shot included."""
    meta = ed.suite
    assert meta is not None
    choices = meta.choices.get(task_id)
    space = "\n".join(choices) if choices else "An open answer (the task has no choices)."
    items = ctx.memo(
        "suite-items", meta.id, task_id, make=lambda: ctx.prepared.board.suite_items(meta.id, task_id)
    )
    if not items:
        msg = "(the committed suite could not be prepared here, so its prompts are not shown)"
        return space, msg, msg, ""
    item = next(iter(items.values()))
    system = "\n\n".join(str(m.get("content", "")) for m in item.messages if m.get("role") == "system")
    rest = "\n\n".join(
        f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in item.messages if m.get("role") != "system"
    )
    return space, system or "(no system message)", rest, str(item.target or "")


def task_markdown(ed: EditionData, task_id: str) -> str:
    """The task's description: our prose and the suite's own fields (never a result file's text)."""
    task = load_suite().task(task_id)
    n = note(task_id)
    floor = ed.reference.floors.get(task_id)
    chance = ed.reference.chance.get(task_id)
    from yoxla.leaderboard.floors import CHANCE_NOTES

    lines = [f"### {tables.task_short(task_id)} · `{task_id}` · {block_title(task.block)} block"]
    if n is not None:
        lines += [
            f"**What it measures.** {n.measures}",
            f"**Why it is here.** {n.why}",
            f"**Score.** {n.metric}",
        ]
    rows = ed.standard.models[0].tasks[task_id].ids if not ed.standard.empty else None
    size = len(rows) if rows is not None else load_edition(ed.name).tasks[task_id].rows
    lines.append(
        f"**Items on `{ed.name}`:** {size} · **answer mode:** {task.answer.mode} · **primary metric:** "
        f"`{task.primary}` · **diagnostics:** {', '.join(f'`{d}`' for d in task.diagnostics) or 'none'}"
    )
    chance_text = "none" if chance is None else f"{chance:.1f}"
    lines.append(f"**Chance level:** {chance_text} ({CHANCE_NOTES.get(task.evaluator, '')}).")
    if floor is not None:
        lines.append(
            f"**Best cue-only floor on `{ed.name}`:** {floor.best:.1f} (strategy `{floor.best_strategy}`); "
            "every strategy is in the table below."
        )
    else:
        lines.append(f"**Cue-only floors:** not available here ({ed.reference.problem or 'no rows'}).")
    return "\n\n".join(lines)


def answer_space_text(task_id: str) -> str:
    task = load_suite().task(task_id)
    space = task.render_answer_space()
    if task.answer.mode == "text":
        return "A quote copied from the passage (no fixed list of answers)."
    if task.answer.mode == "text_or_abstain":
        return f"A quote copied from the passage, or:\n{space}"
    return space


def example(task_id: str) -> tuple[str, str, str]:
    """(system prompt, user message, gold) of the first ``sample`` row: what the model saw."""
    task = load_suite().task(task_id)
    row = load_rows(load_edition("sample"), task_id)[0]
    messages = task.messages(row)
    gold = row.get(task.gold)
    if gold is None:
        gold_text = task.answer.abstain.value if task.answer.abstain else "(none)"
    else:
        gold_text = str(gold)
    return messages[0]["content"], messages[1]["content"], gold_text


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
            [(f"{tables.task_short(t)} · {t}", t) for t in load_suite().tasks],
            value=next(iter(load_suite().tasks)),
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
        # key None: the task's own breakdown metric; draw False: no breakdown, `why` says so.
        key: str | None
        if ed.suite is not None:
            about = suite_task_markdown(ed, task_id)
            space, system, user, gold = suite_example(ctx, ed, task_id)
            fields = ed.suite.breakdowns.get(task_id) or []
            has_class = any(
                "per_class_accuracy" in v.tasks[task_id].metrics for v in models if task_id in v.tasks
            )
            key = tables.breakdown_key(task_id, ed) if fields else "per_class_accuracy"
            draw = bool(fields) or has_class
            why = f"{task_id} names no breakdown field (metadata.breakdowns) and records no classes."
            floors, no_floors = tables.pd.DataFrame(), NO_SUITE_FLOORS
        else:
            task = load_suite().task(task_id)
            about, space = task_markdown(ed, task_id), answer_space_text(task_id)
            system, user, gold = example(task_id)
            key = None if task.breakdown else "per_class_accuracy"
            draw = task.evaluator == "classification" or bool(task.breakdown)
            why = (
                f"{task_id} has no breakdown field and no classes (its answers are "
                f"{'quotes' if task.evaluator != 'correlation' else 'ratings'})."
            )
            floors = tables.floors_table(ed, task_id)
            no_floors = f"Floors need the {ed.name} rows, which are not available here."
        stem = f"{ed.name.replace(':', '-')}-{task_id}"
        return {
            self.about: about,
            self.space: space,
            self.gold: gold,
            self.system: system,
            self.user: user,
            self.plot: ctx.plot("task-fig", ed.name, task_id, make=lambda: figures.task_figure(ed, task_id)),
            self.breakdown: ctx.plot(
                "task-breakdown",
                ed.name,
                task_id,
                make=lambda: (
                    figures.breakdown_heatmap(models, task_id, ed.label, key)
                    if draw
                    else figures.empty_figure(f"{task_id}: breakdown", why)
                ),
            ),
            **self.floors.update(ctx.downloads, floors, empty=no_floors, stem=f"floors-{stem}"),
            **self.models.update(
                ctx.downloads,
                tables.task_models_table(ed.standard, task_id),
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"task-models-{stem}",
            ),
        }

    def render(self, ctx: Context, edition: str, params: dict[str, str] | None = None) -> Update:
        ed = ctx.prepared.edition(edition)
        task_id = keep_or_first((params or {}).get("task"), ed.standard.task_ids)
        out: Update = {
            self.spreads_plot: ctx.plot("spreads", ed.name, make=lambda: figures.spreads_figure(ed)),
            self.picker: gr.update(choices=task_choices(ed), value=task_id),
            **self.spreads.update(
                ctx.downloads,
                ctx.memo("spreads", ed.name, make=lambda: tables.spreads_table(ed)),
                empty=f"No re-checked result file on {ed.label} yet.",
                stem=f"spreads-{ed.name.replace(':', '-')}",
            ),
            **self.page(ctx, ed.name, task_id),
        }
        return out
