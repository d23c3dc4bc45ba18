"""A team's own business keys and counters: templates over the event as the provider sends it.

hookproof's built-in keys (`simulator.world.lifecycle.BUSINESS_KEYS`: ``license:{pi}``,
``renewal:{in}``…) are the default mapping. A team maps its own effects per event type,
in the provider's own type names, with a template over the event's JSON body as the
receiver gets it (``"charge.succeeded" = "payment:{data.object.payment_intent}"``), and
makes a type not effectful at all (``false``). `KeyMapping.key_of` gives an event's key;
`keyed` rewrites events with it before they are delivered, so the history, the
expectations and every check use the team's keys.

Counters: per event type, a counter key template and the path of its amount
(``[counters."invoice.paid"] key = "{data.object.customer}"``, ``amount =
"data.object.amount_paid"``): an integer in minor units, a string of digits (Paddle's), or a
decimal string as Shopify writes money (``"60.42"``), read exactly in its currency's minor units
(`minor_units`: 6042 cents). A counter may count the change of a cumulative amount
(``since``: the path of its value before the event, Stripe's ``data.previous_attributes.
amount_refunded``) and subtract it (``sign = -1``: a refund reversing a credit); otherwise it only
grows. `counter_truth` sums, per counter key, the signed amount of each distinct effect validly
sent (a key's first event): what a receiver's ``balances`` table must show after it settles.

Errors: `TemplateError` (a ValueError) names the template and the missing field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, NamedTuple

from hookproof.scenarios.observations import Observation, world_event_id
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.world.lifecycle import invoice_payment, moves_no_money
from hookproof.simulator.world.user_catalog import USER_API_VERSION

#: A field of a template: ``{data.object.id}``.
FIELD = re.compile(r"\{([^{}]*)\}")
#: An amount sent as a string of an integer (Paddle's totals), taken as that integer.
_INTEGER = re.compile(r"-?[0-9]+")
#: An amount sent as a decimal string in major units (Shopify's money: ``"60.42"``).
_DECIMAL = re.compile(r"-?[0-9]+\.[0-9]+")
#: ISO 4217's minor units of the currencies with other than two (``JPY``: none, ``KWD``: three);
#: every other currency has two. Source: the ISO 4217 list of currency codes (minor unit column).
CURRENCY_EXPONENTS: Mapping[str, int] = {
    **dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
                     "VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
    "CLF": 4, "UYW": 4,
}
#: Where `counter_of` looks for a decimal amount's currency: beside it, then at the top of the body.
CURRENCY_FIELDS: tuple[str, ...] = ("currency_code", "currency")


def minor_units(amount: str, currency: str) -> int | None:
    """`amount`, a decimal string in `currency`'s major units (``"60.42"``), as an exact integer
    of its minor units (``6042`` for ``USD``: `CURRENCY_EXPONENTS`, two digits unless listed),
    read as a `Decimal` (no float); None when it has more digits than the currency's minor units
    (``"60.425"`` USD is no whole number of cents)."""
    scaled = Decimal(amount).scaleb(CURRENCY_EXPONENTS.get(currency.upper(), 2))
    return int(scaled) if scaled == scaled.to_integral_value() else None


def _currency_of(payload: Any, path: str) -> str | None:
    """The currency of the amount at `path`: a `CURRENCY_FIELDS` string beside it (its object's),
    else at the top of `payload`; None when there is none."""
    parent_path, _, _ = path.rpartition(".")
    try:
        parent = lookup(payload, parent_path, template=path) if parent_path else payload
    except TemplateError:
        parent = None
    for where in (parent, payload):
        if isinstance(where, Mapping):
            for name in CURRENCY_FIELDS:
                value = where.get(name)
                if isinstance(value, str) and re.fullmatch(r"[A-Za-z]{3}", value):
                    return value
    return None


class TemplateError(ValueError):
    """A template names a field the event does not have (`path`), or is malformed."""

    def __init__(self, message: str, *, template: str, path: str | None = None) -> None:
        super().__init__(message)
        self.template = template
        self.path = path


def lookup(payload: Any, path: str, *, template: str) -> Any:
    """The value at dotted `path` (``data.object.id``; list items by index) of `payload`.

    Raises TemplateError naming the first segment that is missing.
    """
    value = payload
    done: list[str] = []
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            where = ".".join(done) or "the event"
            raise TemplateError(f"{template}: the event has no field {path} ({where} has no {part!r})",
                                template=template, path=path)
        done.append(part)
    return value


def render(template: str, payload: Any) -> str:
    """`template` with every ``{path}`` replaced by the value at that path (`lookup`).

    Raises TemplateError for an empty ``{}``, a missing field, or a field that is an
    object, a list or null (a key is made of scalars).
    """
    def one(match: re.Match[str]) -> str:
        path = match.group(1).strip()
        if not path:
            raise TemplateError(f"{template}: an empty {{}} names no field", template=template)
        value = lookup(payload, path, template=template)
        if value is None or isinstance(value, (Mapping, list)):
            kind = "null" if value is None else type(value).__name__
            raise TemplateError(f"{template}: {path} is {kind}, not a string or number", template=template, path=path)
        return str(value).lower() if isinstance(value, bool) else str(value)

    return FIELD.sub(one, template)


#: A condition path on the object as the provider's API serves it at the event (a thin
#: event's receiver fetches it): ``fetched.status``.
FETCHED = "fetched."


def _condition_value(path: str, payload: Any, fetched: Any) -> Any:
    """The value a condition's `path` names: over the event's body as sent, or, after
    `FETCHED`, over the object the provider's API serves at this event. Raises TemplateError
    naming the path and where it was looked for."""
    on_fetched = path.startswith(FETCHED)
    root, rest = (fetched, path[len(FETCHED):]) if on_fetched else (payload, path)
    try:
        return lookup(root, rest, template=path)
    except TemplateError:
        where = "the object the provider's API serves" if on_fetched else "the event"
        raise TemplateError(f"when {path}: {where} has no field {rest}", template=path, path=path) from None


def _one_of(value: Any, values: tuple[Any, ...]) -> bool:
    """True when `value` is one of `values` (a boolean matches only a boolean)."""
    return any(value == v and isinstance(value, bool) == isinstance(v, bool) for v in values)


def holds(when: Mapping[str, tuple[Any, ...]], payload: Any, fetched: Any, *, every: bool = False) -> bool:
    """True when every path of `when` has one of its values: a path over the event's body
    as sent (``pull_request.merged``), or, after `FETCHED`, over the object the provider's
    API serves at this event (``fetched.status``: Mercado Pago's thin notification carries
    no status). A boolean matches only a boolean. Raises TemplateError for a missing path:
    the first path that does not hold ends the look-up, unless `every` (a config's check:
    each path is looked up, a misspelt later one included, whether the first holds or not)."""
    result = True
    for path, allowed in when.items():
        if not _one_of(_condition_value(path, payload, fetched), allowed):
            if not every:
                return False
            result = False
    return result


def refuses(unless: Mapping[str, tuple[Any, ...]], payload: Any, fetched: Any) -> bool:
    """True when a path of `unless` has one of its values (read as `holds` reads a path); a
    path the event (or the fetched object) lacks has none, so it refuses nothing there (a
    Stripe payment intent's ``metadata.channel``, set on a Checkout Session's alone)."""
    for path, refused in unless.items():
        try:
            value = _condition_value(path, payload, fetched)
        except TemplateError:
            continue
        if _one_of(value, refused):
            return True
    return False


@dataclass(frozen=True)
class Rule:
    """One of an event type's key rules: the `key` template, made when every path of `when`
    has one of its values (`holds`; an empty `when` always holds) and no path of `unless`
    has one of its values (`refuses`)."""

    key: str
    when: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    unless: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def applies(self, payload: Any, fetched: Any) -> bool:
        """True when this rule makes the key of the event `payload` (`fetched`: the object the
        provider's API serves at it). Raises TemplateError for a `when` path it lacks."""
        return (not self.when or holds(self.when, payload, fetched)) and not (
            self.unless and refuses(self.unless, payload, fetched))


@dataclass(frozen=True)
class CounterRule:
    """How an event of one type moves a counter: its key template and the amount's path.

    `since`: the path of the amount's value before the event (``data.previous_attributes.
    amount_refunded``): the event moves the counter by the change of a cumulative amount (a
    Stripe charge's ``amount_refunded`` grows with each refund). `sign`: 1 adds the amount,
    -1 subtracts it (a refund reversing a credit)."""

    key: str
    amount: str | int
    since: str | None = None
    sign: int = 1


@dataclass(frozen=True)
class KeyMapping:
    """A team's business keys and counters, by Stripe event type (the world's names).

    Attributes:
        templates: event type → key template (its first rule's), or None (the type is
            not effectful). Types not listed keep hookproof's built-in key (with `builtin`).
        profile: renders the event as the provider sends it (templates read that JSON).
        counters: event type → the counter it moves.
        builtin: False: types not in `templates` lose hookproof's built-in key (not
            effectful). A user catalog's keys (``x-hookproof-key``, `[catalog]`'s ``key``)
            are the user's own, not built in: they stay.
        conditions: event type → the `when` of its first rule (none: it always holds).
        exclusions: event type → the `unless` of its first rule (none: it refuses nothing).
        more: event type → its further rules, in the config's order (an array of tables,
            ``[[business_keys."<type>"]]``): an event's key is made by the first rule
            whose `when` holds (`rules`), none when no rule's does.
    """

    templates: Mapping[str, str | None]
    profile: Profile
    counters: Mapping[str, CounterRule] = field(default_factory=dict)
    builtin: bool = True
    conditions: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict)
    more: Mapping[str, tuple[Rule, ...]] = field(default_factory=dict)
    exclusions: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict)

    def payload(self, event: Event) -> Any:
        """The event's body as the provider sends it, decoded."""
        return json.loads(self.profile.envelope(event).body)

    def fetched(self, event: Event) -> Any:
        """The object the provider's API serves at `event` (what ``fetched.`` paths read)."""
        return event.object

    def rules(self, event_type: str) -> tuple[Rule, ...]:
        """Every key rule of `event_type`, in order (none: not a team type, or not effectful)."""
        template = self.templates.get(event_type)
        if template is None:
            return ()
        return (Rule(template, self.conditions.get(event_type) or {}, self.exclusions.get(event_type) or {}),
                *self.more.get(event_type, ()))

    def conditional(self, event_type: str) -> bool:
        """True when `event_type`'s key is made only where a rule's `when` holds and its
        `unless` does not (so an event of it without a key owes nothing, its counter included)."""
        return any(rule.when or rule.unless for rule in self.rules(event_type))

    def find_unless(self, unless: Mapping[str, tuple[Any, ...]], samples: Sequence[Event]) -> None:
        """Check that every path of `unless` is a field of one of `samples` (a type's sample
        events, or the objects the provider's API serves at them): a misspelt one would refuse
        no key, silently. Raises TemplateError naming the first path none of them has."""
        for path in unless:
            on_fetched = path.startswith(FETCHED)
            rest = path[len(FETCHED):] if on_fetched else path
            found = False
            for sample in samples:
                try:
                    lookup(self.fetched(sample) if on_fetched else self.payload(sample), rest, template=path)
                except TemplateError:
                    continue
                found = True
                break
            if not found:
                where = ("no object the provider's API serves at an event of this type" if on_fetched
                         else "no event of this type")
                raise TemplateError(f"unless {path}: {where} has a field {rest}, so it would refuse no key",
                                    template=path, path=path)

    def all_templates(self) -> tuple[str, ...]:
        """Every key template of the team's rules, of every type."""
        return tuple(rule.key for t in self.templates for rule in self.rules(t))

    def key_of(self, event: Event) -> str | None:
        """The event's business key: the template of the type's first rule whose `when`
        holds (None when none does), else the built-in key. Raises TemplateError when the
        event lacks a field the template or a condition names."""
        if event.type not in self.templates:
            return event.business_key if self.builtin or event.api_version == USER_API_VERSION else None
        rules = self.rules(event.type)
        if not rules:
            return None
        payload = self.payload(event)
        fetched = self.fetched(event) if any(rule.when or rule.unless for rule in rules) else None
        try:
            for rule in rules:
                if rule.applies(payload, fetched):
                    return render(rule.key, payload)
        except TemplateError:
            if event.business_key is None and invoice_payment(event):
                # a subscription invoice's payment intent (or charge), which owes no built-in key of its
                # own (the invoice's event beside it carries the effect), lacking a field of the team's
                # template (the shop's own metadata, which Stripe's invoices do not set on their intents)
                return None
            raise
        return None

    def check(self, event: Event, *, render_all: bool = False) -> frozenset[int]:
        """Look up every path of every rule's `when` on `event`, whether they hold or not, and
        render the template of each rule whose `when` holds (or that has none): the positions
        of the rules rendered. A rule whose `when` does not hold makes no key of `event` (a
        subscription-mode rule's ``{data.object.subscription}`` is null in a payment-mode
        session), so its template is not rendered there; with `render_all` (a config's sample
        where it held on none) its fields are looked up all the same, a null one allowed.
        Raises TemplateError."""
        rules = self.rules(event.type)
        if not rules:
            return frozenset()
        payload = self.payload(event)
        rendered = set()
        for n, rule in enumerate(rules):
            held = True
            if rule.when or rule.unless:
                fetched = self.fetched(event)
                if rule.when:
                    holds(rule.when, payload, fetched, every=True)
                held = rule.applies(payload, fetched)
            if held:
                render(rule.key, payload)
                rendered.add(n)
            elif render_all:
                for match in FIELD.finditer(rule.key):
                    if not match.group(1).strip():
                        raise TemplateError(f"{rule.key}: an empty {{}} names no field", template=rule.key)
                    lookup(payload, match.group(1).strip(), template=rule.key)
        return frozenset(rendered)

    def counter_of(self, event: Event) -> tuple[str, int] | None:
        """(counter key, amount) the event moves, or None. Raises TemplateError."""
        rule = self.counters.get(event.type)
        if rule is None:
            return None
        payload = self.payload(event)
        if isinstance(rule.amount, int):  # a fixed number per event: a count (a seat per membership)
            return render(rule.key, payload), rule.sign * rule.amount
        if rule.since is not None:  # the change of a cumulative amount: both integers of minor units
            now, before = _integer_at(payload, rule.amount, since=rule.since), _integer_at(payload, rule.since)
            return render(rule.key, payload), rule.sign * (now - before)
        amount = lookup(payload, rule.amount, template=rule.amount)
        if isinstance(amount, str) and _INTEGER.fullmatch(amount):
            amount = int(amount)  # Paddle sends minor units as strings ("3266": developer.paddle.com, totals)
        elif isinstance(amount, str) and _DECIMAL.fullmatch(amount):
            # Shopify's money is a decimal string in major units ("60.42": shopify.dev, the Order resource's
            # total_price), read exactly in its currency's minor units
            currency = _currency_of(payload, rule.amount)
            cents = minor_units(amount, currency) if currency is not None else None
            if cents is None:
                why = (f"with more digits than {currency}'s minor units" if currency is not None else
                       f"with no {' or '.join(CURRENCY_FIELDS)} beside it or at the top of the event to read it in")
                raise TemplateError(f"{rule.amount}: is {amount!r}, a decimal amount {why}: a counter's amount is "
                                    "minor units (a number or a string of digits) or a decimal string read in its "
                                    "currency's minor units", template=rule.amount, path=rule.amount)
            amount = cents
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TemplateError(f"{rule.amount}: is {amount!r}, not an amount: a counter's amount is minor units (a "
                                "number or a string of digits) or a decimal string with its currency beside it "
                                "(Shopify's \"60.42\", read as 6042 cents)",
                                template=rule.amount, path=rule.amount)
        return render(rule.key, payload), rule.sign * amount


