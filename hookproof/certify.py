"""`hookproof certify`: run the catalog against the configured receiver and write reports.

Starts what the config asks for (the provider API and effect sink, the receiver's own
start command), runs the scenarios, writes report.json, junit.xml, summary.md and
report.html plus the history, and stops everything it started, also on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import re
import shlex
import socket
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence
from urllib.parse import urlsplit

from hookproof.config import Config
from hookproof.deadline import DEADLINE_NOTE, deadline_note, run_deadline  # noqa: F401 (certify's names too)
from hookproof.errors import ConfigError, UsageError
from hookproof.headline import (
    HEADLINE_PREFIX,
    first_answer,
    leftovers_headline,
    raw_body_headline,
    refused_events,
    refused_headline,
    secret_sources,
)
from hookproof.loopback import check_loopback_url
from hookproof.reports.model import RunReport
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.runner import Progress, Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.server.served import served_log
from hookproof.unhandled import unhandled_headline


@dataclass(frozen=True)
class CertifyResult:
    """The run's report and where its files are."""

    report: RunReport
    paths: dict[str, Path]

    @property
    def exit_code(self) -> int:
        return 0 if self.report.verdict == "pass" and not self.report.partial else 1

    @property
    def timed_out(self) -> bool:
        """The run stopped at its maximum duration (not on a signal)."""
        return any(n.startswith(DEADLINE_NOTE) for n in self.report.notes)


def startup_report(config: Config, profile: str, target: str, seed: int, started: float, history_path: Path,
                   notes: Sequence[str]) -> RunReport:
    """The partial report of a run stopped before its first scenario: no scenarios, verdict
    ``unknown``, the run's `notes` saying why."""
    from hookproof.scenarios.report_views import run_report

    return run_report((), target=target, profile=profile, live=config.target.live, seed=seed, started_at=started,
                      partial=True, history_file=str(history_path), notes=notes, config=config.source)


def import_object(spec: str, field: str, base_dir: Path | None = None) -> Any:
    """The attribute named by ``module:attr`` (dots allowed on both sides), importable
    from `base_dir` (the config file's folder) too. Raises ConfigError."""
    module_name, _, attr = spec.partition(":")
    if base_dir is not None and str(base_dir.resolve()) not in sys.path:
        sys.path.insert(0, str(base_dir.resolve()))
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # importing user code may raise anything
        raise ConfigError(f"cannot import {spec!r}: {type(exc).__name__}: {exc}", field=field) from None
    return obj


def make_observer(config: Config, server_state: Any) -> Callable[[], Observation]:
    """The configured observer as a function returning one Observation: the one factory
    certify and the storm share (`scenarios.observer_factory`). Raises ConfigError."""
    from hookproof.scenarios.errors import ObserverError
    from hookproof.scenarios.observer_factory import ObserverSpec, build_observer

    try:
        spec = ObserverSpec.from_mapping(config.observed.model_dump(), base_dir=config.base_dir)
        if (fields := config.state_field_map()) is not None:  # a status whose events lack a field: not compared
            spec = replace(spec, state_absent=fields.absent)
        return build_observer(spec, sink=server_state.sink if server_state is not None else None)
    except ObserverError as exc:
        field = "observer.callable" if config.observed.kind == "python" else "observer"
        raise ConfigError(str(exc), field=field) from None


@contextlib.contextmanager
def provider_server(config: Config) -> Iterator[Any]:
    """Start the provider API and effect sink in the background; yields the
    `simulator.server.runner.StartingServer` (`state`, `api_base`, `sink_url` at once;
    `ready()` before the first delivery). The receiver's process starts meanwhile: the
    app's import and build no longer delay it. Its port is ``[provider] port``, else one of
    ``[chaos] ports`` when set (a shared machine's assigned range holds every port a run
    takes), else any free one. Raises ListenError when the port cannot be had."""
    from urllib.parse import urlsplit

    from hookproof.simulator.server.runner import StartingServer
    from hookproof.simulator.server.state import ServerState
    from hookproof.simulator.serving import PortRange

    port = config.provider.port
    if not port and config.chaos.ports and config.provider.host in ("127.0.0.1", "localhost"):
        try:
            receiver = urlsplit(config.target.url).port if config.target.url else None
        except ValueError:
            receiver = None
        port = PortRange(*config.chaos.ports, exclude={receiver} if receiver else frozenset()).take()
    state = ServerState(api_keys=[config.provider.api_key])
    with StartingServer(state, host=config.provider.host, port=port) as server:
        yield server


#: The URL variables a receiver gets unless the user set them (in the config's `env` or
#: the environment hookproof runs in): a receiver may call its own downstream service.
URL_VARIABLES: tuple[str, ...] = ("HOOKPROOF_API_BASE", "HOOKPROOF_SINK_URL")


