"""The receiver's side of `hookproof.toml`: how hookproof starts it (`[target.start]`), runs
it where it can fault it (`[target.process]`, `[target.docker]`), seeds it
(`[target.seed]`) and how hard chaos pushes (`[chaos]`).

Strict pydantic v2 models, as `hookproof.config_model`'s (which re-exports them); each
validator raises ValueError naming what is wrong, and commands are checked at load as
they will be filled in and split at run time.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: The placeholders a receiver command may use.
PLACEHOLDERS = ("api_base", "sink_url", "port")


def _check_command(command: str, *, replicas: bool, placeholders: tuple[str, ...] = PLACEHOLDERS) -> str:
    """A pydantic validator body: `command` fills in and splits into arguments as it will
    when hookproof runs it (``str.format`` with `placeholders`, then ``shlex.split``).

    With `replicas`, ``{port}`` stays in the arguments (each replica fills it in later).
    Raises ValueError saying what is wrong, so a bad command fails at load, not at run time.
    """
    import shlex

    known = ", ".join("{" + p + "}" for p in placeholders)
    samples = {"api_base": "http://127.0.0.1:1", "sink_url": "http://127.0.0.1:1",
               "port": "{port}" if replicas else "1", "secret": "whsec_x", "api_key": "sk_test_x"}
    values = {p: samples[p] for p in placeholders}
    try:
        filled = command.format(**values)
    except KeyError as exc:
        raise ValueError(f"unknown placeholder {{{exc.args[0]}}} (known: {known}; write {{{{ and }}}} for a "
                         "literal brace)") from None
    except IndexError:
        raise ValueError(f"a placeholder needs a name, {{}} or {{0}} is none (known: {known})") from None
    except (ValueError, AttributeError, TypeError) as exc:
        raise ValueError(f"cannot fill in the placeholders: {exc} (known: {known}; write {{{{ and }}}} for a "
                         "literal brace)") from None
    try:
        argv = shlex.split(filled)
    except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
        raise ValueError(f"cannot split it into arguments: {str(exc).lower()}") from None
    if not argv:
        raise ValueError("names no program to run")
    return command


def check_url(v: str | None) -> str | None:
    """A pydantic validator: `v` is a URL hookproof can send to (see `url_problem`)."""
    from hookproof.simulator.delivery import url_problem

    problem = None if v is None else url_problem(v)
    if problem is not None:
        raise ValueError(problem)
    return v


class StrictModel(BaseModel):
    """Every table's base: unknown keys forbidden, frozen, no inf or nan."""

    # inf and nan are TOML numbers: refuse them in every float field (an infinite
    # timeout would wait forever, nan passes no comparison)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class StartConfig(StrictModel):
    """A receiver command hookproof launches, waits healthy, and stops afterwards.

    `command` may use the placeholders ``{api_base}``, ``{sink_url}`` and ``{port}``;
    the process also gets ``HOOKPROOF_API_BASE``, ``HOOKPROOF_SINK_URL`` and
    ``HOOKPROOF_SECRET`` in its environment. `health_url` may say ``{port}`` too (the
    port `target.url`'s ``{port}`` picks, or `port`).
    """

    command: str = Field(min_length=1)
    health_url: str | None = None
    port: int | None = Field(default=None, ge=1, le=65535)
    startup_timeout_s: float = Field(default=20.0, gt=0, le=600)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("health_url")
    @classmethod
    def _health_url(cls, v: str | None) -> str | None:
        # "{port}": the receiver's port, filled in per run (`health_url_at`)
        check_url(v.replace("{port}", "1") if v is not None else None)
        return v

    def health_url_at(self) -> str | None:
        """`health_url` with ``{port}`` filled in (`port`, set per run from `target.url`'s ``{port}``)."""
        if self.health_url is None or self.port is None:
            return self.health_url
        return self.health_url.replace("{port}", str(self.port))

    def uses_port(self) -> bool:
        """True when the command, `health_url` or an `env` value says ``{port}``."""
        return any("{port}" in text for text in (self.command, self.health_url or "", *self.env.values()))

    @field_validator("command")
    @classmethod
    def _command(cls, v: str) -> str:
        return _check_command(v, replicas=False)


