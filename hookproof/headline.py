"""A run's headline: the one line that says what is likely wrong when a whole run points
one way, printed above the verdict table and kept first among the report's notes.

Every valid delivery of the run refused with 401 or 403 and none acknowledged, which is
what a receiver verifying with another signing secret (or another provider's scheme)
answers; or, on the same counts, refused with 400, which many receivers answer a bad
signature with (Stripe's own docs' example does) and also what a receiver that cannot parse
the provider's requests answers, so that line names both causes and quotes the first
answer. The line names where ``target.secret`` comes from, never its value (an answer
quoted was recorded with every secret hookproof knows masked).

Or some scenario found its business keys or objects already in the receiver before its
first delivery (`scenarios.leftovers`), which a database kept from an earlier run of the same
seed shows: that line comes first, since those scenarios proved nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from hookproof.simulator.profiles.registry import signature_inputs

if TYPE_CHECKING:
    from hookproof.reports.model import RunReport
    from hookproof.simulator.delivery.history import Attempt

#: What every headline starts with (how the console finds it among the report's notes).
HEADLINE_PREFIX = "likely cause: "

#: Refusals that say "not authenticated": what a receiver answers a signature it cannot verify.
AUTH_STATUSES = (401, 403)

#: The refusal a receiver answers a request it could not verify or could not parse: the
#: headline names both causes (a wrong secret, or a body or headers it cannot read).
BAD_REQUEST = 400

#: The share of the answered valid attempts that must be such refusals ("nearly every": a few
#: other answers, say a 413 to the oversized payload, do not hide the cause).
NEARLY = 0.9

#: Fewer refused valid attempts than this say nothing about the run as a whole.
AT_LEAST = 3

#: The headline's last check where the signature covers the body: a receiver verifying the body
#: its framework parsed and serialised again (express.json, json.dumps) refuses every delivery
#: with the right secret, and answers as it would a wrong one.
RAW_BODY_HINT = (", and that the receiver verifies the body as it was received (one parsed and serialised again, "
                 "as express.json or json.dumps give it, never matches its signature)")


def secret_sources(secret: str | Sequence[str], literal: str = "written in the config") -> str:
    """Where `secret` (``target.secret``: one reference or a rotation list) comes from, as may
    be shown: ``env:NAME``, ``file:PATH``, or `literal` for a literal (send's ``--secret``:
    ``given on the command line``)."""
    from hookproof.secret_ref import SecretRef, SecretRefError

    shown = []
    for value in [secret] if isinstance(secret, str) else list(secret):
        try:
            ref = SecretRef.parse(value)
        except SecretRefError:
            shown.append(literal)
            continue
        shown.append(literal if ref.kind == "literal" else ref.source)
    return ", ".join(dict.fromkeys(shown))


def run_acked(report: "RunReport") -> int | None:
    """The attempts of the whole run the receiver acknowledged, as the ``ack_latency``
    checks counted them (``stats["acked"]``), or None when no such check counted: a
    storm's report keeps a share of its attempts, its checks saw them all."""
    counts = [c.stats.get("acked") for s in report.scenarios for c in s.checks if c.check_id == "ack_latency"]
    known = [n for n in counts if isinstance(n, int)]
    return sum(known) if known else None


def first_answer(attempts: Iterable["Attempt"], status: int = BAD_REQUEST) -> str | None:
    """The first valid attempt's answer body among `attempts` that got `status`, quoted on
    one line (`scenarios.answer_quote`; recorded masked), or None when none got it or its
    body was empty."""
    from hookproof.scenarios.answer_quote import answer_quote

    first = next((a for a in attempts if a.valid and a.status == status), None)
    return (answer_quote(first.response_excerpt) or None) if first is not None else None


def refused_events(report: "RunReport", status: int = BAD_REQUEST) -> set[str]:
    """The ids of the events whose valid attempts in `report` were answered `status`."""
    return {a.event_id for s in report.scenarios for a in s.attempts if a.valid and a.status == status}