def _integer_at(payload: Any, path: str, *, since: str | None = None) -> int:
    """The integer of minor units at `path` (a number or a string of digits), for a counter
    with ``since`` (`since`: given when `path` is the amount's, whose non-integer value is
    then the ``since`` field's error). Raises TemplateError for a missing field or any other
    value (a decimal string in major units included: only integer amounts' changes count)."""
    value = lookup(payload, path, template=path)
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        whose = f"the amount {path} is" if since is not None else f"{path}: is"
        raise TemplateError(f"{whose} {value!r}, not an integer: a counter with since counts the change "
                            "between two integers of minor units (a number or a string of digits)",
                            template=since or path, path=path)
    return value


def to_plain(mapping: KeyMapping) -> dict[str, Any]:
    """`mapping` as JSON-plain values (the storm spec carries it to the Locust master)."""
    return {"builtin": mapping.builtin, "templates": dict(mapping.templates),
            "counters": {t: {"key": c.key, "amount": c.amount, "since": c.since, "sign": c.sign}
                         for t, c in mapping.counters.items()},
            "conditions": {t: {p: list(v) for p, v in when.items()} for t, when in mapping.conditions.items()},
            "exclusions": {t: {p: list(v) for p, v in unless.items()} for t, unless in mapping.exclusions.items()},
            "more": {t: [{"key": r.key, "when": {p: list(v) for p, v in r.when.items()},
                          "unless": {p: list(v) for p, v in r.unless.items()}} for r in rules]
                     for t, rules in mapping.more.items()}}


