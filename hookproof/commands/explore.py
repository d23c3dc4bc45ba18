"""`hookproof explore`: search delivery schedules with a Hypothesis state machine.

In-process targets (``target.app``) get the deterministic tier: the machine shrinks a
failure to the smallest schedule, which is written as ``failing-schedule.json`` into
the report directory (`hookproof replay` runs it again). URL targets get the
statistical tier too: real-socket bursts repeated R times, reported as a hit rate with
the seeds. The reports are the certify ones (JSON, JUnit, Markdown, HTML).
Like certify, it refuses a target off loopback unless ``--allow-remote`` and checks that
something listens at ``target.url`` before sending anything.
Exit codes as certify: 0 no finding, 1 findings (or an unknown verdict), 2 usage or config error.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterable, Iterator, Optional

import typer

from hookproof.interrupts import Interrupts

if TYPE_CHECKING:
    from hookproof.config import Config
    from hookproof.reports.model import RunReport, ScenarioReport
    from hookproof.scenarios.statemachine import ExploreResult, ExploreTarget, Failure, HitRate
    from hookproof.simulator.profiles.base import Profile

#: File name of the shrunk failing schedule in the report directory.
SCHEDULE_FILE = "failing-schedule.json"
#: Scenario ids of the two tiers in the report.
MACHINE_ID = "explore-state-machine"
BURSTS_ID = "explore-burst-race"
#: Why bursts of which no copy was acknowledged certify nothing.
NOTHING_DELIVERED = ("no burst copy was acknowledged ({attempts} attempt(s) sent, none answered with success): "
                     "nothing was delivered, so nothing is certified")
#: The history `hookproof certify` writes; explore writes none, so an earlier one is removed.
HISTORY_FILES = ("history.sqlite", "history.sqlite-wal", "history.sqlite-shm")


@dataclass
class ExploreRun:
    """The outcome of `run_explore`: the report, the files, and the raw results."""

    report: "RunReport"
    paths: dict[str, Path]
    result: "ExploreResult"
    hit_rate: "HitRate | None" = None
    schedule_path: Path | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if self.report.verdict == "pass" else 1


def explore_options(cfg: "Config") -> dict[str, Any]:
    """The `ExploreTarget` keywords `cfg` sets: ``live``, ``account``, ``enabled`` (the world's
    names of the ``enabled_events``, a frozenset; None: all), ``keys``, ``state_fields`` and
    ``checkout_modes`` (what explore's worlds are told, and replay's check of a schedule), and
    ``stored_bursts``: the observer reads states (a state query, or an ``http`` or ``python``
    observer), so the search races two updates of a stored object."""
    enabled = cfg.enabled_types()
    kinds = cfg.observer.state_kinds if cfg.observer is not None else frozenset()
    return dict(live=cfg.target.live, account=cfg.target.account,
                enabled=frozenset(enabled) if enabled is not None else None,
                keys=cfg.key_mapping(), state_fields=cfg.state_field_map(),
                checkout_modes=cfg.target.shop_checkout_modes(), stored_bursts=kinds is None or bool(kinds))


@contextlib.contextmanager
def explore_target(cfg: "Config", log: Any = None) -> Iterator[tuple["ExploreTarget", Any]]:
    """The configured receiver as an ExploreTarget, with what it needs running.

    In-process apps see the provider API at `PROVIDER_API_BASE` (``HOOKPROOF_API_BASE``
    unless already set), routed by respx; URL targets get the real provider server and
    the receiver the config says hookproof starts, as certify starts it (`[target.start]`,
    `[target.process]`, `[target.docker]`); a receiver it did not start must listen at
    `target.url` (ConfigError naming it, as certify). The state machine drives the world
    the profile sends from, sends only the ``enabled_events`` and judges effects under the
    team's ``[business_keys]`` and ``[counters]``, as certify does. A receiver process's
    output goes to `log` (`certify.receiver_log`) when given. Yields (target, provider state).
    """
    from hookproof.certify import (
        check_reachable,
        make_observer,
        make_target,
        provider_server,
        started_receiver,
        with_port,
    )
    from hookproof.scenarios.statemachine import PROVIDER_API_BASE, shared_target
    from hookproof.simulator.server.state import ServerState

    cfg = with_port(cfg)  # a no-op once the command line did it

    secrets = cfg.target.secrets(cfg.base_dir)
    profile = cfg.profile()  # with [catalog], the user's own events
    options = explore_options(cfg)
    if cfg.target.app is not None:
        # For the in-process app only while the search runs: a run inside a longer-lived
        # process (the pytest plugin, a test) must not leave it to the receivers started later.
        added = {name: value for name, value in (("HOOKPROOF_API_BASE", PROVIDER_API_BASE),
                                                 ("HOOKPROOF_API_KEY", cfg.provider.api_key))
                 if name not in os.environ}
        os.environ.update(added)
        try:
            state = ServerState(api_keys=[cfg.provider.api_key])
            target = make_target(cfg)
            yield shared_target(target, make_observer(cfg, state), profile, secrets, **options), state
        finally:
            for name in added:
                os.environ.pop(name, None)
        return
    with provider_server(cfg) as provider:
        state = provider.state
        with started_receiver(cfg, secrets, provider.api_base, provider.sink_url, log):
            provider.ready()
            check_reachable(cfg)
            yield shared_target(make_target(cfg), make_observer(cfg, state), profile, secrets, in_process=False,
                                settle_window_s=cfg.settle.window_s, settle_deadline_s=cfg.settle.deadline_s,
                                settle_stall_s=cfg.settle.stall_s,
                                settle_interval_s=cfg.settle.interval_s, **options), state


def write_explore_reports(report: "RunReport", out_dir: Path) -> dict[str, Path]:
    """Write the reports; remove a history.sqlite an earlier certify left in `out_dir`.

    Explore writes no history, and `hookproof report --history` would otherwise render
    that older run's report as if it were this one.
    """
    from hookproof.reports import write_reports

    for name in HISTORY_FILES:
        (out_dir / name).unlink(missing_ok=True)
    return write_reports(report, out_dir)


def resolve_seed(cfg: "Config", seed: int | None) -> int:
    """The run's seed: `seed`, else ``run.seed``, else a random one."""
    if seed is not None:
        return seed
    return cfg.run.seed if cfg.run.seed is not None else random.SystemRandom().randrange(1, 2**31)