def refused_headline(report: "RunReport", sources: str, *, acked: int | None = None,
                     quote: str | None = None, fetched: int = 0) -> str | None:
    """The headline of `report` when (nearly) every valid attempt answered was refused with
    401 or 403 (or with 400) and none was acknowledged, else None.

    Counted over the valid attempts of every scenario (``AttemptView.valid``; forged,
    stale and other invalid ones are meant to be refused), those that got an HTTP answer
    (`status_headline`). A receiver refusing only some events (it acknowledged others)
    gets none. `sources`: where ``target.secret`` comes from (`secret_sources`), never the
    secret. `acked`: the whole run's acknowledged attempts when the report keeps only some
    of its attempts (a storm's, `run_acked`); any means no headline. `quote`: the first
    400's answer (`first_answer`), shown by a 400 headline. `fetched`: how many of the events
    refused with 400 (`refused_events`) the receiver fetched from the provider API first
    (`ServedLog.events_among`), which a 400 headline names as the likelier cause.
    """
    statuses: dict[int, int] = {}
    for a in (a for s in report.scenarios for a in s.attempts if a.valid and a.status is not None):
        if a.outcome == "acked":
            return None
        statuses[a.status or 0] = statuses.get(a.status or 0, 0) + 1
    return status_headline(statuses, sources, report.profile, acked=acked or 0, quote=quote,
                           fetched=(fetched, len(refused_events(report))) if fetched else None)


#: What a standard-webhooks run refused with 401/403 adds: Polar's verifier keys with the secret as
#: given, where the spec's decodes ``whsec_`` and base64 (a Polar secret may decode too, to another key).
RAW_KEY_HINT = ("a receiver verifying as Polar's SDK does keys its HMAC with the secret as given: "
                "[target.signing] secret_encoding = \"raw\", send's --secret-encoding raw")


def status_headline(statuses: Mapping[int, int], sources: str, profile: str, *, acked: int = 0,
                    quote: str | None = None, setting: str = "target.secret",
                    profile_setting: str = "target.profile", fetched: tuple[int, int] | None = None) -> str | None:
    """The headline for a run whose valid attempts got `statuses` (HTTP status -> attempts
    answered with it) and `acked` acknowledged: none acknowledged (and no 2xx), at least
    `AT_LEAST` refused with 401 or 403 (else with 400), and those at least `NEARLY` of the
    answered ones; else None. `profile`: the run's ``target.profile``; `setting`: where the
    secret was given (``target.secret``, send's ``--secret``); `quote`: the first 400's answer
    (`first_answer`), quoted by a 400 headline, never a 401/403 one; `profile_setting`: where the
    profile was chosen (``target.profile``, send's ``--profile`` without a config); `fetched`:
    (events the receiver fetched from the provider API, events refused with 400), which makes
    a 400 headline lead with a receiver validating its deliveries against its own fetch
    (dj-stripe's ``retrieve_event`` validation: no signature is checked then)."""
    if acked or any(200 <= status < 300 for status in statuses):
        return None
    answered = sum(statuses.values())
    for codes_of, cause in ((AUTH_STATUSES, ""), ((BAD_REQUEST,), "a wrong signing secret, or a receiver that "
                                                                  "cannot parse the provider's requests; ")):
        refused = sum(n for status, n in statuses.items() if status in codes_of)
        if refused < AT_LEAST or refused < NEARLY * answered:
            continue
        codes = " or ".join(str(c) for c in sorted(status for status in statuses if status in codes_of))
        every = "every" if refused == answered else "nearly every"
        counted = f"{refused} attempt(s)" if refused == answered else f"{refused} of the {answered} attempt(s) answered"
        shown = f'; the first answer: "{quote}"' if cause and quote else ""
        if cause and fetched is not None and fetched[0]:
            cause = (f"the receiver fetched {fetched[0]} of the {fetched[1]} event(s) it refused from the provider "
                     "API first, as one does that validates a delivery by retrieving its event and comparing the "
                     "two (dj-stripe's retrieve_event validation, which checks no signature): hookproof served "
                     "the event it delivered, so look at that comparison; else a wrong signing secret, or "
                     "requests it cannot parse; ")
        inputs = signature_inputs(profile)
        covers = f" ({inputs})" if inputs and not cause else ""
        if profile == "standard-webhooks" and not cause:
            covers += f" ({RAW_KEY_HINT})"
        # a signature over the body (every profile but those signing a manifest of their own inputs)
        raw = "" if inputs or (fetched is not None and fetched[0]) else RAW_BODY_HINT
        return (f"{HEADLINE_PREFIX}{every} valid delivery was refused with {codes} ({counted}) and none was "
                f"acknowledged: {cause}check that {setting} is the receiver's signing secret (source: "
                f"{sources}) and {profile_setting} ({profile}) the provider it verifies{covers}{raw}{shown}")
    return None