def from_plain(data: Mapping[str, Any], profile: Profile) -> KeyMapping:
    """The mapping `to_plain` made, for `profile`."""
    counters = {str(t): CounterRule(str(c["key"]), c["amount"] if isinstance(c["amount"], int) else str(c["amount"]),
                                    None if c.get("since") is None else str(c["since"]), int(c.get("sign", 1)))
                for t, c in (data.get("counters") or {}).items()}
    conditions = {str(t): {str(p): tuple(v) for p, v in when.items()}
                  for t, when in (data.get("conditions") or {}).items()}
    exclusions = {str(t): {str(p): tuple(v) for p, v in unless.items()}
                  for t, unless in (data.get("exclusions") or {}).items()}
    more = {str(t): tuple(Rule(str(r["key"]), {str(p): tuple(v) for p, v in (r.get("when") or {}).items()},
                               {str(p): tuple(v) for p, v in (r.get("unless") or {}).items()})
                          for r in rules) for t, rules in (data.get("more") or {}).items()}
    return KeyMapping({str(t): v for t, v in (data.get("templates") or {}).items()}, profile, counters,
                      builtin=bool(data.get("builtin", True)), conditions=conditions, more=more, exclusions=exclusions)


def rekeyed(attempts: Sequence[Attempt], events: Iterable[Event]) -> list[Attempt]:
    """`attempts` carrying the business keys of `events` (already `keyed`), matched by the
    event id the attempt recorded or the world's id in its delivery id; an attempt of an
    event not in `events` keeps its key."""
    key_of = {e.id: e.business_key for e in events}
    out = []
    for a in attempts:
        wid = a.event_id if a.event_id in key_of else world_event_id(a)
        if wid is None or wid not in key_of or key_of[wid] == a.business_key:
            out.append(a)
        else:
            out.append(replace(a, business_key=key_of[wid]))
    return out


