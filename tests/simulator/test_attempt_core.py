"""The attempt core: one grade per answer, whichever transport met it.

A table of answers (`tests/hostile/`: real servers on 127.0.0.1, each answering one way)
is driven through every transport: the dispatcher's plain sequential path (httpx's
transport API over aiohttp), the race transport's HTTP/1.1 last-byte sync and, where
HTTP/2 can express the answer, its single packet, and the storm's geventhttpclient path
(in a subprocess: gevent; Locust is never imported here). Each records the same
(completion, reason): the storm and certify agree on every hostile answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from hookproof.simulator.delivery import Completion, Dispatcher, History, Outcome, Target
from hookproof.simulator.delivery.attempt_core import Broke, Observed, grade, retry_delay_s
from hookproof.simulator.delivery.race import RaceRequest, race
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, events_of_type
from tests.hostile.h2_servers import H2_BEHAVIOURS, h2_hostile_server
from tests.hostile.harness import ROOT, child_env
from tests.hostile.servers import HostileServer, hostile_server
from tests.support import free_port

pytestmark = pytest.mark.timeout(120)

STRIPE = get_profile("stripe")
SECRET = "whsec_attempt_core_table"
TIMEOUT_S = 0.5
CAP = 1000
OVER_CAP = ("unknown", f"answered 200 with a body longer than the {CAP}-byte read cap; the provider abandoned the answer")
BODY_TIMEOUT = ("unknown", f"answered 200 but the body did not finish within {TIMEOUT_S:g} s (sender timeout)")
TLS = ("unknown", "the answer was not valid HTTP: it is a TLS handshake (the receiver speaks HTTPS on this port; "
                  "the URL says http://)")

#: answer -> the (completion, reason) every transport records for it.
TABLE: dict[str, tuple[str, str | None]] = {
    "answer-ok": ("ok", None),
    "server-error": ("unknown", None),
    "redirect-loop": ("fail", "answered a 307 redirect; a provider does not follow redirects"),
    "huge-body": OVER_CAP,
    "endless-body": OVER_CAP,
    "silent": ("unknown", f"no answer within {TIMEOUT_S:g} s (sender timeout)"),
    "stall-after-headers": BODY_TIMEOUT,
    "slowloris-body": BODY_TIMEOUT,
    "slowloris-headers": ("unknown", f"the status line began and then stopped; the sender timeout of {TIMEOUT_S:g} s "
                                     "passed"),
    "garbage": TLS,
    "tls-handshake": TLS,
    "http09": ("unknown", "the answer was not valid HTTP: it has no status line (an HTTP/0.9-style answer): 'ok'"),
    "bad-status-line": ("unknown", "the answer was not valid HTTP: its status line is 'HTTP/1.1 2\\xff0 OK', "
                                   "not HTTP's"),
    "continue-forever": ("unknown", f"answered 100 Continue and then nothing; the sender timeout of {TIMEOUT_S:g} s "
                                    "passed"),
    "continue-then-close": ("unknown", "answered 100 Continue and then nothing; the receiver closed the connection"),
    "status-line-then-stall": ("unknown", "a status line came and then the headers stopped; the sender timeout of "
                                          f"{TIMEOUT_S:g} s passed"),
    "status-line-then-close": ("unknown", "a status line came and then the headers stopped; the receiver closed the "
                                          "connection"),
    "reset-mid-answer": ("unknown", "answered 200 but the connection was reset while the answer's body was being read"),
    "close-mid-answer": ("unknown", "answered 200 but the connection was closed while the answer's body was being "
                                    "read"),
    "reset-after-request": ("unknown", "the receiver reset the connection before answering"),
    "close-after-request": ("unknown", "the receiver closed the connection without answering"),
    "refused": ("fail", "connection refused: nothing listens there"),
}


@contextlib.contextmanager
def serving(answer: str) -> Iterator[str]:
    """The URL of a server giving `answer` (``refused``: a port nothing listens on)."""
    if answer == "refused":
        yield f"http://127.0.0.1:{free_port()}/webhooks"
        return
    with hostile_server(answer) as server:
        yield server.url


def _request() -> RaceRequest:
    return RaceRequest("POST", "", {"Content-Type": "application/json", "Stripe-Signature": "t=1,v1=00"},
                       b'{"id":"evt_table","type":"invoice.paid"}')


def through_dispatcher(url: str) -> tuple[str, str | None]:
    """One attempt through the dispatcher's own transport (httpx's API over aiohttp)."""
    history = History()
    events = events_of_type(World(3), "payment_intent.succeeded", 1)

    async def go() -> None:
        async with Dispatcher(Target(url=url), STRIPE, [SECRET], history, retries=False, sender_timeout_s=TIMEOUT_S,
                              read_cap_bytes=CAP, connect_timeout_s=2.0) as d:
            await d.run(schedule(events, FaultPlan()))

    asyncio.run(go())
    (attempt,) = history.attempts()
    return attempt.completion.value, attempt.error


def through_race(url: str, mode: str) -> tuple[str, str | None]:
    """One request of a burst through the race transport, graded as the dispatcher grades it."""
    (response,) = asyncio.run(race(url, [_request()], mode=mode, timeout_s=TIMEOUT_S,  # type: ignore[arg-type]
                                   read_cap_bytes=CAP, gate_wait_s=0.01))
    graded = grade(response.observed, STRIPE)
    return graded.completion.value, graded.reason


@pytest.mark.parametrize("answer", list(TABLE))
def test_the_plain_sequential_path(answer: str) -> None:
    with serving(answer) as url:
        assert through_dispatcher(url) == TABLE[answer]


@pytest.mark.parametrize("answer", list(TABLE))
def test_http11_last_byte_sync(answer: str) -> None:
    with serving(answer) as url:
        assert through_race(url, "h1-last-byte") == TABLE[answer]


@pytest.mark.parametrize("answer", list(H2_BEHAVIOURS))
def test_http2_single_packet(answer: str) -> None:
    expected = TABLE[answer] if answer != "huge-body" else OVER_CAP
    with h2_hostile_server(answer) as server:
        assert through_race(server.url, "h2-single-packet") == expected


@pytest.fixture(scope="module")
def storm_grades() -> dict[str, tuple[str, str | None]]:
    """Every answer of the table through the storm's geventhttpclient path, in one subprocess."""
    names = list(TABLE)
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(serving(name)) for name in names]
        run = subprocess.run([sys.executable, "-m", "tests.hostile.storm_exchange", str(TIMEOUT_S), str(CAP), *urls],
                             capture_output=True, text=True, timeout=90, cwd=ROOT, env=child_env())
    assert run.returncode == 0, run.stderr
    return {name: (g["completion"], g["reason"]) for name, g in zip(names, json.loads(run.stdout))}


