"""Reading `hookproof.toml`: `load_config(path)` / `parse_config(text)` raise exactly one
`ConfigError` naming the field and its line for the first problem.

The models (target, observer, provider side, run, keys, counters) live in
`hookproof.config_model` and are re-exported here; the line of a field comes from
`hookproof.toml_lines`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from hookproof.catalog_file import check_catalog
from hookproof.config_model import (
    COUNTER_KEY_EXAMPLES,
    PLACEHOLDERS,
    ChaosConfig,
    Config,
    CounterConfig,
    DockerTargetConfig,
    ObserverConfig,
    ProcessTargetConfig,
    ProviderConfig,
    RunConfig,
    SettleConfig,
    StartConfig,
    TargetConfig,
    resolve_sqlite_url,
)
from hookproof.errors import ConfigError
from hookproof.toml_lines import TomlLines

#: The config file every command reads by default.
DEFAULT_PATH = "hookproof.toml"


def field_line(text: str, dotted: str) -> int | None:
    """The 1-based line where `dotted` (``section.key`` or ``section``) is set in TOML `text`
    (a dotted key, quoted or not, included), else where its nearest set parent is."""
    return TomlLines(text).line_of(*dotted.split("."))


#: Keys of one table given in another, and what that table calls them.
UNKNOWN_KEY_HINTS = {
    "target.start.health_path": ' ([target.start] waits on a whole URL: health_url = "http://127.0.0.1:{port}/healthz")',
    "target.process.health_url": ' ([target.process] waits on a path of its port: health_path = "/healthz")',
    "target.docker.health_url": ' ([target.docker] waits on a path of its port: health_path = "/healthz")',
}


def _signing_hint(dotted: str) -> str:
    """`` (a generic-hmac setting: give it in [target.signing])`` for a setting of the
    generic-hmac scheme written in ``[target]`` itself, else ``""``."""
    from hookproof.simulator.profiles.generic_hmac import GenericHmacSettings

    section, _, name = dotted.rpartition(".")
    if section == "target" and name in GenericHmacSettings.model_fields:
        return " (a generic-hmac setting: give it in [target.signing])"
    return ""


def parse_config(text: str, source: str = DEFAULT_PATH, *, secrets: bool = True) -> Config:
    """Validate TOML `text`. Raises ConfigError for the first problem, with field and line.

    `secrets` False: the secrets are not resolved (a command that sends nothing and
    needs none, `hookproof events`); their form is still checked."""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = int(match.group(1)) if match else 1
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)).strip() or "syntax error"
        raise ConfigError(f"not valid TOML: {reason}", path=source, field=field_at(text, line), line=line) from None
    try:
        config = Config.model_validate({**data, "source": source})
    except ValidationError as exc:
        err = exc.errors()[0]
        dotted = _field_path(err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = "is required"
        elif err["type"] == "extra_forbidden":
            message = "unknown key" + (UNKNOWN_KEY_HINTS.get(dotted) or _signing_hint(dotted) or _closest_key(dotted))
        if (dotted == "observer" and message.startswith("state_fields.")) or \
                (dotted == "observer.state_fields" and ": " in message):  # "<kind>: ...": that entry's line
            kind, _, message = message.removeprefix("state_fields.").partition(": ")
            return _raise(message, source, f"observer.state_fields.{kind}",
                          _entry_line(text, "observer.state_fields", kind) or field_line(text, "observer") or 1)
        named = re.match(r"^(\w+): (.+)$", message, re.DOTALL)
        model = _model_at(dotted)
        if named and model is not None and named.group(1) in model.model_fields:  # "url: ..." from a model check
            dotted, message = f"{dotted}.{named.group(1)}" if dotted else named.group(1), named.group(2)
        loc = err["loc"]
        if len(loc) == 3 and loc[0] == "counters" and isinstance(loc[1], str) and loc[2] in CounterConfig.model_fields:
            # a counter's own field (its key): that line, the field named with the quoted type
            at = TomlLines(text).line_of("counters", loc[1], str(loc[2]))
            target = data.get("target")
            profile = target.get("profile", "stripe") if isinstance(target, dict) else "stripe"
            example = COUNTER_KEY_EXAMPLES.get(str(profile))
            if example is not None:  # the example in the config's own profile's events
                message = message.replace(COUNTER_KEY_EXAMPLES["stripe"], example)
            return _raise(message, source, f'counters."{loc[1]}".{loc[2]}', at or field_line(text, dotted) or 1)
        return _raise(message, source, dotted, field_line(text, dotted) or 1)
    _check_signing(config, text, source)
    _check_dirs(config, text, source)
    _check_spellings(config, text, source)
    check_catalog(config, text, source)  # [catalog] and a catalog profile's enabled_events
    _check_keys(config, text, source)
    _check_state_kinds(config, text, source)
    _check_state_fields(config, text, source)
    _check_ports(config, text, source)
    return _check_secrets(config, text, source) if secrets else config


def _check_ports(config: Config, text: str, source: str) -> None:
    """Raise ConfigError (with its line) for a ``[chaos] ports`` range holding fewer ports than
    a run without ``--chaos`` takes (`Config.check_port_range`; certify checks ``--chaos``'s)."""
    try:
        config.check_port_range(chaos=False)
    except ConfigError as exc:
        raise ConfigError(exc.message, path=source, field=exc.field,
                          line=TomlLines(text).line_of("chaos", "ports") or field_line(text, "chaos") or 1) from None


def _check_signing(config: Config, text: str, source: str) -> None:
    """Raise ConfigError, with its line, for a ``[target.signing]`` key the generic-hmac
    scheme refuses (`TargetConfig.signing_settings`: an unknown key, an invalid header name,
    a negative retry delay…)."""
    try:
        config.target.signing_settings()
    except ConfigError as exc:
        field = exc.field or "target.signing"
        lines = TomlLines(text)
        raise ConfigError(exc.message, path=source, field=field,
                          line=lines.line_of(*field.split(".")) or lines.line_of("target", "signing") or 1) from None


def _check_spellings(config: Config, text: str, source: str) -> None:
    """Raise ConfigError, with the entry's line, for one event type the config names in two
    spellings (standard-webhooks' ``payment.succeeded`` and ``payment_intent.succeeded``):
    the names listed are the names sent (`Config.event_names`)."""
    try:
        config.event_names()
    except ConfigError as exc:
        field = exc.field or "target.enabled_events"
        section, _, quoted = field.partition(".")
        line = field_line(text, field) if section == "target" else _entry_line(text, section, quoted.strip('"'))
        raise ConfigError(exc.message, path=source, field=field, line=line or 1) from None


def _check_keys(config: Config, text: str, source: str) -> None:
    """Raise ConfigError, with the line of the bad entry, for a business key or counter
    naming an unknown event type or a field its events lack (`Config.key_mapping`)."""
    try:
        config.key_mapping()
    except ConfigError as exc:
        section, _, quoted = (exc.field or "").partition(".")
        quoted, _, own = quoted.rpartition(".") if quoted.endswith('".since') else (quoted, "", "")
        rule = re.match(r"rule ([0-9]+): ", exc.message)  # one table of [[business_keys."<type>"]]
        lines = TomlLines(text)
        line = lines.header_line((section, quoted.strip('"')), int(rule.group(1))) if rule else None
        if own:  # a counter's own field (its since): that line
            line = lines.line_of(section, quoted.strip('"'), own)
        raise ConfigError(exc.message, path=source, field=exc.field,
                          line=line or _entry_line(text, section, quoted.strip('"')) or 1) from None


def _entry_line(text: str, section: str, name: str) -> int | None:
    """The 1-based line of entry `name` (quoted or bare) of table `section`, or of the
    ``[section."name"]`` header."""
    return TomlLines(text).line_of(*section.split("."), name)


def _check_state_kinds(config: Config, text: str, source: str) -> None:
    """Raise ConfigError (with its line) for an ``[observer.states]`` kind the profile's
    world has no object of (``issues`` for GitHub's ``issue``), naming the kinds it has, or
    whose objects carry no state the run compares (GitHub's ``installation``: no event about one
    carries a status), naming the kinds it compares (`stated_kinds`, from the world itself).
    Stripe's ``account`` (a seller's onboarding, `World.onboard_account`) only on a Connect
    endpoint with its connected account (`target.connect`, `target.account`)."""
    if config.observer is None or not config.observer.states:
        return
    profile = config.profile()
    user = getattr(profile, "catalog", None)
    if user is not None:  # a user catalog's kinds are its own (`EventSpec.kind`)
        _check_catalog_kinds(config, user, text, source)
        return
    subscribed = frozenset(config.subscribed_types())  # their stories' kinds too (GitHub's check runs)
    kinds = object_kinds(profile.world, subscribed)
    for kind in config.observer.states:
        line = _entry_line(text, "observer.states", kind) or field_line(text, "observer.states")
        if kind == "account" and profile.name == "stripe":  # a connected account's, on a Connect endpoint alone
            if not (config.target.connect and config.target.account):
                raise ConfigError("a connected account's states come from account.updated, which hookproof sends a "
                                  "Connect endpoint about a connected account (docs.stripe.com/connect/webhooks): "
                                  "set connect = true and account = \"acct_…\" under [target]",
                                  path=source, field=f"observer.states.{kind}", line=line)
            continue
        if kind not in kinds:
            raise ConfigError(f"hookproof's {profile.name} profile models no object kind {kind!r} (the kinds it "
                              f"models: {', '.join(sorted(kinds))})",
                              path=source, field=f"observer.states.{kind}", line=line)
        stated = stated_kinds(profile.world, subscribed)
        if kind == "dispute" and profile.name == "stripe" and kind not in stated:  # optional types, listed only
            raise ConfigError("a dispute's states come from Stripe's charge.dispute.* events, which hookproof sends "
                              "only to an endpoint whose enabled_events lists them (as Stripe sends an endpoint only "
                              "the types it enabled): add charge.dispute.created, charge.dispute.funds_withdrawn, "
                              "charge.dispute.updated, charge.dispute.closed and charge.dispute.funds_reinstated "
                              "to [target] enabled_events",
                              path=source, field=f"observer.states.{kind}", line=line)
        if kind not in stated:
            raise ConfigError(f"no event of hookproof's {profile.name} profile carries a {kind}'s status, so nothing "
                              f"would compare this query's rows (the kinds whose states it compares: "
                              f"{', '.join(sorted(stated))})",
                              path=source, field=f"observer.states.{kind}", line=line)


def _check_catalog_kinds(config: Config, user: Any, text: str, source: str) -> None:
    """Raise ConfigError (with its line) for an ``[observer.states]`` kind no type of the user's
    catalog is about (a misspelt ``organization_membership`` for ``organizationMembership``), or
    whose types set no state, naming the catalog's kinds either way."""
    assert config.observer is not None
    kinds = {spec.kind for spec in user.events}
    stated = sorted({spec.kind for spec in user.events if spec.state is not None})
    for kind in config.observer.states:
        line = _entry_line(text, "observer.states", kind) or field_line(text, "observer.states")
        if kind not in kinds:
            raise ConfigError(f"your catalog has no object kind {kind!r} (its kinds: {', '.join(sorted(kinds))}; a "
                              "type's kind is its object_type, else the type without its last part)",
                              path=source, field=f"observer.states.{kind}", line=line)
        if kind not in stated:
            raise ConfigError(f"no type of your catalog about a {kind} sets a state, so nothing would compare this "
                              f"query's rows (the kinds whose types set one: {', '.join(stated) or 'none'})",
                              path=source, field=f"observer.states.{kind}", line=line)


def stated_kinds(world: str, subscribed: frozenset[str] = frozenset()) -> frozenset[str]:
    """The object kinds of a provider world whose states the checks compare: those of the
    events its stories emit with a status (its lifecycle and, where it has one, its state
    story), told as to an endpoint sent the optional types `subscribed` (`Config.subscribed_types`:
    GitHub's check runs to an App listing the checks), so a kind a world gains states for is
    accepted with no list to keep."""
    from hookproof.simulator.world import new_world

    made = new_world(world, 1)
    made.sent_only(lambda t: t in subscribed)
    events = [*made.lifecycle(), *(story() if (story := getattr(made, "state_story", None)) is not None else ())]
    return frozenset(e.object_type for e in events if e.status is not None)


def _check_state_fields(config: Config, text: str, source: str) -> None:
    """Raise ConfigError (with its line) for an ``[observer.state_fields]`` kind whose path
    its events lack (`Config.state_field_map`)."""
    try:
        config.state_field_map()
    except ConfigError as exc:
        kind = (exc.field or "").rpartition(".")[2]
        raise ConfigError(exc.message, path=source, field=exc.field,
                          line=_entry_line(text, "observer.state_fields", kind)
                          or field_line(text, "observer.state_fields") or 1) from None


def object_kinds(world: str, subscribed: frozenset[str] = frozenset()) -> frozenset[str]:
    """The object kinds of a provider world (``billing``: every Stripe resource the provider
    API serves; others: what their stories create, told as to an endpoint sent the optional
    types `subscribed`: GitHub's check suites and runs to an App listing the checks)."""
    from hookproof.simulator.world import RESOURCES, new_world

    if world == "billing":
        return frozenset(RESOURCES.values()) - {"event"}
    made = new_world(world, 1)
    made.sent_only(lambda t: t in subscribed)
    return frozenset(e.object_type for e in made.lifecycle())


def _check_dirs(config: Config, text: str, source: str) -> None:
    """Raise ConfigError (with its line) when a receiver's `cwd` is not a directory.

    Relative paths are relative to the config file, as when the receiver is started.
    """
    for field, spec in (("target.start.cwd", config.target.start), ("target.process.cwd", config.target.process)):
        if spec is None or spec.cwd is None:
            continue
        path = config.base_dir / spec.cwd
        if not path.is_dir():
            raise ConfigError(f"{path} is not a directory", path=source, field=field, line=field_line(text, field) or 1)


def locate(error: ConfigError, config: Config) -> ConfigError:
    """`error` with the config file and the line of its field, when it was raised
    without them (a check made while running, e.g. an import of target.app)."""
    if error.path is not None or error.field is None or config.source is None:
        return error
    try:
        text = Path(config.source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return error
    return ConfigError(error.message, path=config.source, field=error.field, line=field_line(text, error.field))


def _check_secrets(config: Config, text: str, source: str) -> Config:
    """Raise ConfigError (with the line of target.secret) when a secret cannot be resolved.

    The values are read and dropped: certify resolves them again when it runs.
    """
    try:
        values = config.target.secrets(config.base_dir)
    except ConfigError as exc:
        message = str(exc).removeprefix("target.secret: ")
        raise ConfigError(message, path=source, field="target.secret",
                          line=field_line(text, "target.secret") or 1) from None
    from hookproof.simulator.errors import SimulatorError
    from hookproof.simulator.profiles import get_profile

    try:
        get_profile(config.target.profile, settings=config.target.signing_settings()).check_secrets(values)
    except SimulatorError as exc:  # SecretError: the message names no secret
        raise ConfigError(f"{exc} ({_secret_sources(config.target.secret)}); nothing was started",
                          path=source, field="target.secret", line=field_line(text, "target.secret") or 1) from None
    return config


def _secret_sources(secret: str | list[str]) -> str:
    """Where `secret` (target.secret's value or values) is read from, never a value:
    ``env:NAME`` and ``file:PATH`` as written (`SecretRef.source`), a literal as ``a literal in the file``."""
    from hookproof.secret_ref import SecretRef

    values = [secret] if isinstance(secret, str) else secret
    named = [SecretRef.parse(v).source for v in values]
    return "read from " + ", ".join(n if n != "literal" else "a literal in the file" for n in dict.fromkeys(named))


def _field_path(loc: tuple[int | str, ...]) -> str:
    """The dotted field path of a pydantic error location, without list indexes and
    without the tags pydantic adds for union members (``str``, ``list[str]``...)."""
    parts: list[str] = []
    model: Any = Config
    for p in loc:
        if isinstance(p, int):
            continue
        fields = getattr(model, "model_fields", None)
        if fields is None:
            if not parts:
                parts.append(str(p))
            break
        if p not in fields:
            parts.append(str(p))  # an unknown key: name it, it is what is wrong
            break
        parts.append(str(p))
        model = _model_of(fields[p].annotation)
    return ".".join(parts)


def _closest_key(dotted: str) -> str:
    """`` (did you mean effects?)`` for an unknown key close to a key its table has (a new
    user's ``effect``), else ``""``."""
    import difflib

    parent, _, name = dotted.rpartition(".")
    model = _model_at(parent)
    if model is None:
        return ""
    names = [f.alias or n for n, f in model.model_fields.items() if n != "source"]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


def _model_at(dotted: str) -> Any:
    """The pydantic model at `dotted` (``""``: the whole config), or None."""
    model: Any = Config
    for part in filter(None, dotted.split(".")):
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return None
        model = _model_of(fields[part].annotation)
    return model


def _model_of(annotation: Any) -> Any:
    """The pydantic model inside `annotation` (``X | None`` included), or None."""
    import typing

    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def field_at(text: str, line: int) -> str | None:
    """The dotted ``section.key`` set on 1-based `line` of TOML `text` (None if none is)."""
    path = TomlLines(text).path_at(line)
    return ".".join(path) if path else None


def _raise(message: str, source: str, field: str, line: int | None) -> Config:
    raise ConfigError(message, path=source, field=field or None, line=line)


def load_config(path: str | Path = DEFAULT_PATH, *, secrets: bool = True) -> Config:
    """Read and validate a config file (`secrets`: as `parse_config`). Raises ConfigError
    (missing, unreadable, invalid)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        import shlex

        init = "hookproof init" + ("" if p == Path(DEFAULT_PATH) else f" {shlex.quote(str(p))}")
        raise ConfigError(f"no config file {p} (write one with '{init}')") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        field = field_at(raw.decode("utf-8", "replace"), line)
        raise ConfigError(f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x})", path=str(p), field=field,
                          line=line) from None
    return parse_config(text, str(p), secrets=secrets)


__all__ = ["ChaosConfig", "Config", "CounterConfig", "DEFAULT_PATH", "DockerTargetConfig", "ObserverConfig", "PLACEHOLDERS", "ProcessTargetConfig", "ProviderConfig", "RunConfig", "SettleConfig", "StartConfig", "TargetConfig", "field_at", "field_line", "load_config", "locate", "parse_config", "resolve_sqlite_url"]