def keyed(events: Iterable[Event], mapping: KeyMapping | None) -> tuple[Event, ...]:
    """`events` with their business keys from `mapping` (unchanged without one)."""
    if mapping is None:
        return tuple(events)
    return tuple(e if (key := mapping.key_of(e)) == e.business_key else replace(e, business_key=key)
                 for e in events)


def counter_truth(events: Sequence[Event], history: Sequence[Attempt], mapping: KeyMapping) -> dict[str, int]:
    """Counter key → the sum the provider's truth implies: per counter, the signed amounts of the
    distinct effects (business keys; an event without one counts by itself) of events
    that had a valid attempt. Pure; O(len(events) + len(history))."""
    valid = {a.event_id for a in history if a.valid}
    valid |= {wid for a in history if a.valid and (wid := world_event_id(a)) is not None}
    totals: dict[str, int] = {}
    counted: set[str] = set()
    for event in events:
        if event.id not in valid or event.type not in mapping.counters:
            continue
        effect = event.business_key or event.id
        if effect in counted:
            continue
        moved = counted_move(event, mapping)
        if moved is None:
            continue
        counted.add(effect)
        key, amount = moved
        totals[key] = totals.get(key, 0) + amount
    return totals


def counted_move(event: Event, mapping: KeyMapping) -> tuple[str, int] | None:
    """(counter key, signed amount) `event` moves under `mapping`, or None: not a counted type,
    a conditional type whose rules' `when` held for none (no key), or an event that moves no
    money by the provider's own rule (`lifecycle.moves_no_money`: a rejected refund) of a type
    the team's own rules do not name. Raises TemplateError."""
    if event.type not in mapping.counters:
        return None
    if mapping.conditional(event.type) and not event.business_key:  # no rule's `when` held
        return None
    if event.type not in mapping.templates and moves_no_money(event):
        return None
    return mapping.counter_of(event)