def configured_target(cfg: "Config") -> str:
    """The target as configured (``target.url`` or ``target.app``), before it is built."""
    return cfg.target.url or f"in-process app {cfg.target.app}"


#: Why an interrupted search certifies nothing (the scenario's reason, unless the deadline stopped it).
INTERRUPTED = "interrupted (SIGINT or SIGTERM) before the search finished"


def write_interrupted_report(out_dir: Path, started: float, cfg: "Config | None" = None, seed: int | None = None,
                             target: str | None = None, stopped: str | None = None) -> dict[str, Path]:
    """A partial report for an explore run stopped by SIGINT/SIGTERM, or by its deadline
    (`stopped`: the deadline's note, `deadline.deadline_note`, or the signal's, ``stopped by
    SIGTERM; …``), before it finished.

    It names the run's target, profile and seed when they were known (`cfg` None: the
    config was not loaded yet). The scenario's reason is `stopped` or `INTERRUPTED`;
    the report's notes carry `stopped`.
    """
    from dataclasses import replace

    from hookproof.reports.model import RunReport, ScenarioReport
    from hookproof.scenarios.report_views import VERSION, checklist

    scenario = ScenarioReport(MACHINE_ID, "State machine over delivery schedules",
                              "The search was interrupted before it finished; nothing is certified.", "unknown",
                              (), reason=stopped or INTERRUPTED)
    if cfg is None:
        report = RunReport(tool_version=VERSION, target="(interrupted)", profile="", environment="", seed=0,
                           started_at=started, finished_at=time.time(), verdict="unknown", scenarios=(scenario,),
                           checklist=checklist((scenario,)))
    else:
        report = run_report(cfg, target or configured_target(cfg), seed or 0, started, [scenario])
    out_dir.mkdir(parents=True, exist_ok=True)
    notes = (*report.notes, stopped) if stopped else report.notes
    return write_explore_reports(replace(report, partial=True, notes=notes), out_dir)


