"""What every provider profile provides: envelope, signature, delivery contract.

A profile is pure: it turns a world `Event` into the provider's envelope (body bytes
and stable headers, identical on every retry) and signs an envelope for one attempt
at a given timestamp. Time, sockets and retries belong to the dispatcher.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

import orjson

from hookproof.simulator.errors import ProfileError, SecretError
from hookproof.simulator.events import Event
from hookproof.simulator.frozen import fast_init
from hookproof.simulator.profiles.provider_words import BodyTime, EventClock, ProviderWords


@dataclass(frozen=True)
class Tolerance:
    """The timestamp window the provider's official verifier accepts, in seconds.

    `past_s`/`future_s` of None mean that side is not checked. A profile without a
    signed timestamp has ``Tolerance(None, None)``.
    """

    past_s: float | None
    future_s: float | None

    def accepts(self, skew_s: float) -> bool:
        """True when a timestamp `skew_s` seconds off now (negative = past) passes."""
        if skew_s < 0 and self.past_s is not None:
            return -skew_s <= self.past_s
        if skew_s > 0 and self.future_s is not None:
            return skew_s <= self.future_s
        return True


@dataclass(frozen=True)
class FutureDispute:
    """A provider whose official verifiers disagree on a future timestamp: one accepts any
    (it checks only the past), another refuses one more than `window_s` seconds ahead. Refusing
    a future-dated delivery is then not required (``future-timestamp`` is an advisory, as where
    the one verifier accepts it), and the fault signs `window_s` + `FUTURE_MARGIN_S` ahead, past
    the stricter verifier's window.

    Attributes:
        window_s: the stricter verifier's future window (seconds).
        accepting: the verifier that accepts a future timestamp, as people name it.
        refusing: the verifier that refuses one past `window_s`.
    """

    window_s: float
    accepting: str
    refusing: str


#: Seconds past a verifier's window (or an hour, where none is checked) that ``future-timestamp``
#: signs ahead of now; the same margin ``stale-timestamp`` signs behind.
FUTURE_MARGIN_S = 60
#: The future window assumed where no official verifier checks one (seconds).
UNCHECKED_FUTURE_S = 3600


@dataclass(frozen=True, slots=True)
class Envelope:
    """An event as the provider puts it on the wire, before signing.

    Stable across every attempt of one delivery: body bytes, the dedupe id and the
    non-signature headers do not change on retry (providers.md, "things to get right").

    Attributes:
        event_id: the id the provider documents as the dedupe key (header or body).
        type: the provider's own event-type name (``invoice.paid``, ``orders/paid``…).
        body: the exact bytes sent and signed.
        headers: non-signature headers (content type, event name, delivery id…).
        query: query-string parameters appended to the target URL (Mercado Pago).
    """

    event_id: str
    type: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)

    def with_body(self, body: bytes) -> "Envelope":
        """The same envelope with other body bytes (re-serialised, oversized)."""
        return Envelope(self.event_id, self.type, body, self.headers, self.query)


#: `Envelope(...)` without its frozen ``__init__`` (one per event rendered; `simulator.frozen`).
new_envelope: Callable[..., Envelope] = fast_init(Envelope)


@dataclass(frozen=True, slots=True)
class SignedRequest:
    """One attempt's HTTP request: method, query, headers and body, ready to send."""

    headers: Mapping[str, str]
    body: bytes
    query: Mapping[str, str] = field(default_factory=dict)
    method: str = "POST"


#: `SignedRequest(...)` without its frozen ``__init__`` (one per attempt; `simulator.frozen`).
new_signed_request: Callable[..., SignedRequest] = fast_init(SignedRequest)


