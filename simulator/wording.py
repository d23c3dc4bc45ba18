"""Words of the messages and descriptions hookproof writes: the indefinite article of a word."""

from __future__ import annotations


def a_or_an(word: str) -> str:
    """`word` after its indefinite article, by its first letter: ``an invoice``, ``an explore``,
    ``a subscription``, ``a certify`` (a first letter is enough for the names hookproof uses)."""
    return f"{'an' if word[:1].lower() in 'aeiou' and word[:1] else 'a'} {word}"


__all__ = ["a_or_an"]
