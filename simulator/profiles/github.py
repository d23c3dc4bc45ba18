"""GitHub: a GitHub App's webhook, sending the repository world's events.

Sources: github/docs ``content/webhooks/webhook-events-and-payloads.md`` (delivery
headers ``X-GitHub-Event``, ``X-GitHub-Delivery``, ``X-GitHub-Hook-ID``,
``X-GitHub-Hook-Installation-Target-Type``/``-ID``, ``User-Agent: GitHub-Hookshot/…``;
payload fields ``action``, ``sender``, ``repository``, ``organization``,
``installation``), ``validating-webhook-deliveries.md`` (HMAC-SHA256 of the body keyed
by the secret, ``sha256=`` prefix, lowercase hex; the legacy ``X-Hub-Signature: sha1=``),
``handling-failed-webhook-deliveries.md`` (no automatic redelivery; manual or REST
redelivery within 3 days), REST "hook-delivery" schema (``guid`` shared by all
deliveries of one event); npm ``@octokit/webhooks-methods`` ``verify()`` (official JS
verifier; accepts only ``sha256=`` lowercase hex). Payload shapes: see
`simulator.world.github_shapes` (validated against ``@octokit/webhooks-schemas``).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import random
from typing import Any, ClassVar, Mapping, Sequence

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, canonical_json, require_secrets
from hookproof.simulator.profiles.formats import derived_int
from hookproof.simulator.profiles.provider_words import BodyTime
from hookproof.simulator.world.github_lifecycle import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES
from hookproof.simulator.world.github_shapes import APP_ID, HOOK_ID, node_id

#: The ``GitHub-Hookshot/<short hex>`` build id this simulator claims (any short hex is realistic).
HOOKSHOT_VERSION = "5e9f2a1"


def github_event(event_type: str) -> tuple[str, str | None]:
    """``(X-GitHub-Event, action)`` of an Octokit-style type (``issues.opened`` ->
    ``("issues", "opened")``; ``push`` -> ``("push", None)``)."""
    name, _, action = event_type.partition(".")
    return name, action or None


def github_signature(secret: str, body: bytes, algorithm: str = "sha256") -> str:
    """``<algorithm>=<lowercase hex HMAC of body>`` keyed by the secret as UTF-8."""
    digest = hmac.new(secret.encode("utf-8"), body, getattr(hashlib, algorithm)).hexdigest()
    return f"{algorithm}={digest}"


class GitHubProfile(Profile):
    """GitHub (github.com) webhooks as a GitHub App's hook delivers them.

    Events come from the repository world (`simulator.world.github.GitHubWorld`,
    ``world = "github"``): the body is the event's payload (``Event.extra["payload"]``),
    ``X-GitHub-Event`` is the part of the type before the dot, and the provider type
    (``Envelope.type``) is Octokit's ``<event>.<action>`` (``push`` and ``ping`` have no
    action). An event without a GitHub payload (a billing world event) raises
    ProfileError: GitHub sends no such thing.

    Headers: ``X-GitHub-Delivery`` is the event id (a GUID), identical on every
    (re)delivery and the dedupe key; ``X-GitHub-Hook-ID`` is the App's hook id;
    ``X-GitHub-Hook-Installation-Target-Type: integration`` and ``-Target-ID`` the App id,
    both the same on every delivery of every world and run (one App with one hook,
    `github_shapes.APP_ID` and ``HOOK_ID``)
    (an App's hook belongs to the App; GitHub's docs list no values for the type, see
    github/docs#41739, and ``integration`` is what App deliveries carry). ``installation.id`` follows ``Event.account``
    (the installation id as digits; another account, e.g. the foreign-account
    mutation, gets another installation id). No test/live flag.

    Signing: one secret per hook (no rotation list), so only the first secret signs.
    Both ``X-Hub-Signature-256`` (``sha256=``) and the legacy ``X-Hub-Signature``
    (``sha1=``) are sent. No timestamp, so no tolerance window.

    Delivery contract: 2xx within 10 s (30 s on GHES). No automatic retries
    (``retry_schedule_s = ()``); a user or the REST API may redeliver within 3 days
    (`redelivery_window_s`), with the same body, signature and ``X-GitHub-Delivery``:
    the harness models such redeliveries as explicit duplicates in its fault plans.
    """

    name = "github"
    event_id_name = "`X-GitHub-Delivery`"
    title = "GitHub"
    # No event time: no timestamp header, and X-GitHub-Delivery is a random GUID. Receivers order an
    # issue's or pull request's events by its updated_at, whole seconds (REST "Get an issue"), which
    # ties when a bot or an Action changes it twice in one second; the world's events then carry
    # times within that second (simulator.world.github `same_second`), so they tie exactly then.
    body_time = BodyTime("updated_at", 1_000_000, 0,
                         "it counts whole seconds and GitHub sends no event time (no timestamp header; "
                         "X-GitHub-Delivery is a random GUID), so nothing in the deliveries breaks the tie: "
                         "fetch the issue or pull request from the REST API (GET /repos/{owner}/{repo}/issues/"
                         "{number}, docs.github.com/rest/issues/issues#get-an-issue) and store what it serves, "
                         "under a row lock")
    world = "github"
    signature_headers = ("X-Hub-Signature-256", "X-Hub-Signature")
    sender_timeout_s = 10.0
    retry_schedule_s = ()
    # no automatic retries; a delivery can be redelivered by hand or through the REST API within
    # 3 days (docs.github.com, handling-failed-webhook-deliveries; providers.md, GitHub [DOC])
    gives_up = ("GitHub never retries: it stays lost unless redelivered by hand or through the REST API "
                "within 3 days")
    redelivery_window_s: ClassVar[float] = 3 * 86400.0
    # docs.github.com "Redelivering webhooks" and the REST API's "Redeliver a delivery": a redelivery
    # is of a recorded delivery (its payload kept with it, readable through "Get a delivery")
    retry_bytes_kept = ("GitHub never retries, and a redelivery (by hand or the REST API's \"Redeliver a delivery\") "
                        "resends a recorded delivery, its payload kept with it (docs.github.com \"Redelivering "
                        "webhooks\"): the same body bytes, never re-serialised")
    # docs.github.com "Webhook events and payloads": "Payloads are capped at 25 MB"
    size_cap = ("GitHub delivers payloads up to 25 MB (docs.github.com \"Webhook events and payloads\": "
                "\"Payloads are capped at 25 MB\") and never retries, so the delivery is lost unless redelivered "
                "by hand")
    default_event = "issues.opened"
    has_account = True
    #: docs.github.com ("Using webhooks with GitHub Apps"): an app's one webhook receives the
    #: events of every installation, signed with the app's one secret, and GitHub sends it no
    #: other: a delivery for another installation is valid, so there is no foreign account.
    foreign_account_valid = ("a GitHub App's webhook receives every installation's events under the app's one "
                             "secret; a delivery for another installation (installation.id) is valid, so there "
                             "is no foreign account")

    #: The checks' events (`GITHUB_CHECK_TYPES`: ``check_suite`` and ``check_run``, a CI App's), sent
    #: only to an App whose ``target.enabled_events`` lists them (``"check_suite"`` or
    #: ``"check_run"`` alone lists every action; ``"*"`` and leaving enabled_events out do not), so
    #: every other App is sent what it always was. GitHub subscribes an App with the Checks
    #: permission at write to them (docs.github.com "Webhook events and payloads", ``check_suite``:
    #: "GitHub Apps with write-level access for the Checks permission are automatically subscribed
    #: to this webhook event"); hookproof sends them to the App that says it handles them.
    optional_types = GITHUB_CHECK_TYPES
    optional_listed_only = True
    optional_noun = "optional GitHub type"

    def event_types(self) -> Mapping[str, str]:
        """Every event type the repository world emits to this App, mapped to itself (GitHub's own
        names): of the checks' types, only those it subscribed to (`subscribed`)."""
        return {t: t for t in GITHUB_EVENT_TYPES + self.subscribed}

    def installation_id(self, account: str) -> int:
        """The installation id of `account`: itself when it is digits, else derived (8 digits)."""
        return int(account) if account.isdigit() else derived_int("github-installation", account, 8)

    def payload(self, event: Event) -> dict[str, Any]:
        """The JSON payload of `event`, its installation id following ``event.account``.

        Raises ProfileError for an event that carries no GitHub payload.
        """
        payload = event.extra.get("payload")
        if not isinstance(payload, Mapping):
            raise ProfileError(f"GitHub sends no {event.type!r} event: the github profile renders the repository "
                               f"world's events (known: {', '.join(GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES)})",
                               field="event")
        body = dict(payload)
        installation = body.get("installation")
        if isinstance(installation, Mapping):
            wanted = self.installation_id(event.account)
            if installation.get("id") != wanted:
                installation = copy.deepcopy(dict(installation))
                installation["id"] = wanted
                if "node_id" in installation:
                    installation["node_id"] = node_id("IntegrationInstallation", wanted)
                body["installation"] = installation
        return body

    def envelope(self, event: Event) -> Envelope:
        body = self.payload(event)
        name, _ = github_event(event.type)
        app_id = int(event.extra.get("app_id", APP_ID))
        hook_id = int(event.extra.get("hook_id", HOOK_ID))
        return Envelope(
            event_id=event.id,
            type=event.type,
            body=canonical_json(body),
            headers={
                "Content-Type": "application/json",
                "Accept": "*/*",  # docs.github.com/webhooks/webhook-events-and-payloads, "Example webhook delivery"
                "User-Agent": f"GitHub-Hookshot/{HOOKSHOT_VERSION}",
                "X-GitHub-Event": name,
                "X-GitHub-Delivery": event.id,
                "X-GitHub-Hook-ID": str(hook_id),
                "X-GitHub-Hook-Installation-Target-Type": "integration",
                "X-GitHub-Hook-Installation-Target-ID": str(app_id),
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
