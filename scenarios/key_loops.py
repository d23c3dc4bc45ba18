"""The per-key checks walked key by key, for small runs.

`scenarios.effect_checks` answers ``duplicated``, ``lost``, ``unexpected``,
``recovered`` and ``counter`` for every key at once over the index's `KeyTable`
(`scenarios.key_table`). numpy's fixed cost, a few microseconds a call, is more than a
Python step per key when a run has a handful of keys (explore checks after every step,
certify after every scenario), so an index below `scenarios.key_table.SMALL` is walked
here, from the index's dict counts (`CheckIndex.peak`, `settled_counts`). Both forms
give the same results (``tests/scenarios/test_check_columns.py`` runs both).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from hookproof.scenarios.findings import ADVISORY, CheckResult, Finding, Verdict, result_of
from hookproof.scenarios.observations import Expectations, Observation
from hookproof.simulator.delivery.history import Attempt, Completion
from hookproof.simulator.faults import INVALIDATING, REPLAY_TAG
from hookproof.simulator.world.lifecycle import WITHHELD_KEYS, refunded_total

if TYPE_CHECKING:
    from hookproof.scenarios.check_index import CheckIndex

#: ``unexpected``'s message for a key every delivery of which was invalid.
UNEXPECTED_FORBIDDEN = "applied although every delivery of it was invalid (forged, stale or foreign)"
#: The fault tags that make a delivery invalid (`simulator.faults.INVALIDATING`).
_INVALIDATING_TAGS: frozenset[str] = frozenset(m.value for m in INVALIDATING)
#: ``unexpected``'s message for a key every delivery of which was an event of the endpoint's other mode.
UNEXPECTED_OTHER_MODE = ("applied an event of the other mode than the endpoint's (livemode: a live-mode event on a "
                         "test-mode endpoint, or a test-mode event on a live-mode one)")


def other_mode_message(live: bool) -> str:
    """`UNEXPECTED_OTHER_MODE` for an endpoint whose mode is known (`live`: a live-mode one)."""
    sent, endpoint = ("test", "live") if live else ("live", "test")
    return f"applied a {sent}-mode event on a {endpoint}-mode endpoint (livemode)"


#: Ordinals `seen_in` spells out (past them, digits and a suffix: ``4th``, ``21st``).
_ORDINALS = ("first", "second", "third")


def seen_in(read: int) -> str:
    """Which read of the receiver first showed a key as often as it was ever shown, in words,
    for ``unexpected``'s findings: `read` is the position among the scenario's (or
    example's) reads after its deliveries began, 0 for the first (``seen in the first read
    after delivering``, ``seen in the 4th read after delivering``)."""
    n = read + 1
    if n <= len(_ORDINALS):
        word = _ORDINALS[n - 1]
    else:
        suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        word = f"{n}{suffix}"
    return f"seen in the {word} read after delivering"


#: ``unexpected``'s message for a key every delivery of which was an event of another account.
UNEXPECTED_OTHER_ACCOUNT = "applied an event of another account than the endpoint's (account: not target.account)"
#: ``unexpected``'s message for a key every invalid delivery of which was signed with a future
#: timestamp (`future-timestamp`, invalid only where the profile's official verifier rejects one).
UNEXPECTED_FUTURE = ("applied although every delivery of it was signed with a future timestamp the "
                     "profile's official verifier rejects")
#: ``unexpected``'s message for a key no validly sent event carries.
UNEXPECTED_UNOWED = ("applied, but no validly sent event carries this key (an effect for an event that owes "
                     "none, or a key of the receiver's own shape that hookproof's key templates do not produce: "
                     "map each event type to the receiver's key under [business_keys], and set "
                     "builtin_keys = false to judge by those alone)")

def withheld_messages(history: Sequence[Attempt]) -> Mapping[str, str]:
    """Key → ``unexpected``'s message for it, for each built-in key a validly sent event would
    have carried but owed none because its condition failed (`lifecycle.WITHHELD_KEYS`: a
    ``checkout.session.completed`` not paid, a Paddle refund pending approval or rejected): it
    names the event (of the object's such events the one of its newest version, first sent: a
    rejected refund's rejection rather than its request; its event id and type) and the
    condition. Keys no such event would carry are absent."""
    out: dict[str, tuple[int, str]] = {}
    for a in history:
        rule = WITHHELD_KEYS.get(a.event_type)
        if rule is None or not a.valid or a.business_key is not None or a.object_id is None:
            continue
        key = rule[0](a.object_id)
        version = a.object_version or 0
        if key not in out or version > out[key][0]:
            out[key] = (version, f"applied, but no validly sent event owes this key: {a.event_id} "
                                       f"{a.event_type} was validly sent about {a.object_id}, and {rule[1]}")
    return {key: message for key, (_, message) in out.items()}


class Unowed:
    """``unexpected``'s message for an observed key no validly sent event carries: the
    condition that withheld it from an event that was sent (`withheld_messages`, worked out
    once, on the first key that needs it), else `UNEXPECTED_UNOWED`."""

    def __init__(self, history: Sequence[Attempt]) -> None:
        self.history = history
        self._withheld: Mapping[str, str] | None = None

    def message(self, key: str) -> str:
        """The message for `key` (one line)."""
        if self._withheld is None:
            self._withheld = withheld_messages(self.history)
        return self._withheld.get(key, UNEXPECTED_UNOWED)


def duplicated_by_key(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation], idx: CheckIndex,
) -> CheckResult:
    """``duplicated`` (`effect_checks.check_duplicated`), key by key."""
    findings = []
    others = OtherTypes(idx.history)
    for key, (n, oi) in idx.peak.items():
        if n > 1:
            positions = idx.by_key.get(key, ())
            attempts = idx.attempt_ids(positions)
            findings.append(Finding(
                "duplicated", key,
                f"applied {n} times instead of once; {len(positions)} delivery attempt(s) carried it"
                + distinct_events_note(idx.history, positions) + replay_note(idx, positions)
                + others.note(positions, n),
                expected=1, actual=n, attempts=attempts))
    return result_of("duplicated", findings, {"keys_observed": len(idx.peak), "observations": len(observations)})


#: How the ``lost`` finding of a key none of whose valid deliveries was acknowledged begins.
NEVER_ACKNOWLEDGED = "never applied and never acknowledged"


#: How the ``lost`` finding of an acknowledged key that a read showed applied, and the last read did not, goes on.
GONE = "and applied, then gone by the end of settling"


def lost_finding(idx: CheckIndex, key: str, positions: Sequence[int],
                 peak: tuple[int, int] | None) -> tuple[Finding, bool]:
    """The ``lost`` finding of an expected `key` not applied when settling ended, whose attempts are at
    `positions`, and whether any of them was acknowledged (else it says how each ended). A key an
    earlier read of the receiver showed applied (its `peak`: the highest count any read showed and
    that read's position, `CheckIndex.peak`'s, or None) is said to be gone, and when
    (`gone_words`): committed, then lost (a restart that resets the storage), not never written."""
    acked = idx.acked(positions)
    gone = gone_words(idx, positions, peak)
    if acked:
        return Finding("lost", key, f"acknowledged {len(acked)} time(s) "
                       + (f"{GONE}: {gone}" if gone else "but not applied by the end of settling"),
                       expected=1, actual=0, attempts=idx.attempt_ids(positions)), True
    if gone:  # applied, so not a delivery the sender failed to make: never one the storm's cut excuses
        return Finding("lost", key, f"never acknowledged, {GONE[4:]}: every valid delivery went unanswered or was "
                       f"refused ({idx.answer_summary(positions)}); {gone}",
                       expected=1, actual=0, attempts=idx.attempt_ids(positions)), False
    return Finding("lost", key, f"{NEVER_ACKNOWLEDGED}: every valid delivery "
                   f"went unanswered or was refused ({idx.answer_summary(positions)}); "
                   + after_failures(idx, positions),
                   expected=1, actual=0, attempts=idx.attempt_ids(positions)), False


def gone_words(idx: CheckIndex, positions: Sequence[int], peak: tuple[int, int] | None) -> str:
    """``""``, or for a key some read of the receiver showed applied though the last did not (its
    `peak`, `CheckIndex.peak`'s: the highest count and that read's position):
    ``"the receiver's read 2.4 s after its first delivery showed it applied and a later read did
    not: ..."`` (seconds from the first of its attempts at `positions` to that read, when the
    index keeps its observations), naming what does that: a restart whose start command or
    storage loses committed rows, or a receiver deleting or rolling back an effect it showed."""
    if not peak or peak[0] <= 0:
        return ""
    seen = "a read of the receiver showed it applied"
    observations, history = idx.observations, idx.history
    if observations is not None and 0 <= peak[1] < len(observations) and positions:
        after_s = observations[peak[1]].at - min(history[p].sent_at for p in positions)
        seen = f"the receiver's read {max(after_s, 0.0):.1f} s after its first delivery showed it applied"
    return (f"{seen} and a later read did not: a receiver whose restart loses committed rows (a start command "
            "that resets its database, storage that is not kept) does that, as does one deleting or rolling back "
            "an effect it showed")


def after_failures(idx: CheckIndex, positions: Sequence[int]) -> str:
    """What the provider does next with a key none of whose valid attempts (at `positions`)
    was acknowledged: keeps retrying while one of its deliveries has retries left, else what
    it does once they ran out (`ProviderWords.after_failures`, the run's profile's words);
    a run that does not say which provider (a hand-built one) says it would retry."""
    provider = idx.expectations.provider
    if provider is None:
        return "the provider would retry it on its schedule"
    history, completions = idx.history, idx.completions
    most = max((history[p].attempt for p in positions if completions[p] is not None), default=0)
    return provider.after_failures(most)


def lost_by_key(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation], idx: CheckIndex,
) -> CheckResult:
    """``lost`` (`effect_checks.check_lost`), key by key."""
    findings = []
    never_acked = 0
    for key in expectations.expected:
        if idx.settled_counts.get(key, 0):
            continue
        positions = idx.by_key.get(key, [])
        finding, acked = lost_finding(idx, key, positions, idx.peak.get(key))
        findings.append(finding)
        never_acked += not acked
    stats = {"expected_keys": len(expectations.expected), "lost": len(findings) - never_acked,
             "never_acknowledged": never_acked}
    if not expectations.expected and idx.acked_events:
        return lost_not_applicable(len(idx.acked_events), stats)
    return result_of("lost", findings, stats)


def lost_not_applicable(acked_events: int, stats: dict[str, int]) -> CheckResult:
    """``lost`` when `acked_events` events were acknowledged and none carries a business key
    (the mapping, the team's or hookproof's, gives them no effect): no effect is owed, so
    none can be lost. Not applicable (valid, the stat ``applicability: not applicable``),
    never unknown: a receiver is not failed for keys its config does not map. Any event
    that maps to a key is expected and judged (a missing effect is a finding)."""
    return CheckResult("lost", Verdict.VALID, (), {**stats, "applicability": "not applicable"},
                       f"not applicable: {acked_events} acknowledged event(s) map to no business key, "
                       "so no effect is owed")


def recovered_by_key(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation], idx: CheckIndex,
) -> CheckResult:
    """``recovered`` (`effect_checks.check_recovered`), key by key."""
    findings = []
    recovered_keys = unknown_applied = 0
    completions, ok, indeterminate = idx.completions, Completion.OK, Completion.UNKNOWN
    for key in idx.peak:
        if key not in expectations.expected:
            continue
        positions = idx.by_key.get(key, [])
        has_ok = False
        unknown = failed = 0
        for p in positions:
            completion = completions[p]
            if completion is None:  # an invalid attempt
                continue
            if completion is ok:
                has_ok = True
            elif completion is indeterminate:
                unknown += 1
            else:
                failed += 1
        unknown_applied += unknown
        if has_ok:
            continue
        if unknown:
            recovered_keys += 1
        elif failed:
            findings.append(Finding("recovered", key,
                                    f"applied although all {failed} valid attempt(s) failed "
                                    "(4xx or never reached the receiver)",
                                    expected=0, actual=idx.peak[key][0], attempts=idx.attempt_ids(positions)))
    stats = {"recovered_keys": recovered_keys, "unknown_attempts_applied": unknown_applied}
    return result_of("recovered", findings, stats)



def money_agrees(key: str, got: int, want: int) -> bool:
    """True when `got` minor units recorded under money key `key` are what it owes: `want`, or
    on a built-in Stripe refund key the charge's cumulative ``amount_refunded`` the key carries
    (`simulator.world.refunded_total`: a receiver may record either)."""
    return got == want or (got != 0 and got == refunded_total(key))


def moved_words(key: str, got: int, want: int, applied: int = 1) -> str:
    """``counter``'s words for money key `key` recording `got` minor units instead of `want`,
    the key applied `applied` times at most in one observation (``duplicated``'s count): money
    moved once per time applied is said to be that ``duplicated`` finding's, one fault, not two."""
    total = refunded_total(key)
    if applied > 1 and want and got == applied * want:
        return f"moved {got} instead of {want}: its {want} once for each of the {applied} times it was applied (duplicated)"
    if total is None or total == want:
        return f"moved {got} instead of {want}"
    return f"moved {got} instead of {want} (this refund's own amount; the charge's amount_refunded {total} is accepted too)"

def money_by_key(expectations: Expectations, idx: CheckIndex) -> tuple[list[Finding], dict[str, object], int]:
    """``counter``'s money per key (`effect_checks.check_counter`), key by key: its
    findings, stats and how many amounts were unknown."""
    settled = idx.settled
    assert settled is not None
    applied: dict[str, int] = {}
    unpriced = 0
    for effect in settled.effects:
        key = effect.business_key
        if not expectations.is_money(key):
            continue
        amount = effect.amount if effect.amount is not None else expectations.money.get(key)
        if amount is None:
            unpriced += 1
            amount = 0
        applied[key] = applied.get(key, 0) + amount
    findings: list[Finding] = []
    expected_total = 0
    keys = dict.fromkeys(k for k in expectations.expected if expectations.is_money(k))
    keys.update(dict.fromkeys(applied))
    for key in keys:
        if key in expectations.expected:
            want = expectations.money.get(key)
            if want is None:
                unpriced += 1
                continue
        else:
            want = 0
        expected_total += want
        got = applied.get(key, 0)
        if money_agrees(key, got, want):
            continue
        positions = idx.by_key.get(key, [])
        if got == 0 and not idx.acked(positions):
            findings.append(Finding("counter", key, f"{want} never moved: never acknowledged, still being retried",
                                    expected=want, actual=0, attempts=idx.attempt_ids(positions), severity=ADVISORY))
        else:
            findings.append(Finding("counter", key, moved_words(key, got, want, idx.peak.get(key, (0, -1))[0]),
                                    expected=want, actual=got, attempts=idx.attempt_ids(positions)))
    stats: dict[str, object] = {"expected_total": expected_total, "applied_total": sum(applied.values()),
                                "money_keys": len(keys), "unpriced": unpriced}
    return findings, stats, unpriced
def unexpected_keys_by_key(expectations: Expectations, idx: CheckIndex) -> list[Finding]:
    """``unexpected``'s findings about keys (`effect_checks.check_unexpected`), key by key."""
    findings = []
    unowed = Unowed(idx.history)
    for key, (n, oi) in idx.peak.items():
        if key in expectations.forbidden:
            message = forbidden_message(idx.history, idx.by_key.get(key, ()))
        elif key not in expectations.expected:
            message = unowed.message(key)
        else:
            continue
        findings.append(Finding("unexpected", key, f"{message} ({seen_in(oi)})", expected=0, actual=n,
                                attempts=idx.attempt_ids(idx.by_key.get(key, ()))))
    return findings


def forbidden_message(history: Sequence[Attempt], positions: Iterable[int]) -> str:
    """``unexpected``'s message for a forbidden key filed at `positions` of `history`: it names
    livemode or the account when every invalid delivery of it was another mode's or account's
    event, the future timestamp when every one was future-dated, else `UNEXPECTED_FORBIDDEN`."""
    invalid = [history[p].faults for p in positions if not history[p].valid]
    if invalid and all("future-timestamp" in faults for faults in invalid):
        return UNEXPECTED_FUTURE
    why = {frozenset(_INVALIDATING_TAGS.intersection(faults)) for faults in invalid}
    if why == {frozenset({"livemode-mismatch"})}:
        return UNEXPECTED_OTHER_MODE
    if why == {frozenset({"foreign-account"})}:
        return UNEXPECTED_OTHER_ACCOUNT
    return UNEXPECTED_FORBIDDEN


#: Replayed attempts a ``duplicated`` finding names (`replay_note`), at most.
REPLAYS_NAMED = 4


def replay_note(idx: CheckIndex, positions: Sequence[int]) -> str:
    """``"; attempt 7 was a manual replay: a new notification_id, the same event_id"`` (before the
    note on the object's other events, the more direct explanation) when
    some of the attempts at `positions` were the provider's manual replay of their event (tagged
    `faults.REPLAY_TAG`: a new delivery entity, Paddle's new ``notification_id``), in the
    provider's words (`ProviderWords.replay`; a run that does not say which provider: "a manual
    replay of the same event"), naming at most `REPLAYS_NAMED` of them by their attempt ids;
    else "". A provider whose replay is the same delivery again (no `ProviderWords.replay`)
    tags none: its attempts are not read."""
    provider = idx.expectations.provider
    if provider is not None and provider.replay is None:
        return ""
    history = idx.history
    replays = [p for p in positions if REPLAY_TAG in history[p].faults]
    if not replays:
        return ""
    words = provider.replay if provider is not None and provider.replay else "a manual replay of the same event"
    ids = idx.attempt_ids(replays[:REPLAYS_NAMED])
    more = len(replays) - len(ids)
    named = ", ".join(str(i) for i in ids) + (f" and {more} more" if more else "")
    return f"; attempt{'s' if len(replays) > 1 else ''} {named} {'were' if len(replays) > 1 else 'was'} {words}"


def distinct_events_note(history: Sequence[Attempt], positions: Sequence[int]) -> str:
    """``", of 2 distinct events (evt_a, evt_b): ..."`` when the attempts at `positions`
    carried more than one event id (the key maps several events, not one redelivered), else ""."""
    ids = list(dict.fromkeys(history[p].event_id for p in positions if history[p].event_id))
    if len(ids) < 2:
        return ""
    shown = ", ".join(ids[:4]) + (", ..." if len(ids) > 4 else "")
    return f", of {len(ids)} distinct events ({shown}) that share this business key, so it is owed once for them all"


#: Histories of at most this many attempts are read for `OtherTypes` (a storm's larger ones are
#: not: its ``duplicated`` findings then say only which deliveries carried the key).
OTHER_TYPES_MAX_ATTEMPTS = 200_000


class OtherTypes:
    """The valid deliveries of each object, from a history, read on first use: what `note`
    ties a duplicated key's extra effects to.

    A provider sends an endpoint every event of an object's story (Paddle's ``transaction.paid``
    beside the ``transaction.completed`` a team fulfils on; a Mercado Pago payment's refund
    notifications after its approval); a receiver that applies the effect on such an event too
    applies it twice while a single delivery carried its key."""

    def __init__(self, history: Sequence[Attempt]) -> None:
        self._history = history
        self._by_object: dict[str, dict[str, tuple[str, bool]]] | None = None

    def _objects(self) -> dict[str, dict[str, tuple[str, bool]]]:
        """object id -> event id -> (its type, whether it carries a business key), for the
        valid attempts."""
        if self._by_object is None:
            by_object: dict[str, dict[str, tuple[str, bool]]] = {}
            if len(self._history) <= OTHER_TYPES_MAX_ATTEMPTS:
                for a in self._history:
                    if a.valid and a.object_id and a.event_id:
                        by_object.setdefault(a.object_id, {})[a.event_id] = (a.event_type, a.business_key is not None)
            self._by_object = by_object
        return self._by_object

    def note(self, positions: Sequence[int], applied: int) -> str:
        """``"; ..."`` naming the other events delivered about the objects of the key's attempts
        at `positions` (applied `applied` times): when it was applied more times than they
        carried it, every other event (one of them applied it); else those of another type of
        the same resource owing no effect, which may have; else ""."""
        history = self._history
        carried = [history[p] for p in positions]
        types = {a.event_type for a in carried}
        own = {a.event_id for a in carried}
        objects = dict.fromkeys(a.object_id for a in carried if a.object_id)
        if not objects:
            return ""
        by_object = self._objects()
        delivered = [(eid, t, keyed) for o in objects for eid, (t, keyed) in by_object.get(o or "", {}).items()
                     if eid not in own]
        if applied > len(carried):  # then one of them did: every one is named
            if not delivered:
                return ""
            named = _named([(eid, t) for eid, t, _ in delivered])
            return (f"; more times than deliveries carried it: other events of the same object were delivered too "
                    f"({named}), so one of them, or an event of another object naming it, applied it as well")
        others = [(eid, t) for eid, t, keyed in delivered if not keyed and t not in types]
        # else the key's own copies may explain it: only an event of the same resource is named
        # (Paddle's transaction.paid beside transaction.completed, not GitHub's issues.closed
        # beside an issue_comment.created)
        # nor a routine change or an end of the object (user.updated, user.deleted beside a
        # user.created's welcome email): no receiver makes a creation's effect of those
        families = {family(t) for t in types}
        kin = [(eid, t) for eid, t in others if family(t) in families and not _routine(t)]
        if not kin:
            return ""
        return (f"; the same object's {_named_by_type(kin)} was delivered too and owes no effect "
                "(it may have applied it as well)")


def _routine(event_type: str) -> bool:
    """True for a type that updates or ends its object (``…updated``, ``…deleted``, ``…removed``,
    ``…destroyed``): what `OtherTypes.note` does not offer as the source of another type's effect."""
    from hookproof.simulator.world.user_catalog import ends_object

    return ends_object(event_type) or re.split(r"[./]", event_type)[-1] == "updated"


def family(event_type: str) -> str:
    """The resource an event type is about: its name less the last ``.``- or ``/``-separated
    part (``transaction.paid`` -> ``transaction``, ``customer.subscription.updated`` ->
    ``customer.subscription``, ``orders/paid`` -> ``orders``; ``push`` -> ``push``)."""
    cut = max(event_type.rfind("."), event_type.rfind("/"))
    return event_type[:cut] if cut > 0 else event_type


def _named(events: Sequence[tuple[str, str]]) -> str:
    """``type (event id)`` of the first four `events` (id, type), ``...`` after them."""
    return ", ".join(f"{t} ({eid})" for eid, t in events[:4]) + (", ..." if len(events) > 4 else "")


def _named_by_type(events: Sequence[tuple[str, str]]) -> str:
    """`_named` of the first event of each type of `events` (id, type), ``...`` after them when
    there are more (a Paddle transaction's several ``transaction.updated`` do not hide its
    ``transaction.paid``)."""
    first: dict[str, tuple[str, str]] = {}
    for eid, t in events:
        first.setdefault(t, (eid, t))
    shown = list(first.values())
    return _named(shown) + (", ..." if len(events) > len(shown) and len(shown) <= 4 else "")


__all__: Sequence[str] = ["GONE", "NEVER_ACKNOWLEDGED", "gone_words", "OtherTypes", "seen_in", "UNEXPECTED_FORBIDDEN", "UNEXPECTED_FUTURE", "UNEXPECTED_OTHER_ACCOUNT", "UNEXPECTED_OTHER_MODE", "UNEXPECTED_UNOWED", "Unowed", "withheld_messages",
                          "REPLAYS_NAMED", "replay_note",
                          "distinct_events_note", "duplicated_by_key", "family", "forbidden_message", "other_mode_message",
                          "lost_by_key", "lost_not_applicable", "money_by_key", "recovered_by_key", "unexpected_keys_by_key"]
