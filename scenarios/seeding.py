"""The seed hook: the scenario's world objects handed to the receiver's side before the first delivery.

A receiver built on a billing package often refuses an event about an object it has no row
for: drf-stripe-subscription looks its ``StripeUser`` up by the event's customer id and
links subscription items to its own ``Price`` rows; a shop looks its order up by the
checkout session's ``client_reference_id``. In production those rows exist before Stripe
sends anything (the customer signed up, the catalog was synced). Stripe CLI's fixtures
(``stripe fixtures file.json``) create the objects through the API first and then trigger
the events; here the provider's world is built before anything is delivered, so each
scenario hands its objects to a team's seed hook instead: a command (`SeedHook.argv`,
the document on stdin) or an HTTP endpoint (`SeedHook.url`, the document as a POST body).

The document (`seed_document`), one JSON object::

    {"scenario": "duplicate-sequential", "profile": "stripe", "api_version": "2020-08-27",
     "livemode": false, "account": "acct_...",
     "objects": {"customer": [{...}], "product": [{...}], "price": [{...}], "subscription": [{...}], ...}}

``objects`` maps each object type the world holds (Stripe's ``object`` names for the
stripe profile, the world's own type names for the others) to its objects in creation
order, each in the provider's shape (Stripe's at the receiver's API version,
`simulator.profiles.stripe_versions`) and at the version the provider API serves before
the first delivery (`simulator.server.clock`: the version before the object's first
event), so what the seed sees and what the provider API answers agree.

A shop's own checkout flow (`SeedHook.creates` with ``"checkout.session"``): in a shop the
session exists before Stripe sends anything about it because the shop created it
(``POST /v1/checkout/sessions``, with its ``client_reference_id`` and ``metadata``), and
the events that follow are about *that* session. With `creates`, the seed runs before the
scenario's story is told, over the world the provider API already serves; the document
then also holds ``"create": {"checkout.session": N}``: how many sessions the story opens
(told once in a scratch world of the same seed: `World.story_sessions`), ``"create_each":
{"checkout.session": [{"mode": "subscription", "payment_method_types": ["card"]}, ...]}``: the
kind of each, in the order the story opens them (`World.story_session_kinds`; the modes are
the shop's, `SeedHook.checkout_modes`), and when they are all of one kind, ``"create_as":
{"checkout.session": {"mode": "payment", "payment_method_types": ["card"]}}``: that kind. A
story binds, in creation order, the shop's sessions of the mode and payment method it needs
(card sessions in ``payment`` or ``subscription`` mode: `World.open_checkout`, where a
subscription-mode session's ``subscription_data`` says whether its subscription starts on a
trial). The seed creates them
through the provider API (any payments package's own code: django-payments'
``StripeProviderV3.create_session``, stripe-python's ``checkout.Session.create``), and
the story binds to them in creation order (`World.bind_receiver_creates`): the catalog's
scenarios complete, pay, refund and expire the shop's sessions, under their own fault
plans, and every event about them carries what the shop set. ``objects`` is then what
the world holds before the story (often nothing). A seed that created too few sessions
makes the scenario ``unknown``, saying how many the story needed.

A shop's own subscriptions and customers (``creates`` with ``"subscription"``,
``"customer"``) are bound the same way: the document's ``create`` also counts the
subscriptions (``{"subscription": N}``) and customers the story starts; the seed creates
them through ``POST /v1/subscriptions`` (any ``payment_behavior``; its customers through
``POST /v1/customers``) with its own ``metadata``. The events their creation emits
(``customer.created``, ``customer.subscription.created``, the first invoice's) are held back
while the seed runs and told as the story's first steps about them, so they are delivered
under the scenario's fault plan; a ``default_incomplete`` subscription's first invoice is
then paid by the story (the customer paying it: ``invoice.paid``, the subscription
``active``), and the story renews, fails, recovers and cancels the shop's subscription.
Every event about it carries its id and ``metadata`` (its invoices too, in
``parent.subscription_details.metadata``, as Stripe snapshots it). A trial story takes a
subscription the seed started ``trialing``; other stories one ``active`` or ``incomplete``.

A shop's own payment intents (``creates`` with ``"payment_intent"``): a shop without
Checkout creates each order's PaymentIntent itself (``POST /v1/payment_intents`` with its
``metadata``, e.g. ``order_id``) and confirms it with Stripe.js. The document's ``create``
counts the one-off payments the story makes (``{"payment_intent": N}``: `World.story_intents`),
and ``create_as`` says what each must be (``{"payment_intent": {"payment_method_types":
["card"]}}``: payable by card, automatic payment methods included); any amount and currency
(at least Stripe's minimum: `simulator.server.writes.MIN_AMOUNTS`), with or without a
customer. The story's payments (`World.pay`, `World.fail_payment` then `retry_payment`, and
the refunds of their charges) take the shop's intents oldest first, so every
``payment_intent.*`` and ``charge.*`` event about them carries the shop's id, amount,
currency, customer and metadata (the charge the intent's metadata: Stripe copies it at
confirmation). Creating an intent emits no event (hookproof does not model
``payment_intent.created``). With ``checkout_modes = []`` the shop sells nothing through
Checkout: the stories open no Checkout Session (a plan starts through ``POST
/v1/subscriptions``, a one-off order is a direct payment intent).

A seed that fails (non-zero exit, non-2xx answer, timeout, cannot start or connect) makes
the scenario ``unknown``: `run_seed` returns the reason in one line (the command's stderr
tail or the answer's body, at most `REASON_CHARS` characters, every `SeedHook.masked`
value replaced by ``***``). Every call is bounded by `SeedHook.timeout_s`; a command's
process group is killed when it runs past it, and at most `TAIL_BYTES` of its stderr (or
of an HTTP answer's body) are read.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import httpx

from hookproof.simulator.profiles.stripe_versions import at_version
from hookproof.simulator.secret_forms import mask_secrets
from hookproof.simulator.server import clock
from hookproof.simulator.world import AnyWorld, World
from hookproof.simulator.world.world import BINDABLE

#: Bytes of a failed command's stderr (or an HTTP answer's body) read for the reason.
TAIL_BYTES = 4096
#: Longest reason a failed seed gives (characters, after joining the tail into one line).
REASON_CHARS = 300
#: Object types a seed may create for the story to bind to (`SeedHook.creates`).
CREATABLE: tuple[str, ...] = BINDABLE
#: The modes of the checkout sessions a shop's seed may open (`SeedHook.checkout_modes`).
CHECKOUT_MODES: tuple[str, ...] = ("payment", "subscription")


@dataclass(frozen=True)
class SeedHook:
    """How a scenario's world objects reach the receiver's side before its first delivery.

    Exactly one of `argv` and `url` is set.

    Attributes:
        argv: the command to run (placeholders already filled in); it reads the document on stdin.
        url: the http(s) URL the document is POSTed to (``application/json``).
        timeout_s: bound on the whole call: the command's run, or the request and its answer (seconds).
        env: the command's whole environment (None: hookproof's own).
        cwd: the command's working folder (None: hookproof's own).
        masked: values never shown (the signing secrets, the API key): ``***`` in a reason, in
            every form a program prints them (`simulator.secret_forms`).
        creates: object types the seed creates through the provider API before the story is
            told, for the story to bind to (`CREATABLE`: ``"checkout.session"``, ``"customer"``,
            ``"subscription"``, ``"payment_intent"``; empty: the seed runs after the story, over its objects).
        checkout_modes: the modes the shop's checkout opens sessions in (`CHECKOUT_MODES`), with
            ``"checkout.session"`` in `creates`: the stories open sessions of these modes alone;
            empty: the shop sells nothing through Checkout (not with ``"checkout.session"``), and
            the stories open no session at all.
    """

    argv: tuple[str, ...] | None = None
    url: str | None = None
    timeout_s: float = 30.0
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    masked: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    checkout_modes: tuple[str, ...] = ("payment",)

    def __post_init__(self) -> None:
        if unknown := [t for t in self.creates if t not in CREATABLE]:
            raise ValueError(f"a seed hook creates only {', '.join(CREATABLE)}, not {unknown[0]!r}")
        if any(m not in CHECKOUT_MODES for m in self.checkout_modes) or (
                not self.checkout_modes and "checkout.session" in self.creates):
            raise ValueError(f"checkout_modes takes {', '.join(CHECKOUT_MODES)}, not {self.checkout_modes!r}")
        if (self.argv is None) == (self.url is None):
            raise ValueError("a seed hook needs exactly one of argv or url")
        if self.argv is not None and not self.argv:
            raise ValueError("a seed hook's argv names no program")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, not {self.timeout_s}")

    def story_checkout_modes(self) -> frozenset[str]:
        """The modes a story may open checkout sessions in against this hook (`Context.checkout_modes`):
        the shop's `checkout_modes` when it opens the sessions, or when they are empty (it sells
        nothing through Checkout: none); only ``payment`` when it starts the subscriptions itself
        (``POST /v1/subscriptions``: the stories subscribe through those); else both (the world
        opens them)."""
        if "checkout.session" in self.creates or not self.checkout_modes:
            return frozenset(self.checkout_modes)
        if "subscription" in self.creates:
            return frozenset({"payment"})
        return frozenset(CHECKOUT_MODES)

    def describe(self) -> str:
        """What the hook runs, for a reason: the program's name or the URL (never an argument)."""
        return f"seed command {os.path.basename(self.argv[0])}" if self.argv else f"seed URL {self.url}"


