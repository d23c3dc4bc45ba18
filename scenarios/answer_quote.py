"""The start of a receiver's answer body, as one short line a finding can quote.

A 403 from Django's CSRF middleware or a 500 from a framework's error page names its
cause in its body ("CSRF verification failed"); the history keeps the first 2 KiB of
every answer (`Attempt.response_excerpt`, secrets already masked by the dispatcher), and
a finding about refused deliveries quotes its start. An HTML page is quoted by its
visible text (its ``<head>``, scripts and styles dropped), so the quote reaches the words
rather than the markup.
"""

from __future__ import annotations

import html
import re
from typing import Sequence

#: Most characters of a quote (an ellipsis marks a cut).
QUOTE_CHARS = 120

_HIDDEN = re.compile(r"<(head|script|style)\b.*?(</\1\s*>|$)", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
_TAG = re.compile(r"<[^>]*>?")
_SPACE = re.compile(r"\s+")


def answer_quote(body: str, limit: int = QUOTE_CHARS) -> str:
    """The first `limit` characters of answer `body` on one line ("" for an empty body).

    Whitespace runs become one space; an HTML body (starting with ``<``) is reduced to its
    visible text first. A cut body ends with ``…`` (the result is then `limit` + 1
    characters). Every other character is the body's as it was sent: a JSON answer keeps its
    double quotes (``{"ok":true}``, never a Python repr's ``{'ok':true}``), the findings'
    ``"…"`` around it being only where the quote begins and ends.
    Masking is not redone here: the dispatcher recorded the body masked.
    """
    text = body.strip()
    if text.startswith("<"):
        text = _TAG.sub(" ", _COMMENT.sub(" ", _HIDDEN.sub(" ", text)))
        text = html.unescape(text)
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


__all__: Sequence[str] = ["QUOTE_CHARS", "answer_quote"]
