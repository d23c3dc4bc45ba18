"""The attempt core: what a transport observed -> the attempt's record and the retry decision.

Pure and synchronous (no sockets, no clock): every sender calls it, so one answer gets
one grade whichever way it was sent: the dispatcher (httpx over aiohttp, and in-process
apps), the race transport (HTTP/1.1 last-byte sync, HTTP/2 single packet) and the
storm's gevent users.

A transport fills an `Observed`: whether the whole request was handed to the kernel,
the final status when a complete head came, the body read (at most the read cap) and
whether the cap was passed, the first bytes of the answer as they came off the wire
(so a TLS handshake, an HTTP/0.9 answer or a garbage status line are named from the
bytes, never from a parser's message), and, when the exchange did not end in a whole
answer, how it broke (`Broke`). `grade` turns it into a `Grade`: the `Outcome`, the
Jepsen completion of DESIGN.md's History contract, and the reason in plain words.

Completion (DESIGN.md, History): ``ok`` a 2xx (the profile's success) came back whole;
``fail`` known not to have reached the handler (refused, the request never fully
written, the receiver does not speak the protocol) or a 3xx/4xx rejection; ``unknown``
everything else: any 5xx, an answer lost, cut, past the read cap or not HTTP after the
request was sent, a timeout after sending.

`retry_delay_s` is the retry decision on the profile's schedule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from hookproof.simulator.delivery.history import (
    RESPONSE_EXCERPT_BYTES,
    Completion,
    Outcome,
)

#: Bytes of the answer's start a transport keeps for `grade` (enough for a status line).
ANSWER_START_BYTES = 256
#: Default cap on an answer body, in bytes (the rest is not read): every sender's.
READ_CAP_BYTES = 64 * 1024


class Broke(StrEnum):
    """How an exchange ended without a whole answer (None in `Observed`: it did not break)."""

    REFUSED = "refused"  # nothing listens on the port
    CONNECT_FAILED = "connect_failed"  # DNS, unreachable network... (`detail` says which)
    CONNECT_TIMEOUT = "connect_timeout"  # no connection within the connect timeout
    CLOSED = "closed"  # the receiver closed the connection (FIN)
    RESET = "reset"  # the receiver reset the connection (RST)
    TIMEOUT = "timeout"  # the sender timeout passed
    INVALID = "invalid"  # bytes that are not a valid HTTP answer
    NOT_H2C = "not_h2c"  # HTTP/2 prior knowledge refused: the receiver does not speak h2c
    STREAM_RESET = "stream_reset"  # HTTP/2: the receiver reset the stream (`detail`: the code)
    GOAWAY = "goaway"  # HTTP/2: the receiver closed the connection before processing the stream
    UNFINISHED = "unfinished"  # the run ended (a storm's end) before the answer came
    OTHER = "other"  # any other transport failure (`detail` says what, in plain words)


@dataclass(slots=True)
class Observed:
    """What one transport saw of one exchange.

    Attributes:
        request_sent: True when the whole request, its last byte included, was handed
            to the kernel (before that, the receiver's handler cannot have run on it).
        status: the final status code when a whole answer head was read, else None.
        body: the answer body read, at most the read cap.
        over_cap: True when the body went past the read cap (the answer was abandoned).
        answer_start: the first bytes the receiver sent for this request (at most
            `ANSWER_START_BYTES`), as they came off the wire: interim answers included.
        broke: how the exchange ended without a whole answer, or None.
        detail: plain words a transport adds (an OS error's text, an HTTP/2 error code).
        timeout_s: the sender timeout of the attempt, in seconds (for the reason).
        read_cap_bytes: the read cap in bytes (for the reason).
    """

    request_sent: bool
    status: int | None = None
    body: bytes = b""
    over_cap: bool = False
    answer_start: bytes = b""
    broke: Broke | None = None
    detail: str | None = None
    timeout_s: float | None = None
    read_cap_bytes: int | None = None


@dataclass(slots=True)
class Grade:
    """The record fields `grade` gives one attempt.

    Attributes:
        outcome / completion: see `Outcome` and `Completion` (history.py).
        status: the status recorded: the final status of a whole answer, else None.
        reason: plain words for anything but a 2xx/4xx/5xx answer taken whole, else None.
        excerpt: the first `RESPONSE_EXCERPT_BYTES` of the body, decoded leniently.
    """

    outcome: Outcome
    completion: Completion
    status: int | None
    reason: str | None
    excerpt: str


class SuccessRule(Protocol):
    """What `grade` needs of a profile: its success statuses."""

    def is_success(self, status: int) -> bool: ...


_NOT_SENT_COMPLETION = Completion.FAIL
# The members a whole answer is graded with, read once: reading an enum's member off its
# class costs ~0.2 us on Python 3.11, more than the rest of grading a 2xx.
_ACKED, _SERVER_ERROR, _REJECTED = Outcome.ACKED, Outcome.SERVER_ERROR, Outcome.REJECTED
_OK, _UNKNOWN, _FAIL = Completion.OK, Completion.UNKNOWN, Completion.FAIL
_STATUS_LINE = re.compile(rb"HTTP/\d\.\d [0-9]{3}(?: [^\r\n]*)?\r?\n")
_INTERIM = re.compile(rb"HTTP/\d\.\d 1[0-9]{2}(?: [^\r\n]*)?\r?\n(?:[^\r\n]+\r?\n)*\r?\n")
_TLS_RECORD = (b"\x15\x03", b"\x16\x03")  # an alert or a handshake record, TLS 1.x


def grade(observed: Observed, rule: SuccessRule) -> Grade:
    """The outcome, completion, recorded status and reason of one attempt.

    `rule` gives the success statuses (a `Profile`). Never raises.
    """
    status = observed.status
    body = observed.body
    excerpt = body[:RESPONSE_EXCERPT_BYTES].decode("utf-8", "replace") if body else ""
    if status is not None and observed.broke is None and not observed.over_cap:
        if rule.is_success(status):
            return Grade(_ACKED, _OK, status, None, excerpt)
        if status >= 500:
            return Grade(_SERVER_ERROR, _UNKNOWN, status, None, excerpt)
        reason = (f"answered a {status} redirect; a provider does not follow redirects" if 300 <= status < 400
                  else f"answered {status}, a 2xx this provider does not count as delivered (it retries)"
                  if 200 <= status < 300 else None)
        return Grade(_REJECTED, _FAIL, status, reason, excerpt)
    outcome, completion, reason = _broken(observed)
    return Grade(outcome, completion, None, reason, excerpt)


def _broken(o: Observed) -> tuple[Outcome, Completion, str]:
    """Outcome, completion and reason of an exchange that gave no whole answer."""
    broke = o.broke or Broke.OTHER
    if o.over_cap:
        cap = f"the {o.read_cap_bytes}-byte read cap" if o.read_cap_bytes is not None else "the read cap"
        return (Outcome.CONNECTION_ERROR, Completion.UNKNOWN,
                f"answered {o.status} with a body longer than {cap}; the provider abandoned the answer")
    if not o.request_sent and o.status is None:
        return Outcome.CONNECTION_ERROR, _NOT_SENT_COMPLETION, _not_sent(broke, o)
    if o.status is not None:  # the head came whole, the body did not
        if broke is Broke.TIMEOUT:
            return (Outcome.TIMEOUT, Completion.UNKNOWN,
                    f"answered {o.status} but the body did not finish within {_seconds(o)} (sender timeout)")
        return Outcome.CONNECTION_ERROR, Completion.UNKNOWN, f"answered {o.status} but {_body_broke(broke, o)}"
    invalid = _not_http(o.answer_start)
    if invalid is not None:
        return Outcome.CONNECTION_ERROR, Completion.UNKNOWN, f"the answer was not valid HTTP: {invalid}"
    if broke is Broke.GOAWAY:
        return (Outcome.CONNECTION_ERROR, Completion.FAIL,
                "the receiver closed the HTTP/2 connection (GOAWAY) before processing the request")
    head = _head_so_far(o.answer_start)
    outcome = Outcome.TIMEOUT if broke in (Broke.TIMEOUT, Broke.UNFINISHED) else Outcome.CONNECTION_ERROR
    if head is None:
        if broke is Broke.TIMEOUT:
            return outcome, Completion.UNKNOWN, f"no answer within {_seconds(o)} (sender timeout)"
        if broke is Broke.UNFINISHED:
            return outcome, Completion.UNKNOWN, "no answer before the storm ended"
        return outcome, Completion.UNKNOWN, _no_answer(broke, o)
    if broke is Broke.TIMEOUT:
        ending = f"the sender timeout of {_seconds(o)} passed"
    elif broke is Broke.UNFINISHED:
        ending = "the storm ended"
    else:
        ending = _ending(broke, o)
    return outcome, Completion.UNKNOWN, f"{head}; {ending}"


def _seconds(o: Observed) -> str:
    return f"{o.timeout_s:g} s" if o.timeout_s is not None else "the sender timeout"


def _not_sent(broke: Broke, o: Observed) -> str:
    if broke is Broke.REFUSED:
        return "connection refused: nothing listens there"
    if broke is Broke.CONNECT_FAILED:
        return f"could not connect: {o.detail}" if o.detail else "could not connect"
    if broke is Broke.CONNECT_TIMEOUT:
        return f"connect timed out after {o.detail} s" if o.detail else "connect timed out"
    if broke is Broke.TIMEOUT:
        return "timed out before the request was fully sent"
    if broke is Broke.NOT_H2C:
        why = f" ({o.detail})" if o.detail else ""
        return f"the receiver does not speak HTTP/2 over cleartext (h2c) with prior knowledge{why}"
    if broke is Broke.GOAWAY:
        return "the receiver closed the HTTP/2 connection (GOAWAY) before processing the request"
    if broke is Broke.STREAM_RESET:
        return f"the receiver reset the HTTP/2 stream before the request was fully sent{_code(o)}"
    if broke is Broke.RESET:
        return "the receiver reset the connection before the request was fully sent"
    if broke is Broke.CLOSED:
        return "the receiver closed the connection before the request was fully sent"
    if broke is Broke.UNFINISHED:
        return "the storm ended before the request was sent"
    return f"the connection broke before the request was fully sent{_detail(o)}"


def _no_answer(broke: Broke, o: Observed) -> str:
    """The reason when the request went out and not one byte of an answer came."""
    if broke is Broke.CLOSED:
        return "the receiver closed the connection without answering"
    if broke is Broke.RESET:
        return "the receiver reset the connection before answering"
    if broke is Broke.STREAM_RESET:
        return f"the receiver reset the HTTP/2 stream before answering{_code(o)}"
    if broke is Broke.INVALID:
        return f"the answer was not valid HTTP{_detail(o)}"
    return f"the connection broke after sending{_detail(o)}"


def _ending(broke: Broke, o: Observed) -> str:
    """How an answer that had begun ended."""
    if broke is Broke.CLOSED:
        return "the receiver closed the connection"
    if broke is Broke.RESET:
        return "the receiver reset the connection"
    if broke is Broke.STREAM_RESET:
        return f"the receiver reset the HTTP/2 stream{_code(o)}"
    if broke is Broke.INVALID:
        return "the rest was not valid HTTP"
    return f"the connection broke{_detail(o)}"


def _body_broke(broke: Broke, o: Observed) -> str:
    if broke is Broke.RESET:
        return "the connection was reset while the answer's body was being read"
    if broke is Broke.CLOSED:
        return "the connection was closed while the answer's body was being read"
    if broke is Broke.STREAM_RESET:
        return f"the receiver reset the HTTP/2 stream while the answer's body was being read{_code(o)}"
    if broke is Broke.INVALID:
        return "the answer's body was not valid HTTP framing"
    if broke is Broke.UNFINISHED:
        return "the storm ended while the answer's body was being read"
    return f"the connection broke while the answer's body was being read{_detail(o)}"


def _detail(o: Observed) -> str:
    return f" ({o.detail})" if o.detail else ""


def _code(o: Observed) -> str:
    return f" ({o.detail})" if o.detail else ""


def _not_http(start: bytes) -> str | None:
    """What the answer's first bytes are when they cannot begin an HTTP/1 answer, else None."""
    if not start:
        return None
    if start.startswith(_TLS_RECORD):
        what = "handshake" if start[0] == 0x16 else "alert"
        return f"it is a TLS {what} (the receiver speaks HTTPS on this port; the URL says http://)"
    rest = _after_interim(start)
    if not rest:
        return None
    if b"HTTP/"[:len(rest)] == rest[:5]:  # an HTTP/1 status line, or the start of one
        newline = rest.find(b"\n")
        if newline < 0 or _STATUS_LINE.match(rest[:newline + 1]):
            return None
        line = _quote(rest[:newline].rstrip(b"\r"))
        return f"its status line is {line}, not HTTP's"
    if b"\x00" in rest[:16] or not _mostly_text(rest[:64]):
        return f"its first bytes are {_quote(rest[:16])}, not an HTTP status line"
    return f"it has no status line (an HTTP/0.9-style answer): {_quote(rest[:32].rstrip())}"


def _after_interim(start: bytes) -> bytes:
    """`start` without its complete interim (1xx) answers."""
    while True:
        interim = _INTERIM.match(start)
        if interim is None:
            return start
        start = start[interim.end():]


def _head_so_far(start: bytes) -> str | None:
    """Plain words for an HTTP/1 answer that began but whose head never completed."""
    if not start:
        return None
    rest = _after_interim(start)
    if not rest:
        first = _STATUS_LINE.match(start)
        code = first.group(0)[9:12].decode("ascii") if first else "1xx"
        return f"answered {code} {'Continue' if code == '100' else '(interim)'} and then nothing"
    if rest.find(b"\n") < 0:
        return "the status line began and then stopped"
    return "a status line came and then the headers stopped"


def _mostly_text(data: bytes) -> bool:
    printable = sum(1 for b in data if 32 <= b < 127 or b in (9, 10, 13))
    return printable * 10 >= len(data) * 9


def _quote(data: bytes) -> str:
    """`data` as a short quoted string: printable ASCII kept, anything else as ``\\xNN``."""
    text = "".join(chr(b) if 32 <= b < 127 and b not in (39, 92) else f"\\x{b:02x}" for b in data[:40])
    return f"'{text}'" + ("..." if len(data) > 40 else "")


def retry_delay_s(outcome: Outcome, attempts_made: int, *, schedule_s: Sequence[float], max_attempts: int,
                  time_scale: float) -> float | None:
    """Seconds to wait before the next attempt, or None when the delivery stops.

    It stops on an acknowledgement or after `max_attempts` attempts; otherwise the
    delay is the profile's `schedule_s` entry for `attempts_made` failed attempts (its
    last entry once the schedule is exhausted, 0 for an empty schedule), scaled by
    `time_scale`. 409 and every other non-success are retried, as providers do.
    """
    if outcome is _ACKED or attempts_made >= max_attempts:
        return None
    delay = schedule_s[min(attempts_made - 1, len(schedule_s) - 1)] if schedule_s else 0.0
    return delay * time_scale


__all__ = [
    "ANSWER_START_BYTES",
    "READ_CAP_BYTES",
    "Broke",
    "Grade",
    "Observed",
    "SuccessRule",
    "grade",
    "retry_delay_s",
]