#: Object type -> what each object a seed creates of it must be for the story to bind it
#: when the story says no more (`World.open_checkout`'s binding): a checkout session in
#: ``payment`` mode paid by card (``payment_method_types: ["card"]``); a payment intent
#: payable by card (``card`` among its types, or automatic payment methods: `World._story_intent`).
CREATE_SHAPES: Mapping[str, Mapping[str, Any]] = {
    "checkout.session": {"mode": "payment", "payment_method_types": ["card"]},
    "payment_intent": {"payment_method_types": ["card"]},
}


def seed_document(world: AnyWorld, *, scenario: str, profile: str, api_version: str | None = None,
                  create: Mapping[str, int] | None = None,
                  session_kinds: Sequence[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The JSON document a seed hook receives for `world` (see the module docstring);
    `create` (object type -> count) is what the seed is to create for the story, and
    `session_kinds` the ``(mode, payment method)`` of each checkout session it opens, in order
    (`World.story_session_kinds`; None: `CREATE_SHAPES`' kind).

    Moves the provider's clock to "before the first delivery" (`clock.advance` with no
    event), so the provider API serves the same versions while the seed runs.
    """
    clock.advance(world, ())  # every world has the interface the clock reads (events, version)
    version = api_version or getattr(world, "api_version", "") or None
    objects: dict[str, list[dict[str, Any]]] = {}
    for object_id in world.objects():
        snapshot = world.get(object_id, clock.served_version(world, object_id))
        if isinstance(world, World) and version:
            snapshot = at_version(snapshot, version)
        objects.setdefault(world.object_type(object_id), []).append(snapshot)
    shapes: dict[str, Any] = {kind: dict(CREATE_SHAPES[kind]) for kind in (create or {}) if kind in CREATE_SHAPES}
    each: dict[str, Any] = {}
    if session_kinds is not None and "checkout.session" in (create or {}):
        kinds = [{"mode": mode, "payment_method_types": [method]} for mode, method in session_kinds]
        each["checkout.session"] = kinds
        if len({json.dumps(k) for k in kinds}) == 1:
            shapes["checkout.session"] = kinds[0]
        else:  # several kinds (or none): `create_each` says which
            shapes.pop("checkout.session", None)
    return {"scenario": scenario, "profile": profile, "api_version": version,
            "livemode": bool(getattr(world, "livemode", False)), "account": getattr(world, "account", None) or None,
            "objects": objects, **({"create": dict(create)} if create is not None else {}),
            **({"create_as": shapes} if shapes else {}), **({"create_each": each} if each else {})}


def run_seed(hook: SeedHook, document: Mapping[str, Any]) -> str | None:
    """Hand `document` to `hook`; None when it succeeded, else why not (one line, secrets masked)."""
    body = json.dumps(document).encode()
    reason = _run_command(hook, body) if hook.argv is not None else _post(hook, body)
    return None if reason is None else _one_line(reason, hook.masked)


def _run_command(hook: SeedHook, body: bytes) -> str | None:
    assert hook.argv is not None
    with tempfile.TemporaryFile() as stderr:
        try:
            proc = subprocess.Popen(list(hook.argv), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr,
                                    env=dict(hook.env) if hook.env is not None else None, cwd=hook.cwd,
                                    start_new_session=True)
        except OSError as exc:
            return f"{hook.describe()} could not start: {exc.strerror or exc}"
        try:
            proc.communicate(body, timeout=hook.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return f"{hook.describe()} ran past its {hook.timeout_s:g} s timeout{_tail(stderr)}"
        if proc.returncode != 0:
            how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
                   else f"exited with {proc.returncode}")
            return f"{hook.describe()} {how}{_tail(stderr)}"
    return None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command and whatever it started (its own session), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(stream: Any) -> str:
    """``": <last bytes of stream>"``, or "" when it is empty."""
    size = stream.seek(0, os.SEEK_END)
    stream.seek(max(0, size - TAIL_BYTES))
    text = stream.read(TAIL_BYTES).decode("utf-8", "replace").strip()
    return f": {text}" if text else ""


def _post(hook: SeedHook, body: bytes) -> str | None:
    assert hook.url is not None
    try:
        with httpx.Client(timeout=hook.timeout_s, follow_redirects=False) as client, \
                client.stream("POST", hook.url, content=body, headers={"content-type": "application/json"}) as answer:
            head = b""
            for chunk in answer.iter_bytes():
                head += chunk
                if len(head) >= TAIL_BYTES:
                    break
            if 200 <= answer.status_code < 300:
                return None
            text = head[:TAIL_BYTES].decode("utf-8", "replace").strip()
            return f"{hook.describe()} answered {answer.status_code}" + (f": {text}" if text else "")
    except httpx.TimeoutException:
        return f"{hook.describe()} did not answer within its {hook.timeout_s:g} s timeout"
    except httpx.HTTPError as exc:
        return f"{hook.describe()} could not be reached: {type(exc).__name__}: {exc}"


def _one_line(reason: str, masked: Sequence[str]) -> str:
    reason = mask_secrets(reason, masked)
    line = " | ".join(part.strip() for part in reason.splitlines() if part.strip())
    if len(line) <= REASON_CHARS:
        return line
    what, _, tail = line.partition(": ")  # keep what failed; the tail's end is the useful part
    room = max(0, REASON_CHARS - len(what) - 3)
    return f"{what}: …{tail[len(tail) - room:]}" if room else line[:REASON_CHARS]


__all__ = ["CHECKOUT_MODES", "CREATABLE", "CREATE_SHAPES", "REASON_CHARS", "TAIL_BYTES", "SeedHook", "run_seed", "seed_document"]
