"""A decision's cleaned text is remembered, and the memory gives what cleaning gives."""

from __future__ import annotations

from retrychaos.canaries import SECRET_PREFIX
from retrychaos.escape import safe_text
from retrychaos.workload import reading


def test_a_remembered_word_is_cleaned_as_a_fresh_one_is() -> None:
    """Secrets stay redacted and addresses masked the second time a word is seen."""
    words = ["ok", "budget_exhausted", f"gave up on {SECRET_PREFIX}abcdef12", "<obj at 0x7f00aa>"]
    first = [reading._clean(word) for word in words]
    again = [reading._clean(word) for word in words]
    assert (
        first
        == again
        == ["ok", "budget_exhausted", "gave up on [REDACTED-SECRET]", "<obj at 0x...>"]
    )
    assert all(word in reading._CLEANED for word in words)


def test_long_words_are_not_remembered_and_the_memory_is_bounded() -> None:
    """A text past the length limit is cleaned every time; a full memory starts afresh."""
    long_word = "x" * (reading._CLEANED_LONGEST + 1)
    assert reading._clean(long_word) == long_word
    assert long_word not in reading._CLEANED
    for i in range(reading._CLEANED_MAX + 1):
        reading._clean(f"word-{i}")
    assert len(reading._CLEANED) <= reading._CLEANED_MAX
    assert reading._clean("word-0") == safe_text("word-0", 200)


class Loud(str):
    """A str subclass whose text is not its value: never remembered."""

    __slots__ = ()

    def __str__(self) -> str:
        """Not the value: what the trace would show of it."""
        return "LOUD"


def test_a_remembered_error_text_is_shortened_as_a_fresh_one_is() -> None:
    """Error texts: redacted, masked and cut as safe_text does, the first time and after."""
    texts = [
        "Server error '503 Service Unavailable' for url 'http://search.sim/search?q=storm'",
        f"token {SECRET_PREFIX}abcdef12 refused",
        "<Future at 0x7f00aa> pending",
        "y" * 250,
    ]
    first = [reading._short(text) for text in texts]
    again = [reading._short(text) for text in texts]
    assert first == again == [safe_text(text, 200) for text in texts]
    assert first[1] == "token [REDACTED-SECRET] refused"
    assert len(first[3] or "") == 200
    assert all(text in reading._SHORTENED for text in texts)


def test_only_plain_short_texts_at_the_default_limit_are_remembered() -> None:
    """Another limit, a longer text or a str subclass is shortened every time, never kept."""
    long_text = "z" * (reading._SHORTENED_LONGEST + 1)
    assert reading._short(long_text) == safe_text(long_text, 200)
    assert long_text not in reading._SHORTENED
    assert reading._short("abcdef", limit=4) == "abc…"
    assert reading._SHORTENED.get("abcdef") != "abc…"
    loud = Loud("quiet")
    assert reading._short(loud) == "LOUD"
    assert reading._short("quiet") == "quiet"
    assert reading._short(None) is None
    assert reading._short(42) == "42"
    for i in range(reading._CLEANED_MAX + 1):
        reading._short(f"error-{i}")
    assert len(reading._SHORTENED) <= reading._CLEANED_MAX