class ProcessTargetConfig(StrictModel):
    """`[target.process]`: hookproof runs the receiver as a process it can fault (--chaos).

    `command` may use ``{port}``, ``{api_base}`` and ``{sink_url}``; each copy also gets its
    port as ``PORT`` in its environment (what Node, Go and Ruby apps read), so a command
    without ``{port}`` works too. The first copy listens on `target.url`'s port, replicas
    on others.
    """

    command: str = Field(min_length=1)
    #: None: ready once the port accepts a connection (TCP); a path: once it answers 2xx there.
    health_path: str | None = None
    startup_timeout_s: float = Field(default=30.0, gt=0, le=600)
    cwd: str | None = None
    #: Variables for the receiver; values may use {secret}, {api_base}, {sink_url}, {api_key}, {port}.
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("command")
    @classmethod
    def _command(cls, v: str) -> str:
        return _check_command(v, replicas=True)


class DockerTargetConfig(StrictModel):
    """`[target.docker]`: hookproof runs the receiver in a container (host network) it can fault.

    `command` (run in `image`) may use ``{port}``; the container also gets its port as
    ``PORT`` in its environment (as `ProcessTargetConfig`). `volumes` maps host directories
    (relative to the config file) to directories in the container, e.g. for a SQLite
    file the host's SQL observer reads.
    """

    image: str = "hookproof/receivers:latest"
    command: str = Field(min_length=1)
    volumes: dict[str, str] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    health_path: str | None = "/healthz"
    startup_timeout_s: float = Field(default=60.0, gt=0, le=600)

    @field_validator("command")
    @classmethod
    def _command(cls, v: str) -> str:
        return _check_command(v, replicas=True)


#: The placeholders a seed hook's command, URL and env values may use.
SEED_PLACEHOLDERS = ("api_base", "sink_url", "port", "secret", "api_key")


