"""A storm's specification: what `hookproof storm` hands the Locust processes.

The spec travels as JSON and never holds a secret. The Locust master reads it from
the file named by ``HOOKPROOF_STORM_SPEC`` and forwards it to its workers with the
run (Locust custom arguments, so workers on other machines need no file):
`StormSpec.for_workers`, without the observer. The signing secrets reach the master
in the environment variable ``HOOKPROOF_STORM_SECRETS`` (a JSON list of strings) and
go on to its workers with the run, never in a file, a log or a report.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hookproof.loadtests.shape import LoadShape, make_shape
from hookproof.simulator.delivery.attempt_core import retry_delay_s
from hookproof.simulator.delivery.history import Outcome

#: Environment variable naming the spec file (read by the master).
SPEC_ENV = "HOOKPROOF_STORM_SPEC"
#: Environment variable holding the signing secrets as a JSON list (read by workers).
SECRETS_ENV = "HOOKPROOF_STORM_SECRETS"
#: Environment variable naming the file where a refused worker's Locust writes why, in one line
#: (`hookproof storm-worker` prints it and exits 2).
REFUSAL_ENV = "HOOKPROOF_WORKER_REFUSAL_FILE"
#: Environment variable naming the file where a worker's Locust writes what it handed over to its
#: master, in one line (`hookproof storm-worker` prints it last).
HANDOVER_ENV = "HOOKPROOF_WORKER_HANDOVER_FILE"
#: Seconds a storm's drain (`StormSpec.drain_s`) allows beyond its deliveries' schedules.
DRAIN_GRACE_S = 2.0


class SpecError(ValueError):
    """A storm spec or its environment that cannot be used (names the field, never a secret)."""


def _problem(exc: ValidationError) -> str:
    """The first problem of a validation error, in one line naming the field."""
    error = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"unknown storm spec field {field!r}"
    if error["type"] == "finite_number":
        return f"{field}: must be a finite number, got {error['input']!r}"
    if error["type"] == "missing":
        return f"{field}: required"
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    return f"{field}: {error['msg'][0].lower()}{error['msg'][1:]}, got {error['input']!r}"


class StormSpec(BaseModel):
    """Everything a storm needs, secrets excepted; a document read from JSON, checked whole.

    Raises SpecError (naming the field) for a wrong type, an unknown field or a bad value.

    Attributes:
        target_url: the receiver's webhook URL.
        profile: provider profile name.
        event_names: Stripe type -> the name sent, for standard-webhooks and svix: the
            spellings the config lists (`Config.event_names`; empty: the default renaming).
            Every process builds its profile with them (`sending_profile`).
        live / account: the events' mode and provider account.
        enabled_types: event types the receiver subscribes to (None: all).
        subscribed: the profile's optional types the endpoint is subscribed to
            (`Config.subscribed_types`: Stripe's ``invoice.payment_succeeded`` listed in
            enabled_events, Shopify's compliance topics the config names); every process
            builds its profile with them (`sending_profile`), so its stories tell them.
        checkout_modes: the modes the shop's Checkout opens sessions in (``[target]
            checkout_modes``, `World.checkout_modes`); None: both.
        users: Locust users over all workers.
        rate_per_s: plateau rate, events per second over all users.
        duration_s: storm length, seconds.
        shape: ``steady``, ``ramp``, ``spike`` or ``soak`` (`loadtests.shape`).
        duplicates: share of events delivered more than once, [0, 1].
        burst: concurrent copies of a duplicated event (1: one later copy).
        reorder_window: events the next one is drawn from (1: in order).
        waves: mass-redelivery waves during the storm.
        wave_window_s: each wave replays what was sent in the last seconds.
        wave_events: and at least the last this many events a user sent (issue 16's
            window of N events replayed after they were delivered; 0: only the seconds).
        related: share of groups that are a related burst (the next events of different
            types released together: a new object's first events, with their object's
            state change).
        older_redelivery: share of objects whose first effect is redelivered after their second.
        late: share of events with a status held back until after their object's next event.
        api_transient: share of objects whose first fetch the provider API fails, then
            recovers: half 404 ("not visible yet"), half 500 (0 by default: only the deliveries of events about a hidden
            object are tagged, and a receiver may fetch other objects too).
        seed: base seed of the worlds and the plans.
        world_start_us: the worlds' clock start (unix microseconds), so the provider API
            builds the very worlds the senders replay (None: each process's now).
        sender_timeout_s: seconds a sender waits for an answer.
        time_scale: factor on the profile's retry delays (retries of failed attempts).
        max_attempts: attempts per delivery at most (1: no retries).
        max_in_flight: groups in flight per user at most (the user's senders; a burst's
            copies and a wave replay go out with their group): the backpressure bound.
        observer: the `hookproof.toml` observer table (kind, url, effects, state...).
        keys: the team's business keys and counters (`scenarios.business_keys.to_plain`),
            or None: hookproof's built-in keys.
        signing: the generic-hmac profile's settings (``[target.signing]``, every field of
            `GenericHmacSettings` as plain data: `signing_of`), or standard-webhooks' and
            svix's (`StandardWebhooksSettings`: ``secret_encoding``), or None: the defaults. Every
            process builds its profile with them, so workers sign and head deliveries, and
            retry, exactly as the master's profile does.
        catalog: the user's own event catalog (``[catalog]``) for the generic-hmac,
            standard-webhooks and svix profiles, as plain data
            (`hookproof.catalog_file.catalog_to_plain`), or None: the profile's own events.
        sink_url: the effect sink's URL (the ``sink`` observer reads it).
        settle_window_s / settle_deadline_s / settle_interval_s: liveness settle.
        collect_timeout_s: seconds the master waits for the workers' records, once their
            drain (`drain_s`) is over.
        out_dir: where the master writes the reports and the history.
        progress_path: a JSON file the master rewrites with its progress (or None).
        config_file: the hookproof.toml the storm read, as given, named by its report (None: none).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)

    target_url: str
    profile: str = "stripe"
    event_names: dict[str, str] = Field(default_factory=dict)
    live: bool = False
    account: str | None = None
    enabled_types: tuple[str, ...] | None = Field(default=None, strict=False)
    subscribed: tuple[str, ...] = Field(default=(), strict=False)
    checkout_modes: tuple[str, ...] | None = Field(default=None, strict=False)
    users: int = 10
    rate_per_s: float = 50.0
    duration_s: float = 60.0
    shape: str = "steady"
    duplicates: float = 0.2
    burst: int = 4
    reorder_window: int = 8
    waves: int = 1
    wave_window_s: float = 5.0
    wave_events: int = 200
    related: float = 0.2
    older_redelivery: float = 0.05
    late: float = 0.05
    api_transient: float = 0.0
    seed: int = 0
    world_start_us: int | None = None
    sender_timeout_s: float = 20.0
    time_scale: float = 1e-5
    max_attempts: int = 3
    max_in_flight: int = 64
    observer: dict[str, Any] = Field(default_factory=dict)
    keys: dict[str, Any] | None = None
    catalog: dict[str, Any] | None = None
    signing: dict[str, Any] | None = None
    sink_url: str | None = None
    settle_window_s: float = 0.5
    settle_deadline_s: float = 30.0
    settle_interval_s: float = 0.1
    collect_timeout_s: float = 60.0
    out_dir: str = "hookproof-storm"
    progress_path: str | None = None
    config_file: str | None = None

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SpecError(_problem(exc)) from None

    @model_validator(mode="after")
    def _check(self) -> "StormSpec":
        if self.users < 1:
            raise ValueError("users: must be >= 1")
        for name in ("duplicates", "related", "older_redelivery", "late", "api_transient"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name}: must be between 0 and 1")
        if self.wave_events < 0:
            raise ValueError("wave_events: must be >= 0")
        if self.burst < 1 or self.reorder_window < 1 or self.max_attempts < 1 or self.max_in_flight < 1:
            raise ValueError("burst, reorder_window, max_attempts and max_in_flight must be >= 1")
        if self.waves < 0:
            raise ValueError("waves: must be >= 0")
        if self.sender_timeout_s <= 0:
            raise ValueError("sender_timeout_s: must be > 0")
        try:
            self.load_shape()
        except ValueError as exc:
            raise ValueError(f"shape: {exc}") from None
        if self.catalog is None:  # a catalog is read when a process first sends from it
            self.sending_profile()  # SpecError (a ValueError) naming `profile`, `event_names` or `signing`
        return self

    def sending_profile(self) -> Any:
        """The profile every process of the storm sends and judges with: `profile` by name,
        sending `catalog` when there is one (made once per process and catalog: its world
        kind is registered then), else with `event_names` (the spellings the config lists,
        for standard-webhooks and svix), generic-hmac signing with `signing`. Raises
        SpecError naming `profile`, `event_names` or `signing` for an unknown profile, names
        or settings it refuses or a catalog that cannot be read."""
        catalog = json.dumps(self.catalog, sort_keys=True) if self.catalog is not None else None
        signing = json.dumps(self.signing, sort_keys=True) if self.signing is not None else None
        return _profile(self.profile, catalog, tuple(sorted(self.event_names.items())), signing, self.subscribed)

    def drain_s(self) -> float:
        """Seconds a storm's senders keep delivering once its load shape ends (the drain):
        long enough for a delivery whose first attempt went out just before the end to use
        its whole schedule, every attempt waiting the sender timeout and every retry its
        compressed delay: ``sender_timeout_s * max_attempts`` plus the profile's first
        ``max_attempts - 1`` retry delays times `time_scale`, plus `DRAIN_GRACE_S`. A
        drain ends sooner when nothing is owed. Raises SpecError as `sending_profile`."""
        schedule = tuple(self.sending_profile().retry_schedule_s)
        delays = sum(retry_delay_s(Outcome.REJECTED, n, schedule_s=schedule, max_attempts=self.max_attempts,
                                   time_scale=self.time_scale) or 0.0 for n in range(1, self.max_attempts))
        return self.sender_timeout_s * self.max_attempts + delays + DRAIN_GRACE_S

    def load_shape(self) -> LoadShape:
        """The `LoadShape` of this storm. Raises ValueError for a bad shape."""
        return make_shape(self.shape, self.rate_per_s, self.duration_s)

    def for_workers(self) -> "StormSpec":
        """This spec as the master hands it to its workers: without the observer (its
        database URL and credentials), the effect sink, and the master's output paths,
        which no worker reads."""
        return self.model_copy(update={"observer": {}, "sink_url": None, "out_dir": "", "progress_path": None,
                                       "config_file": None})

    def to_json(self) -> str:
        """The spec as JSON (keys sorted), as `from_json` reads it."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "StormSpec":
        """Parse `to_json`'s text. Raises SpecError naming the problem."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(f"the storm spec is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SpecError("the storm spec must be a JSON object")
        return cls(**data)


