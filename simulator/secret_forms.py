"""Every spelling of a signing secret a receiver could print, and text with all of them masked.

A receiver's log, its error pages and its answers may betray a secret in more forms than
the string it was given: the key after its provider's prefix, and the key *bytes* its
verifier derives, printed as hex, base64 or a language's bytes literal. `secret_forms`
lists them; `Masker` replaces each with ``***`` in one pass. Every place hookproof shows
text a receiver (or a failing command) wrote masks it here: the kept ``receiver.log`` and
the tails findings quote, start-up failures, seed-hook reasons, answer excerpts in the
history.

Key derivations (docs/providers.md, each provider's official verifier): Standard Webhooks
and Svix strip ``whsec_`` and base64-decode the rest (``standardwebhooks`` ``Webhook.__init__``);
Stripe keys with the whole ``whsec_…`` string as UTF-8; Paddle (``pdl_ntfset_…``), Shopify
(app secrets ``shpss_…``), GitHub, Mercado Pago and Slack key with the secret's UTF-8 bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Iterable

#: Prefixes a provider puts before the key part of its secrets (Stripe, Standard Webhooks and
#: Svix ``whsec_``; Paddle notification destinations ``pdl_ntfset_``; Shopify app secrets ``shpss_``).
SECRET_PREFIXES = ("whsec_", "pdl_ntfset_", "shpss_")
#: Secrets (and forms) shorter than this are not masked (they would mask ordinary words).
MIN_CHARS = 4
#: Decoded key bytes shorter than this are not taken as a key (Standard Webhooks: 24-64 bytes).
MIN_KEY_BYTES = 8
_URL_TO_STD = str.maketrans("-_", "+/")


def key_texts(secret: str) -> list[str]:
    """`secret` itself and its key part after a known prefix (`SECRET_PREFIXES`)."""
    texts = [secret]
    for prefix in SECRET_PREFIXES:
        if secret.startswith(prefix) and len(secret) > len(prefix):
            texts.append(secret[len(prefix):])
    return texts


def decoded_key(text: str) -> bytes | None:
    """The bytes `text` decodes to as base64 (standard or URL-safe, padding optional), when it
    is base64 of at least `MIN_KEY_BYTES` bytes; else None. A Standard Webhooks verifier keys
    its HMAC with these bytes."""
    padded = text + "=" * (-len(text) % 4)
    if not padded.isascii():
        return None
    try:
        raw = base64.b64decode(padded.translate(_URL_TO_STD), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) >= MIN_KEY_BYTES else None


def byte_forms(raw: bytes) -> set[str]:
    """How a program prints `raw`: hex (lower, upper; contiguous, and space- or colon-separated
    as Node's ``Buffer`` and ``bytes.hex(" ")`` do), base64 (standard and URL-safe, with and
    without padding), the inside of Python's bytes repr (``b'…'``, also inside
    ``bytearray(b'…')``, and with its backslashes doubled as a JSON log line holds it), and decimal byte lists (Go's ``[1 2 3]``, Python's and JavaScript's
    ``[1, 2, 3]``, JSON's ``[1,2,3]``, Java's signed ``[49, -14, …]``)."""
    forms: set[str] = set()
    hexed = raw.hex()
    for h in (hexed, hexed.upper()):
        pairs = [h[i:i + 2] for i in range(0, len(h), 2)]
        forms |= {h, " ".join(pairs), ":".join(pairs)}
    b64, url = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
    forms |= {b64, b64.rstrip("="), url, url.rstrip("=")}
    inside = repr(raw)[2:-1]
    forms |= {inside, repr(bytearray(raw))[12:-2], inside.replace("\\", "\\\\")}  # also as a JSON string holds it
    numbers = [str(b) for b in raw]
    signed = [str(b - 256 if b > 127 else b) for b in raw]
    forms |= {" ".join(numbers), ", ".join(numbers), ",".join(numbers), ", ".join(signed)}
    return forms


def secret_forms(secret: str) -> set[str]:
    """The spellings of `secret` a log or an answer could betray it in: the secret and its key
    part after a known prefix (`key_texts`), each as text and as its UTF-8 bytes printed every
    way `byte_forms` knows; and, when the key part is base64 (a Standard Webhooks/Svix
    ``whsec_`` secret), the decoded key bytes printed the same ways. Texts and forms shorter
    than `MIN_CHARS` are left out."""
    forms: set[str] = set()
    for text in key_texts(secret):
        if len(text) < MIN_CHARS:  # too short to mask without masking ordinary text
            continue
        forms.add(text)
        forms |= byte_forms(text.encode())
        raw = decoded_key(text)
        if raw is not None:
            forms |= byte_forms(raw)
    return {f for f in forms if len(f) >= MIN_CHARS}


class Masker:
    """Replaces every form (`secret_forms`) of the given secrets with ``***``, in one pass.

    Empty secrets are ignored; with none left, `__call__` returns its text unchanged.
    The longest form at a position wins (a secret's hex is never half masked by its key's).
    """

    __slots__ = ("_pattern", "_shortest")

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms = {f for s in secrets if s for f in secret_forms(s)}
        ordered = sorted(forms, key=lambda f: (-len(f), f))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._shortest = len(ordered[-1]) if ordered else 0

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:  # never shows a secret
        return "Masker(***)" if self._pattern is not None else "Masker()"

    def __call__(self, text: str) -> str:
        """`text` with every form masked as ``***``."""
        if self._pattern is None or len(text) < self._shortest:  # (a short answer: "ok")
            return text
        return self._pattern.sub("***", text)


#: Maskers made by `masker_for`, per tuple of secrets (a run masks with a few).
_MASKERS: dict[tuple[str | None, ...], Masker] = {}
_MASKERS_KEPT = 64


def masker_for(secrets: Iterable[str | None]) -> Masker:
    """`Masker(secrets)`, made once per tuple of secrets and shared (a Masker never
    changes): building one lists every form of each secret and joins them into one
    pattern, about 1 ms, which a search making a dispatcher per example paid each time.
    Kept in this process's memory only, as the secrets are (at most `_MASKERS_KEPT`)."""
    key = tuple(secrets)
    masker = _MASKERS.get(key)
    if masker is None:
        if len(_MASKERS) >= _MASKERS_KEPT:
            _MASKERS.clear()
        masker = _MASKERS[key] = Masker(key)
    return masker


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every form of every secret (`secret_forms`) replaced by ``***``."""
    return Masker(secrets)(text)
