"""The explorer's passage highlighting: gold, the model's quote, and where they meet."""

from __future__ import annotations

from yoxla.board.explorer import highlight_spans


def _labels(segments: list[tuple[str, str | None]]) -> str:
    return "".join((lab or "-")[0] * len(text) for text, lab in segments)


def test_the_quote_is_marked_where_it_overlaps_the_gold_most() -> None:
    passage = "Bakı böyük şəhərdir. Gəncə də böyük şəhərdir, Bakı isə paytaxtdır."
    gold = "Bakı isə paytaxtdır"
    segments = highlight_spans(passage, gold, "Bakı")
    assert "".join(text for text, _ in segments) == passage
    start = passage.index(gold)
    # the second "Bakı" (inside the gold) is "both"; the first one is not marked at all
    assert _labels(segments)[start : start + 4] == "bbbb"
    assert _labels(segments)[:4] == "----"


def test_without_a_located_gold_the_first_occurrence_is_the_models() -> None:
    passage = "Kür çayı uzundur. Kür Xəzərə tökülür."
    segments = highlight_spans(passage, "Araz", "Kür")
    assert _labels(segments)[:3] == "mmm" and "m" not in _labels(segments)[3:]


def test_a_long_repeated_quote_is_marked_once_and_keeps_the_text() -> None:
    passage = "ə" * 3000
    segments = highlight_spans(passage, "ə" * 10, "ə" * 1000)
    labels = _labels(segments)
    assert "".join(text for text, _ in segments) == passage
    # the quote starts at the gold (the most overlap, the first such hit), 1,000 characters long
    assert labels[:10] == "b" * 10 and labels[10:1000] == "m" * 990 and set(labels[1000:]) == {"-"}
