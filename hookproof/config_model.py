"""The models of `hookproof.toml`: target, observer, provider side, run, keys and counters.

Strict pydantic v2 models (unknown keys forbidden); each validator raises ValueError
naming what is wrong, which `hookproof.config` turns into one ConfigError with the file,
the field and its line. Secrets are resolved lazily (`TargetConfig.secrets()`) and never
printed: the model's repr shows the secret's source only when it is ``env:``/``file:``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from pydantic import Field, ValidationInfo, field_validator, model_validator

from hookproof.catalog_file import CATALOG_PROFILES, CatalogConfig
from hookproof.config_receiver import (  # noqa: F401 (the receiver's tables, re-exported)
    PLACEHOLDERS,
    SEED_PLACEHOLDERS,
    ChaosConfig,
    DockerTargetConfig,
    ProcessTargetConfig,
    SeedConfig,
    StartConfig,
    StrictModel,
    check_url,
)
from hookproof.errors import ConfigError
from hookproof.secret_ref import SecretRef, SecretRefError


def _names_port(url: str | None) -> bool:
    """True when `url` says ``{port}`` or names a port."""
    from urllib.parse import urlsplit

    if not url:
        return False
    if "{port}" in url:
        return True
    try:
        return urlsplit(url).port is not None
    except ValueError:
        return False


#: ``enabled_events = ["*"]``: every event, as Stripe's endpoints (docs.stripe.com/api/webhook_endpoints:
#: "['*'] indicates that all events are enabled") and GitHub's webhooks (docs.github.com "Creating
#: webhooks": ``events: ["*"]``, a wildcard for all events) are configured.
WILDCARD = "*"
WILDCARD_PROFILES: frozenset[str] = frozenset({"stripe", "github"})


def github_event_actions(names: list[str]) -> list[str]:
    """`names` with each bare GitHub event name that has actions (``"pull_request"``,
    ``"installation"``) replaced by every ``<event>.<action>`` type of it the github profile
    sends, in the profile's order (``"check_suite"`` and ``"check_run"``: every action of the
    checks' optional types, `GITHUB_CHECK_TYPES`), each type once: a GitHub App subscribes to events, not
    actions (docs.github.com "Webhook events and payloads": each event lists its actions);
    ``push`` and ``ping`` have none and stay as they are. An unknown name stays too (the
    profile's check names it)."""
    from hookproof.simulator.world.github_lifecycle import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES

    every = GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES
    out: list[str] = []
    for name in names:
        actions = [t for t in every if t.startswith(f"{name}.")] if name not in every else []
        out += [t for t in (actions or [name]) if t not in out]
    return out


def stripe_api_version(v: str) -> str:
    """`v` when it is written as a Stripe API version (``YYYY-MM-DD`` with an optional release
    name, ``2025-03-31.basil``); raises ValueError saying what it must be."""
    if not re.match(r"^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$", v):
        raise ValueError(f"must be a Stripe API version like 2024-06-20 or 2025-03-31.basil, got {v!r}")
    return v


class TargetConfig(StrictModel):
    """The receiver under test and how it is held to the provider's contract."""

    url: str | None = None
    app: str | None = None
    path: str = "/webhooks"
    profile: str = "stripe"
    secret: str | list[str] = Field(repr=False)
    environment: Literal["test", "live"] = "test"
    account: str | None = None
    #: Stripe: the endpoint is a Connect endpoint (created with ``connect=true``): Stripe sends it
    #: the connected accounts' events, and a live one their test-mode events too
    #: (stripe.com/docs/connect/webhooks). Only then does ``test-mode-to-live`` apply: an account
    #: endpoint is never sent another mode's events. ``foreign-account`` never applies to Stripe: a
    #: Connect endpoint is sent every connected account's events and never another's.
    connect: bool = False
    #: The Stripe API version the receiver's endpoint is pinned to (``YYYY-MM-DD[.name]``);
    #: events and API answers take that version's shapes (simulator.profiles.stripe_versions).
    api_version: str | None = None
    enabled_events: list[str] | None = None
    #: Stripe: the modes the shop's own Checkout opens sessions in, ``"payment"``,
    #: ``"subscription"`` or both (default: both); ``[]``: it sells nothing through Checkout.
    #: Stripe sends an endpoint every completed session of its account, whatever its mode, and a
    #: SaaS selling plans opens only ``mode=subscription`` sessions (docs.stripe.com/billing/
    #: subscriptions/build-subscriptions): the stories of certify and explore then open sessions
    #: of these modes alone. With a seed that opens the sessions, ``[target.seed] checkout_modes``
    #: says it instead (one of the two).
    checkout_modes: list[str] | None = None
    start: StartConfig | None = None
    process: ProcessTargetConfig | None = None
    docker: DockerTargetConfig | None = None
    seed: SeedConfig | None = None
    #: ``[target.signing]``: the generic-hmac profile's signing scheme and delivery contract,
    #: the fields of `GenericHmacSettings` (header names, signed content, retry schedule…);
    #: for standard-webhooks and svix, `StandardWebhooksSettings` (``secret_encoding``: a
    #: Polar secret is the HMAC key as given, ``"raw"``); read by `signing_settings`.
    signing: dict[str, Any] | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        # "{port}": a free port hookproof picks per run (with a receiver it starts)
        if v is not None:
            check_url(v.replace("{port}", "1"))
        return v

    @field_validator("app")
    @classmethod
    def _app(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[\w.]+:[\w.]+$", v):
            raise ValueError(f"must look like 'module:attribute', got {v!r}")
        return v

    @field_validator("account", mode="before")
    @classmethod
    def _account(cls, v: object) -> object:
        """A whole number is the account as text: Mercado Pago's seller id is a number in its
        notifications (``"user_id": 44444``, the "Webhooks" page), so ``account = 123456789``
        is ``"123456789"``. Anything else but text is refused, as before."""
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("secret")
    @classmethod
    def _secret(cls, v: str | list[str]) -> str | list[str]:
        values = [v] if isinstance(v, str) else v
        if not values or any(not s.strip() for s in values):
            raise ValueError("must be a non-blank string (literal, env:NAME or file:PATH) or a list of them")
        for s in values:
            SecretRef.parse(s)  # SecretRefError is a ValueError: pydantic reports it on the field
        return v

    @field_validator("checkout_modes")
    @classmethod
    def _checkout_modes(cls, v: list[str] | None) -> list[str] | None:
        from hookproof.scenarios.seeding import CHECKOUT_MODES

        if v is not None and (unknown := [m for m in v if m not in CHECKOUT_MODES]):
            raise ValueError(f"a shop's Checkout opens sessions in {' or '.join(CHECKOUT_MODES)} mode, "
                             f"not {unknown[0]!r} ([] when it sells nothing through Checkout)")
        return None if v is None else list(dict.fromkeys(v))

    def story_checkout_modes(self) -> frozenset[str] | None:
        """The modes the stories may open Checkout Sessions in as `checkout_modes` says (None: the
        default, both); with a seed, its hook decides (`seeding.SeedHook.story_checkout_modes`)."""
        return None if self.checkout_modes is None else frozenset(self.checkout_modes)

    def shop_checkout_modes(self) -> frozenset[str] | None:
        """The shop's Checkout modes wherever the config says them: `checkout_modes`, else a seed's
        own ``checkout_modes`` (for explore and storm, which run no seed); None: both."""
        if self.checkout_modes is not None:
            return frozenset(self.checkout_modes)
        if self.seed is not None and "checkout_modes" in self.seed.model_fields_set:
            return frozenset(self.seed.checkout_modes)
        return None

    @field_validator("api_version")
    @classmethod
    def _api_version(cls, v: str | None, info: ValidationInfo) -> str | None:
        """A Stripe API version under the stripe profile; under shopify the one Admin API version
        its bodies are shaped at (`SHOPIFY_API_VERSION`, its X-Shopify-API-Version), any other
        refused saying so; under another profile none (`_one_target` names the profile)."""
        if v is None:
            return v
        profile = info.data.get("profile")
        if profile == "shopify":
            from hookproof.simulator.world.shopify import SHOPIFY_API_VERSION

            if v != SHOPIFY_API_VERSION:
                raise ValueError(f"the shopify profile sends Shopify's Admin API {SHOPIFY_API_VERSION} resources alone "
                                 f"(X-Shopify-API-Version: {SHOPIFY_API_VERSION}), got {v!r}: a subscription at "
                                 "another version would be sent other shapes, which hookproof does not make; set "
                                 f"{SHOPIFY_API_VERSION} or leave api_version out")
            return v
        if profile not in (None, "stripe"):
            return v  # `_one_target` says the profile has no API versions
        return stripe_api_version(v)

    @field_validator("enabled_events")
    @classmethod
    def _wildcard(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        """``["*"]``: None, every type the profile sends (`WILDCARD`). Under the github profile,
        a bare event name (``"pull_request"``) is every action of it (`github_event_actions`)."""
        if v is None:
            return v
        if WILDCARD not in v:
            return github_event_actions(v) if info.data.get("profile") == "github" else v
        profile = info.data.get("profile")
        if profile is None:  # an unknown profile: its own error says so
            return v
        if profile not in WILDCARD_PROFILES:
            raise ValueError(f"{WILDCARD!r} enables every event on Stripe and GitHub endpoints; a {profile} "
                             "endpoint lists its types (leave enabled_events out: every type)")
        if v != [WILDCARD]:
            raise ValueError(f"{WILDCARD!r} already enables every event: list it alone")
        return None

    @field_validator("profile")
    @classmethod
    def _profile(cls, v: str) -> str:
        from hookproof.simulator.profiles import PROFILES

        if v not in PROFILES:
            raise ValueError(f"unknown profile {v!r} (known: {', '.join(PROFILES)})")
        return v

    @model_validator(mode="after")
    def _one_target(self) -> "TargetConfig":
        if (self.url is None) == (self.app is None):
            raise ValueError("give exactly one of 'url' or 'app'")
        controlled = [k for k in ("start", "process", "docker") if getattr(self, k) is not None]
        if len(controlled) > 1:
            raise ValueError(f"give at most one of 'start', 'process' or 'docker', got {', '.join(controlled)}")
        if (self.process or self.docker) and not (self.url and re.match(r"^https?://[^/]+:(\d+|\{port\})", self.url)):
            raise ValueError("url: with [target.process] or [target.docker], url must name the receiver's port "
                             "(or {port}: a free one per run)")
        if self.url and "{port}" in self.url and not controlled:
            raise ValueError("url: {port} (a free port per run) needs a receiver hookproof starts: "
                             "[target.start], [target.process] or [target.docker]")
        if self.start is not None and self.start.port is None and self.start.uses_port() and not _names_port(self.url):
            raise ValueError("start: it says {port}, but no port is known: write {port} in target.url (a free "
                             "port per run), name the port in target.url, or give target.start.port")
        if self.seed is not None and self.seed.creates and self.profile != "stripe":
            raise ValueError(f"seed.creates: only the stripe profile's API creates objects, not {self.profile!r}'s")
        if self.checkout_modes is not None and self.profile != "stripe":
            raise ValueError(f"checkout_modes: Stripe Checkout's session modes, not the {self.profile!r} profile's")
        if self.checkout_modes is not None and self.seed is not None \
                and "checkout_modes" in self.seed.model_fields_set:
            raise ValueError("checkout_modes: give the shop's Checkout modes once, in [target] or (for a seed that "
                             "opens the sessions) in [target.seed], not in both")
        if self.checkout_modes is not None and self.seed is not None and "checkout.session" in self.seed.creates:
            raise ValueError("checkout_modes: the seed opens the sessions (creates has \"checkout.session\"), so "
                             "its modes go in [target.seed] checkout_modes")
        no_checkout = (self.checkout_modes == [] or (self.seed is not None and "checkout_modes" in
                                                      self.seed.model_fields_set and not self.seed.checkout_modes))
        if no_checkout and (listed := [e for e in self.enabled_events or () if e.startswith("checkout.session.")]):
            where = "checkout_modes" if self.checkout_modes == [] else "seed.checkout_modes"
            raise ValueError(f"enabled_events: {listed[0]} is listed while {where} = [] says the shop "
                             "sells nothing through Checkout, so no story opens a session to send it; remove the "
                             "checkout.session.* types or name the shop's checkout modes")
        if self.connect and self.profile != "stripe":
            raise ValueError(f"connect: only the stripe profile has Connect endpoints, not {self.profile!r}")
        if self.signing is not None and self.profile not in ("generic-hmac", "standard-webhooks", "svix"):
            raise ValueError(f"signing: only the generic-hmac, standard-webhooks and svix profiles take signing "
                             f"settings; the {self.profile} profile signs as its provider does")
        if self.api_version is not None and self.profile not in ("stripe", "shopify"):
            raise ValueError(f"api_version: only the stripe profile (and shopify's one, 2024-10) has API versions, "
                             f"not {self.profile!r}: the {self.profile} profile sends its provider's one shape")
        if self.enabled_events is not None and self.profile not in CATALOG_PROFILES:  # those: catalog_file
            from hookproof.simulator.profiles import get_profile

            prof = get_profile(self.profile)
            names = set(prof.event_types()) | set(prof.event_types().values()) | set(prof.optional_types)
            unknown = [e for e in self.enabled_events if e not in names and e not in self._real_types()]
            if unknown and self.profile == "stripe":
                raise ValueError(f"enabled_events: Stripe has no event type {unknown[0]!r} "
                                 f"({stripe_type_hint(unknown[0])})")
            if unknown and self.profile == "shopify":
                raise ValueError(f"enabled_events: Shopify has no webhook topic {unknown[0]!r} "
                                 f"({shopify_topic_hint(unknown[0])})")
            if unknown:
                known = ", ".join(sorted(set(prof.event_types().values())))
                raise ValueError(f"enabled_events: the {prof.title} profile sends no event {unknown[0]!r} (known: {known})")
        return self

    def _real_types(self) -> frozenset[str]:
        """The provider's real event types the config may enable though the profile does not model
        them: Stripe's (`simulator.profiles.stripe_types.STRIPE_WEBHOOK_TYPES`), Shopify's topics
        (`simulator.profiles.shopify_topics.SHOPIFY_WEBHOOK_TOPICS`); none for others."""
        if self.profile == "shopify":
            from hookproof.simulator.profiles.shopify_topics import SHOPIFY_WEBHOOK_TOPICS

            return SHOPIFY_WEBHOOK_TOPICS
        if self.profile != "stripe":
            return frozenset()
        from hookproof.simulator.profiles.stripe_types import STRIPE_WEBHOOK_TYPES

        return STRIPE_WEBHOOK_TYPES

    def unmodelled_types(self) -> list[str]:
        """The types `enabled_events` lists that the provider sends and the profile does not model
        (a Stripe endpoint's real ``invoice.finalized``; ``account.updated`` but on a Connect
        endpoint, `stripe.CONNECT_EVENT_TYPES`), in the config's order: no run sends them, so
        their handling is not certified (`unsent.unmodelled_note`)."""
        if self.enabled_events is None:
            return []
        from hookproof.simulator.profiles import get_profile

        prof = get_profile(self.profile)
        types = prof.event_types()
        names = set(types) | set(types.values()) | set(prof.optional_types)
        if self.connect:  # a Connect endpoint is sent its connected account's account.updated
            from hookproof.simulator.profiles.stripe import CONNECT_EVENT_TYPES

            names |= set(CONNECT_EVENT_TYPES)
        return [e for e in dict.fromkeys(self.enabled_events) if e not in names and e in self._real_types()]

    @property
    def live(self) -> bool:
        return self.environment == "live"

    def secrets(self, base_dir: Path | None = None) -> list[str]:
        """The resolved secrets. Raises ConfigError naming the source (never the value)."""
        values = [self.secret] if isinstance(self.secret, str) else list(self.secret)
        return [_resolve_secret(v, base_dir) for v in values]

    def signing_settings(self) -> Any:
        """``[target.signing]`` as a validated `GenericHmacSettings` (generic-hmac) or
        `StandardWebhooksSettings` (standard-webhooks, svix), or None (no table: the
        profile's defaults). ``false`` for ``id_header``, ``timestamp_header`` or
        ``type_header`` means no such header.

        Raises ConfigError naming ``target.signing.<field>`` (no line: `hookproof.config`
        adds it) for an unknown key or a value the scheme refuses."""
        if self.signing is None:
            return None
        from hookproof.simulator.errors import ProfileError
        from hookproof.simulator.profiles.generic_hmac import GenericHmacSettings, load_settings

        if self.profile != "generic-hmac":
            from hookproof.simulator.profiles.standard_webhooks import load_standard_settings

            try:
                return load_standard_settings(self.signing, self.profile)
            except ProfileError as exc:
                message = str(exc).removeprefix(f"{self.profile} setting {exc.field}: ")
                raise ConfigError(message, field=f"target.signing.{exc.field}") from None

        try:
            return load_settings(self.signing)
        except ProfileError as exc:
            field = (exc.field or "").split(".")[0]
            message = str(exc).removeprefix(f"generic-hmac setting {exc.field}: ").removeprefix("Value error, ")
            if field not in GenericHmacSettings.model_fields:
                import difflib

                close = difflib.get_close_matches(field, list(GenericHmacSettings.model_fields), n=1, cutoff=0.7)
                message = "unknown key" + (f" (did you mean {close[0]}?)" if close else
                                           f" (the keys: {', '.join(GenericHmacSettings.model_fields)})")
            elif field in ("id_header", "timestamp_header", "type_header") and "valid string" in message:
                import json

                message = f"a header name, or false for none (got {json.dumps(self.signing[field], default=str)})"
            elif field == "success_statuses" and ("valid integer" in message or "valid tuple" in message):
                import json

                message = ("a list of the 2xx statuses the provider counts as delivered, such as [200] "
                           f"(got {json.dumps(self.signing[field], default=str)})")
            raise ConfigError(message, field=f"target.signing.{field}" if field else "target.signing") from None

    def stripe_types(self) -> set[str] | None:
        """The enabled events as Stripe types (None: all of the profile's)."""
        if self.enabled_events is None:
            return None
        from hookproof.simulator.profiles import get_profile

        prof = get_profile(self.profile)
        types = {**prof.event_types(), **{t: t for t in prof.optional_types}}
        back = {v: k for k, v in types.items()}
        return {e if e in types else back.get(e, e) for e in self.enabled_events}


class ObserverConfig(StrictModel):
    """How the receiver shows its effects: sql, http, sink or python."""

    kind: Literal["sql", "http", "sink", "python"]
    url: str | None = None
    effects: str | None = None
    state: str | None = None
    states: dict[str, str] = Field(default_factory=dict)
    state_fields: dict[str, dict[str, str]] = Field(default_factory=dict)
    counter: str | None = None
    callable: str | None = None
    timeout_s: float = Field(default=5.0, gt=0, le=120)

    @field_validator("states")
    @classmethod
    def _states(cls, v: dict[str, str]) -> dict[str, str]:
        """One query per object kind, named as the world names them (``invoice``,
        ``payment_intent``, ``checkout.session``); ``subscription`` is `state`'s."""
        for kind, query in v.items():
            if not re.match(r"^[A-Za-z][A-Za-z0-9_.]*$", kind):  # a catalog's kinds may be camelCase
                raise ValueError(f"{kind!r} is not an object kind (e.g. invoice, payment_intent, checkout.session)")
            if not query.strip():
                raise ValueError(f"the {kind} state query is empty")
        return v

    @field_validator("state_fields")
    @classmethod
    def _state_fields(cls, v: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Per object kind, extra columns of its state query and the path of each in the
        event as sent (``price = "data.object.items.data.0.price.id"``; ``[0]`` is ``.0``)."""
        from hookproof.scenarios.state_fields import COLUMN, RESERVED, normal_path

        for kind, columns in v.items():
            if not columns:
                raise ValueError(f"{kind}: declares no field (e.g. {kind} = {{ price = \"data.object.…\" }})")
            for column, path in columns.items():
                if not COLUMN.match(column) or column in RESERVED:
                    raise ValueError(f"{kind}: {column}: not a column name for a state field (a plain SQL "
                                     f"column name other than {', '.join(sorted(RESERVED))})")
                if not normal_path(path) or any(not p for p in normal_path(path).split(".")):
                    raise ValueError(f"{kind}: {column}: {path!r} is not a path (write data.object.items.data.0.price.id)")
        return {kind: {c: normal_path(p) for c, p in columns.items()} for kind, columns in v.items()}

    @property
    def state_kinds(self) -> frozenset[str] | None:
        """The object kinds whose states the SQL queries read (``subscription`` for `state`,
        the keys of `states`; empty: none), or None for the ``http`` and ``python`` observers,
        whose answers say which kinds they cover."""
        if self.kind in ("http", "python"):
            return None
        return frozenset(self.states) | ({"subscription"} if self.state else frozenset())

    @model_validator(mode="after")
    def _fields(self) -> "ObserverConfig":
        if self.kind == "sql":
            if not self.url:
                raise ValueError("the sql observer needs 'url' (a SQLAlchemy URL)")
            if not re.match(r"^[a-z][a-z0-9+]*://", self.url):
                raise ValueError(f"url: not a SQLAlchemy URL: {self.url!r}")
            _check_sql_url(self.url)
            if not self.effects:
                raise ValueError("the sql observer needs 'effects' (a query returning a business_key column)")
        if self.kind == "sink" and (self.state or self.states or self.counter) and not self.url:
            raise ValueError("the sink observer reads states and counters from the SQL database at 'url'; give 'url'")
        if self.kind in ("http", "python") and (self.state or self.states or self.counter):
            raise ValueError(f"state, states and counter are SQL queries: the {self.kind} observer returns its "
                             "states itself")
        if self.state and "subscription" in self.states:
            raise ValueError("states: 'subscription' is already read by 'state'; give one of them")
        if self.state_fields and self.kind in ("http", "python"):
            raise ValueError(f"state_fields: are columns of the SQL state queries; the {self.kind} observer "
                             "returns its states itself")
        for kind in self.state_fields:
            if kind not in (self.state_kinds or frozenset()):
                raise ValueError(f"state_fields.{kind}: no state query reads {kind} objects (give "
                                 f"{'state' if kind == 'subscription' else f'states.{kind}'} first)")
        if self.kind == "http":
            if not self.url:
                raise ValueError("the http observer needs 'url' (an absolute http(s) URL)")
            try:
                check_url(self.url)
            except ValueError as exc:
                raise ValueError(f"url: {exc}") from None
        if self.kind == "python":
            if not self.callable:
                raise ValueError("the python observer needs 'callable' as 'module:attribute'")
            if not re.match(r"^[\w.]+:[\w.]+$", self.callable):
                raise ValueError(f"callable: must look like 'module:attribute', got {self.callable!r}")
        return self


def _check_sql_url(url: str) -> None:
    """Raise ValueError when SQLAlchemy cannot parse `url` or has no driver for it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ValueError("url: not a SQLAlchemy URL (dialect+driver://user:password@host/database)") from None
    try:
        parsed.get_dialect()
    except NoSuchModuleError:
        raise ValueError(f"url: SQLAlchemy has no dialect {parsed.drivername!r} (is its driver installed?)") from None
    except ImportError as exc:
        raise ValueError(f"url: the driver for {parsed.drivername!r} is not installed ({exc.name or exc})") from None


class ProviderConfig(StrictModel):
    """Where the simulator's provider API and effect sink listen."""

    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)
    api_key: str = "sk_test_51HookproofSimulatorKey000000000000"  # simulator.server.state.DEFAULT_API_KEY


class SettleConfig(StrictModel):
    """Liveness: effects must be stable for `window_s`, waited for at most `deadline_s`; reads
    missing something owed are waited for while they change, and `stall_s` once they stop."""

    window_s: float = Field(default=0.3, gt=0, le=600)
    deadline_s: float = Field(default=15.0, gt=0, le=3600)
    stall_s: float = Field(default=5.0, gt=0, le=3600)
    interval_s: float = Field(default=0.05, gt=0, le=60)


class RunConfig(StrictModel):
    """The run: seed, retry time scale, scenario selection, concurrency of bursts."""

    seed: int | None = None
    time_scale: float = Field(default=1e-6, gt=0, le=1)
    scenarios: list[str] | None = None
    burst: int = Field(default=8, ge=2, le=100)
    sender_timeout_s: float | None = Field(default=None, gt=0, le=600)
    #: Events `mass-redelivery-window` delivers and then replays (more than a bounded dedupe keeps).
    redelivery_window: int = Field(default=200, ge=1, le=100_000)
    #: Whole-run deadline of certify in seconds: then it stops, heals and writes a partial report.
    max_duration_s: float = Field(default=900.0, gt=0, le=7 * 86400)
    #: Once the receiver rejected valid events, the wall time (seconds) each later scenario's retry schedules
    #: share: each delivery sent one after another gets this / their number, at least
    #: `scenarios.runner.RETRY_FLOOR_S` (2 s; this, when smaller).
    retry_budget_s: float = Field(default=10.0, gt=0, le=86400)

    @field_validator("scenarios")
    @classmethod
    def _scenarios(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            from hookproof.scenarios.catalog import CATALOG

            unknown = [s for s in v if s not in CATALOG]
            if unknown:
                raise ValueError(unknown_scenario(unknown[0], CATALOG))
        return v


#: A counter's key naming the customer an amount belongs to, in each profile's events (the
#: example a constant counter key's error gives; `config.parse_config` picks the config's profile's).
COUNTER_KEY_EXAMPLES: dict[str, str] = {
    "stripe": "{data.object.customer}", "generic-hmac": "{data.object.customer}",
    "standard-webhooks": "{data.object.customer}", "svix": "{data.object.customer}",
    "paddle": "{data.customer_id}", "shopify": "{customer.id}", "mercadopago": "{data.id}",
    "github": "{repository.id}",
}


class CounterConfig(StrictModel):
    """`[counters."<event type>"]`: the counter an event of that type moves.

    `key` is a template over the event (``"{data.object.customer}"``), `amount` the
    dotted path of an integer in it (``"data.object.amount_paid"``, minor units; a string of
    digits counts as that integer: Paddle's ``data.details.totals.grand_total``), or of a
    decimal string in major units, read exactly in its currency's minor units (Shopify's
    ``total_price`` ``"60.42"`` is 6042, by the ``currency`` beside it or at the top of the event:
    `scenarios.business_keys.minor_units`). Besides
    hookproof's own money keys while `Config.builtin_keys` is on and a catalog's declared
    amounts, counters are the only amounts compared: a team's key is never money by its name.
    `since` (the path of the amount before the event: a cumulative amount's change is counted)
    and `sign` (-1: the amount subtracts) let a refund reverse a credit; otherwise a counter only grows.
    """

    key: str = Field(min_length=1)
    #: The path of the amount in the event, or a whole number every event of the type moves the
    #: counter by (``amount = 1`` counts events: a seat per membership, ``sign = -1`` on its removal).
    amount: str | int
    #: The path of the amount's value before the event (``data.previous_attributes.amount_refunded``):
    #: the event moves the counter by the change of a cumulative integer amount (a Stripe charge's
    #: ``amount_refunded`` grows with each refund), not by the amount itself.
    since: str | None = Field(default=None, min_length=1)
    #: 1: the amount adds to the counter; -1: it subtracts (a refund reversing a credit).
    sign: int = 1

    @field_validator("amount", mode="before")
    @classmethod
    def _amount(cls, v: Any) -> Any:
        """A path, or a whole number of at least 1 (TOML's true is no number; a sign says -)."""
        if isinstance(v, bool) or (isinstance(v, int) and v < 1) or not isinstance(v, (str, int)) or v == "":
            shown = str(v).lower() if isinstance(v, bool) else repr(v)
            raise ValueError(f"is {shown}: a counter's amount is the path of an amount in the event "
                             "(\"data.object.amount_paid\") or a whole number each event counts (1: one per event; "
                             "sign = -1 subtracts it)")
        return v

    @field_validator("since")
    @classmethod
    def _fixed_amount_has_no_since(cls, v: str | None, info: ValidationInfo) -> str | None:
        """`since` counts the change of an amount in the event: a fixed amount has none."""
        amount = info.data.get("amount")
        if v is not None and isinstance(amount, int):
            raise ValueError(f"a fixed amount ({amount}) has no earlier value in the event; since goes with an "
                             "amount path")
        return v

    @field_validator("sign", mode="before")
    @classmethod
    def _sign(cls, v: Any) -> Any:
        """Refuse every sign but 1 and -1 (a weight of 2 or 0.5 is no sign; TOML's true is no number)."""
        if isinstance(v, bool) or v not in (1, -1) or not isinstance(v, int):
            shown = str(v).lower() if isinstance(v, bool) else repr(v)
            raise ValueError(f"is {shown}: a counter's sign is 1 (each event adds its amount) or -1 (it subtracts "
                             "it: a refund reversing a credit)")
        return v

    @field_validator("key")
    @classmethod
    def _key_names_a_field(cls, v: str) -> str:
        """Refuse a constant key (``"total"``): one shop-wide counter sums every scenario's and
        every run's events, while the truth it is compared with is one scenario's, so it would
        fail on a correct receiver. Raises ValueError saying so and what to write instead."""
        if not re.search(r"\{[^{}]+\}", v):
            raise ValueError(
                f"{v!r} names no field of the event, so every event moves one shop-wide counter; "
                "hookproof compares each counter with the events one scenario sent, and a shop-wide total "
                "also sums the other scenarios and earlier runs, so it would fail on a correct receiver. "
                f"Name the object the amount belongs to, e.g. key = \"{COUNTER_KEY_EXAMPLES['stripe']}\" "
                "(README: Counters)")
        return v


#: A value a condition compares with (TOML's scalars).
Scalar = str | int | float | bool


class KeyRule(StrictModel):
    """`[business_keys."<event type>"]` as a table: the effect's `key` template, made only
    when every path of `when` has its value (or one of a list): a path over the event as
    sent (``"pull_request.merged" = true``), or ``fetched.<path>`` over the object as the
    provider's API serves it at that event (``"fetched.status" = "approved"`` for a thin
    notification); and never when a path of `unless` has one of its values (a field the
    event lacks has none: a Stripe payment intent an invoice made, ``"data.object.description"
    = ["Subscription creation", "Subscription update"]``, the events a shop's own payments
    are told apart from). Without either the key is made for every event of the type, as the
    plain template ``"<event type>" = "<key>"`` is."""

    key: str = Field(min_length=1)
    when: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    unless: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)

    @field_validator("when", "unless")
    @classmethod
    def _when(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not v:
            raise ValueError("names no condition (e.g. when = { \"data.object.status\" = \"paid\" })")
        for path, value in v.items():
            if not path or path.startswith(".") or path.endswith(".") or ".." in path:
                raise ValueError(f"{path!r} is not a dotted path (e.g. data.object.status or fetched.status)")
            if isinstance(value, list) and not value:
                raise ValueError(f"{path}: an empty list matches nothing")
        return v

    def allowed(self) -> dict[str, tuple[Any, ...]]:
        """Path → the values it may have."""
        return {p: tuple(v) if isinstance(v, list) else (v,) for p, v in self.when.items()}

    def refused(self) -> dict[str, tuple[Any, ...]]:
        """Path → the values it may not have (`unless`)."""
        return {p: tuple(v) if isinstance(v, list) else (v,) for p, v in self.unless.items()}


def unknown_scenario(name: str, ids: Iterable[str]) -> str:
    """The one line for a scenario id no catalog has, naming the nearest ids when some are close:
    ``unknown scenario id 'dupicate-sequential' (did you mean duplicate-sequential? see 'hookproof
    scenarios')``."""
    hint = nearest(name, ids)
    return f"unknown scenario id {name!r} ({hint + ' ' if hint else ''}see 'hookproof scenarios')"


def nearest(name: str, names: Iterable[str]) -> str | None:
    """``did you mean A, B or C?``: the closest of `names` to `name` (`difflib`, up to three),
    or None when none is close."""
    import difflib

    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + (close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}") + "?"


def stripe_type_hint(name: str) -> str:
    """What to say of `name`, a type Stripe does not send: the closest of Stripe's real types
    (`difflib`, up to three; `simulator.profiles.stripe_types`), else where Stripe lists them."""
    from hookproof.simulator.profiles.stripe_types import STRIPE_WEBHOOK_TYPES

    return nearest(name, sorted(STRIPE_WEBHOOK_TYPES)) or "Stripe's event types: docs.stripe.com/api/events/types"


def shopify_topic_hint(name: str) -> str:
    """What to say of `name`, a topic Shopify does not send: the closest of Shopify's real topics
    and its compliance topics (`difflib`, up to three; `simulator.profiles.shopify_topics`), else
    where Shopify lists them."""
    from hookproof.simulator.profiles.shopify_topics import SHOPIFY_WEBHOOK_TOPICS
    from hookproof.simulator.world.shopify import SHOPIFY_COMPLIANCE_TOPICS

    return (nearest(name, sorted(SHOPIFY_WEBHOOK_TOPICS | set(SHOPIFY_COMPLIANCE_TOPICS)))
            or "Shopify's topics: shopify.dev/docs/api/admin-graphql/latest/enums/WebhookSubscriptionTopic")


def sent_types(name: str, types: Mapping[str, str]) -> str:
    """What to say of event type `name` a profile does not send: the closest of the names it
    sends (`difflib`, up to three), then every one, in the profile's spelling and order
    (`types`: `Profile.event_types`, world type → provider's name)."""
    import difflib

    names = list(dict.fromkeys(types.values()))
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    every = f"it sends: {', '.join(names)}"
    if not close:
        return every
    mean = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    return f"did you mean {mean}? {every}"


class Config(StrictModel):
    """The whole `hookproof.toml`.

    `business_keys` maps an event type (the profile's own name) to a business-key
    template over the event as the provider sends it, a `KeyRule` (a template made only
    when its conditions hold), a list of them (``[[business_keys."<type>"]]``: the first rule
    whose conditions hold makes the key), or ``false`` (not effectful);
    types not listed keep hookproof's built-in key, unless `builtin_keys` is false (then
    only the listed types are effectful). A `[catalog]`'s own keys are the user's, not
    built in: `builtin_keys = false` leaves them. `counters` maps an event type to the counter
    it moves. Amounts are compared for the counters, a catalog type's declared ``amount``
    and, while `builtin_keys` is on, hookproof's own money keys (``refund:``, ``license:``,
    ``renewal:``, ``fulfillment:``; `scenarios.business_keys.money_prefixes`), never for a
    team key by its name. Both are checked against a sample event of each type when the
    file is read (`key_mapping`).
    """

    target: TargetConfig
    #: how the receiver is read; None only for a config that `hookproof send` and `events` read
    #: (the commands that judge the receiver ask for it through `observed`)
    observer: ObserverConfig | None = None
    provider: ProviderConfig = ProviderConfig()
    settle: SettleConfig = SettleConfig()
    run: RunConfig = RunConfig()
    chaos: ChaosConfig = ChaosConfig()
    builtin_keys: bool = True
    #: a table value is a `KeyRule`, an array of tables (``[[business_keys."<type>"]]``) several,
    #: read by `key_mapping` (its errors name the entry's line)
    business_keys: dict[str, str | Literal[False] | dict[str, Any] | list[dict[str, Any]]] = Field(default_factory=dict)
    counters: dict[str, CounterConfig] = Field(default_factory=dict)
    #: The user's own event types (`hookproof.catalog_file`), for generic-hmac, standard-webhooks, svix.
    catalog: CatalogConfig | None = None

    @property
    def observed(self) -> ObserverConfig:
        """The ``[observer]`` table. Raises ConfigError (``observer: is required``, naming the
        file) when the config has none: certify, explore, replay and the storm read the receiver
        through it."""
        if self.observer is None:
            raise ConfigError("is required: certify, explore, replay and storm read what the receiver applied "
                              "through it (hookproof init writes one)", path=self.source, field="observer", line=1)
        return self.observer

    def profile(self) -> Any:
        """The target's profile, built from the whole config (certify, explore, send, replay,
        events and the storm all take it from here): with ``[catalog]``, sending the user's
        catalog; for standard-webhooks and svix, each type in the spelling the config names
        it (`event_names`); for generic-hmac, signing as ``[target.signing]`` says
        (`TargetConfig.signing_settings`). Raises ConfigError."""
        settings = self.target.signing_settings()  # generic-hmac's [target.signing], else None
        if self.catalog is not None:
            from hookproof.catalog_file import catalog_profile

            built = catalog_profile(self.target.profile, self.catalog, self.base_dir, settings)
            if built.no_event_id is not None and self.business_keys:  # the team's keys are what it dedupes on
                built.dedupe_on(self.key_templates())
            return built
        from hookproof.simulator.profiles import get_profile

        return get_profile(self.target.profile, settings=settings, names=self.event_names() or None,
                           subscribed=self.subscribed_types())

    def port_uses(self, chaos: bool) -> list[tuple[int, str]]:
        """What a run takes from ``[chaos] ports`` (`simulator.serving.PortRange`), as (ports,
        what for) pairs, in the order they are taken: the receiver's own when `target.url` says
        ``{port}`` (or names a port inside the range), the provider API and effect sink unless
        ``[provider] port`` names one (or it listens off 127.0.0.1), and with `chaos` (``certify
        --chaos``) the fault proxy and each replica beyond the first (``[chaos] replicas``).
        Empty when no range is set."""
        if self.chaos.ports is None:
            return []
        from urllib.parse import urlsplit

        first, last = self.chaos.ports
        uses: list[tuple[int, str]] = []
        url = self.target.url or ""
        try:
            fixed = None if "{port}" in url else urlsplit(url).port
        except ValueError:
            fixed = None
        if "{port}" in url:
            uses.append((1, "the receiver's {port} in target.url"))
        elif fixed is not None and first <= fixed <= last:
            uses.append((1, f"the receiver's port {fixed} in target.url"))
        if not self.provider.port and self.provider.host in ("127.0.0.1", "localhost"):
            uses.append((1, "the provider API and effect sink ([provider] port names none)"))
        if chaos:
            uses.append((1, "the fault proxy"))
            uses.append((self.chaos.replicas - 1, f"the replicas beyond the first ([chaos] replicas = "
                                                  f"{self.chaos.replicas})"))
        return uses

    def check_port_range(self, chaos: bool) -> None:
        """Raise ConfigError (field ``chaos.ports``) when ``[chaos] ports`` holds fewer ports
        than the run takes (`port_uses`; `chaos`: ``certify --chaos``), saying how many it
        needs and for what. A range holding exactly as many is accepted."""
        if self.chaos.ports is None:
            return
        first, last = self.chaos.ports
        held, uses = last - first + 1, self.port_uses(chaos)
        needed = sum(n for n, _ in uses)
        if held >= needed:
            return
        what = ", ".join(f"{n} for {use}" for n, use in uses)
        raise ConfigError(f"ports {first}-{last} hold {held} port(s); this run{' with --chaos' if chaos else ''} "
                          f"needs {needed}: {what} (widen the range)", field="chaos.ports")

    def key_templates(self) -> list[str]:
        """The key templates ``[business_keys]`` gives, in its order (a rule table's ``key``, each
        of a list's); none for a type mapped to ``false``."""
        out: list[str] = []
        for value in self.business_keys.values():
            rules = value if isinstance(value, list) else [value]
            out += [r if isinstance(r, str) else str(r.get("key")) for r in rules
                    if isinstance(r, str) or (isinstance(r, dict) and r.get("key"))]
        return out

    def enabled_types(self) -> set[str] | None:
        """The world types of ``target.enabled_events`` (None: every type the profile sends): with
        ``[catalog]`` its names as listed (a catalog's names are its own, even one the billing
        world's renaming spells alike: standard-webhooks' ``subscription.created``), else
        `TargetConfig.stripe_types`."""
        if self.catalog is not None and self.target.enabled_events is not None:
            return set(self.target.enabled_events)
        return self.target.stripe_types()

    def subscribed_types(self) -> list[str]:
        """The profile's optional types (`Profile.optional_types`: Shopify's compliance topics,
        Stripe's ``invoice.payment_succeeded``) the config names (`named_types`; where the profile
        says `Profile.optional_listed_only`, ``target.enabled_events`` alone), in its order: the
        endpoint is subscribed to those, and is sent none of the others (an endpoint sent every
        type, enabled_events left out or ``"*"``, is not sent them unnamed)."""
        from hookproof.simulator.profiles import get_profile

        if self.catalog is not None:
            return []
        prof = get_profile(self.target.profile)
        named = ([name for field, name in self.named_types() if field == "target.enabled_events"]
                 if prof.optional_listed_only else [name for _, name in self.named_types()])
        return list(dict.fromkeys(name for name in named if name in prof.optional_types))

    def unsubscribed_named(self) -> list[str]:
        """The optional types (`Profile.optional_types`) that ``[business_keys]`` or ``[counters]``
        names but the endpoint is not subscribed to (`subscribed_types`: a Stripe endpoint whose
        ``target.enabled_events`` does not list ``invoice.payment_succeeded``), in the config's
        order: no run sends them (`unsent.unmodelled_note` says how to be sent them)."""
        if self.catalog is not None:
            return []
        from hookproof.simulator.profiles import get_profile

        optional = get_profile(self.target.profile).optional_types
        subscribed = set(self.subscribed_types())
        return list(dict.fromkeys(name for _, name in self.named_types()
                                  if name in optional and name not in subscribed))

    def named_types(self) -> list[tuple[str, str]]:
        """``(field, event type)`` of every type the config names: ``target.enabled_events``,
        then the entries of ``[business_keys]`` and ``[counters]``, in that order."""
        return ([("target.enabled_events", e) for e in self.target.enabled_events or ()]
                + [(f'business_keys."{n}"', n) for n in self.business_keys]
                + [(f'counters."{n}"', n) for n in self.counters])

    def event_names(self) -> dict[str, str]:
        """Stripe type -> the name to send, for each type of standard-webhooks or svix (no
        fixed catalog: the names are the user's) that the config names in a spelling other
        than the profile's default renaming (``payment_intent.succeeded`` where the default
        sends ``payment.succeeded``); empty for other profiles, with ``[catalog]``, or when
        every named type is spelled as the default.

        Raises ConfigError naming the field when one type is spelled two ways.
        """
        from hookproof.simulator.profiles import RENAMING_PROFILES, get_profile

        if self.catalog is not None or self.target.profile not in RENAMING_PROFILES:
            return {}
        default = get_profile(self.target.profile).event_types()
        back = {v: k for k, v in default.items()}
        chosen: dict[str, tuple[str, str]] = {}
        for field, name in self.named_types():
            world_type = name if name in default else back.get(name)
            if world_type is None:
                continue  # not a type the profile sends: the field's own check says so
            first = chosen.setdefault(world_type, (field, name))
            if first[1] != name:
                raise ConfigError(f"{name!r} and {first[1]!r} ({first[0]}) are one event type spelled two ways; "
                                  f"the names the config lists are the names sent: write one spelling throughout",
                                  field=field)
        return {t: name for t, (_, name) in chosen.items() if name != default[t]}

    def sample_story(self) -> list[Any]:
        """One event of every type the profile sends, each from its smallest story
        (`simulator.world.emit_events`), in one world told what the endpoint is sent
        (``target.enabled_events`` and the optional types it names): the events an ``unless``
        path is looked for in, and hookproof's own keys are compared with (an invoice's payment
        intent is among them only where the invoice's own event is sent)."""
        from hookproof.scenarios.explore_targets import sends_of
        from hookproof.simulator.errors import SimulatorError
        from hookproof.simulator.world import emit_events, new_world

        profile = self.profile()
        world = new_world(profile.world, 1, account=self.target.account)
        enabled = self.enabled_types()
        sends = sends_of(profile, None if enabled is None else frozenset(enabled))
        subscribed = set(self.subscribed_types())
        world.sent_only(lambda t: sends(t) and (t not in profile.optional_types or t in subscribed))
        for event_type in profile.event_types():
            try:
                emit_events(world, event_type)
            except SimulatorError:  # a type this world tells no story of alone: no sample
                continue
        return list(world.events)

    def key_mapping(self) -> Any:
        """The team's keys and counters as a `scenarios.business_keys.KeyMapping` (None when
        neither is configured), each checked against a sample event of its type.

        Raises ConfigError naming ``business_keys."<type>"`` or ``counters."<type>"`` for a
        type the profile does not send or a template naming a field the event lacks.
        """
        if not self.business_keys and not self.counters and self.builtin_keys:
            return None
        from hookproof.scenarios.business_keys import CounterRule, KeyMapping, TemplateError

        profile = self.profile()
        types = profile.event_types()
        back = {v: k for k, v in types.items()}

        def world_type(section: str, name: str) -> str:
            if name in types or name in profile.optional_types:  # one not subscribed to: `unsubscribed_named`
                return name
            if name in back:
                return back[name]
            raise ConfigError(f"the {profile.title} profile sends no event {name!r} ({sent_types(name, types)})",
                              field=f'{section}."{name}"')

        from hookproof.scenarios.business_keys import Rule

        rules = {n: _key_rules(n, t) for n, t in self.business_keys.items() if isinstance(t, (dict, list))}
        templates: dict[str, str | None] = {
            world_type("business_keys", n): t if isinstance(t, str) else rules[n][0].key if n in rules else None
            for n, t in self.business_keys.items()}
        conditions = {world_type("business_keys", n): r[0].allowed() for n, r in rules.items() if r[0].when}
        exclusions = {world_type("business_keys", n): r[0].refused() for n, r in rules.items() if r[0].unless}
        more = {world_type("business_keys", n): tuple(Rule(rule.key, rule.allowed(), rule.refused())
                                                      for rule in r[1:])
                for n, r in rules.items() if len(r) > 1}
        counters = {world_type("counters", n): CounterRule(c.key, c.amount, c.since, c.sign)
                    for n, c in self.counters.items()}
        mapping = KeyMapping(templates, profile, counters, builtin=self.builtin_keys, conditions=conditions,
                             exclusions=exclusions, more=more)
        told: list[Any] = []
        for section, names in (("business_keys", self.business_keys), ("counters", self.counters)):
            for name in names:
                samples = _sample_events(world_type(section, name), profile.world, account=self.target.account,
                                         checkout_modes=self.target.shop_checkout_modes())
                rendered: set[int] = set()
                try:
                    for sample in samples:
                        for _ in range(MAX_SHOP_METADATA_KEYS + 1):
                            try:
                                if section == "counters":
                                    mapping.counter_of(sample)
                                else:
                                    rendered |= mapping.check(sample)
                                break
                            except TemplateError as exc:
                                if not self._shop_metadata(sample, exc.path):
                                    raise
                    if section == "business_keys" and len(rendered) < len(rules.get(name, ())):
                        # a rule whose `when` held on no sample: its template still checked, on the first
                        mapping.check(samples[0], render_all=True)
                    unless = [rule.refused() for rule in rules.get(name, ()) if rule.unless]
                    if section == "business_keys" and unless:  # a misspelt unless would never refuse a key
                        if not told:  # the endpoint's stories, told once for every rule's unless
                            told.extend(self.sample_story())
                        story = [e for e in told if e.type == world_type(section, name)]
                        for refused in unless:
                            mapping.find_unless(refused, [*samples, *story])
                except TemplateError as exc:
                    several = section == "business_keys" and len(rules.get(name, ())) > 1
                    which = next((n for n, r in enumerate(rules.get(name, ()), 1)
                                  if exc.template in (r.key, *r.when, *r.unless)), 0) if several else 0
                    since = section == "counters" and exc.template == self.counters[name].since
                    raise ConfigError((f"rule {which}: " if which else "") + str(exc),
                                      field=f'{section}."{name}"' + (".since" if since else "")) from None
        return mapping

    def _shop_metadata(self, sample: Any, path: str | None) -> bool:
        """Whether `path`, missing from `sample`, is a key of the ``metadata`` the shop's seed sets
        (``data.object.metadata.<key>`` of an object kind `[target.seed] creates`, or of a
        charge, which carries its payment intent's: `SHOP_METADATA`); if so it is added to the
        sample (the value ``"sample"``), as every such event of a story carries the shop's own."""
        seed = self.target.seed
        match = re.fullmatch(r"data\.object\.metadata\.([^.]+)", path or "")
        metadata = sample.object.get("metadata") if isinstance(sample.object, dict) else None
        if seed is None or match is None or not isinstance(metadata, dict) or not any(
                sample.object_type in SHOP_METADATA.get(kind, ()) for kind in seed.creates):
            return False
        metadata[match.group(1)] = "sample"
        return True

    def state_field_map(self) -> Any:
        """The observer's declared state fields as a `scenarios.state_fields.StateFields`
        (None when none are declared), each path read on a sample event of its kind.

        Raises ConfigError naming ``observer.state_fields.<kind>`` for a kind the profile's
        world sends no status-carrying event about, or a path such an event lacks (Stripe's
        ``account`` read on a seller's onboarding, on a Connect endpoint alone).
        """
        declared = self.observer.state_fields if self.observer is not None else {}
        if not declared:
            return None
        from hookproof.scenarios.state_fields import StateFields, TemplateError
        from hookproof.simulator.world import new_world

        profile = self.profile()
        fields = StateFields({kind: tuple(columns.items()) for kind, columns in declared.items()}, profile)
        samples = [e for e in new_world(profile.world, 1).lifecycle() if e.status is not None]
        if profile.name == "stripe" and self.target.connect and self.target.account and "account" in declared:
            from hookproof.simulator.world import World

            seller = World(1, account=self.target.account)  # a Connect endpoint's seller onboarded
            seller.onboard_account()
            samples += seller.events
        for kind in declared:
            story = [e for e in samples if e.object_type == kind]  # every type of the kind
            if not story:
                raise ConfigError(f"the {profile.title} world sends no event about a {kind} with a status: "
                                  f"it has no state fields to compare", field=f"observer.state_fields.{kind}")
            try:
                StateFields({kind: fields.fields[kind]}, profile).with_absent(story)
            except TemplateError as exc:
                raise ConfigError(str(exc), field=f"observer.state_fields.{kind}") from None
        return fields.with_absent(samples)  # a field a status's events lack is no part of that state

    #: the file this config was read from (for relative paths and messages)
    source: str | None = Field(default=None, exclude=True)

    @property
    def base_dir(self) -> Path:
        return Path(self.source).parent if self.source else Path.cwd()

    @model_validator(mode="before")
    @classmethod
    def _relative_sqlite(cls, data: Any) -> Any:
        """A relative SQLite file in `observer.url` is relative to the config file, like
        `target.start.cwd` (where the receiver runs and keeps its ``receiver.db``)."""
        if not isinstance(data, dict) or not data.get("source"):
            return data
        observer = data.get("observer")
        if isinstance(observer, ObserverConfig):
            observer = observer.model_dump()
        if not isinstance(observer, dict) or not isinstance(observer.get("url"), str):
            return data
        resolved = resolve_sqlite_url(observer["url"], Path(data["source"]).parent)
        return {**data, "observer": {**observer, "url": resolved}}


def _key_rules(name: str, value: dict[str, Any] | list[dict[str, Any]]) -> list[KeyRule]:
    """`[business_keys."<name>"]`'s table, or the tables of ``[[business_keys."<name>"]]`` in
    order, as `KeyRule`s. An event's key is made by the first rule whose `when` holds; every
    rule but the last needs a `when` (a rule after one without it could never make a key).
    Raises ConfigError naming the entry (and the rule's number when there are several)."""
    from pydantic import ValidationError

    tables = value if isinstance(value, list) else [value]
    field = f'business_keys."{name}"'
    if not tables:
        raise ConfigError("an empty array of rules makes no key (write false for a type with no effect)", field=field)
    rules = []
    for n, table in enumerate(tables, 1):
        rule_no = f"rule {n}: " if isinstance(value, list) else ""
        if not isinstance(table, dict):
            raise ConfigError(f"{rule_no}a key rule is a table (key and, optionally, when and unless), not {table!r}",
                              field=field)
        try:
            rules.append(KeyRule.model_validate(table))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
            message = {"missing": "is required",
                       "extra_forbidden": "unknown key (a key rule has key and, optionally, when and unless)"}.get(
                err["type"], err["msg"].removeprefix("Value error, "))
            raise ConfigError(rule_no + (f"{where}: {message}" if where else message), field=field) from None
    for n, rule in enumerate(rules[:-1], 1):
        if not rule.when and not rule.unless:
            raise ConfigError(f"rule {n + 1} is never used: rule {n} has no when, so it makes the key of every "
                              f"event of the type (the first rule whose when holds makes the key; give rule {n} "
                              f"a when, or put it last)", field=field)
    return rules


#: An object kind a seed creates (`[target.seed] creates`) -> the kinds whose events carry its
#: ``metadata`` as the shop set it (a charge its payment intent's: Stripe copies it at confirmation,
#: support.stripe.com/questions/how-metadata-works-with-related-objects).
SHOP_METADATA: Mapping[str, tuple[str, ...]] = {
    "payment_intent": ("payment_intent", "charge"), "checkout.session": ("checkout.session",),
    "customer": ("customer",), "subscription": ("subscription",),
}
#: Most keys of the shop's metadata one template and its rules may name (Stripe's own limit: 50).
MAX_SHOP_METADATA_KEYS = 50


def _sample_events(stripe_type: str, world: str = "billing", *, account: str | None = None,
                   checkout_modes: frozenset[str] | None = None) -> list[Any]:
    """Events of `stripe_type` from fresh worlds of kind `world` that templates are checked
    against, from `account` (``target.account``: its events carry ``account``, as the run's
    do): one, or for a Checkout Session's type one per mode whose session emits it among the
    shop's `checkout_modes` (None: every mode; a rule's `when` may pick a mode:
    ``data.object.mode = "subscription"``)."""
    from hookproof.simulator.world import emit_events, new_world
    from hookproof.simulator.world.scripts import CHECKOUT_MODE_SCRIPTS

    modes = [m for m, scripts in CHECKOUT_MODE_SCRIPTS.items() if stripe_type in scripts
             and (checkout_modes is None or m in checkout_modes)] if world == "billing" else []
    if not modes:
        return [emit_events(new_world(world, 1, account=account), stripe_type)[0]]
    return [emit_events(new_world(world, 1, account=account), stripe_type, checkout_mode=m)[0] for m in modes]


def resolve_sqlite_url(url: str, base_dir: Path) -> str:
    """`url` with a relative SQLite database file made absolute against `base_dir`.

    Other URLs, absolute files, in-memory databases (``sqlite://``, ``:memory:``) and
    ``file:`` URIs come back unchanged.
    """
    if not re.match(r"^sqlite(\+\w+)?://", url):
        return url
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # the observer's own check names the problem
        return url
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        return url
    path = Path(database)
    if path.is_absolute():
        return url
    return parsed.set(database=os.path.abspath(base_dir / path)).render_as_string(hide_password=False)


def _resolve_secret(value: str, base_dir: Path | None) -> str:
    try:
        return SecretRef.parse(value).resolve(base_dir)
    except SecretRefError as exc:
        raise ConfigError(str(exc), field="target.secret") from None