#: Events `counter_events` names per counter key at most (a finding lists their attempts).
MAX_COUNTER_EVENTS = 8


class CounterMove(NamedTuple):
    """One effect moving a counter: its event's id and type, and the signed amount it moves it by."""

    event_id: str
    event_type: str
    amount: int


def counter_events(events: Iterable[Event], mapping: KeyMapping,
                   only: AbstractSet[str] | None = None) -> dict[str, tuple[CounterMove, ...]]:
    """Counter key → the moves of the events that move it under `mapping` (each effect once, as
    `counter_truth` counts it; at most `MAX_COUNTER_EVENTS`, in the events' order): what a
    ``counter`` finding points at and adds up, whose key is a customer's or a subscription's and
    names no delivery of its own. With `only`, those counter keys alone. Pure."""
    moved: dict[str, list[CounterMove]] = {}
    effects: set[str] = set()
    for event in events:
        try:
            counted = counted_move(event, mapping)
        except TemplateError:
            continue
        if counted is None or (only is not None and counted[0] not in only):
            continue
        effect = event.business_key or event.id
        if effect in effects:
            continue
        effects.add(effect)
        moves = moved.setdefault(counted[0], [])
        if len(moves) < MAX_COUNTER_EVENTS:
            moves.append(CounterMove(event.id, event.type, counted[1]))
    return {key: tuple(moves) for key, moves in moved.items()}