def canonical_json(value: Any) -> bytes:
    """Compact JSON as most providers send it: UTF-8, no spaces, key order kept.

    The bytes of ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` in
    UTF-8, made by orjson (several times faster: every fresh event is rendered once per
    attempt's envelope); values orjson refuses (integers past 64 bits) go through json.
    Floats are written in their shortest form by both, though orjson writes exponents
    without padding (``1e-7``, not ``1e-07``); the world renders no floats. Keys that
    are not strings are written as json writes them; orjson's option for them costs
    10% of every rendering, so it is asked for only when a value has such a key.
    """
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        pass
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Profile(ABC):
    """One provider's wire contract. Subclasses cite their sources in docstrings.

    Class attributes:
        name: the profile id used in config and CLI (``stripe``).
        title: the provider's name for people.
        signature_headers: names of the headers that carry the signature (omitted by
            the ``missing-signature`` fault).
        sender_timeout_s: seconds the provider waits for an answer.
        retry_schedule_s: delays in seconds before each retry after a failed attempt.
        tolerance: the official verifier's timestamp window (with a `future_dispute`, the
            window every official verifier enforces: no future side).
        future_dispute: None, or how the provider's official verifiers disagree on a future
            timestamp (`FutureDispute`: Paddle's Node SDK accepts one, its Python SDK does not).
        untimed_reason: why ``stale-timestamp``/``future-timestamp`` do not apply when
            `tolerance` has no window ("" : the provider signs no timestamp).
        default_event: the Stripe event type `hookproof send` uses by default.
        has_livemode: the envelope carries a test/live flag.
        has_account: the envelope carries the provider account.
        foreign_account_valid: None when an event of another account than the receiver's
            (`target.account`) is invalid at the provider level (Stripe Connect: an endpoint
            listens to its own connected accounts); else why it is a valid delivery
            (Shopify: a public app serves many shops under one app secret), the reason
            ``foreign-account`` is not applicable.
        foreign_account_never_sent: None when the provider may send an endpoint an event
            of another account than `target.account`; else why it never does, the reason
            ``foreign-account`` is not applicable even where the envelope carries an account
            (Stripe: a Connect endpoint is sent the events of every account connected to
            the platform, each naming its ``account``, and never another's).
        other_mode_needs_connect: None when an event of the other mode (test/live) or of
            another account can reach any endpoint; else why only an endpoint the config
            declares a Connect endpoint (`target.connect`) is ever sent one, the reason
            ``test-mode-to-live`` and ``foreign-account`` are not applicable elsewhere.
        live_event_mirrored: None when a test-mode endpoint may be sent a live-mode event;
            else the note ``test-mode-to-live`` carries on a test-mode endpoint, which it
            sends one in place of the live endpoint's case (Stripe: a test-mode Connect
            endpoint is sent test events only, a live one both modes).
        thin: events carry only an id; the receiver fetches state from the API.
        body_unsigned: None when the signature covers the request body; else why it does
            not (Mercado Pago signs a manifest of ids), the reason ``reserialized-body`` is
            not applicable.
        retry_bytes_kept: None when a retry may carry its event in other body bytes; else why a
            retry is the original payload byte for byte (Shopify's), the reason
            ``reserialized-retry`` is not applicable.
        signature_inputs: what the signature covers beyond the secret that a receiver reads from
            the request itself (a query parameter, a header), for the headline of a run refused
            with 401/403; None when that is the body and the signature headers alone.
        multiple_signatures: several secrets produce several signatures (rotation).
        world: the world whose events the profile sends (``billing``: Stripe's billing
            objects; ``github``: the repository world); `simulator.world.new_world` builds it.
        event_clock: the event's own time a receiver orders an object's events by
            (`provider_words.EventClock`: Stripe's ``created``), or None when the events
            carry none.
        body_time: where the events carry no time of their own (`event_clock` None), the
            body's time receivers order an object's events by, which ties within its step
            (`provider_words.BodyTime`: GitHub's ``updated_at``), or None.
        retrying: what the provider does with an unacknowledged event while retries remain.
        gives_up: what it does once its retries ran out (`Profile.words`).
        rotation_dispute: where an official verifier reads only the last of a rotation's
            signatures: what the provider's docs say of their order and which verifier reads
            which (the ``secret-rotation`` scenario then also signs with the receiver's secret
            first, and refusing that is an advisory saying this); None where every official
            verifier reads them all.
        replay_words: what the provider's manual replay of an event is, in its words, where it
            is a new delivery entity that `replay_of` reads (Paddle's); None where a replay is the
            same delivery again (`Profile.words`, for the findings about replayed attempts).
        size_cap: the payload cap the provider documents, in its words with the source
            (GitHub's 25 MB), where it is above the body ``oversized-payload`` sends: refusing
            that body refuses a delivery the provider really makes (`Profile.words`); None where
            the provider documents none.
        event_id_name: where the id the provider documents as an event's identity (the dedupe
            key) is read, as findings name it (``X-GitHub-Delivery``: `fetched_states.with_unexplained`);
            for a sender whose events carry no id, what a receiver dedupes on instead (`no_event_id`).
        no_event_id: None where the events carry an id; else what a receiver dedupes on instead,
            in findings' and scenario descriptions' words (a generic-hmac sender with no id header
            and a catalog giving no event id: Lemon Squeezy's, the business object its keys name).
        no_big_body: why ``oversized-payload`` is not applicable, where the profile's world has
            no event of several megabytes grown through the provider's own fields (`big_event`):
            the provider cannot send one, or hookproof does not make one yet. A body padded with
            a field the provider never sends would be refused by its schema, not by a body limit.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    signature_headers: ClassVar[tuple[str, ...]]
    sender_timeout_s: ClassVar[float]
    retry_schedule_s: ClassVar[tuple[float, ...]]
    tolerance: ClassVar[Tolerance] = Tolerance(None, None)
    untimed_reason: ClassVar[str] = ""
    default_event: ClassVar[str] = "payment_intent.succeeded"
    event_id_name: ClassVar[str] = "the event's id"
    no_event_id: ClassVar[str | None] = None
    has_livemode: ClassVar[bool] = False
    has_account: ClassVar[bool] = False
    foreign_account_valid: ClassVar[str | None] = None
    foreign_account_never_sent: ClassVar[str | None] = None
    other_mode_needs_connect: ClassVar[str | None] = None
    live_event_mirrored: ClassVar[str | None] = None
    thin: ClassVar[bool] = False
    body_unsigned: ClassVar[str | None] = None
    retry_bytes_kept: ClassVar[str | None] = None
    signature_inputs: ClassVar[str | None] = None
    multiple_signatures: ClassVar[bool] = False
    world: ClassVar[str] = "billing"
    event_clock: ClassVar[EventClock | None] = None
    body_time: ClassVar[BodyTime | None] = None
    retrying: ClassVar[str] = "the provider would retry it on its schedule"
    gives_up: ClassVar[str] = "the provider retries it no more"
    replay_words: ClassVar[str | None] = None
    rotation_dispute: ClassVar[str | None] = None
    size_cap: ClassVar[str | None] = None
    no_big_body: ClassVar[str] = "hookproof makes no event of several megabytes in this provider's own fields"
    future_dispute: ClassVar[FutureDispute | None] = None
    #: Types the provider sends only to an endpoint subscribed to them by name (Shopify's mandatory
    #: compliance topics; Stripe's ``invoice.payment_succeeded``): `event_types` lists them only for a profile built with them
    #: (`registry.get_profile`'s ``subscribed``), so an endpoint that names none is sent what it was.
    optional_types: ClassVar[tuple[str, ...]] = ()
    #: World types about the whole account, not one object (Shopify's ``app/uninstalled`` and
    #: ``shop/redact``: a receiver may erase everything it holds of the shop on them). Where every
    #: world shares the one account a config names (``target.account``), a receiver sent any runs
    #: its scenarios one after another (`Runner.may_overlap`).
    account_wide_types: ClassVar[tuple[str, ...]] = ()
    #: True when only ``target.enabled_events`` listing an optional type subscribes the endpoint to
    #: it (Stripe's ``invoice.payment_succeeded``: the endpoint's own list), False when a config
    #: naming it anywhere does (Shopify's compliance topics: in enabled_events, ``[business_keys]``
    #: or ``[counters]``, `Config.subscribed_types`).
    optional_listed_only: ClassVar[bool] = False
    #: What the error naming a type that is not one of `optional_types` calls one (`__init__`).
    optional_noun: ClassVar[str] = "optional type"
    #: The `optional_types` this endpoint is subscribed to, in `optional_types` order (`__init__`;
    #: empty for a profile built with none, and for one whose own constructor takes no ``subscribed``).
    subscribed: tuple[str, ...] = ()

    def __init__(self, subscribed: Iterable[str] = ()) -> None:
        """`subscribed`: the `optional_types` the endpoint is subscribed to (Shopify's compliance
        topics; Stripe's types its ``enabled_events`` lists), kept as `subscribed` in
        `optional_types` order, repeats dropped. Raises ProfileError (``field`` ``subscribed``)
        naming the first, sorted, that is not one of them, and listing those that are."""
        chosen = frozenset(subscribed)
        wrong = sorted(chosen - set(self.optional_types))
        if wrong:
            raise ProfileError(f"{wrong[0]!r} is no {self.optional_noun} (they are: "
                               f"{', '.join(self.optional_types) or 'none'})", field="subscribed")
        self.subscribed = tuple(t for t in self.optional_types if t in chosen)

    def future_offset_s(self) -> int:
        """Seconds ahead of now ``future-timestamp`` signs: the future window of the official
        verifier (the stricter one's in a `future_dispute`; `UNCHECKED_FUTURE_S` where none
        checks it) plus `FUTURE_MARGIN_S`."""
        window = self.tolerance.future_s
        if window is None:
            window = self.future_dispute.window_s if self.future_dispute is not None else UNCHECKED_FUTURE_S
        return int(window) + FUTURE_MARGIN_S

    def future_words(self) -> str | None:
        """Why refusing a future-dated delivery is not required here, naming the verifier(s) and
        the offset signed (`future_offset_s`); None where an official verifier refuses one (it
        must then be refused)."""
        if self.tolerance.future_s is not None:
            return None
        ahead = f"signed {self.future_offset_s()} s ahead"
        dispute = self.future_dispute
        if dispute is None:
            return (f"{ahead}; {self.title}'s official verifier accepts them (it checks only the past), so a real "
                    "delivery from a sender whose clock runs ahead would be refused")
        return (f"{ahead}; {dispute.accepting} accepts them (it checks only the past) while {dispute.refusing} "
                f"refuses a timestamp more than {dispute.window_s:g} s ahead: {self.title}'s official verifiers "
                "disagree, so refusing is not required, but a real delivery from a sender whose clock runs ahead "
                "would be refused")

    def after_refusal(self) -> str:
        """What the provider does with an event its receiver refused (a 4xx or 5xx), as scenario
        descriptions say it: `retrying` while it has retries (`retry_schedule_s`), else
        `gives_up` (GitHub retries nothing)."""
        return self.retrying if self.retry_schedule_s else self.gives_up

    def erasable(self, events: Iterable[Event]) -> frozenset[str]:
        """The ids of the objects of `events` a receiver may have erased on one of `events` (a
        shop's data on its ``app/uninstalled``): the state checks judge none of them
        (`scenarios.observations.Expectations.erased`). None for most providers."""
        return frozenset()

    def words(self) -> ProviderWords:
        """What findings say of this provider (`provider_words.ProviderWords`): its name,
        attempts per delivery (1 + `retry_schedule_s`), what it does while retrying and
        once its retries ran out, its events' own time, why a future-dated delivery need
        not be refused (`future_words`), what its manual replay is (`replay_words`), and why a
        rotation's signatures with the receiver's own first need not be accepted
        (`rotation_dispute`), the payload cap it documents (`size_cap`) and the statuses it
        counts as delivered where not any 2xx (`success_words`)."""
        return ProviderWords(self.title, 1 + len(self.retry_schedule_s), self.retrying, self.gives_up,
                             self.event_clock, self.future_words(), self.replay_words, self.rotation_dispute,
                             self.body_time, self.size_cap, self.success_words())

    # ---- events -------------------------------------------------------------
    @abstractmethod
    def event_types(self) -> Mapping[str, str]:
        """Stripe event type -> this provider's event-type name, for every type it emits."""

    def provider_type(self, stripe_type: str) -> str | None:
        """This provider's name for a Stripe event type, or None if it does not emit it."""
        return self.event_types().get(stripe_type)

    @abstractmethod
    def envelope(self, event: Event) -> Envelope:
        """Render `event` in the provider's envelope (stable across retries)."""

    def replayed(self, event: Event, replay: int) -> Event:
        """`event` as the provider's `replay`-th manual replay of it sends it (1: the first).
        By default the same delivery again; a provider whose replay is a new delivery entity
        (Paddle: a new ``notification_id``, the same ``event_id``) marks the event for its
        envelope (and `replay_of` reads the mark)."""
        return event

    def replay_of(self, event: Event) -> int:
        """Which manual replay of its event `event` is (`replayed`'s `replay`), 0 for the
        event as first notified. By default 0: a provider whose replay is the same delivery
        again leaves no mark to read."""
        return 0

    def shared_id(self, event_id: str) -> tuple[str, str] | None:
        """Where one event's identity (`Envelope.event_id`) holds an id the provider shares with
        other events (Shopify's ``X-Shopify-Event-Id``, one per merchant action): that id and
        the provider's words for it (what ``lost`` says of a receiver that took another event of
        it for this one); None by default: no provider id names several events."""
        return None

    # ---- signing ------------------------------------------------------------
    @abstractmethod
    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """Signature headers for one attempt, signed with every secret in `secrets`.

        `timestamp` is unix seconds (the attempt time; ignored by untimestamped schemes).
        Raises SecretError for a secret the scheme cannot use (the message omits it).
        """

    def request(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> SignedRequest:
        """The full request of one attempt: stable headers plus fresh signature headers."""
        headers = dict(envelope.headers)
        headers.update(self.sign(envelope, secrets, timestamp))
        return new_signed_request(headers, envelope.body, dict(envelope.query))

    def request_headers(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> list[tuple[str, str]] | None:
        """The headers of ``request(envelope, secrets, timestamp)`` as (name, value) pairs
        in their order, for a sender that POSTs the envelope's body and query itself
        without the request object (the dispatcher's attempts without mutations).

        None when this profile makes its requests otherwise (a subclass overriding
        `request` without this method): the sender then builds the request. Raises as
        `sign` does.
        """
        if type(self).request is not Profile.request:
            return None
        headers = dict(envelope.headers)
        headers.update(self.sign(envelope, secrets, timestamp))
        return list(headers.items())

    def check_secrets(self, secrets: Sequence[str]) -> None:
        """Raise SecretError when `sign` could not sign with `secrets` (empty, or a value the
        scheme cannot decode); the message never holds a secret. A command that signs calls it
        before it starts anything, so a bad secret is a config error, not a failed delivery."""
        require_secrets(secrets, self.name)

    @abstractmethod
    def generate_secret(self, seed: int) -> str:
        """A secret in the provider's format, deterministic from `seed` (for tests, demos)."""

    # ---- delivery contract --------------------------------------------------
    def is_success(self, status: int) -> bool:
        """True when the provider counts `status` as delivered (default: any 2xx)."""
        return 200 <= status < 300

    def success_words(self) -> str | None:
        """The statuses `is_success` takes, as findings name them (Mercado Pago's ``200 or
        201``), or None where any 2xx is (the default)."""
        return None

    def attempt_timeout_s(self, attempt: int) -> float:
        """Seconds the provider waits for the answer to attempt `attempt` (1 = the first).

        Default: `sender_timeout_s` for every attempt. Mercado Pago waits longer on the
        first attempt than on retries.
        """
        return self.sender_timeout_s


def require_secrets(secrets: Sequence[str], profile: str) -> None:
    """Raise SecretError when `secrets` is empty or holds an empty string."""
    if not secrets or not all(secrets):
        raise SecretError(f"profile {profile!r} needs a non-empty secret", field="secret")


#: Keys whose HMAC-SHA256 pad states `hmac_sha256` keeps (a run signs with a few secrets).
_HMAC_KEYS_KEPT = 64
_HMAC_PADS: dict[bytes, tuple[Any, Any]] = {}


def hmac_sha256(key: bytes, message: bytes, tail: bytes = b"") -> bytes:
    """HMAC-SHA256 of `message` followed by `tail` under `key` (RFC 2104; the bytes of
    ``hmac.digest(key, message + tail, "sha256")``), 32 bytes.

    The inner and outer pad states of each key are hashed once and copied per message:
    OpenSSL 3 looks the algorithm up again on every ``hmac.digest``, which on this
    kind of machine costs more than hashing a webhook's body (about 9 µs against 4 µs
    for 1.5 KB). The states are kept in this process's memory only, as the secrets are.
    `tail` is hashed where it lies: a signed prefix and a body need not be joined (a
    copy of the body) first.
    """
    pads = _HMAC_PADS.get(key)
    if pads is None:
        block = key if len(key) <= 64 else hashlib.sha256(key).digest()
        block = block.ljust(64, b"\0")
        pads = (hashlib.sha256(bytes(b ^ 0x36 for b in block)), hashlib.sha256(bytes(b ^ 0x5C for b in block)))
        if len(_HMAC_PADS) >= _HMAC_KEYS_KEPT:
            _HMAC_PADS.clear()
        _HMAC_PADS[key] = pads
    inner = pads[0].copy()
    inner.update(message)
    if tail:
        inner.update(tail)
    outer = pads[1].copy()
    outer.update(inner.digest())
    return outer.digest()


def validated_settings(model: Any, raw: Any, profile: str,
                       explain: Callable[[Mapping[str, Any]], str] | None = None) -> Any:
    """A profile's settings as `model` (a pydantic model class) from an instance of it (kept
    as is), a mapping (a config table) or None (the defaults): the one place a settings
    model's pydantic ValidationError becomes a ProfileError. Its `field` names the first
    failing setting (``"settings"`` for the whole table) and its message reads ``"<profile>
    setting <field>: <why>"``, the why pydantic's message unless `explain` words it from the
    error (a pydantic error dict); a ProfileError a validator raised passes as it is."""
    from pydantic import ValidationError

    if isinstance(raw, model):
        return raw
    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as exc:
        error = exc.errors()[0]
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, ProfileError):
            raise ProfileError(str(cause), field=cause.field) from None
        field = ".".join(str(part) for part in error["loc"]) or "settings"
        why = explain(error) if explain is not None else error["msg"]
        raise ProfileError(f"{profile} setting {field}: {why}", field=field) from None