def receiver_env(user_env: Mapping[str, str], config: Config, secrets: Sequence[str], api_base: str,
                 sink_url: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a started receiver gets on top of hookproof's environment.

    ``HOOKPROOF_SECRET`` and ``HOOKPROOF_API_KEY`` always come from the config (they
    must match what hookproof signs with and accepts). ``HOOKPROOF_API_BASE`` and
    ``HOOKPROOF_SINK_URL`` are the simulator's, unless the user set them, in `user_env`
    (the config's ``env`` table) or in `environ` (default: ``os.environ``): what the
    user set wins.
    """
    environ = os.environ if environ is None else environ
    urls = {"HOOKPROOF_API_BASE": api_base, "HOOKPROOF_SINK_URL": sink_url}
    ours = {k: v for k, v in urls.items() if k not in user_env and k not in environ}
    return {**ours, **user_env, "HOOKPROOF_SECRET": secrets[0], "HOOKPROOF_API_KEY": config.provider.api_key}


#: The hookproof values a started receiver's `env` values may name, as {name}.
ENV_PLACEHOLDERS = ("secret", "api_base", "sink_url", "api_key", "port")


def expand_env(env: Mapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """`env` with each ``{name}`` of `ENV_PLACEHOLDERS` replaced by hookproof's value
    (``STRIPE_WEBHOOK_SECRET = "{secret}"``); other braces are left as they are."""
    pattern = re.compile(r"\{(" + "|".join(ENV_PLACEHOLDERS) + r")\}")
    return {k: pattern.sub(lambda m: values.get(m.group(1), m.group(0)), v) for k, v in env.items()}


def _provider_ports(config: Config) -> frozenset[int]:
    """The port ``[provider] port`` names (none when 0: the provider API then takes one of
    ``[chaos] ports`` itself, after the receiver's, see `provider_server`)."""
    return frozenset({config.provider.port}) if config.provider.port else frozenset()


def with_port(config: Config) -> Config:
    """`config` with ``{port}`` in `target.url` replaced by a free port on 127.0.0.1 (picked
    now, once per run; the first free one of ``[chaos] ports`` when set, never ``[provider] port``); a `[target.start]` without its own `port` gets the same one (or, with
    no ``{port}`` in the URL, the URL's port), for its ``{port}`` placeholders."""
    from urllib.parse import urlsplit

    from hookproof.simulator.serving import PortRange, free_port

    t = config.target
    if not t.url or "{port}" not in t.url:
        try:
            known = urlsplit(t.url).port if t.url else None
        except ValueError:
            known = None
        if t.start is None or t.start.port is not None or known is None:
            return config
        start = t.start.model_copy(update={"port": known})
        return config.model_copy(update={"target": t.model_copy(update={"start": start})})
    chosen = config.chaos.ports
    # within [chaos] ports when set, never the provider API's own port (set in the same range)
    port = PortRange(*chosen, exclude=_provider_ports(config)).take() if chosen else free_port()
    update: dict[str, Any] = {"url": t.url.replace("{port}", str(port))}
    if t.start is not None and t.start.port is None:
        update["start"] = t.start.model_copy(update={"port": port})
    return config.model_copy(update={"target": t.model_copy(update=update)})


@contextlib.contextmanager
def started_receiver(config: Config, secrets: Sequence[str], api_base: str, sink_url: str,
                     log: Any = None) -> Iterator[None]:
    """The receiver the config says hookproof starts, started as certify starts it
    (`[target.start]`, or `[target.process]`/`[target.docker]` without faults), for
    explore, replay and storm; stopped after. A process's output goes to `log` (a
    `chaos.process.ReceiverLog`, see `receiver_log`) when given."""
    with receiver_process(config, secrets, api_base, sink_url, log), \
            controlled_receiver(config, secrets, api_base, sink_url, History(), 0, log):
        yield


@contextlib.contextmanager
def receiver_process(config: Config, secrets: Sequence[str], api_base: str, sink_url: str,
                     log: Any = None) -> Iterator[Any]:
    """Start the receiver's `start` command if configured, wait healthy, stop it after; its
    output goes to `log` (a `chaos.process.ReceiverLog`) when given. Yields the started
    `chaos.process.ReceiverProcess`, or None without a `start` command."""
    from hookproof.chaos.process import ReceiverProcess

    start = config.target.start
    if start is None:
        yield
        return
    values = {"api_base": api_base, "sink_url": sink_url, "port": str(start.port or "")}
    try:
        command = start.command.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(f"unknown placeholder {exc} (known: {{api_base}}, {{sink_url}}, {{port}})",
                          field="target.start.command") from None
    env = receiver_env(expand_env(start.env, {**values, "secret": secrets[0], "api_key": config.provider.api_key}),
                       config, secrets, api_base, sink_url)
    if start.port is not None and "PORT" not in start.env:  # what Node, Go and Ruby apps listen on
        env = {"PORT": str(start.port), **env}
    health = start.health_url_at()
    cwd = str(config.base_dir / start.cwd) if start.cwd else str(config.base_dir)
    proc = ReceiverProcess(shlex.split(command), env=env, cwd=cwd, health_url=health, port=start.port,
                           startup_timeout_s=start.startup_timeout_s, masked=secrets, log=log)
    with contextlib.ExitStack() as stack:
        stack.push(proc)  # stopped even when the start itself is interrupted (Ctrl-C, SIGTERM)
        proc.start()
        yield proc


def seed_hook(config: Config, secrets: Sequence[str], api_base: str, sink_url: str) -> Any:
    """The `[target.seed]` table as the runner's `scenarios.seeding.SeedHook` (None: no seed).

    Its command, URL and env values get ``{api_base}``, ``{sink_url}``, ``{port}`` (the
    receiver's), ``{secret}`` and ``{api_key}``; the command runs in the config's folder (or
    its `cwd`) with hookproof's environment and a started receiver's ``HOOKPROOF_*`` variables.
    """
    seed = config.target.seed
    if seed is None:
        return None
    from hookproof.scenarios.seeding import SeedHook

    values = {"api_base": api_base, "sink_url": sink_url, "port": str(urlsplit(config.target.url or "").port or ""),
              "secret": secrets[0], "api_key": config.provider.api_key}
    masked = (*secrets, config.provider.api_key)
    if seed.url is not None:
        return SeedHook(url=seed.url.format(**values), timeout_s=seed.timeout_s, masked=masked,
                        creates=tuple(seed.creates), checkout_modes=tuple(seed.checkout_modes))
    assert seed.command is not None
    env = {**os.environ, **receiver_env(expand_env(seed.env, values), config, secrets, api_base, sink_url)}
    cwd = str(config.base_dir / seed.cwd) if seed.cwd else str(config.base_dir)
    return SeedHook(argv=tuple(shlex.split(seed.command.format(**values))), timeout_s=seed.timeout_s, env=env,
                    cwd=cwd, masked=masked, creates=tuple(seed.creates), checkout_modes=tuple(seed.checkout_modes))


#: What a receiver in a container needs installed, and how to get it (the image installs it too).
DOCKER_MISSING = ("a receiver in a container is started through the docker SDK, which hookproof installs with its "
                  "chaos extra: pip install 'hookproof[chaos]'")


@contextlib.contextmanager
def controlled_receiver(config: Config, secrets: Sequence[str], api_base: str, sink_url: str, history: History,
                        seed: int, log: Any = None) -> Iterator[Any]:
    """With `[target.process]` or `[target.docker]`: start the receiver under a fault
    injector (`chaos.nemesis.Nemesis`) and yield it; heal and stop it after. Else None.
    A process's output goes to `log` (a `chaos.process.ReceiverLog`) when given."""
    t = config.target
    spec = t.process or t.docker
    if spec is None:
        yield None
        return
    from urllib.parse import urlsplit

    from hookproof.chaos.nemesis import Nemesis, docker_factory, process_factory

    try:
        command = spec.command.format(api_base=api_base, sink_url=sink_url, port="{port}")
    except (KeyError, IndexError, ValueError) as exc:
        section = "target.process" if t.process else "target.docker"
        raise ConfigError(f"unknown placeholder {exc} (known: {{api_base}}, {{sink_url}}, {{port}})",
                          field=f"{section}.command") from None
    url = urlsplit(t.url or "")
    values = {"api_base": api_base, "sink_url": sink_url, "port": str(url.port or ""), "secret": secrets[0],
              "api_key": config.provider.api_key}
    env = receiver_env(expand_env(spec.env, values), config, secrets, api_base, sink_url,
                       environ={} if t.docker is not None else None)  # a container gets only `env`
    if t.process is not None:
        p = t.process
        cwd = config.base_dir / p.cwd if p.cwd else config.base_dir
        make = process_factory(command, health_path=p.health_path, env=env, cwd=cwd,
                               startup_timeout_s=p.startup_timeout_s, masked=secrets, log=log)
        backend = "process"
    else:
        try:
            import docker
        except ImportError:
            raise ConfigError(DOCKER_MISSING, field="target.docker") from None
        d = t.docker
        assert d is not None
        try:
            client = docker.from_env(timeout=60)
        except docker.errors.DockerException as exc:
            raise ConfigError(f"the docker daemon is unreachable: {exc}", field="target.docker") from None
        volumes = {str((config.base_dir / host).resolve()): inside for host, inside in d.volumes.items()}
        make = docker_factory(client, d.image, command, health_path=d.health_path, volumes=volumes, env=env,
                              startup_timeout_s=d.startup_timeout_s, masked=secrets)
        backend = "docker"
    from hookproof.simulator.serving import PortRange

    taken = {url.port or 80, *_provider_ports(config)}
    ports = PortRange(*config.chaos.ports, exclude=taken) if config.chaos.ports else None
    with Nemesis(make, url.port or 80, history=history, path=url.path or "/", backend=backend, seed=seed,
                 ports=ports) as nemesis:
        yield nemesis


def receiver_log(config: Config, secrets: Sequence[str]) -> tuple[Any, Any]:
    """The run's receiver log (`chaos.process.ReceiverLog`, masking the signing secrets and
    the provider API key) and its scenario marks (`receiver_log.ScenarioMarks`, with each
    scenario's end too: `_EndedMarks`), for a
    receiver hookproof starts as a process (`[target.start]`, `[target.process]`); else
    (None, None)."""
    if config.target.start is None and config.target.process is None:
        return None, None
    from hookproof.chaos.process import ReceiverLog
    from hookproof.receiver_log import ScenarioMarks

    log = ReceiverLog(masked=[*secrets, config.provider.api_key])
    return log, _EndedMarks(ScenarioMarks(log))


class _EndedMarks:
    """`receiver_log.ScenarioMarks` that also knows where each scenario ended (`end`): a
    scenario that overlapped the next one (`scenarios.overlap`) gets the receiver's lines up
    to its own end, not only up to the next one's start. One that ended before the next
    began (one after another) gets the same tail as from `ScenarioMarks`."""

    def __init__(self, marks: Any) -> None:
        self.marks = marks
        self.ends: dict[str, int] = {}

    def mark(self, scenario_id: str) -> None:
        """Scenario `scenario_id` starts now."""
        self.marks.mark(scenario_id)

    def end(self, scenario_id: str) -> None:
        """Scenario `scenario_id` ends now."""
        self.ends[scenario_id] = self.marks.log.mark()

    def tails(self) -> dict[str, str]:
        """scenario id -> the last lines (masked) the receiver wrote from its start to its end,
        or to the next start when that is later; "" for none."""
        log = self.marks.log
        order = sorted(self.marks.starts.items(), key=lambda item: item[1])
        nexts = [start for _, start in order[1:]] + [log.mark()]
        out: dict[str, str] = {}
        for (sid, start), nxt in zip(order, nexts):
            end = max(nxt, self.ends.get(sid, nxt))
            out[sid] = log.tail(start, end) if end > start else ""
        return out


def chaos_settings(config: Config, backend: str) -> Any:
    """The `[chaos]` section as the chaos scenarios' settings."""
    from hookproof.scenarios.chaos import ChaosSettings

    return ChaosSettings(backend=backend, **config.chaos.model_dump(exclude={"ports"}))  # ports: the nemesis's


def make_target(config: Config) -> Target:
    t = config.target
    if t.app is not None:
        return Target(app=import_object(t.app, "target.app", config.base_dir), path=t.path)
    return Target(url=t.url)


#: Catalog scenarios certify runs side by side at most (`scenarios.overlap`: only those that
#: cannot change each other's verdicts, and only where the runner allows it, `Runner.may_overlap`).
OVERLAP_BOUND = 4


#: What the report says when certify probed the receiver before its first scenario.
PROBE_NOTE = ("reachability: before the first scenario hookproof opened one connection to {where} and closed it "
              "without sending a request (a receiver hookproof did not start; one that serves a single "
              "connection has used it up)")


def certify_unsent_note(config: Config, history_path: Path, *, whole: bool = True) -> str | None:
    """The note naming the types the config enables (`unsent.configured_types`) that no
    scenario of the run sent (its history's types), or None; None too for a run of chosen
    scenarios (`whole` False: ``certify reorder``), which never meant to send every type, and
    for one that stopped before some of its scenarios (their types were not run, not unsent)."""
    from hookproof.unsent import configured_types, every_type_of, history_types, unsent_note

    configured = configured_types(config)
    if not whole or not configured or not history_path.is_file():
        return None
    import sqlite3

    try:
        sent = history_types(history_path)
    except sqlite3.Error:  # a run refused before its history held attempts
        return None
    return unsent_note(configured, sent, "certify", every=every_type_of(config))


def untested_items_note(report: RunReport) -> str | None:
    """The note of a whole-catalog run naming the checklist items it left ``untested`` (no scenario
    testing them applied to the endpoint: a catalog with no oversized body, no provider API), each
    with the scenarios that would have; "Persists before acknowledging" has its own note
    (`crash_untested_note`). None when every item was tested."""
    idle = [i for i in report.checklist if i.verdict == "untested" and i.id != "persists-before-ack"]
    if not idle:
        return None
    testing = {i.id: [s.id for s in report.scenarios if i.id in s.checklist] for i in idle}
    said = "; ".join(f"{i.title} ({', '.join(testing[i.id])})" if testing[i.id] else i.title for i in idle)
    return (f"checklist item(s) untested by this run, none of their scenarios applying to this endpoint (each "
            f"scenario's reason is in the report): {said}")


def crash_untested_note(report: RunReport) -> str | None:
    """The note of a run whose checklist leaves "Persists before acknowledging" untested while
    other scenarios spoke to it (`catalog.CHECKLIST_DECIDED_BY`): which run would decide it.
    None when chaos decided it, or nothing spoke to it."""
    item = next((i for i in report.checklist if i.id == "persists-before-ack"), None)
    if item is None or item.verdict != "untested" or not item.evidence:
        return None
    return ("Persists before acknowledging is untested: a receiver that answers 200 and stores the effect "
            "afterwards (a background job, a queue without persistence) passes every delivery fault; `certify "
            "--chaos` kills it right after its answer and while it works (crash-after-ack, "
            "kill-during-processing; it needs [target.process] or [target.docker])")


def connect_account_note(config: Config) -> str | None:
    """The note of a Connect endpoint (``target.connect``) whose config names no connected
    account (``target.account``): its events carried no ``account``, which every event Stripe
    sends a Connect endpoint carries (docs.stripe.com/connect/webhooks); else None."""
    if not config.target.connect or config.target.account:
        return None
    return ("connect = true names no connected account (target.account), so the events carried no `account`; "
            "every event Stripe sends a Connect endpoint names the connected account it comes from "
            "(docs.stripe.com/connect/webhooks): name one of the platform's connected accounts to send them so")


#: The Checkout Session types whose events owe a session's fulfilment.
CHECKOUT_FULFILMENT_TYPES: tuple[str, ...] = ("checkout.session.completed", "checkout.session.async_payment_succeeded")


def checkout_modes_note(config: Config, report: RunReport) -> str | None:
    """The note of a Stripe run whose ``lost`` findings are all Checkout Sessions' fulfilments
    (``fulfillment:cs_…``: the receiver applied every other effect it owed) while the config
    leaves the shop's Checkout modes to their default (both). Under hookproof's built-in keys
    such a key is a payment-mode session's (a subscription-mode one owes ``provision:``): a SaaS
    that sells plans alone opens ``mode=subscription`` sessions only (docs.stripe.com/billing/
    subscriptions/build-subscriptions), so Stripe never sends it one, and a receiver ignoring
    them is right. Under the team's own key for a session's events the key says nothing of the
    mode, and the note names both settings. None otherwise (a receiver that lost other keys too
    has another fault first)."""
    if config.target.profile != "stripe" or config.target.shop_checkout_modes() is not None:
        return None
    keys = [(f.key, f.count) for s in report.scenarios for f in s.findings if f.check_id == "lost"]
    if not keys or not all(key.startswith("fulfillment:cs_") for key, _ in keys):
        return None
    lost = sum(count for _, count in keys)
    if any(t in config.business_keys for t in CHECKOUT_FULFILMENT_TYPES):
        return (f"{lost} lost finding(s) are Checkout Sessions' fulfilments (fulfillment:cs_…): hookproof's stories "
                "open Checkout Sessions in both modes, as a shop selling one-off purchases and plans does; if yours "
                "opens sessions of one mode only, Stripe never sends it a session of the other: say which with "
                "checkout_modes = [\"payment\"] (one-off purchases) or [\"subscription\"] (plans) under [target] "
                "and certify again")
    return (f"{lost} lost finding(s) are payment-mode Checkout Sessions' fulfilments (fulfillment:cs_…): hookproof's "
            "stories open Checkout Sessions in both modes, as a shop selling one-off purchases and plans does; if "
            "yours opens only subscription-mode sessions (a SaaS selling plans), Stripe never sends it one: say so "
            "with checkout_modes = [\"subscription\"] under [target] and certify again")


#: The go-live checklist items about an effect applied exactly once under delivery faults, whose
#: pass `optional_uncovered_notes` bounds to the optional types their scenarios sent.
EFFECT_ONCE_ITEMS: tuple[str, ...] = ("unique-under-concurrency", "timeouts-tested", "duplicates-tested",
                                      "persists-before-ack")


def optional_uncovered_notes(config: Config, report: RunReport) -> list[str]:
    """Notes on the passed checklist items of `EFFECT_ONCE_ITEMS` whose scenarios that ran sent no
    event of an optional type the endpoint is subscribed to and the run found effectful
    (`owed_optional_types`: Shopify's compliance topics): the pass says nothing of that type (a
    ``certify related-burst`` races no ``customers/data_request``; ``duplicate-concurrent``
    does). One note per item, its topics sorted; none for a config subscribed to no optional
    type (every other profile's)."""
    owed = owed_optional_types(config)
    if not owed:
        return []
    sent = {s.id: {a.event_type for a in s.attempts} for s in report.scenarios}
    notes = []
    for item in report.checklist:
        if item.id not in EFFECT_ONCE_ITEMS or item.verdict != "pass":
            continue
        ran = [e.scenario for e in item.evidence]
        covered = set().union(*(sent.get(sid, set()) for sid in ran)) if ran else set()
        missing = sorted(owed - covered)
        if ran and missing:
            one = len(missing) == 1
            notes.append(f"the go-live checklist's \"{item.title}\" passed on scenarios that sent no "
                         f"{', '.join(missing)} ({', '.join(ran)}): it says nothing of "
                         f"{'that topic' if one else 'those topics'}, which the endpoint is subscribed to and "
                         f"owes an effect on")
    return notes


def owed_optional_types(config: Config) -> set[str]:
    """The optional types the endpoint is subscribed to (`Config.subscribed_types`: Shopify's
    compliance topics) whose event owes an effect under the config's keys (the team's
    ``[business_keys]``, else hookproof's own): one event of each from its smallest story
    (`simulator.world.emit_events`). Empty for a config subscribed to none."""
    subscribed = config.subscribed_types()
    if not subscribed:
        return set()
    from hookproof.simulator.world import emit_events, new_world

    mapping = config.key_mapping()
    world = new_world(config.profile().world, 1)
    world.sent_only(lambda t: t in subscribed)  # its stories tell the optional types subscribed to
    owed = set()
    for name in subscribed:
        for event in emit_events(world, name):
            if event.type == name and (mapping.key_of(event) if mapping is not None else event.business_key):
                owed.add(name)
    return owed


def unwalked_states_note(config: Config, walked: frozenset[str]) -> str | None:
    """The note naming the ``[observer.states]`` kinds no scenario of the run walked the states
    of (the world has such states, `config.stated_kinds`, but the scenarios run sent none of
    that kind's status changes): their queries were read and compared with nothing, so the
    verdict says nothing of them. None when every declared kind was walked."""
    declared = sorted(config.observer.states) if config.observer is not None else []
    idle = [kind for kind in declared if kind not in walked]
    if not idle:
        return None
    compared = sorted(set(declared) & walked)
    return (f"[observer.states] {', '.join(idle)}: no scenario of this run walked the states of "
            f"{'this kind' if len(idle) == 1 else 'these kinds'}, so the "
            f"{'query was' if len(idle) == 1 else 'queries were'} compared with nothing"
            + (f" (states compared: {', '.join(compared)})" if compared else ""))


def wider_keys_notes(config: Config) -> list[str]:
    """Notes on the team's key rules that owe an effect where hookproof's own key owes none
    (`scenarios.business_keys.wider_than_built_in`, over one event of every type the profile
    sends, each from its smallest story): a run whose lost findings come from an unpaid
    session fulfilled by nobody says why (certify adds them to a run with lost findings only:
    on a run without, they explain nothing)."""
    mapping = config.key_mapping()
    if mapping is None or not mapping.templates:
        return []
    from hookproof.scenarios.business_keys import wider_than_built_in

    return wider_than_built_in(mapping, config.sample_story())


def with_wider_keys_notes(report: RunReport, notes: Sequence[str]) -> RunReport:
    """`report` with `notes` (`wider_keys_notes`) added when one of its scenarios has a ``lost``
    finding, which they may explain; else `report` itself (a run without one: they explain nothing,
    and a passing run printed them every time)."""
    if not notes or not any(f.check_id == "lost" for s in report.scenarios for f in s.findings):
        return report
    from dataclasses import replace

    return replace(report, notes=(*report.notes, *notes))


def console_notes(report: RunReport) -> tuple[str, ...]:
    """The notes of `report` the console prints under the table: all but the run's headline
    (`hookproof.headline`), printed above it. The report's files keep every note."""
    return tuple(n for n in report.notes if not n.startswith(HEADLINE_PREFIX))


def with_probe_note(report: RunReport, note: str | None) -> RunReport:
    """`report` with the reachability probe's `note` (`PROBE_NOTE`) first among its notes
    when an attempt of the run ended in a connection error, which a receiver whose single
    connection the probe used up would show; else `report` as it is: a healthy receiver's
    run does not need it, on the console or in any report."""
    if note is None or not any(a.outcome == "connection_error" for s in report.scenarios for a in s.attempts):
        return report
    from dataclasses import replace

    return replace(report, notes=(note, *report.notes))


def check_reachable(config: Config) -> str | None:
    """Something accepts a connection at `target.url`; returns the report's note saying so
    (`PROBE_NOTE`), or None when nothing was probed.

    The probe is a connection closed without a request, made only for a receiver
    hookproof did not start: in-process apps, `[target.start]` (waited for until ready)
    and `[target.process]`/`[target.docker]` (started under faults) get none, so a
    receiver that serves one connection keeps it for the scenarios. Raises ConfigError
    naming `target.url` when nothing listens there.
    """
    t = config.target
    url = t.url
    if url is None or t.process is not None or t.docker is not None or t.start is not None:
        return None
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=5.0).close()
    except ConnectionResetError:
        pass  # something listens there (and resets); the scenarios will say what it does
    except OSError as exc:
        reason = "nothing listens there" if isinstance(exc, ConnectionRefusedError) else (exc.strerror or str(exc))
        raise ConfigError(f"cannot reach {parts.hostname}:{port} ({reason}); start the receiver or fix the URL",
                          field="target.url") from None
    return PROBE_NOTE.format(where=f"{parts.hostname}:{port}")


def preflight(config: Config, runner: Runner) -> str | None:
    """Before any scenario: the receiver is reachable and the observer can read it. Returns
    the probe's note (`check_reachable`), which the report keeps only when the run shows why
    (`with_probe_note`).

    Raises ConfigError naming `target.url` when nothing listens there (`check_reachable`),
    and `observer` when the first observation fails (missing table, bad query, endpoint down).
    """
    from hookproof.scenarios.errors import ObserverError

    note = check_reachable(config)
    try:
        runner.observe()
    except ObserverError as exc:
        raise ConfigError(str(exc), field="observer") from None
    return note


def check_loopback(config: Config, allow_remote: bool, *, command: str = "certify",
                   sends: str = "duplicate bursts and mass redelivery") -> None:
    """Refuse a target off this machine unless `allow_remote` (`command` sends `sends`).

    Raises UsageError naming the URL and the flag (`hookproof.loopback`, the one guard).
    """
    check_loopback_url(config.target.url, allow_remote, command=command, sends=sends)


def check_chaos(config: Config, chaos: bool) -> None:
    """Refuse `--chaos` when hookproof does not run the receiver itself.

    Only `[target.process]` and `[target.docker]` can be faulted (killed, paused,
    restarted, cut off); a `[target.start]` receiver is started but never faulted.
    Raises UsageError naming the flag, and ConfigError (field ``chaos.ports``) when
    ``[chaos] ports`` holds fewer ports than ``--chaos`` takes (`Config.check_port_range`).
    """
    if chaos and config.target.process is None and config.target.docker is None:
        raise UsageError("--chaos needs [target.process] or [target.docker] in the config "
                         "(hookproof must control the receiver)")
    if chaos:
        config.check_port_range(chaos=True)


def certify(config: Config, *, scenarios: Sequence[str] | None = None, out_dir: Path | Callable[[], Path],
            progress: Progress | None = None, on_start: Callable[[Runner], None] | None = None,
            allow_remote: bool = False, chaos: bool = False, max_duration_s: float | None = None,
            keep_going: bool = False, overlap: int = OVERLAP_BOUND, seed: int | None = None,
            stopped_by: Callable[[], str | None] | None = None,
            on_finish: Callable[[str], None] | None = None,
            deadline_source: str = "--max-duration or run.max_duration_s") -> CertifyResult:
    """Run the selected scenarios (default: config's run.scenarios, else the catalog).

    An interruption (KeyboardInterrupt, which the CLI also makes of SIGTERM) while the
    scenarios run ends the run early: everything started is stopped, the history is
    closed (WAL checkpointed) and a partial report is written.

    Raises ConfigError for a configuration that cannot run (secrets, imports, start),
    UsageError for a remote target without `allow_remote`, and for `chaos` without
    `[target.process]` or `[target.docker]`.

    With `chaos`, the chaos scenarios run after the selected ones (when none are
    selected). `out_dir` may be a function making the report folder (`hookproof.rundirs`),
    called only once the configuration has been checked.

    The run stops at `max_duration_s` (default: ``run.max_duration_s``) as it does on an
    interruption (only when called from the main thread, where KeyboardInterrupt lands),
    and its partial report says so, naming where the limit came from (`deadline_source`). After a scenario in which the receiver answered no
    valid attempt (timeouts, refused connections), or refused every valid one with 401/403 while
    none of the run was acknowledged (a wrong secret), the rest are not run unless `keep_going`.
    Up to `overlap` independent scenarios run side by side (`scenarios.overlap`; 1: one after
    another); the report is in catalog order either way. `seed` (default: ``run.seed``, else a
    random one) makes the scenarios' worlds; the report names it. `stopped_by` names what
    interrupted the run (``"SIGTERM"``), for its note and its unfinished scenarios' reason
    (`scenarios.runner.Runner.stopped_by`). `progress` is called as each scenario starts,
    `on_finish` with its id as it ends (after its checks).
    """
    from hookproof.reports import write_reports

    config = with_port(config)
    check_loopback(config, allow_remote)
    check_chaos(config, chaos)
    secrets = config.target.secrets(config.base_dir)
    profile = config.profile()  # with [catalog], the profile sends the user's own events
    if seed is None:
        seed = config.run.seed if config.run.seed is not None else random.SystemRandom().randrange(1, 2**31)
    target = make_target(config)  # imports target.app: a failing import writes nothing
    out_dir = out_dir() if callable(out_dir) else out_dir  # a run folder is made only for a run that starts
    out_dir.mkdir(parents=True, exist_ok=True)
    history_path = out_dir / "history.sqlite"
    for stale in out_dir.glob("history.sqlite*"):
        stale.unlink()
    history = History(history_path)
    history.set_meta("profile", profile.name)
    history.set_meta("seed", seed)
    chosen = list(scenarios or config.run.scenarios or []) or None
    if chaos and not scenarios:
        from hookproof.scenarios.catalog import CATALOG
        from hookproof.scenarios.chaos import CHAOS_CATALOG

        chosen = [*(chosen or CATALOG), *CHAOS_CATALOG]
    finished = False
    limit_s = max_duration_s if max_duration_s is not None else config.run.max_duration_s
    notes: list[str] = []
    from hookproof.unsent import restated_keys_note, unmodelled_note, unmodelled_version_note

    if (unmodelled := unmodelled_note(config)) is not None:  # real types the endpoint enables, never sent
        notes.append(unmodelled)
    if (later := unmodelled_version_note(config)) is not None:  # events labeled with a version not modelled
        notes.append(later)
    if (restated := restated_keys_note(config)) is not None:  # the built-in money key as the team's own
        notes.append(restated)
    log, marks = receiver_log(config, secrets)

    def marked(sid: str, i: int, n: int) -> None:
        if marks is not None:
            marks.mark(sid)
        if progress is not None:
            progress(sid, i, n)

    def ended(sid: str) -> None:
        if marks is not None:
            marks.end(sid)
        if on_finish is not None:
            on_finish(sid)

    tails: dict[str, str] | None = None
    probe: str | None = None  # the reachability probe's note, kept only when the run shows why (`with_probe_note`)
    started = time.time()
    report: RunReport | None = None
    walked: frozenset[str] | None = None  # the kinds whose states the run's scenarios walked
    state: Any = None  # the provider API's, once it started
    try:
        with run_deadline(limit_s, notes, source=deadline_source) as disarm, provider_server(config) as provider:
            state, api_base, sink_url = provider.state, provider.api_base, provider.sink_url
            with receiver_process(config, secrets, api_base, sink_url, log) as started_process, \
                    controlled_receiver(config, secrets, api_base, sink_url, history, seed, log) as nemesis:
                provider.ready()
                runner = Runner(
                    target=target, profile=profile, secrets=secrets,
                    observe=make_observer(config, state), history=history, server_state=state,
                    live=config.target.live, account=config.target.account, connect=config.target.connect,
                    api_version=config.target.api_version,
                    enabled=frozenset(config.enabled_types() or ()) or None, seed=seed,
                    time_scale=config.run.time_scale, burst=config.run.burst,
                    redelivery_window=config.run.redelivery_window,
                    settle_window_s=config.settle.window_s, settle_deadline_s=config.settle.deadline_s,
                    settle_stall_s=config.settle.stall_s,
                    settle_interval_s=config.settle.interval_s, has_sink=config.observed.kind == "sink",
                    progress=marked, attempt_timeout_s=config.run.sender_timeout_s,
                    nemesis=nemesis if chaos else None,
                    started=getattr(nemesis, "receiver", None) or started_process,
                    chaos_settings=chaos_settings(config, "docker" if config.target.docker else "process"),
                    keys=config.key_mapping(), state_kinds=config.observed.state_kinds,
                    state_fields=config.state_field_map(),
                    keep_going=keep_going, notes=notes, retry_budget_s=config.run.retry_budget_s,
                    seeder=seed_hook(config, secrets, api_base, sink_url),
                    checkout_modes=config.target.story_checkout_modes(),
                    overlap=overlap, on_finish=ended,
                    stopped_by=stopped_by, config_file=config.source,
                )
                probe = preflight(config, runner)
                if on_start:
                    on_start(runner)
                report = runner.run(chosen)
                walked = runner.walked_kinds
                disarm()  # stopping what was started is not cut short
                finished = not report.partial
    except KeyboardInterrupt:
        if not any(n.startswith(DEADLINE_NOTE) for n in notes) or report is not None:
            raise  # Ctrl-C or SIGTERM: the command says so (exit 128 + signum)
        notes[:] = [n for n in notes if not n.startswith(DEADLINE_NOTE)] + [deadline_note(
            limit_s, deadline_source,
            "it was still starting (the provider API, the receiver, the seed): no scenario ran")]
        report = startup_report(config, profile.name, target.describe(), seed, started, history_path, notes)
    finally:  # also on an interruption during startup: the history stays readable
        history.set_meta("finished", finished)
        refused = report is not None and refused_headline(report, "") is not None
        quote = first_answer(history) if refused else None
        fetched = served_log(state).events_among(refused_events(report)) \
            if refused and report is not None and state is not None else 0
        history.close()
        if log is not None:  # the receivers have stopped: their last words are in
            from hookproof.receiver_log import keep_receiver_log

            tails = keep_receiver_log(log, marks, out_dir)
    assert report is not None  # runner.run returned one, or the start-up's deadline made one
    probed = with_probe_note(report, probe)
    untested = crash_untested_note(probed)
    if untested is not None:
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, untested))
    modes = checkout_modes_note(config, probed)
    if modes is not None:  # lost payment-mode fulfilments of a shop that may open no such session
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, modes))
    connected = connect_account_note(config)
    if connected is not None:  # Connect events without the account Stripe always names
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, connected))
    uncovered = optional_uncovered_notes(config, probed)
    if uncovered:  # a checklist pass whose scenarios sent none of a subscribed compliance topic
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, *uncovered))
    stopped = any((s.reason or "").startswith("not run:") for s in probed.scenarios)  # nothing after a down receiver
    # a partial or stopped run's scenarios that would have walked a kind were not run, not silent on it
    unwalked = unwalked_states_note(config, walked) if walked is not None and not (report.partial or stopped) else None
    if unwalked is not None:  # a state query the run read and compared with nothing
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, unwalked))
    unsent = certify_unsent_note(config, history_path,  # a partial or stopped run never sent every type it meant to
                                 whole=not (scenarios or config.run.scenarios or probed.partial or stopped))
    if unsent is not None:  # enabled types no scenario sent: the verdict is silent on them
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, unsent))
    whole = not (scenarios or config.run.scenarios or probed.partial or stopped)
    if whole and (idle := untested_items_note(probed)) is not None:  # a checklist line no scenario could test
        from dataclasses import replace

        probed = replace(probed, notes=(*probed.notes, idle))
    probed = with_wider_keys_notes(probed, wider_keys_notes(config))
    noted = probed is not report
    report = probed
    # a scenario that found its keys already there proved nothing: that first (else all refused, a wrong secret;
    # else one type's effects never applied, a type the receiver does not handle)
    headline = leftovers_headline(report) or refused_headline(report, secret_sources(config.target.secret),
                                                              quote=quote, fetched=fetched) \
        or raw_body_headline(report) or unhandled_headline(report)
    if headline is not None:  # first among the notes; the console prints it above the table
        from dataclasses import replace

        report = replace(report, notes=(headline, *report.notes))
    if tails is not None or headline is not None or noted:
        from hookproof.receiver_log import link_receiver_log, store_linked_report

        if tails is not None:
            report = link_receiver_log(report, tails)
        store_linked_report(history_path, report)  # `hookproof report` re-renders it as written here
    paths = write_reports(report, out_dir)
    paths["history"] = history_path
    return CertifyResult(report, paths)