class SeedConfig(StrictModel):
    """`[target.seed]`: before each scenario's first delivery, hand its world objects to the team's code.

    Exactly one of `command` (run with the objects as JSON on stdin; a non-zero exit fails
    the seed) or `url` (POSTed the objects as a JSON body; a non-2xx answer fails it); a
    failed seed makes the scenario ``unknown`` with the reason (`hookproof.scenarios.seeding`
    describes the document). `command`, `url` and the `env` values may use ``{api_base}``,
    ``{sink_url}``, ``{port}`` (the receiver's), ``{secret}`` (the first signing secret) and
    ``{api_key}``; the command also gets ``HOOKPROOF_*`` variables as a started receiver does.
    `timeout_s` bounds each call; `cwd` is relative to the config file. `creates`
    (stripe profile; any of ``"checkout.session"``, ``"customer"``, ``"subscription"``,
    ``"payment_intent"``): the seed runs before each scenario's story and creates the objects
    the document's ``create`` counts through the provider API, and the story completes, pays,
    refunds and expires those sessions, delivers, renews, fails and cancels those
    subscriptions, and confirms, declines, pays and refunds those payment intents (a shop's own
    checkout, subscription and payment flow, `scenarios.seeding`); another value is a config
    error listing these. `checkout_modes`: the modes the shop's checkout opens sessions in,
    ``"payment"`` (the default), ``"subscription"`` or both, with ``"checkout.session"`` in
    `creates` (the stories then ask the seed for sessions of those modes alone: a SaaS selling
    plans, ``["subscription"]``); ``[]``: the shop sells nothing through Checkout, the stories
    open no Checkout Session (not with ``"checkout.session"`` in `creates`, and a config
    error beside ``checkout.session.*`` types in `target.enabled_events`).
    """

    command: str | None = Field(default=None, min_length=1)
    creates: list[str] = Field(default_factory=list)
    checkout_modes: list[str] = Field(default_factory=lambda: ["payment"])
    url: str | None = None
    timeout_s: float = Field(default=30.0, gt=0, le=600)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("command")
    @classmethod
    def _command(cls, v: str | None) -> str | None:
        return None if v is None else _check_command(v, replicas=False, placeholders=SEED_PLACEHOLDERS)

    @field_validator("url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None:
            samples = {"api_base": "http://127.0.0.1:1", "sink_url": "http://127.0.0.1:1", "port": "1", "secret": "x",
                       "api_key": "x"}
            try:
                filled = v.format(**samples)
            except (KeyError, IndexError, ValueError, AttributeError, TypeError):
                known = ", ".join("{" + p + "}" for p in SEED_PLACEHOLDERS)
                raise ValueError(f"unknown or malformed placeholder (known: {known})") from None
            check_url(filled)
        return v

    @field_validator("creates")
    @classmethod
    def _creates(cls, v: list[str]) -> list[str]:
        from hookproof.scenarios.seeding import CREATABLE

        if unknown := [t for t in v if t not in CREATABLE]:
            raise ValueError(f"a seed creates only {', '.join(CREATABLE)} for the story, not {unknown[0]!r}")
        return v

    @field_validator("checkout_modes")
    @classmethod
    def _checkout_modes(cls, v: list[str]) -> list[str]:
        from hookproof.scenarios.seeding import CHECKOUT_MODES

        if unknown := [m for m in v if m not in CHECKOUT_MODES]:
            raise ValueError(f"a shop's checkout opens sessions in {' or '.join(CHECKOUT_MODES)} mode, "
                             f"not {unknown[0]!r}")
        return v

    @model_validator(mode="after")
    def _one(self) -> "SeedConfig":
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' or 'url'")
        if "checkout.session" in self.creates and not self.checkout_modes:
            raise ValueError("checkout_modes: a seed that opens checkout sessions names their modes (payment, "
                             "subscription); [] says the shop sells nothing through Checkout")
        if self.checkout_modes and "checkout_modes" in self.model_fields_set and "checkout.session" not in self.creates:
            raise ValueError("checkout_modes says which sessions the seed opens: add \"checkout.session\" to creates "
                             "(or write [] for a shop that sells nothing through Checkout)")
        if self.url is not None and (self.cwd is not None or self.env):
            raise ValueError("cwd and env are a command's: a seed url takes neither")
        return self


class ChaosConfig(StrictModel):
    """`[chaos]`: how hard the chaos scenarios push (see scenarios.chaos.ChaosSettings)."""

    events: int = Field(default=4, ge=1, le=50)
    sender_timeout_s: float = Field(default=0.5, gt=0, le=60)
    pause_s: float = Field(default=1.5, gt=0, le=120)
    kill_trials: int = Field(default=3, ge=1, le=50)
    kill_window_s: float = Field(default=0.15, ge=0, le=60)
    replicas: int = Field(default=3, ge=2, le=16)
    time_scale: float = Field(default=1e-4, gt=0, le=1)
    drop_after_bytes: int = Field(default=12, ge=0, le=65536)
    #: the ports (first, last, inclusive) chaos listens on: the fault proxy, the replicas, and
    #: the receiver's own when the url says ``{port}``; None: any free port
    ports: tuple[int, int] | None = None

    @model_validator(mode="after")
    def _pause(self) -> "ChaosConfig":
        if self.pause_s <= self.sender_timeout_s:
            raise ValueError("pause_s must exceed sender_timeout_s (the pause must outlast the provider's wait)")
        if self.ports is not None:
            first, last = self.ports
            if not 1024 <= first <= last <= 65535:
                raise ValueError(f"ports must be [first, last] with 1024 <= first <= last <= 65535, got {list(self.ports)}")
        return self