def run_explore(cfg: "Config", *, out_dir: Path | Callable[[], Path], max_examples: int = 100, seed: int | None = None,
                repeats: int = 20, database: Any = None, allow_remote: bool = False,
                progress: Callable[[str, int, int | None], None] | None = None,
                on_target: Callable[[str], None] | None = None,
                stopped_by: Callable[[], str | None] | None = None) -> ExploreRun:
    """Explore the configured receiver, write the reports (and the failing schedule).

    `progress(phase, done, total)` hears of each phase (total None: not known ahead) and
    of each burst run; `on_target(name)` hears the target's name as reports give it, once
    it is built. `out_dir` may be a function making the report folder
    (`hookproof.rundirs`), called once the target passed the loopback check. Raises
    UsageError for a remote target without `allow_remote`, ConfigError when nothing
    listens at `target.url`. A receiver hookproof starts leaves its own log in the report
    folder as certify's does (``receiver.log``, secrets masked, size-capped; each 5xx
    finding quotes its scenario's tail). `stopped_by()` says what stopped a search while it
    shrank its finding (``"stopped by SIGTERM"``, or the deadline's note: ``"stopped: the run
    reached its maximum duration …"``), for the partial report's note.
    A receiver pinning a Stripe-Version later than hookproof models gets the provider API's
    one note on it (`ServerState.api_version_note`) in the report's notes and the lines.
    """
    from hookproof.certify import check_loopback, receiver_log
    from hookproof.commands.replay import replay_command
    from hookproof.headline import secret_sources, status_headline
    from hookproof.loopback import is_remote
    from hookproof.receiver_log import RECEIVER_LOG_FILE, keep_receiver_log, link_receiver_log
    from hookproof.scenarios.statemachine import (
        NOTHING_ACKNOWLEDGED,
        burst_hit_rate,
        explore,
        schedule_lines,
        write_schedule,
    )

    check_loopback(cfg, allow_remote, command="explore", sends="concurrent duplicate bursts")
    report_progress = progress or (lambda phase, done, total: None)
    seed = resolve_seed(cfg, seed)
    out_dir = out_dir() if callable(out_dir) else out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    stale = out_dir / SCHEDULE_FILE
    if stale.exists():
        stale.unlink()
    (out_dir / RECEIVER_LOG_FILE).unlink(missing_ok=True)  # an earlier run's, in a reused folder
    started = time.time()
    hit: HitRate | None = None
    bursts_cut = False  # the deadline or a signal stopped the burst race after the search found something
    version_note: str | None = None  # the provider API's, on Stripe-Versions it served in an older shape
    bursts_s = 0.0
    report_progress("starting", 0, None)
    log, marks = receiver_log(cfg, cfg.target.secrets(cfg.base_dir))
    try:
        with explore_target(cfg, log) as (target, state):
            if on_target is not None:
                on_target(target.describe)
            report_progress("state machine", 0, None)
            if marks is not None:
                marks.mark(MACHINE_ID)
            result = explore(target, max_examples=max_examples, seed=seed, provider_state=state, database=database,
                             on_example=lambda done, sent, shrunk: report_progress(
                                 "shrinking the finding", shrunk, None) if shrunk else report_progress(
                                 "state machine", min(done, max_examples), max_examples))
            if not target.in_process and not result.interrupted:  # a stopped run starts nothing more
                report_progress("burst race", 0, repeats)
                if marks is not None:
                    marks.mark(BURSTS_ID)
                bursts_started = time.monotonic()
                try:
                    hit = burst_hit_rate(target, repeats=repeats, copies=cfg.run.burst, seed=seed,
                                         provider_state=state,
                                         on_run=lambda done: report_progress("burst race", done, repeats))
                except KeyboardInterrupt:  # the deadline or a signal: a finding made already stands
                    if result.failure is None:
                        raise
                    bursts_cut = True
                bursts_s = time.monotonic() - bursts_started
        version_note = state.api_version_note() if state is not None else None
        held = held_fetch_note(state) if result.failure is None else None
    finally:  # the receiver has stopped: its last words are in
        tails = keep_receiver_log(log, marks, out_dir)
    lines = [f"explored {result.examples} example(s), {result.steps} step(s) in {result.duration_s:.1f} s (seed {seed}; "
             f"examples run, including those Hypothesis discards, which --max-examples does not count)"]
    schedule_path = None
    if result.failure is not None:
        schedule_path = write_schedule(result.failure, stale, target=target.describe, profile=target.profile.name,
                                       config=cfg.source)
        lines.append(f"finding: {result.failure.summary()}")
        failure = result.failure
        lines.append(f"shrunk schedule ({len(failure.steps)} step(s), {failure.delivery_steps} of them delivering, "
                     + ("then the teardown delivered every event still pending" if failure.phase == "teardown" else
                        "found after the last step") + f"; {target.profile.name} event names; seed {failure.seed}):")
        lines += ["  " + s for s in schedule_lines(failure)]
        again = replay_command(schedule_path, cfg.source, allow_remote=is_remote(cfg.target.url))
        lines.append(f"replay: {again}")
    if result.error:
        lines.append(f"note: {result.error}")
    if result.failure is None and not result.acked:
        lines.append(f"state machine: {NOTHING_ACKNOWLEDGED.format(attempts=result.attempts)}")
    # the version and unsent-types notes go to the report's notes alone, printed under its table
    sent = result.sent_types | (hit.sent_types if hit is not None else set())  # the bursts' types are sent too
    unsent = None if result.interrupted or result.cut_short else explore_unsent_note(cfg, target.profile, sent)
    if hit is not None:
        first = f"; first: {hit.kinds[0]} {hit.keys[0]}" if hit.keys and hit.kinds else ""
        raced = f"; raced (runs double-applied/runs) {hit.per_type()}" if hit.types else ""
        lines.append(f"burst race: {hit.hits}/{hit.repeats} runs double-applied ({hit.rate:.0%}); seeds {hit.seeds}{first}"
                     f"{raced}")
        if not hit.hits and not hit.acked:
            lines.append(f"burst race: {NOTHING_DELIVERED.format(attempts=hit.attempts)}")
    scenarios = [machine_report(result, target.describe, target.profile)]
    if hit is not None:
        scenarios.append(burst_report(hit, duration_s=bursts_s))
    report = run_report(cfg, target.describe, seed, started, scenarios)
    headline = None if hit is not None and hit.acked else status_headline(
        result.statuses, secret_sources(cfg.target.secret), cfg.target.profile, acked=result.acked)
    if headline is not None:  # certify's: first among the notes, printed above the table
        from dataclasses import replace

        report = replace(report, notes=(headline, *report.notes))
    if bursts_cut:  # the search's finding stands; the burst race did not finish
        from dataclasses import replace

        why = stopped_by() if stopped_by is not None else None
        note = "the burst race was cut short; the state machine's finding stands"
        report = replace(report, partial=True, notes=(*report.notes, f"{why}; {note}" if why else note))
        lines.append(f"burst race: {note}")
    elif result.interrupted:  # the finding stands; the run did not finish
        from dataclasses import replace

        why = stopped_by() if stopped_by is not None else None  # a signal's or the deadline's, as certify's
        note = result.error or "stopped while shrinking"
        report = replace(report, partial=True, notes=(*report.notes, f"{why}; {note}" if why else note))
    elif result.cut_short:  # fewer examples than --max-examples: a partial run, as a --max-duration stop
        from dataclasses import replace

        report = replace(report, partial=True, notes=(*report.notes, result.error or "the search was cut short"))
    if version_note is not None:  # the provider API served a Stripe-Version hookproof does not model
        from dataclasses import replace

        report = replace(report, notes=(*report.notes, version_note))
    if unsent is not None:  # enabled types explore's operations never send
        from dataclasses import replace

        report = replace(report, notes=(*report.notes, unsent))
    if held is not None:  # a fetching receiver: what its search never tells
        from dataclasses import replace

        report = replace(report, notes=(*report.notes, held))
    from hookproof.unsent import restated_keys_note, unmodelled_note, unmodelled_version_note

    # real types or a version never sent; the built-in money key restated as the team's own
    for kept in (unmodelled_note(cfg), unmodelled_version_note(cfg), restated_keys_note(cfg)):
        if kept is not None:
            from dataclasses import replace

            report = replace(report, notes=(*report.notes, kept))
    if tails is not None:
        report = link_receiver_log(report, tails)
    paths = write_explore_reports(report, out_dir)
    if schedule_path is not None:
        paths["schedule"] = schedule_path
    return ExploreRun(report, paths, result, hit, schedule_path, lines)


