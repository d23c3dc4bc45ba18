"""The provider API's own log of the requests it refused: why a receiver that fetches failed.

A receiver configured with the wrong API key, or asking for an object the provider does
not have, answers its webhooks with 5xx and its effects go missing; its report should say
why, from the provider's side. `RefusalLog` keeps the last `MAX_REFUSALS` refused requests
of one provider server (an answer of 400 or more on a provider-API route; the effect sink
and the harness's own ``/_hookproof`` routes are not the provider API): the method, the
path without its query (a query may hold an access token), the status and the error code
the answer's body names (Stripe's and Paddle's ``error.code``/``error.type``, Mercado
Pago's ``error``, GitHub's ``message``). Never a header, a key or a message that could
quote one (Stripe's 401 message quotes the masked key).

`refusal_log(state)` is the log a `ServerState` keeps (its `refusals`); the ASGI layer of
the app records into it (`simulator.server.app.HookproofApp`), a scenario runner reads what
was refused during its scenario (`mark`, `since`) and `summary` says it in one line.
Thread-safe (uvicorn's thread records, the runner's thread reads).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Sequence

#: Refusals kept per provider server (the oldest are dropped first).
MAX_REFUSALS = 1000
#: Bytes of an error answer read for its code.
BODY_CAP_BYTES = 4096
#: Longest error code kept, in characters.
MAX_CODE_CHARS = 80
#: Paths that are not the provider API.
NOT_PROVIDER_API = ("/sink", "/_hookproof", "/docs", "/openapi.json", "/redoc")
_WORDS = {400: "bad request", 401: "invalid API key", 403: "forbidden", 404: "unknown object", 405: "method not allowed",
          409: "conflict", 422: "bad request", 429: "rate limited"}


@dataclass(frozen=True)
class Refusal:
    """One refused provider-API request.

    Attributes:
        seq: its position in the server's refusals, from 1.
        method / path: the request (the path without its query).
        status: the answer's HTTP status (400 or more).
        code: the error code the answer named ("" when none).
        hint: what the server knows of the cause and the answer does not say, as Stripe's
            does not ("" when nothing): an object of a connected account asked for without
            its ``Stripe-Account``.
    """

    seq: int
    method: str
    path: str
    status: int
    code: str
    hint: str = ""

    @property
    def words(self) -> str:
        """What the status means for a receiver, in plain words."""
        return _WORDS.get(self.status, "server error" if self.status >= 500 else "refused")

    def line(self) -> str:
        """``401 invalid API key (api_key_invalid) on GET /v1/payment_intents/pi_1``."""
        code = f" ({self.code})" if self.code else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.status} {self.words}{code} on {self.method} {self.path}{hint}"


def is_provider_api(path: str) -> bool:
    """True when `path` is a provider-API route (not the sink nor the harness's own)."""
    return not path.startswith(NOT_PROVIDER_API)


def error_code(body: bytes) -> str:
    """The error code an error answer's JSON body names, or "" (never its message, which
    may quote a masked key; GitHub's message is its code)."""
    try:
        data: Any = json.loads(body[:BODY_CAP_BYTES])
    except (ValueError, UnicodeDecodeError):
        return ""
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if isinstance(error, dict):
        code = error.get("code") or error.get("type") or ""
    elif isinstance(error, str):
        code = error
    elif "documentation_url" in data:  # GitHub: the message is the error's name ("Bad credentials")
        code = data.get("message") or ""
    else:
        code = ""
    return str(code)[:MAX_CODE_CHARS]


class RefusalLog:
    """The last `capacity` refusals of one provider server (see the module docstring)."""

    def __init__(self, capacity: int = MAX_REFUSALS) -> None:
        self._lock = threading.Lock()
        self._items: deque[Refusal] = deque(maxlen=capacity)
        self._count = 0

    def add(self, method: str, path: str, status: int, code: str = "", hint: str = "") -> Refusal:
        """Record one refused request; returns it."""
        with self._lock:
            self._count += 1
            refusal = Refusal(self._count, method, path, status, code, hint)
            self._items.append(refusal)
            return refusal

    def mark(self) -> int:
        """A position to read from later (`since`): the refusals recorded so far."""
        with self._lock:
            return self._count

    def since(self, mark: int) -> list[Refusal]:
        """The refusals recorded after `mark` that are still kept, oldest first."""
        with self._lock:
            return [r for r in self._items if r.seq > mark]


def refusal_log(state: Any) -> RefusalLog:
    """The RefusalLog a provider server's `state` (a `ServerState`) keeps."""
    log: RefusalLog = state.refusals
    return log


def summary(refusals: Sequence[Refusal], *, most: int = 3) -> str | None:
    """One line: ``the provider API refused 4 requests: 401 invalid API key (api_key_invalid)
    on GET /v1/payment_intents/pi_1 (x3); 404 …``: identical refusals counted, the `most`
    most frequent shown. None when nothing was refused."""
    if not refusals:
        return None
    counts: dict[str, int] = {}
    for r in refusals:
        line = r.line()
        counts[line] = counts.get(line, 0) + 1
    shown = sorted(counts.items(), key=lambda kv: -kv[1])[:most]
    parts = [line + (f" (x{n})" if n > 1 else "") for line, n in shown]
    more = len(counts) - len(shown)
    tail = f"; and {more} other kind(s)" if more > 0 else ""
    n = len(refusals)
    return f"the provider API refused {n} request{'s' if n != 1 else ''}: " + "; ".join(parts) + tail


__all__ = ["MAX_REFUSALS", "Refusal", "RefusalLog", "error_code", "is_provider_api", "refusal_log", "summary"]
