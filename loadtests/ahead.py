"""What a storm's receiver may know before the storm delivered it: the provider API's truth.

A storm stops at its duration, in the middle of many objects' stories; the provider API
serves each object whole (`loadtests.storm_truth`: a storm's clock does not move with its
deliveries). A receiver that fetches the object it is notified about (as Mercado Pago's
thin notifications require) therefore learns of changes whose events the storm had not
delivered yet, and applies them: a refund, a chargeback, a later status. That is correct
behaviour, and a real provider would deliver those events next.

`Ahead` lists, for the objects the storm sent, the events of their template stories it
never delivered: their business keys (with their amounts) and the statuses their objects
reach after the last event the storm sent about them (an undelivered earlier event, e.g.
an ``invoice.created`` of a type the storm does not send, is no state the receiver could
learn ahead: an invoice left ``open`` by a late ``invoice.payment_failed`` is stale, not
explained). `tolerate` drops the findings they explain and nothing else: an ``unexpected``
effect whose key is one of them, a ``counter`` that moved by exactly that key's amount,
a ``stale`` object whose observed status is one its story reached later. A check left
without problems becomes valid; its stats and its detail say how many findings were explained
(the detail names them as tolerated, never as findings).

The same walk finds the stories the storm's end cut: an object one of whose events was sent
while an earlier event of it moving a team's counter never was (`Ahead.counters`: the range
such objects may leave each counter in around the truth), which `cut.CutStories` judges.
Pure; no Locust import.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import islice
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, Sequence

from hookproof.scenarios.findings import CheckResult, Verdict, kept_findings
from hookproof.scenarios.id_codes import IdCodes
from hookproof.scenarios.state_words import NamedState
from hookproof.simulator.events import Event

if TYPE_CHECKING:
    from hookproof.scenarios.business_keys import KeyMapping

#: Sent events read per step, held decoded at once: a storm's are decoded
#: from its spool on each pass, and 8192 of them (some 10 MB of small objects) left as many
#: of Python's 1 MiB arenas each pinned by a few objects that outlived the step, resident
#: through the checks.
_CHUNK = 1024


@dataclass(frozen=True)
class Ahead:
    """The undelivered part of the stories of the objects a storm sent.

    Attributes:
        keys: business key -> its amount (None when not money-like).
        statuses: object id -> the statuses its undelivered events after the last one
            sent carry.
        counters: a team's counter key (`[counters]`) -> (low, high): how far from the
            truth the objects whose stories the storm's end cut may leave it on a correct
            receiver (`cut.CutStories`). A story is cut when an event of it moving a counter was
            never delivered while a later event of its object was (the reorder window drew a
            membership's ``.deleted`` and the storm ended before its ``.created`` went out): a
            receiver may have set the later events aside for want of the earlier one (a
            deletion of a membership it never saw, taking no seat back), or acted as if the
            earlier one had come; each such object widens the range to take in both.
        split: business keys two events of one object carry (Stripe's ``invoice.paid`` and
            ``invoice.payment_succeeded``, one effect owed once across both) of which one was
            delivered and the other, of a type the storm sends, never went out: a receiver
            applying on the other alone, as correct as one applying on either, has not applied
            it yet (`cut.SplitKeys`).
    """

    keys: dict[str, int | None] = field(default_factory=dict)
    statuses: dict[str, set[str]] = field(default_factory=dict)
    counters: dict[str, tuple[int, int]] = field(default_factory=dict)
    split: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.keys or self.statuses or self.counters or self.split)


class _Entry(NamedTuple):
    """One template event, its ids cut for renaming (`IdRenamer.cut`, `BillingRenamer.cut`)."""

    event: Event
    event_id: tuple[str, ...]
    object_id: tuple[str, ...]
    business_key: tuple[str, ...] | None


class _Stories:
    """The template stories of one world, by object, each event's ids cut once."""

    def __init__(self, world: Any) -> None:
        from hookproof.loadtests.storm_truth import renamer_of

        self.world = world
        self.renamer = renamer_of(world)
        self._by_object: dict[str, list[_Entry]] | None = None

    def story(self, template_id: str) -> list[_Entry]:
        by_object = self._by_object
        if by_object is None:
            by_object = self._by_object = {}
            cut = self.renamer.cut
            for t in self.world.events:
                by_object.setdefault(t.object_id, []).append(
                    _Entry(t, cut(t.id), cut(t.object_id), cut(t.business_key) if t.business_key else None))
        return by_object.get(template_id, [])


def _light_keys(keys: "KeyMapping | None") -> "KeyMapping | None":
    """`keys` when its `key_of` reads an event's payload only for its templates' types
    (a `KeyMapping`'s own rule), else None."""
    from hookproof.scenarios.business_keys import KeyMapping

    return keys if keys is not None and type(keys).key_of is KeyMapping.key_of else None


def ahead_of(sent: Iterable[Event], templates: Sequence[Any], *, keys: "KeyMapping | None" = None) -> Ahead:
    """The `Ahead` of a storm that sent `sent` (its events, any order), from the template
    worlds its processes replayed (`storm_truth.template_worlds`), under the team's `keys`
    (`scenarios.business_keys`; None: the built-in keys). Empty without templates.

    Linear in the sent objects' stories: each template event's ids are cut once and joined
    per copy (no search per event); an event is renamed whole only when a team template
    reads its body. The result is exactly that of renaming every story whole."""
    if not templates:
        return Ahead()
    worlds = [_Stories(w) for w in templates]
    light = _light_keys(keys)
    counted = keys if keys is not None and keys.counters else None
    # the sent events' ids and objects as UTF-8 bytes (a storm's million: no string each)
    sent_ids, objects = IdCodes(), IdCodes()
    sent_types: set[str] = set()
    it = iter(sent)
    while chunk := list(islice(it, _CHUNK)):
        sent_ids.code_all([e.id for e in chunk])
        objects.code_all([e.object_id for e in chunk])
        sent_types.update(e.type for e in chunk)
    sent_ids.trim()
    objects.trim()
    ahead = Ahead()
    for object_id in objects:
        for stories in worlds:
            renamer = stories.renamer
            found = renamer.original(object_id)
            if found is None:
                continue
            template_id, copy_no = found
            story = stories.story(template_id)
            join = renamer.joiner(copy_no)
            ids = [join(t.event_id) for t in story]
            last_sent = max((i for i, eid in enumerate(ids) if eid in sent_ids), default=-1)
            if counted is not None:
                _cut_counters(ahead, story, ids, sent_ids, last_sent, counted, renamer, copy_no)

            def key_of(i: int, t: _Entry) -> str | None:
                e = t.event
                business_key = join(t.business_key) if t.business_key is not None else None
                if keys is None:
                    return business_key
                if light is not None and e.type not in light.templates:
                    return light.key_of(replace(e, id=ids[i], object_id=join(t.object_id), business_key=business_key))
                return keys.key_of(renamer.events([e], copy_no)[0])

            unsent_keys: set[str] = set()
            for i, t in enumerate(story):
                if ids[i] in sent_ids:
                    continue
                e = t.event
                key = key_of(i, t)
                if key is not None:
                    ahead.keys[key] = e.amount
                    if e.type in sent_types:
                        unsent_keys.add(key)
                if e.status is not None and i > last_sent:  # an earlier status explains nothing
                    ahead.statuses.setdefault(join(t.object_id), set()).add(e.status)
            if unsent_keys:  # a key one of whose events went out and another never did
                ahead.split.update(k for i, t in enumerate(story)
                                   if ids[i] in sent_ids and (k := key_of(i, t)) in unsent_keys)
            break
    return ahead


def _cut_counters(ahead: Ahead, story: Sequence[_Entry], ids: Sequence[str], sent_ids: IdCodes, last_sent: int,
                  keys: "KeyMapping", renamer: Any, copy_no: int) -> None:
    """Add to `ahead.counters` what one sent object's story (`story`, its events' ids as sent
    `ids`) leaves its counters open by when the storm's end cut it: an event of a counted type
    before `last_sent` never delivered (see `Ahead.counters`). Renames the story's counted
    events only when it was cut."""
    gap = next((i for i in range(last_sent) if ids[i] not in sent_ids and story[i].event.type in keys.counters), None)
    if gap is None:
        return
    from hookproof.scenarios.business_keys import TemplateError, counted_move, keyed

    unsent: dict[str, int] = {}  # counter key -> the moves of the earlier events never delivered
    later: dict[str, int] = {}  # counter key -> the moves of the events delivered after the first of those
    for i in range(gap, last_sent + 1):
        t = story[i]
        if t.event.type not in keys.counters:
            continue
        event = keyed(renamer.events([t.event], copy_no), keys)[0]
        try:
            moved = counted_move(event, keys)
        except TemplateError:
            continue
        if moved is None:
            continue
        into = later if ids[i] in sent_ids else unsent
        into[moved[0]] = into.get(moved[0], 0) + moved[1]
    for key in {*unsent, *later}:
        options = (0, unsent.get(key, 0), -later.get(key, 0))
        low, high = ahead.counters.get(key, (0, 0))
        ahead.counters[key] = (low + min(options), high + max(options))


def _status(actual: object) -> str | None:
    """The status of a stale finding's observed state (its `NamedState`), None when missing."""
    return actual.status if isinstance(actual, NamedState) else None


def tolerate(results: Sequence[CheckResult], ahead: Ahead) -> list[CheckResult]:
    """`results` without the findings `ahead` explains (see the module docstring)."""
    if not ahead:
        return list(results)
    out = []
    for r in results:
        def explained(f: Any) -> bool:
            if r.check_id == "unexpected":
                return f.key in ahead.keys
            if r.check_id == "counter":
                return f.key in ahead.keys and ahead.keys[f.key] is not None and f.actual == ahead.keys[f.key]
            if r.check_id == "stale":
                return _status(f.actual) in ahead.statuses.get(f.key, ())
            return False

        # a tuple, or a per-key check's findings still made when read (`kept_findings`)
        kept = kept_findings(r.findings, lambda f: f.advisory or not explained(f))
        dropped = len(r.findings) - len(kept)
        if not dropped:
            out.append(r)
            continue
        verdict = r.verdict
        if verdict is Verdict.INVALID and not any(not f.advisory for f in kept):
            verdict = Verdict.VALID
        stats = {**r.stats, "ahead_of_delivery": dropped}
        out.append(replace(r, verdict=verdict, findings=kept, stats=stats, detail=_detail(r, kept, dropped)))
    return out


#: What each check's tolerated findings were, in the detail's words.
_TOLERATED = {"unexpected": "effect(s) of events", "counter": "counter move(s) by events",
              "stale": "state(s)"}


def _detail(result: CheckResult, kept: Sequence[Any], dropped: int) -> str:
    """The detail of `result` once `dropped` findings were tolerated: what is left (the
    result's own count, as `scenarios.findings.result_of` words it) and what was tolerated,
    so it never counts findings the check no longer holds."""
    problems = sum(f.count for f in kept if not f.advisory)
    advisories = sum(f.count for f in kept if f.advisory)
    what = _TOLERATED.get(result.check_id, "finding(s)")
    return (f"{problems} finding(s), {advisories} advisory(ies); {dropped} {what} learned from the provider API "
            "ahead of their delivery, tolerated (the storm stopped before delivering them)")


__all__ = ["Ahead", "ahead_of", "tolerate"]
