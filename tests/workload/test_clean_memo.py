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
