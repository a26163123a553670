"""What each task measures and why, and how its primary metric is computed: our own words.

Shown on the task pages as Markdown (nothing here comes from a result file or a dataset).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskNote:
    measures: str  # what the task measures
    why: str  # why it is in the benchmark
    metric: str  # how the primary metric is computed


NOTES: dict[str, TaskNote] = {
    "extractive_qa_v1": TaskNote(
        measures="Reading comprehension: the model gets an Azerbaijani passage and a question whose answer is "
        "in the passage, and must copy the shortest span that answers it, word for word.",
        why="Copying the exact words, suffixes included, is what retrieval-augmented answers need, and it "
        "can be checked without a judge model: the quote either is in the passage, over the gold span, or not.",
        metric="**span recall**: the share of the gold span's characters that the quote covers, set to 0 when "
        "the quote reaches outside the sentences the gold occupies (so copying the whole passage earns "
        "nothing). Averaged over items. Token F1 and exact match are reported as diagnostics.",
    ),
    "qa_abstention_v1": TaskNote(
        measures="Knowing when not to answer: the same reading task, but for some questions the passage holds "
        "no answer and the model must write `Cavab yoxdur` instead of guessing.",
        why="A model that answers every question from its own memory looks fluent and is wrong exactly when "
        "it matters; abstaining on unanswerable questions is the skill that keeps a RAG system honest.",
        metric="**overall score**: per item 1 for abstaining on an unanswerable question, 0 for abstaining on "
        "an answerable one, otherwise the span recall of the quote; the mean over items.",
    ),
    "nli_v1": TaskNote(
        measures="Natural-language inference: whether a hypothesis follows from a premise (entailment), "
        "contradicts it, or is neither (neutral).",
        why="It isolates sentence-level reasoning about meaning (negation, quantities, paraphrase) from "
        "world knowledge, in Azerbaijani sentences.",
        metric="**accuracy** over items; macro-F1 and per-class accuracy show whether a model leans on one "
        "label.",
    ),
    "sts_v1": TaskNote(
        measures="Semantic similarity: the model rates how close in meaning two sentences are, from 0 "
        "(unrelated) to 5 (the same meaning), following a described scale.",
        why="Graded judgements test finer understanding than a label, and the scale's descriptions test "
        "whether the model follows an Azerbaijani rubric.",
        metric="**Spearman correlation** between the model's ratings and the human ones over all items; an "
        "invalid answer is counted at the scale's midpoint (2.5), so it costs correlation. Below 0 is "
        "shown as 0. MAE and RMSE are measured on valid answers only (n/a when there is none).",
    ),
    "sentiment_v1": TaskNote(
        measures="Sentiment: whether the author of a short text expresses a positive, neutral or negative "
        "attitude.",
        why="A basic understanding task that most applications need; in Azerbaijani, tone often rests on "
        "suffixes and idioms that a model trained mostly on Turkish or English can misread.",
        metric="**accuracy** over items.",
    ),
    "intent_v1": TaskNote(
        measures="Intent detection: a bank customer's message, and 25 described intents (from Banking77) to "
        "choose from.",
        why="A realistic many-way classification where the intents differ in small details (pending vs "
        "declined, card vs transfer); the long answer space also tests following an instruction exactly.",
        metric="**accuracy** over items; the answer must be one of the 25 intent names as written.",
    ),
    "minimal_pairs_v1": TaskNote(
        measures="Grammar: two sentences that differ in one place (a suffix, vowel harmony, agreement); the "
        "model picks the grammatical one.",
        why="Minimal pairs test knowledge of Azerbaijani morphology directly, without any other skill in the "
        "way; the breakdown by phenomenon shows which rule a model has not learned.",
        metric="**accuracy** over items (A or B); the breakdown is accuracy per phenomenon.",
    ),
    "az_tr_interference_v1": TaskNote(
        measures="Turkish interference: two sentences, one in correct Azerbaijani and one where an "
        "Azerbaijani word is replaced by its Turkish (Türkiye) counterpart; the model picks the "
        "Azerbaijani one.",
        why="Models trained on far more Turkish than Azerbaijani text often write Turkish words in "
        "Azerbaijani; this task measures whether they can tell the two languages apart.",
        metric="**accuracy** over items (A or B); the breakdown separates cognates from distinct words.",
    ),
    "knowledge_choice_v1": TaskNote(
        measures="Factual knowledge about Azerbaijan and the world: a question and 20 numbered candidates, "
        "exactly one of them right.",
        why="Twenty candidates make guessing nearly useless (chance 5%), so the score reflects what the "
        "model knows; the breakdown by category shows where its knowledge is thin.",
        metric="**accuracy** over items; the answer is the candidate's number.",
    ),
    "rag_verification_v1": TaskNote(
        measures="Grounded claim checking: a passage and a claim; the model says whether the passage "
        "supports it (TƏSDİQ), contradicts it (ZİDD) or does not say (YOXDUR), even when the passage "
        "contradicts the model's own knowledge.",
        why="Retrieval-augmented systems must follow the source, not their memory. Counterfactual passages "
        "catch models that answer from what they know.",
        metric="**accuracy** over items; the breakdown is accuracy per claim type (supported, contradicted, "
        "absent, counterfactual).",
    ),
    "rag_selection_v1": TaskNote(
        measures="Passage selection: a question and six numbered passages; the model names the one that "
        "answers it, or HEÇ BİRİ when none does.",
        why="Finding the right source among near-misses is the retrieval half of RAG; the items with no "
        "answering passage test whether the model admits it.",
        metric="**accuracy** over items; the breakdown separates answerable, distractor-heavy and "
        "none-of-them items.",
    ),
}


def note(task_id: str) -> TaskNote | None:
    return NOTES.get(task_id)