@pytest.mark.parametrize("answer", list(TABLE))
def test_the_storm_path(storm_grades: dict[str, tuple[str, str | None]], answer: str) -> None:
    assert storm_grades[answer] == TABLE[answer]


# ---- the core alone -----------------------------------------------------------------------

@pytest.mark.parametrize(("observed", "outcome", "completion", "status", "reason"), [
    (Observed(True, 200, b"ok"), Outcome.ACKED, Completion.OK, 200, None),
    (Observed(True, 204), Outcome.ACKED, Completion.OK, 204, None),
    (Observed(True, 400), Outcome.REJECTED, Completion.FAIL, 400, None),
    (Observed(True, 409), Outcome.REJECTED, Completion.FAIL, 409, None),
    (Observed(True, 500), Outcome.SERVER_ERROR, Completion.UNKNOWN, 500, None),
    (Observed(True, 200, b"x" * 10, over_cap=True, read_cap_bytes=10), Outcome.CONNECTION_ERROR, Completion.UNKNOWN,
     None, "answered 200 with a body longer than the 10-byte read cap; the provider abandoned the answer"),
    (Observed(False, broke=Broke.CONNECT_TIMEOUT, detail="2"), Outcome.CONNECTION_ERROR, Completion.FAIL, None,
     "connect timed out after 2 s"),
    (Observed(False, broke=Broke.TIMEOUT), Outcome.CONNECTION_ERROR, Completion.FAIL, None,
     "timed out before the request was fully sent"),
    (Observed(False, broke=Broke.RESET), Outcome.CONNECTION_ERROR, Completion.FAIL, None,
     "the receiver reset the connection before the request was fully sent"),
    (Observed(False, broke=Broke.CONNECT_FAILED, detail="Name or service not known"), Outcome.CONNECTION_ERROR,
     Completion.FAIL, None, "could not connect: Name or service not known"),
    (Observed(True, broke=Broke.GOAWAY, detail="NO_ERROR"), Outcome.CONNECTION_ERROR, Completion.FAIL, None,
     "the receiver closed the HTTP/2 connection (GOAWAY) before processing the request"),
    (Observed(True, broke=Broke.STREAM_RESET, detail="INTERNAL_ERROR"), Outcome.CONNECTION_ERROR, Completion.UNKNOWN,
     None, "the receiver reset the HTTP/2 stream before answering (INTERNAL_ERROR)"),
    (Observed(True, broke=Broke.UNFINISHED), Outcome.TIMEOUT, Completion.UNKNOWN, None,
     "no answer before the storm ended"),
    (Observed(True, broke=Broke.INVALID, answer_start=b"\x0e@@\x00garbage"), Outcome.CONNECTION_ERROR,
     Completion.UNKNOWN, None, "the answer was not valid HTTP: its first bytes are '\\x0e@@\\x00garbage', "
                               "not an HTTP status line"),
    (Observed(True, broke=Broke.CLOSED, answer_start=b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"),
     Outcome.CONNECTION_ERROR, Completion.UNKNOWN, None,
     "answered 103 (interim) and then nothing; the receiver closed the connection"),
])
def test_grade(observed: Observed, outcome: Outcome, completion: Completion, status: int | None,
               reason: str | None) -> None:
    graded = grade(observed, STRIPE)
    assert (graded.outcome, graded.completion, graded.status, graded.reason) == (outcome, completion, status, reason)


def test_a_reason_never_quotes_a_parser_or_more_than_a_line() -> None:
    start = b"HTTP/1.1 2" + bytes(range(128, 256)) + b"\r\n\r\n"
    reason = grade(Observed(True, broke=Broke.INVALID, answer_start=start), STRIPE).reason
    assert reason is not None and "bytearray" not in reason and "\n" not in reason and len(reason) < 200


def test_retry_delay_follows_the_profiles_schedule_scaled() -> None:
    schedule_s = (60.0, 300.0)
    kw = {"schedule_s": schedule_s, "max_attempts": 4, "time_scale": 0.5}
    assert retry_delay_s(Outcome.REJECTED, 1, **kw) == 30.0  # type: ignore[arg-type]
    assert retry_delay_s(Outcome.SERVER_ERROR, 2, **kw) == 150.0  # type: ignore[arg-type]
    assert retry_delay_s(Outcome.TIMEOUT, 3, **kw) == 150.0  # type: ignore[arg-type]  # the last entry again
    assert retry_delay_s(Outcome.TIMEOUT, 4, **kw) is None  # type: ignore[arg-type]  # max attempts made
    assert retry_delay_s(Outcome.ACKED, 1, **kw) is None  # type: ignore[arg-type]
    assert retry_delay_s(Outcome.REJECTED, 1, schedule_s=(), max_attempts=2, time_scale=1.0) == 0.0


def test_every_hostile_answer_of_the_table_is_served() -> None:
    from tests.hostile.servers import BEHAVIOURS, MORE_BEHAVIOURS

    assert set(TABLE) - {"refused"} <= set(BEHAVIOURS) | set(MORE_BEHAVIOURS)
    assert HostileServer  # the table's servers are the hostile zoo's


def test_the_delivery_package_exports_the_core_with_a_sorted_complete_all() -> None:
    from hookproof.simulator import delivery
    from hookproof.simulator.delivery import attempt_core

    assert list(delivery.__all__) == sorted(delivery.__all__)
    assert all(hasattr(delivery, name) for name in delivery.__all__)
    assert set(attempt_core.__all__) - {"ANSWER_START_BYTES", "SuccessRule"} <= set(delivery.__all__)


def test_a_2xx_the_provider_does_not_count_says_so() -> None:
    """Mercado Pago counts only 200 and 201 as delivered: a 204 is rejected, and the reason says
    why (it printed an empty note)."""
    graded = grade(Observed(True, status=204), get_profile("mercadopago"))
    assert (graded.outcome, graded.completion, graded.status) == (Outcome.REJECTED, Completion.FAIL, 204)
    assert graded.reason == "answered 204, a 2xx this provider does not count as delivered (it retries)"
    assert grade(Observed(True, status=204), STRIPE).reason is None