class CounterEventsOf:
    """`counter_events` of `events` (re-iterable: a storm's are read from its spool on each pass)
    under `mapping`, made only for the counter keys a ``counter`` check finds off the truth
    (`only`): a storm's million events keep no move of a counter that holds."""

    def __init__(self, events: Iterable[Event], mapping: KeyMapping) -> None:
        self._events = events
        self._mapping = mapping

    def only(self, keys: Iterable[str]) -> dict[str, tuple[CounterMove, ...]]:
        """The moves of `keys`' counters (one pass over the events; none when `keys` is empty)."""
        wanted = frozenset(keys)
        return counter_events(self._events, self._mapping, wanted) if wanted else {}


def money_prefixes(mapping: KeyMapping | None, profile: Profile | None = None) -> tuple[str, ...]:
    """The business-key prefixes whose effects' amounts the ``counter`` check compares (minor
    units, per key): what is declared amount-bearing, never a key by its name alone.

    - A user's catalog (`profile`'s, else `mapping`'s): the literal start of each type's
      ``key`` template that declares an ``amount`` (``refund:`` of ``refund:{data.id}``),
      unless the team's `mapping` keys that type itself; its keys are the user's, not
      hookproof's, whatever `KeyMapping.builtin` says.
    - Otherwise hookproof's own built-in money keys (`simulator.world.MONEY_PREFIXES`:
      ``refund:``, ``license:``, ``renewal:``, ``fulfillment:``) while its built-in keys are
      on (no `mapping`, or ``builtin``), less any prefix one of the team's own templates
      begins with (a key the team names is not built in); none with ``builtin_keys = false``.

    A team's `[counters]` are compared apart from these (`counter_truth`)."""
    from hookproof.simulator.world import MONEY_PREFIXES

    own = mapping.templates if mapping is not None else {}
    catalog = getattr(profile if profile is not None else getattr(mapping, "profile", None), "catalog", None)
    if catalog is not None:
        starts = (spec.key.split("{", 1)[0] for spec in catalog.events
                  if spec.key and spec.amount and spec.type not in own)
        return tuple(dict.fromkeys(start for start in starts if start))
    if mapping is not None and not mapping.builtin:
        return ()
    templates = mapping.all_templates() if mapping is not None else ()
    return tuple(p for p in MONEY_PREFIXES if not any(t.startswith(p) for t in templates))