#: Scenarios `leftovers_headline` names (the rest are counted).
LEFTOVERS_SHOWN = 3


#: The scenario whose failure says the receiver verifies a re-serialised body (`raw_body_headline`).
RESERIALIZED = "reserialized-body"

#: Event types a `raw_body_headline` names (the rest are counted).
TYPES_SHOWN = 3


def raw_body_headline(report: "RunReport") -> str | None:
    """The headline of a run in which the receiver refused its valid delivery in other JSON bytes
    (`RESERIALIZED` failed on ``valid_not_rejected``) and, in other scenarios, refused some valid
    deliveries with 400, 401 or 403 (never acknowledged) while acknowledging others: it verifies
    the signature over a body it parsed and serialised again, which matches the provider's bytes
    only for some bodies (``JSON.stringify`` writes ``18.0`` as ``18``); None otherwise. The
    refused events' types are named, at most `TYPES_SHOWN`."""
    by_id = {s.id: s for s in report.scenarios}
    if (resent := by_id.get(RESERIALIZED)) is None or not any(
            f.check_id == "valid_not_rejected" for f in resent.findings):
        return None
    refused: dict[str, str] = {}
    acked: set[str] = set()
    for s in report.scenarios:
        if s.id == RESERIALIZED:
            continue
        for a in s.attempts:
            if not a.valid:
                continue
            if a.outcome == "acked":
                acked.add(a.event_id)
            elif a.status in (*AUTH_STATUSES, BAD_REQUEST):
                refused.setdefault(a.event_id, a.event_type)
    refused = {e: t for e, t in refused.items() if e not in acked}
    if not refused or not acked:
        return None
    types = list(dict.fromkeys(refused.values()))
    shown = ", ".join(types[:TYPES_SHOWN]) + (f" and {len(types) - TYPES_SHOWN} more" if len(types) > TYPES_SHOWN else "")
    return (f"{HEADLINE_PREFIX}the receiver verifies the signature over a body it parsed and serialised again, not "
            f"the bytes received: it refused {RESERIALIZED}'s valid delivery, and {len(refused)} valid event(s) of "
            f"other scenarios ({shown}) were refused while others were acknowledged; a re-serialised body matches "
            "the provider's bytes only where nothing changes (a number written 18.0 comes back 18, escapes, key "
            "order): verify the raw body (express.raw, request.get_data(), await request.body())")


def leftovers_headline(report: "RunReport") -> str | None:
    """The headline of `report` when some scenario was not judged because the receiver
    already held its keys or objects before its first delivery (an ``error`` whose reason
    begins `scenarios.leftovers.LEFTOVERS_PREFIX`): how many, a few by id, and the likely
    cause with the run's seed; else None."""
    from hookproof.scenarios.leftovers import LEFTOVERS_PREFIX, kept_database

    held = [s.id for s in report.scenarios if s.verdict == "error" and (s.reason or "").startswith(LEFTOVERS_PREFIX)]
    if not held:
        return None
    shown = ", ".join(held[:LEFTOVERS_SHOWN]) + (f" and {len(held) - LEFTOVERS_SHOWN} more"
                                                 if len(held) > LEFTOVERS_SHOWN else "")
    return (f"{HEADLINE_PREFIX}{kept_database(report.seed)}; the receiver already held the business keys or objects "
            f"of {len(held)} scenario(s) ({shown}) before their first delivery, so they were not judged")


def split_headline(notes: Sequence[str]) -> tuple[str | None, tuple[str, ...]]:
    """(the headline among `notes`, or None; the other notes in their order)."""
    headline = next((n for n in notes if n.startswith(HEADLINE_PREFIX)), None)
    return headline, tuple(n for n in notes if n is not headline)