def signing_of(profile: Any) -> dict[str, Any] | None:
    """The settings `profile` signs with, as `StormSpec.signing` carries them (every field
    of its `GenericHmacSettings` or `StandardWebhooksSettings`, JSON types), or None for a
    profile without settings."""
    from hookproof.simulator.profiles.generic_hmac import GenericHmacSettings
    from hookproof.simulator.profiles.standard_webhooks import StandardWebhooksSettings

    settings = getattr(profile, "settings", None)
    return (settings.model_dump(mode="json") if isinstance(settings, (GenericHmacSettings, StandardWebhooksSettings))
            else None)


@functools.lru_cache(maxsize=8)
def _profile(name: str, catalog: str | None, names: tuple[tuple[str, str], ...] = (),
             signing: str | None = None, subscribed: tuple[str, ...] = ()) -> Any:
    from hookproof.scenarios.business_keys import render
    from hookproof.simulator.errors import ProfileError, WorldError
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.profiles.registry import profile_with_catalog
    from hookproof.simulator.world.user_catalog import catalog_from_plain

    settings = json.loads(signing) if signing is not None else None
    try:
        if catalog is None:
            return get_profile(name, settings=settings, names=dict(names) or None, subscribed=subscribed)
        return profile_with_catalog(name, catalog_from_plain(json.loads(catalog), render), settings=settings)
    except (ProfileError, WorldError) as exc:
        field = getattr(exc, "field", None)
        if field == "names":
            where = "event_names"
        elif field == "subscribed":
            where = "subscribed"
        elif settings is not None and isinstance(exc, ProfileError) and field not in ("profile", "catalog"):
            where = "signing"
        else:
            where = "profile"
        raise SpecError(f"{where}: {exc}") from None