def counter_keys(events: Iterable[Event], mapping: KeyMapping | None) -> frozenset[str]:
    """The counter keys `events` move under `mapping` (none without one; an event whose
    counter template does not apply moves none)."""
    if mapping is None or not mapping.counters:
        return frozenset()
    keys: set[str] = set()
    for event in events:
        if mapping.conditional(event.type) and not event.business_key:
            continue
        try:
            moved = mapping.counter_of(event)
        except TemplateError:
            continue
        if moved is not None:
            keys.add(moved[0])
    return frozenset(keys)


def scoped(obs: Observation, object_ids: Iterable[str], keys: Iterable[str] = (),
           counters: Iterable[str] = ()) -> Observation:
    """The part of `obs` about one world (a scenario's, an example's, a storm's): effects
    whose key one of its events carries (`keys`, the team's keys: ``comment:<comment id>``,
    ``notice:<repo>#<n>@<time>``) or whose key names one of `object_ids` second
    (hookproof's: ``refund:<payment>:…``) or last (a key the receiver made otherwise than the
    team's template, ``payment:platform:pi_1`` for ``payment:{account}:{data.object.id}``: its
    ``lost`` finding names it, `fetched_states.with_unexplained`); states of `object_ids`; counters under
    `counters` or named by an object id. The observer's declared state kinds stay. Pure."""
    ids = set(object_ids)
    own, own_counters = set(keys), set(counters)

    def names_object(key: str) -> bool:
        parts = key.split(":")
        return (parts[1] if len(parts) > 1 else key) in ids or parts[-1] in ids

    effects = tuple(e for e in obs.effects if e.business_key in own or names_object(e.business_key))
    states = tuple(s for s in obs.states if s.object_id in ids)
    kept = None if obs.counters is None else {k: v for k, v in obs.counters.items()
                                              if k in own_counters or names_object(k)}
    return replace(obs, effects=effects, states=states, counters=kept)


#: A value that reads as a state's name (``paid``, ``no_payment_required``), not an id or a number.
_WORD = re.compile(r"[a-z]+(?:_[a-z]+)*")


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every scalar of a JSON-like value by its dotted path (``data.object.payment_status``)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    if isinstance(value, list):
        return {}
    return {prefix[:-1]: value}


#: A value an ``unless`` may name: words (a status, a description such as Stripe's "Subscription
#: creation"), never an id, a number or a time, which would tell apart only the sample's objects.
_NAMED_VALUE = re.compile(r"[A-Za-z]+(?:[ _][A-Za-z]+)*")
_ID_LIKE = re.compile(r"[a-z]{2,}_[A-Za-z0-9]{10,}")