def held_fetch_note(state: Any) -> str | None:
    """The note of a search whose receiver read the provider API (`state`: the provider
    server's `ServerState`, its `answer_times` counting the API's answers; None: no API):
    explore serves each object as it is at that moment and never holds an answer while the
    object moves on, so a receiver writing what it fetched without comparing versions passes
    it; certify's ``fetch-overtaken`` tells that story. None when the API answered nothing."""
    spread = state.answer_times.spread("api") if state is not None else None
    if spread is None:
        return None
    return (f"the receiver read the provider API ({spread.count} answer(s)): explore serves each object as it is at "
            "that moment and never holds an answer while the object moves on, so it cannot tell a receiver that "
            "writes an older answer over a newer one; certify's fetch-overtaken holds one (a receiver writing what "
            "it fetched without comparing versions fails it there)")


def explore_unsent_note(cfg: "Config", profile: Any, sent: Iterable[str]) -> str | None:
    """The note naming the types the config enables (`unsent.configured_types`) that the search
    never sent (`sent`: the types of its valid attempts, the provider's names), those explore's
    operations cannot emit (`unsent.world_types`, whatever the search draws) apart from those it
    did not draw; None when each was sent."""
    from hookproof.unsent import configured_types, every_type_of, unsent_note, world_types

    configured = configured_types(cfg)
    if not configured:
        return None
    fields = cfg.state_field_map()
    emitted = world_types(profile.world, priced=fields is not None and "subscription" in fields.kinds(),
                          sends=lambda t: profile.provider_type(t) is not None)
    emittable = None if emitted is None else {profile.provider_type(t) or t for t in emitted}
    return unsent_note(configured, sent, "explore", emittable=emittable, every=every_type_of(cfg))


