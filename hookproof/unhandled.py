"""The headline of a run in which the receiver never applied an event type's effects.

A receiver that does not handle a type the endpoint is sent (a SaaS selling plans alone, never
listening for a one-off payment's ``payment_intent.succeeded``) acknowledges each such event
and applies nothing: every scenario sending one fails ``lost``, whose own words suspect a
deduplication on the wrong field or an answer before the work commits. When every key of one
type the run owed ended ``lost`` (at least `AT_LEAST`, each acknowledged) while keys of other
types were applied, the run says so in one line above the table: the receiver looks not to
handle that type, and either the config sends it a type it is not subscribed to or the receiver
drops every one. hookproof cannot tell which: a shop that does take such payments loses them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.headline import HEADLINE_PREFIX

if TYPE_CHECKING:
    from hookproof.reports.model import RunReport

#: Fewer owed keys of a type than this say nothing of the receiver's handling of it.
AT_LEAST = 2


def unhandled_headline(report: "RunReport") -> str | None:
    """The headline naming the types (provider's names, as the history records them) every one
    of whose owed keys in `report`'s judged scenarios ended ``lost``, at least `AT_LEAST` of
    them, each acknowledged, while some key of another type was applied; None otherwise.
    A key is owed in a scenario that checks ``lost`` when a valid attempt carrying it was
    acknowledged (one acknowledged where nothing checked it, ``future-timestamp``'s, is not
    known to be applied); a key two types carry (an invoice's ``invoice.paid`` and ``invoice.payment_succeeded``) counts for both."""
    owed: dict[str, set[tuple[str, str]]] = {}
    lost: set[tuple[str, str]] = set()
    for scenario in report.scenarios:
        if scenario.verdict not in ("pass", "fail") or not any(c.check_id == "lost" for c in scenario.checks):
            continue  # a key only acknowledged where nothing checked it was applied says nothing
        for a in scenario.attempts:
            if a.valid and a.business_key and a.outcome == "acked":
                owed.setdefault(a.event_type, set()).add((scenario.id, a.business_key))
        lost.update((scenario.id, f.key) for f in scenario.findings if f.check_id == "lost")
    never = sorted(t for t, keys in owed.items() if len(keys) >= AT_LEAST and keys <= lost)
    applied_elsewhere = any(keys - lost for t, keys in owed.items() if t not in never)
    if not never or not applied_elsewhere:
        return None
    counts = ", ".join(f"{len(owed[t])} {t}" for t in never)
    prefixes = sorted({key.split(":", 1)[0] + ":" for t in never for _, key in owed[t]})
    types = " or ".join(never)
    listed = ", ".join(f'"{t}" = false' for t in never)
    return (f"{HEADLINE_PREFIX}the receiver applied no effect of {types} in the whole run: every one owed "
            f"({counts}, keys {', '.join(prefixes)}…) was acknowledged and lost, while other types' effects "
            f"were applied. If the receiver does not handle {types} (the endpoint is not subscribed to it), "
            f"list the types it handles in target.enabled_events, or set {listed} under [business_keys]; "
            "if it does, it drops every one")
