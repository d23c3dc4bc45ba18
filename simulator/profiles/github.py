"""GitHub: ``X-Hub-Signature-256: sha256=<hex>`` over the raw body (no timestamp).

Sources: github/docs ``content/webhooks/using-webhooks/validating-webhook-deliveries.md``
(HMAC-SHA256 of the body keyed by the secret, ``sha256=`` prefix, lowercase hex; the
legacy ``X-Hub-Signature: sha1=``), ``webhook-events-and-payloads.md`` (delivery
headers, ``action``, ``sender``, ``installation``), ``handling-failed-webhook-deliveries.md``
(no automatic redelivery; manual or REST redelivery within 3 days), REST "hook-delivery"
schema (``guid`` shared by all deliveries of one event); npm ``@octokit/webhooks-methods``
``verify()`` (official JS verifier; accepts only ``sha256=`` lowercase hex).
"""

from __future__ import annotations

import hashlib
import hmac
import random
from typing import Any, ClassVar, Mapping, Sequence

from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, canonical_json, require_secrets
from hookproof.simulator.profiles.formats import derived_int, derived_uuid
from hookproof.simulator.profiles.stripe import STRIPE_EVENT_TYPES

#: The ``GitHub-Hookshot/<short hex>`` build id this simulator claims (any short hex is realistic).
HOOKSHOT_VERSION = "5e9f2a1"


def github_event(stripe_type: str) -> tuple[str, str]:
    """``(X-GitHub-Event, action)`` for a Stripe event type.

    The event name is the object type in GitHub's snake_case (``checkout.session`` ->
    ``checkout_session``; ``customer.subscription`` -> ``subscription``) and the action
    is Stripe's verb (``payment_intent.payment_failed`` -> ``("payment_intent", "payment_failed")``).
    """
    obj, _, verb = stripe_type.rpartition(".")
    if obj == "customer.subscription":
        obj = "subscription"
    return obj.replace(".", "_"), verb


def github_signature(secret: str, body: bytes, algorithm: str = "sha256") -> str:
    """``<algorithm>=<lowercase hex HMAC of body>`` keyed by the secret as UTF-8."""
    digest = hmac.new(secret.encode("utf-8"), body, getattr(hashlib, algorithm)).hexdigest()
    return f"{algorithm}={digest}"


class GitHubProfile(Profile):
    """GitHub (github.com) webhooks, as a GitHub App's hook would deliver billing events.

    GitHub has no billing events of its own, so each world event is rendered the way
    GitHub renders its events: ``X-GitHub-Event`` is the object type (``payment_intent``,
    ``invoice``, ``subscription``, ``checkout_session``, ``charge``, ``customer``), the body
    is ``{"action": <Stripe verb>, <event name>: <object snapshot>, "changes"?: {field:
    {"from": old}}, "sender": {…}, "installation": {"id": …}}``. ``changes`` mirrors
    Stripe's ``previous_attributes`` the way GitHub's ``edited`` actions do. The
    provider type (``Envelope.type``) is ``<event>.<action>``, Octokit's naming.

    Headers: ``X-GitHub-Delivery`` is a GUID derived from the event id, identical on
    every (re)delivery and the dedupe key; ``X-GitHub-Hook-ID`` and
    ``X-GitHub-Hook-Installation-Target-ID`` are derived from the account, as is
    ``installation.id`` (the account the event belongs to). No test/live flag.

    Signing: one secret per hook (no rotation list), so only the first secret signs.
    Both ``X-Hub-Signature-256`` (``sha256=``) and the legacy ``X-Hub-Signature``
    (``sha1=``) are sent. No timestamp, so no tolerance window.

    Delivery contract: 2xx within 10 s (30 s on GHES). No automatic retries
    (``retry_schedule_s = ()``); a user or the REST API may redeliver within 3 days
    (`redelivery_window_s`), with the same body, signature and ``X-GitHub-Delivery``:
    the harness models such redeliveries as explicit duplicates in its fault plans.
    """

    name = "github"
    title = "GitHub"
    signature_headers = ("X-Hub-Signature-256", "X-Hub-Signature")
    sender_timeout_s = 10.0
    retry_schedule_s = ()
    redelivery_window_s: ClassVar[float] = 3 * 86400.0
    default_event = "payment_intent.succeeded"
    has_account = True

    def event_types(self) -> Mapping[str, str]:
        """Stripe type -> ``<X-GitHub-Event>.<action>`` for every world event type."""
        return {t: ".".join(github_event(t)) for t in STRIPE_EVENT_TYPES}

    def installation_id(self, account: str) -> int:
        """The GitHub App installation id standing for the world account (8 digits)."""
        return derived_int("github-installation", account, 8)

    def payload(self, event: Event) -> dict[str, Any]:
        """The GitHub-style JSON payload of `event`."""
        name, action = github_event(event.type)
        body: dict[str, Any] = {"action": action, name: dict(event.object)}
        if event.previous_attributes is not None:
            body["changes"] = {k: {"from": v} for k, v in event.previous_attributes.items()}
        body["sender"] = {"login": "hookproof-billing[bot]", "id": derived_int("github-sender", event.account, 9), "type": "Bot"}
        body["installation"] = {"id": self.installation_id(event.account)}
        return body

    def envelope(self, event: Event) -> Envelope:
        name, action = github_event(event.type)
        delivery = derived_uuid("github-delivery", event.id)
        return Envelope(
            event_id=delivery,
            type=f"{name}.{action}",
            body=canonical_json(self.payload(event)),
            headers={
                "Content-Type": "application/json",
                "User-Agent": f"GitHub-Hookshot/{HOOKSHOT_VERSION}",
                "X-GitHub-Event": name,
                "X-GitHub-Delivery": delivery,
                "X-GitHub-Hook-ID": str(derived_int("github-hook", event.account, 9)),
                "X-GitHub-Hook-Installation-Target-Type": "integration",
                "X-GitHub-Hook-Installation-Target-ID": str(derived_int("github-app", event.account, 6)),
            },
        )

    def sign(self, envelope: Envelope, secrets: Sequence[str], timestamp: int) -> dict[str, str]:
        """Both signature headers with the first secret; `timestamp` is not used (none is signed)."""
        require_secrets(secrets, self.name)
        return {
            "X-Hub-Signature-256": github_signature(secrets[0], envelope.body, "sha256"),
            "X-Hub-Signature": github_signature(secrets[0], envelope.body, "sha1"),
        }

    def generate_secret(self, seed: int) -> str:
        """40 lowercase hex characters (what ``openssl rand -hex 20`` gives; GitHub takes any string)."""
        return random.Random(seed).randbytes(20).hex()