def stop_words(deadline: list[str], signal_name: str | None) -> str | None:
    """What stopped a run, for its partial report's note: the deadline's note when it fired
    (`deadline.run_deadline` interrupts the run as SIGINT does, so the signal recorded then is
    not the user's), else ``stopped by <signal>``; None when neither stopped it."""
    if deadline:
        return deadline[0]
    return f"stopped by {signal_name}" if signal_name else None


def machine_report(result: "ExploreResult", target: str, profile: "Profile | None" = None) -> "ScenarioReport":
    """The state machine's search as one scenario of the report.

    A finding fails it; a search in which the receiver acknowledged no valid delivery
    proves nothing (silence is not a pass), nor one cut short before its examples
    (`ExploreResult.cut_short`): the verdict is unknown. With the `profile`, an acknowledged
    ``lost`` says what makes a receiver apply nothing, in the provider's words, as certify's
    does (`fetched_states.with_unexplained`: its identity of an event, an id shared by events).
    """
    from hookproof.reports.model import ScenarioReport
    from hookproof.scenarios.report_views import attempt_view, check_view
    from hookproof.scenarios.statemachine import NOTHING_ACKNOWLEDGED

    failure: Failure | None = result.failure
    description = (f"Hypothesis state machine over delivery schedules: {result.examples} example(s), "
                   f"{result.steps} step(s), seed {result.seed}.")
    checklist = ("duplicates-tested", "reordering-tested", "timeouts-tested", "unique-under-concurrency")
    if failure is None and not result.acked:
        return ScenarioReport(MACHINE_ID, "State machine over delivery schedules", description, "unknown", checklist,
                              reason=NOTHING_ACKNOWLEDGED.format(attempts=result.attempts),
                              duration_s=result.duration_s)
    if failure is None and result.cut_short:  # fewer examples than asked for: not the search asked for
        return ScenarioReport(MACHINE_ID, "State machine over delivery schedules", description, "unknown", checklist,
                              reason=result.error, duration_s=result.duration_s)
    if failure is None:  # a search begun again (`result.error`) says why; its examples stand
        return ScenarioReport(MACHINE_ID, "State machine over delivery schedules", description, "pass", checklist,
                              reason=result.error, duration_s=result.duration_s)
    from hookproof.scenarios.statemachine import schedule_lines

    reason = "shrunk schedule: " + "; ".join(schedule_lines(failure))
    report = ScenarioReport(
        MACHINE_ID, "State machine over delivery schedules", description, "fail", checklist,
        checks=tuple(check_view(c) for c in failure.checks),
        attempts=tuple(attempt_view(a) for a in failure.attempts),
        reason=reason, duration_s=result.duration_s,
    )
    if profile is None:
        return report
    from hookproof.scenarios.fetched_states import with_unexplained

    excerpts = {a.index: a.response_excerpt for a in failure.attempts}
    return with_unexplained(report, profile.event_id_name, answers=lambda i: excerpts.get(i, ""),
                            shared_id=profile.shared_id)