def _unless_cover(keyed: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
                  most: int = 3) -> list[tuple[str, list[str]]]:
    """The paths (at most `most`) and their word values that every event of `other` (its
    leaves, `_leaves`) has one of and no event of `keyed` has: an ``unless`` that refuses
    exactly the events hookproof's key owes nothing for. Greedy: the path covering most of the
    events left first (then the one with fewest values, then by name). Empty when none covers
    them all."""
    options: dict[str, tuple[frozenset[int], list[str]]] = {}
    for path in sorted({p for leaves in other for p in leaves}):
        values = {leaves[path] for leaves in other if isinstance(leaves.get(path), str)}
        if not values or not all(_NAMED_VALUE.fullmatch(v) and not _ID_LIKE.fullmatch(v) and len(v) <= 60
                                  for v in values):
            continue
        if any(leaves.get(path) in values for leaves in keyed):
            continue
        options[path] = (frozenset(n for n, leaves in enumerate(other) if leaves.get(path) in values), sorted(values))
    left: set[int] = set(range(len(other)))
    chosen: list[tuple[str, list[str]]] = []
    while left and len(chosen) < most:
        best = min(options.items(), key=lambda kv: (-len(kv[1][0] & left), len(kv[1][1]), kv[0]), default=None)
        if best is None or not best[1][0] & left:
            return []
        chosen.append((best[0], best[1][1]))
        left -= best[1][0]
        del options[best[0]]
    return chosen if not left else []


def wider_than_built_in(mapping: KeyMapping, events: Iterable[Event]) -> list[str]:
    """Notes on the team's rules that give an effect to events hookproof's own key gives none
    (a Stripe ``checkout.session.completed`` whose ``payment_status`` is ``unpaid``: Stripe
    says to fulfil only paid sessions, and hookproof's key waits for
    ``async_payment_succeeded``): per type, the field whose values tell them apart in
    `events` (a sample story) when one does, and the ``when`` that would keep to those. A
    receiver that acts only on some of them then shows ``lost`` findings; the note says
    why. Empty when no rule is wider. Pure; one note per type."""
    by_type: dict[str, list[Event]] = {}
    for e in events:
        if e.type in mapping.templates and not mapping.conditional(e.type) and mapping.rules(e.type):
            by_type.setdefault(e.type, []).append(e)
    notes = []
    for event_type, sample in by_type.items():
        built = [e for e in sample if e.business_key is not None]
        unkeyed = [e for e in sample if e.business_key is None]
        if not built or not unkeyed:
            continue
        keyed_leaves = [_leaves(mapping.payload(e)) for e in built]
        other_leaves = [_leaves(mapping.payload(e)) for e in unkeyed]
        candidates = []
        for path, first in keyed_leaves[0].items():
            kept = {leaves.get(path) for leaves in keyed_leaves}
            left = {leaves.get(path) for leaves in other_leaves}
            words = all(isinstance(v, str) and _WORD.fullmatch(v) for v in kept | left)
            if len(kept) == 1 and words and not kept & left:
                candidates.append((0 if "status" in path.rsplit(".", 1)[-1] else 1, path, first, left))
        provider = mapping.profile.provider_type(event_type) or event_type
        refused = [] if candidates else _unless_cover(keyed_leaves, other_leaves)
        if refused:
            unless = ", ".join(f'"{path}" = [{", ".join(json.dumps(v) for v in values)}]' for path, values in refused)
            told = "; ".join(f"{path} is {' or '.join(repr(v) for v in values)}" for path, values in refused)
            notes.append(f'[business_keys] "{provider}" owes an effect for every such event, hookproof\'s own key none '
                         f"where {told}: a receiver that acts only on the others shows lost findings; add "
                         f"unless = {{ {unless} }} to keep to those")
        elif candidates:
            _, path, value, left = min(candidates)
            notes.append(f'[business_keys] "{provider}" owes an effect for every such event, hookproof\'s own key only '
                         f"when {path} is {value!r} (not {', '.join(repr(v) for v in sorted(map(str, left)))}): a "
                         f"receiver that acts only then shows lost findings; add "
                         f'when = {{ "{path}" = ["{value}"] }} to keep to that')
        else:
            notes.append(f'[business_keys] "{provider}" owes an effect for every such event, hookproof\'s own key '
                         f"for some only: a receiver that skips the others shows lost findings; a when = {{ … }} "
                         f"keeps the rule to the events it acts on")
    return notes


__all__ = ["CounterRule", "FETCHED", "FIELD", "KeyMapping", "Rule", "TemplateError", "counter_keys", "counter_truth", "from_plain",
           "holds", "refuses", "keyed", "lookup", "money_prefixes", "rekeyed", "render", "scoped", "to_plain", "wider_than_built_in"]
