"""`hookproof replay FILE`: run a saved failing schedule again, deterministically.

The schedule (written by `hookproof explore`) names its seed, events, deliveries and
faults in order. Replay builds the same world from the seed (with fresh ids, so a
receiver that kept the first run's rows is not confused), runs every step against the
configured target, then the same checks, and prints each step's outcome and the
finding. Exit 1 when the finding reproduces, 0 when it does not, 2 on usage errors.
A run folder without a schedule (``hookproof-reports/latest/failing-schedule.json``
after a passing explore) has nothing to replay: one line saying so, exit 0 (no finding),
or exit 2 when the folder's run did not pass (it wrote no schedule to replay).

Never silent, never unbounded: each step is printed as it ends; on a terminal a live line
says which step runs (or the teardown), off one a heartbeat line does every few seconds
(`hookproof.heartbeat`); the whole replay stops at ``--max-duration`` (default
``run.max_duration_s``, 15 minutes), stops the receiver it started and says why in one
line (exit 1, as certify's and explore's at their deadline).

A schedule with concurrent steps (``burst``, ``burst_related``) is a race: its
interleaving differs from run to run, so a run that does not reproduce says so
(`race_note`), and ``--repeats N`` replays it up to N times, stopping at the first run
that reproduces and saying how many it took, all N under the one ``--max-duration``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

import typer

from hookproof.interrupts import Interrupts

if TYPE_CHECKING:
    from hookproof.scenarios.statemachine import Step


def replay_command(schedule: Path | str, config: Path | str | None, *, allow_remote: bool = False) -> str:
    """The ``hookproof replay`` line that runs `schedule` again against the receiver of
    `config` (the config explore read: its target, profile, keys and observer), quoted for a
    POSIX shell. The seed is the schedule's own; `config` None: the default hookproof.toml;
    `allow_remote`: the search was let past the loopback guard, so is the replay."""
    import shlex

    argv = ["hookproof", "replay", str(schedule)]
    if config is not None:
        argv += ["--config", str(config)]
    if allow_remote:
        argv.append("--allow-remote")
    return " ".join(shlex.quote(a) for a in argv)


#: What replay sends, for the loopback guard's refusal (`hookproof.loopback`).
SENDS = "the schedule's deliveries, concurrent duplicate bursts among them"


def nothing_to_replay(path: Path) -> tuple[str, bool] | None:
    """When `path` is missing but its folder holds a run's ``report.json``: (the line saying
    there is nothing to replay, True when that run passed); else None (a plain missing file)."""
    import json

    from hookproof.commands.explore import BURSTS_ID

    report = path.parent / "report.json"
    if path.exists() or not report.is_file():
        return None
    try:
        document = json.loads(report.read_text(encoding="utf-8"))
        verdict = document.get("verdict")
        failed = [s for s in document.get("scenarios") or () if s.get("verdict") == "fail"]
    except (OSError, ValueError, AttributeError):
        return None
    run = path.parent.resolve().name
    if verdict == "pass":
        return f"nothing to replay: the run in {path.parent} ({run}) passed, so it wrote no {path.name}", True
    if verdict == "fail" and failed and all(s.get("id") == BURSTS_ID for s in failed):
        seed = document.get("seed")
        again = f"'hookproof explore --seed {seed}'" if isinstance(seed, int) else "'hookproof explore' with its seed"
        return (f"nothing to replay: the run in {path.parent} ({run}) failed only in its real-socket bursts, "
                f"which leave a hit rate and seeds, not a schedule; {again} repeats them"), False
    return (f"nothing to replay: the run in {path.parent} ({run}) ended {verdict} without writing {path.name} "
            "(only a failing 'hookproof explore' writes one)"), False


def read_schedule(path: Path, seed: Optional[int] = None, world: Optional[str] = None,
                  tell: Optional[Callable[[Any], None]] = None) -> tuple[int, list["Step"], dict[str, Any]]:
    """`scenarios.statemachine.load_schedule` for the command line: (seed, steps,
    document), or UsageError with one line naming the file (and a bad step). `world`: the
    config's world kind when its profile sends a user catalog; `tell`: what the world is told
    of the endpoint before the steps are checked (`explore_targets.tell_world`)."""
    from hookproof.errors import UsageError
    from hookproof.scenarios.statemachine import ScheduleError, load_schedule

    try:
        return load_schedule(path, seed, world_kind=world, tell=tell)
    except OSError as exc:
        raise UsageError(f"cannot read schedule {path}: {(exc.strerror or type(exc).__name__).lower()}") from None
    except ScheduleError as exc:
        raise UsageError(f"{path}: {exc}") from None


def race_note(steps: "list[Step]") -> str | None:
    """The line saying the schedule's concurrent steps (`CONCURRENT_OPS`) are a race worth
    replaying again, numbered as the replay prints them; None without any."""
    from hookproof.scenarios.schedules import CONCURRENT_OPS

    racing = [f"{i} ({step.op})" for i, step in enumerate(steps, 1) if step.op in CONCURRENT_OPS]
    if not racing:
        return None
    return (f"note: step(s) {', '.join(racing)} send concurrently: a race, whose interleaving differs from run "
            "to run; this run may have missed it, so replay again (--repeats N replays until it reproduces)")


#: Why a step's outcome is the receiver's timing and not the schedule's, by op (`verdict_note`).
TIMING_WORDS: dict[str, str] = {
    "burst": "sends its copies concurrently, so which of them the receiver handled first is its timing",
    "burst_related": "sends its events concurrently, so which of them the receiver wrote last is its timing",
    "timeout": ("gives its delivery up after 1 ms while the receiver goes on handling it, so whether a read "
                "after the step saw what the receiver wrote is its timing"),
}


def verdict_note(steps: "list[Step]", saved: set[str], found: set[str]) -> str | None:
    """The line saying that this replay's checks (`found`, the check ids of its findings) are not
    the saved run's (`saved`, as ``hookproof explore`` wrote them), and why where the schedule
    says: its steps whose outcome is the receiver's timing (`TIMING_WORDS`, numbered as the
    replay prints them) make each run a history of its own, each verdict right for its own;
    ``regressed`` needs a read that saw the newer state before the older one was written back,
    ``stale`` only the final state. None when they are the same, or nothing was saved."""
    if not saved or saved == found:
        return None
    missed = sorted(saved - found)
    line = (f"note: the saved run found {', '.join(sorted(saved))}; this run found {', '.join(sorted(found))}"
            + (f", not {', '.join(missed)}" if missed else ""))
    timed = [f"step {i} ({step.op}) {TIMING_WORDS[step.op]}" for i, step in enumerate(steps, 1)
             if step.op in TIMING_WORDS]
    if not timed:
        return line
    line += f": {'; '.join(timed)}; so each run is its own history, and each verdict is right for its own"
    if "regressed" in saved ^ found and "stale" in saved & found:
        line += (" (regressed needs a read that saw the newer state before the older one was written over it, "
                 "stale only the final state: a run whose reads missed the newer state finds stale alone)")
    return line


class ReplayStopped(Exception):
    """A replay stopped before its finding was known: at its deadline (`reason`: the
    deadline's one line, `deadline.deadline_note`) or by a signal (`reason` None)."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(reason or "interrupted")
        self.reason = reason


def replay_lines(config: Path, schedule: Path, *, seed: Optional[int] = None,
                 on_line: Callable[[str], None] | None = None, max_duration_s: float | None = None,
                 on_progress: Callable[[int, int], None] | None = None,
                 allow_remote: bool = False) -> tuple[list[str], bool]:
    """Replay `schedule` against the target of `config`; (printed lines, finding reproduced).

    `on_line(text)` gets each line as soon as it is known (the header, every step as it
    ends), `on_progress(done, total)` the steps done, once the receiver is up and after each
    step (``done == total``: the teardown runs). The whole replay is bounded by `max_duration_s` seconds (default: the
    config's ``run.max_duration_s``; only on the main thread, `deadline.run_deadline`):
    then the receiver hookproof started is stopped and ReplayStopped carries the reason.
    Raises UsageError (one line) for a bad schedule, a config of another profile, or a
    target off this machine without `allow_remote` (`hookproof.loopback`, before the
    receiver is started or reached)."""
    from hookproof.commands.explore import explore_options, explore_target
    from hookproof.deadline import run_deadline
    from hookproof.errors import UsageError
    from hookproof.loopback import check_loopback_url
    from hookproof.scenarios.explore_targets import sends_of, tell_world
    from hookproof.scenarios.schedules import teardown_line
    from hookproof.scenarios.statemachine import format_step, replay
    from hookproof.terminal import load

    cfg = load(config)
    check_loopback_url(cfg.target.url, allow_remote, command="replay", sends=SENDS)
    profile = cfg.profile()  # with [catalog], the user's own events
    world = profile.world if cfg.catalog is not None else None  # a user catalog's world kind
    options = explore_options(cfg)  # the endpoint as explore's world was told it (enabled_events, Checkout)
    sends = sends_of(profile, options["enabled"])
    run_seed, steps, doc = read_schedule(schedule, seed, world,
                                         lambda w: tell_world(w, sends, options["checkout_modes"]))
    found_under = doc.get("profile")
    if isinstance(found_under, str) and found_under and found_under != profile.name:
        raise UsageError(f"{schedule}: explore found it under the {found_under} profile, but {config} sends as "
                         f"{profile.name}: replay it with the config explore ran with (--config)")
    names = profile.event_types()
    types = [names.get(t, t) for t in doc.get("events", [])]  # the profile's own names
    lines: list[str] = []

    def say(text: str) -> None:
        lines.append(text)
        if on_line is not None:
            on_line(text)

    say(f"replaying {len(steps)} step(s) of {schedule.name} (seed {run_seed}, {profile.name} event names)")
    count = 0

    def on_step(step: Any, note: str) -> None:
        nonlocal count
        count += 1
        say(f"{count:>2}. {format_step(step, types)} -> {note}")
        if on_progress is not None:
            on_progress(count, len(steps))

    notes: list[str] = []
    limit_s = max_duration_s if max_duration_s is not None else cfg.run.max_duration_s
    try:
        with run_deadline(limit_s, notes, after="the replay stopped there") as disarm:
            with explore_target(cfg) as (target, state):
                if on_progress is not None:  # the receiver is up: the steps begin
                    on_progress(0, len(steps))
                failure = replay(target, steps, run_seed, provider_state=state, on_step=on_step)
            disarm()
    except KeyboardInterrupt:
        raise ReplayStopped(notes[0] if notes else None) from None
    explored = doc.get("config")
    other = (f"note: explore found it with the config {explored}; this replay read {config}"
             if isinstance(explored, str) and cfg.source and Path(explored) != Path(cfg.source).resolve() else None)
    if failure is None:
        say("no finding: the schedule did not reproduce")
        if (race := race_note(steps)) is not None:
            say(race)
        if other:
            say(other)
        return lines, False
    say(f"{len(steps) + 1:>2}. {teardown_line(failure)}" if failure.phase == "teardown"
        else "    (found after the last step)")
    for f in failure.findings:
        say(f"finding: {f.check_id}: {f.key} {f.message}")
    saved = {f["check_id"] for f in doc.get("findings", [])}
    if (differs := verdict_note(steps, saved, {f.check_id for f in failure.findings})) is not None:
        say(differs)
    if other:
        say(other)
    return lines, True


def register(app: typer.Typer) -> None:
    """Add `hookproof replay` to `app`."""

    @app.command("replay")
    def replay_command(
        schedule: Annotated[Path, typer.Argument(help="A failing-schedule.json written by 'hookproof explore', or the run folder that holds it.")],
        config: Annotated[Path, typer.Option("--config", "-c", help="The config file.")] = Path("hookproof.toml"),
        seed: Annotated[Optional[int], typer.Option("--seed", help="Override the schedule's seed.")] = None,
        max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop the replay after this long (90s, 15m, 1h; default: run.max_duration_s, 15m), stop the receiver and say why (exit 1).", show_default=False)] = None,
        repeats: Annotated[int, typer.Option("--repeats", min=1, help="Replay up to this many times, stopping at the first run that reproduces (a race: bursts); all of them within --max-duration.")] = 1,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target that is not on this machine (loopback).")] = False,
    ) -> None:
        """Replay a saved failing schedule against the target and print the finding.

        Each step is printed as it ends; the whole replay is bounded by --max-duration
        (default: the config's run.max_duration_s, 15 minutes): then it stops, stops the
        receiver it started, and says why in one line (exit 1). A target off this machine is
        refused unless --allow-remote, as explore's. With --repeats N it
        replays up to N times, stops at the first run that reproduces and says which."""
        from rich.progress import Progress, TextColumn, TimeElapsedColumn

        from hookproof.chaos.errors import ChaosError
        from hookproof.commands.explore import SCHEDULE_FILE
        from hookproof.errors import HookproofError
        from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s
        from hookproof.simulator.errors import SimulatorError
        from hookproof.terminal import console, duration_s, err_console, fail

        if schedule.is_dir():  # a run's folder: its schedule
            schedule = schedule / SCHEDULE_FILE
        nothing = nothing_to_replay(schedule)
        if nothing is not None:
            text, passed = nothing
            if not passed:
                raise fail(text)
            console.print(text, markup=False, soft_wrap=True)
            raise typer.Exit(0)
        caught = Interrupts.install()  # SIGTERM as Ctrl-C: the receiver hookproof started is stopped
        live = err_console.is_interactive
        where = {"done": 0, "total": 0, "run": 1}

        def progress(done: int, total: int) -> None:
            where.update(done=done, total=total)

        def beat_line() -> str:
            done, total = where["done"], where["total"]
            if not total:  # the config read, the receiver and the provider API starting
                return f"replay: starting, {beat.elapsed_s:.0f} s"
            doing = "teardown (deliveries, settle, check)" if total and done >= total else f"step {done + 1}"
            run = f"run {where['run']} of {repeats}, " if repeats > 1 else ""
            return f"replay: {run}{done}/{total} step(s) done, running {doing}, {beat.elapsed_s:.0f} s"

        try:
            limit_s = duration_s("--max-duration", max_duration)
            with Progress(TextColumn("{task.description}"), TimeElapsedColumn(), console=err_console,
                          transient=True, disable=not live) as bar:
                task = bar.add_task("replay: starting")
                emit: Callable[[str], None] = ((lambda text: bar.update(task, description=text)) if live else
                                               (lambda text: err_console.print(text, markup=False, soft_wrap=True)))
                with Heartbeat(beat_line, emit, TERMINAL_INTERVAL_S if live else log_interval_s()) as beat:
                    found = _replay_runs(config, schedule, seed, limit_s, repeats, where, progress,
                                         lambda text: console.print(text, markup=False, soft_wrap=True),
                                         allow_remote=allow_remote)
        except (HookproofError, SimulatorError, ChaosError) as exc:
            raise fail(str(exc)) from None
        except ReplayStopped as stop:
            if stop.reason is None:
                raise fail(f"replay interrupted after {where['done']} of {where['total']} step(s)",
                           caught.exit_code) from None
            raise fail(f"replay {stop.reason} ({where['done']} of {where['total']} step(s) done); no verdict", 1) from None
        finally:
            caught.restore()
        raise typer.Exit(1 if found else 0)


def _replay_runs(config: Path, schedule: Path, seed: Optional[int], limit_s: float | None, repeats: int,
                 where: dict[str, int], on_progress: Callable[[int, int], None],
                 on_line: Callable[[str], None], *, allow_remote: bool = False) -> bool:
    """`replay_lines` up to `repeats` times, until a run reproduces (True); every run within
    the one whole-replay bound `limit_s` (default: the config's ``run.max_duration_s``),
    `where["run"]` the run under way. With `repeats` > 1 each run is announced, and the
    end says how many runs it took, or that none of them reproduced."""
    import time

    if repeats == 1:
        return replay_lines(config, schedule, seed=seed, max_duration_s=limit_s, on_progress=on_progress,
                            on_line=on_line, allow_remote=allow_remote)[1]
    from hookproof.terminal import load

    total_s = limit_s if limit_s is not None else load(config).run.max_duration_s
    started = time.monotonic()
    for run in range(1, repeats + 1):
        where.update(run=run, done=0, total=0)
        on_line(f"-- run {run} of {repeats}")
        left_s = None if total_s is None else max(total_s - (time.monotonic() - started), 0.001)
        if replay_lines(config, schedule, seed=seed, max_duration_s=left_s, on_progress=on_progress,
                        on_line=on_line, allow_remote=allow_remote)[1]:
            on_line(f"reproduced on run {run} of {repeats}")
            return True
    on_line(f"did not reproduce in {repeats} run(s)")
    return False