def burst_report(hit: "HitRate", *, duration_s: float = 0.0) -> "ScenarioReport":
    """The statistical tier's bursts as one scenario of the report; `duration_s`: how long
    the bursts took (seconds).

    A double application fails it; bursts of which the receiver acknowledged no copy
    prove nothing (silence is not a pass): the verdict is unknown.
    """
    from hookproof.reports.model import CheckView, FindingView, ScenarioReport

    stats = {"hits": hit.hits, "repeats": hit.repeats, "copies": hit.copies, "rate": round(hit.rate, 4),
             "seeds": list(hit.seeds), "attempts": hit.attempts, "acked": hit.acked}
    if hit.types:
        stats["types"] = list(hit.types)
    title = "Real-socket bursts, repeated"
    description = ("Concurrent copies over real sockets, repeated R times: a hit rate with the seeds, not a "
                   "shrunk program.")
    if hit.types:  # each run one effectful type's event, in turn
        description += f" Each run races one effectful type in turn: {hit.per_type()} (runs double-applied/runs)."
    if not hit.hits and not hit.acked:
        reason = NOTHING_DELIVERED.format(attempts=hit.attempts)
        check = CheckView("duplicated", "unknown", (), stats, detail=reason)
        return ScenarioReport(BURSTS_ID, title, description, "unknown", ("unique-under-concurrency",),
                              checks=(check,), reason=reason, duration_s=duration_s)
    if not hit.hits:
        check = CheckView("duplicated", "valid", (), stats)
        return ScenarioReport(BURSTS_ID, title, description, "pass", ("unique-under-concurrency",),
                              checks=(check,), duration_s=duration_s)
    kinds = hit.kinds if len(hit.kinds) == len(hit.keys) else ["duplicated"] * len(hit.keys)
    first = {kind: key for key, kind in reversed(list(zip(hit.keys, kinds)))}
    # how many times a run applied it is not kept (certify's duplicated finding counts them):
    # "more than once"; the counter's clause about the effect rows only when no run saw those doubled
    single = "" if "duplicated" in first else " (its effect rows showed it applied once)"
    what = {"duplicated": "applied more than once",
            "counter": f"moved the counter past the provider's truth{single}"}
    checks = tuple(
        CheckView(kind, "invalid", (FindingView(
            kind, first.get(kind, "*"), f"{hit.hits}/{hit.repeats} bursts of {hit.copies} copies {what[kind]} "
            f"(hit rate {hit.rate:.0%}; seeds {hit.seeds})", "finding", expected=0, actual=hit.hits),), stats)
        for kind in ("duplicated", "counter") if kind in first or (kind == "duplicated" and not first))
    return ScenarioReport(BURSTS_ID, title, description, "fail", ("unique-under-concurrency",), checks=checks,
                          duration_s=duration_s)