def secrets_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """The signing secrets from ``HOOKPROOF_STORM_SECRETS``. Raises SpecError (no value shown)."""
    env = os.environ if environ is None else environ
    raw = env.get(SECRETS_ENV)
    if not raw:
        raise SpecError(f"{SECRETS_ENV} is not set: a storm worker needs the target's signing secrets "
                        "(a JSON list of strings) in its environment")
    return secrets_from_text(raw, SECRETS_ENV)


def secrets_from_text(raw: str, where: str) -> list[str]:
    """The signing secrets of `secrets_to_env`'s text; `where` names its source in the
    SpecError raised for anything else (no value shown)."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        raise SpecError(f"{where} is not a JSON list of strings") from None
    if not isinstance(value, list) or not value or not all(isinstance(s, str) and s for s in value):
        raise SpecError(f"{where} is not a non-empty JSON list of non-empty strings")
    return value


def secrets_to_env(secrets: Sequence[str]) -> str:
    """The value of ``HOOKPROOF_STORM_SECRETS`` for `secrets`."""
    return json.dumps(list(secrets))


#: The storm's wire protocol between a master and its workers: bump it with any change to the
#: messages they exchange (`collect`'s message types and payloads) or to what a worker expects of
#: the run. The spec's own fields need no bump: `storm_protocol` hashes its schema.
PROTOCOL = 2


def _bare(schema: Any) -> Any:
    """`schema` without its words (descriptions, titles): what a reader of the spec depends on."""
    if isinstance(schema, dict):
        return {k: _bare(v) for k, v in sorted(schema.items()) if k not in ("description", "title")}
    if isinstance(schema, list):
        return [_bare(v) for v in schema]
    return schema


def schema_protocol(model: type[BaseModel], protocol: int = PROTOCOL) -> str:
    """``"<protocol>-<12 hex digits>"``: `protocol` and a hash of `model`'s JSON schema (its
    fields, types and bounds, not their descriptions or titles)."""
    import hashlib

    schema = json.dumps(_bare(model.model_json_schema()), sort_keys=True, separators=(",", ":"))
    return f"{protocol}-{hashlib.sha256(schema.encode()).hexdigest()[:12]}"


@functools.cache
def storm_protocol() -> str:
    """What a master and its workers must share beyond the hookproof version (every build of one
    version says the same): `schema_protocol` of `StormSpec` under `PROTOCOL`, so a build whose
    spec has another field, or whose messages another shape, is told apart before it sends."""
    return schema_protocol(StormSpec, PROTOCOL)


__all__ = ["DRAIN_GRACE_S", "HANDOVER_ENV", "PROTOCOL", "REFUSAL_ENV", "SECRETS_ENV", "SPEC_ENV", "SpecError", "StormSpec", "secrets_from_env",
           "secrets_from_text", "secrets_to_env", "schema_protocol", "storm_protocol"]