def run_report(cfg: "Config", target: str, seed: int, started: float, scenarios: list["ScenarioReport"]) -> "RunReport":
    from hookproof.scenarios import report_views

    return report_views.run_report(scenarios, target=target, profile=cfg.target.profile, live=cfg.target.live,
                                   seed=seed, started_at=started, config=cfg.source)


@contextlib.contextmanager
def _hypothesis_home(folder: Path) -> Iterator[None]:
    """Hypothesis's own files (its cache of the constants it reads from source, ``constants/``)
    kept in `folder`, beside the example database, not in the directory explore ran from; unless
    ``HYPOTHESIS_STORAGE_DIRECTORY`` names one. The previous home is put back on the way out."""
    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    before = storage_directory(intent_to_write=False).home_directory
    set_hypothesis_home_dir(folder)
    try:
        yield
    finally:
        set_hypothesis_home_dir(before)


def _database(out: Path) -> Any:
    """The Hypothesis example database for a run: none under CI (the schedule file survives)."""
    from hypothesis import settings

    if settings().database is None:
        return None
    from hypothesis.database import DirectoryBasedExampleDatabase

    return DirectoryBasedExampleDatabase(str(out / ".hypothesis"))


def register(app: typer.Typer) -> None:
    """Add `hookproof explore` to `app`."""

    @app.command("explore")
    def explore_command(
        config: Annotated[Path, typer.Option("--config", "-c", help="The config file.")] = Path("hookproof.toml"),
        max_examples: Annotated[int, typer.Option("--max-examples", min=1, max=100_000, help="Examples Hypothesis keeps before shrinking (the examples run, printed as 'explored N', also count those it discards, so N may be more). A search Hypothesis cannot replay begins again with a fresh seed for the rest.")] = 100,
        seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of the world and of Hypothesis (default: run.seed, else random).")] = None,
        out: Annotated[Optional[Path], typer.Option("--out", help="Report directory (default: a new folder hookproof-reports/explore-<UTC time>/, linked as hookproof-reports/latest).", show_default=False)] = None,
        force: Annotated[bool, typer.Option("--force", help="Let --out overwrite another command's results.")] = False,
        repeats: Annotated[int, typer.Option("--repeats", min=1, max=10_000, help="Real-socket bursts (URL targets).")] = 20,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target that is not on this machine (loopback).")] = False,
        max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop the search after this long (90s, 15m, 1h; default: run.max_duration_s, 15m) and write a partial report saying why (exit 1).", show_default=False)] = None,
    ) -> None:
        """Search delivery schedules with a state machine; shrink a failure to the smallest schedule.

        The whole run is bounded by --max-duration (default: the config's run.max_duration_s,
        15 minutes), as certify's: then the search stops, the receiver is stopped, and a
        partial report says why; the exit code is 1.
        """
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from hookproof.chaos.errors import ChaosError
        from hookproof.deadline import run_deadline
        from hookproof.errors import HookproofError
        from hookproof.headline import split_headline
        from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s
        from hookproof.rundirs import DEFAULT_ROOT, run_out, withdraw
        from hookproof.simulator.errors import SimulatorError
        from hookproof.terminal import console, duration_s, err_console, fail, load, located, print_report, seed_line

        made: list[Path] = []

        def run_dir() -> Path:
            if not made:
                made.append(run_out(out, "explore", force=force))
            return made[0]

        caught = Interrupts.install(sigint=True)  # Ctrl-C and the deadline recorded: `check` raises a dropped one
        started = time.time()
        cfg: Config | None = None
        run_seed: int | None = None
        described: list[str] = []
        deadline: list[str] = []  # the deadline's note, once it fired
        try:
            limit_s = duration_s("--max-duration", max_duration)
            cfg = load(config)
            run_seed = resolve_seed(cfg, seed)
            with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                          TimeElapsedColumn(), console=err_console, transient=True,
                          disable=not err_console.is_interactive) as bar:  # off a terminal it only adds a blank line
                task = bar.add_task("explore: starting", total=None, detail="")
                now = {"phase": "starting", "done": 0, "total": None}

                def progress(phase: str, done: int, total: int | None) -> None:
                    caught.check()  # each example: a signal whose KeyboardInterrupt was dropped stops it here
                    now.update(phase=phase, done=done, total=total)
                    bar.update(task, description=f"explore: {phase}", completed=done, total=total,
                               detail=f"{done}/{total}" if total else "")

                def beat_line() -> str:
                    unit = {"state machine": " examples", "burst race": " burst runs"}.get(str(now["phase"]), "")
                    counted = (f" {now['done']}/{now['total']}{unit}" if now["total"] else
                               f", {now['done']} smaller schedules tried" if now["phase"] == "shrinking the finding"
                               else "")
                    return f"explore: {now['phase']}{counted}, {beat.elapsed_s:.0f} s"

                live = err_console.is_interactive
                with Heartbeat(beat_line, (lambda text: None) if live else
                               (lambda text: err_console.print(text, markup=False, soft_wrap=True)),
                               TERMINAL_INTERVAL_S if live else log_interval_s()) as beat, \
                        run_deadline(limit_s if limit_s is not None else cfg.run.max_duration_s, deadline,
                                     after="the search stopped there") as disarm, \
                        _hypothesis_home((out or DEFAULT_ROOT) / ".hypothesis"):
                    run = run_explore(cfg, out_dir=run_dir, max_examples=max_examples, seed=run_seed, repeats=repeats,
                                      database=_database(out or DEFAULT_ROOT), allow_remote=allow_remote,
                                      progress=progress, on_target=described.append,
                                      stopped_by=lambda: stop_words(deadline, caught.stopped_by))
                    disarm()
        except (HookproofError, SimulatorError, ChaosError) as exc:
            withdraw(made[0] if made else None)  # refused: the results stay as they were
            raise fail(str(located(exc, cfg))) from None
        except KeyboardInterrupt:
            stopped = deadline[0] if deadline else None
            code = 1 if stopped else caught.exit_code  # a deadline-stopped run exits as certify's does
            signalled = f"stopped by {caught.stopped_by}; the search stopped there" if caught.stopped_by else None
            paths = write_interrupted_report(run_dir(), started, cfg, run_seed, described[-1] if described else None,
                                             stopped=stopped or signalled)
            if stopped:
                console.print(f"explore {stopped}", markup=False, soft_wrap=True)
            console.print(f"explore {'stopped' if stopped else 'interrupted'}; partial report: {paths['json']}",
                          markup=False)
            sys.stdout.flush()
            sys.stderr.flush()
            # The receiver's worker threads (in-process apps) may still run; the report is
            # written, so leave now instead of waiting for them.
            os._exit(code)
        if deadline:  # it fired while shrinking: the finding so far is reported, the run is partial
            console.print(f"explore {deadline[0]}", markup=False, soft_wrap=True)
        for line in run.lines:
            console.print(line, markup=False, soft_wrap=True)
        chosen = seed is None and cfg.run.seed is None  # explore drew it: the console names it to repeat the search
        print_report(run.report, run.paths, f"hookproof explore: {cfg.target.profile} receiver at {run.report.target}",
                     seed=seed_line(run.report.seed, chosen, "--seed {seed}"),
                     headline=split_headline(run.report.notes)[0])
        if caught.signalled and run.report.partial and not deadline:
            # a signal stopped the shrinking: the finding so far is reported, and the exit is
            # certify's for a signal (128 + its number), not a finished run's 1
            console.print(f"explore interrupted by {caught.stopped_by}; partial report: {run.paths['json']}",
                          markup=False, soft_wrap=True)
            raise typer.Exit(caught.exit_code)
        raise typer.Exit(run.exit_code)
