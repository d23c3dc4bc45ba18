"""`hookproof replay FILE`: run a saved failing schedule again, deterministically.

The schedule (written by `hookproof explore`) names its seed, events, deliveries and
faults in order. Replay builds the same world from the seed (with fresh ids, so a
receiver that kept the first run's rows is not confused), runs every step against the
configured target, then the same checks, and prints each step's outcome and the
finding. Exit 1 when the finding reproduces, 0 when it does not, 2 on usage errors.
A run folder without a schedule (``hookproof-reports/latest/failing-schedule.json``
after a passing explore) has nothing to replay: one line saying so, exit 0 (no finding),
or exit 2 when the folder's run did not pass (it wrote no schedule to replay).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from hookproof.scenarios.statemachine import Step


def replay_command(schedule: Path | str, config: Path | str | None) -> str:
    """The ``hookproof replay`` line that runs `schedule` again against the receiver of
    `config` (the config explore read: its target, profile, keys and observer), quoted for a
    POSIX shell. The seed is the schedule's own; `config` None: the default hookproof.toml."""
    import shlex

    argv = ["hookproof", "replay", str(schedule)]
    if config is not None:
        argv += ["--config", str(config)]
    return " ".join(shlex.quote(a) for a in argv)


def nothing_to_replay(path: Path) -> tuple[str, bool] | None:
    """When `path` is missing but its folder holds a run's ``report.json``: (the line saying
    there is nothing to replay, True when that run passed); else None (a plain missing file)."""
    import json

    report = path.parent / "report.json"
    if path.exists() or not report.is_file():
        return None
    try:
        verdict = json.loads(report.read_text(encoding="utf-8")).get("verdict")
    except (OSError, ValueError, AttributeError):
        return None
    run = path.parent.resolve().name
    if verdict == "pass":
        return f"nothing to replay: the run in {path.parent} ({run}) passed, so it wrote no {path.name}", True
    return (f"nothing to replay: the run in {path.parent} ({run}) ended {verdict} without writing {path.name} "
            "(only a failing 'hookproof explore' writes one)"), False


def read_schedule(path: Path, seed: Optional[int] = None, world: Optional[str] = None,
                  ) -> tuple[int, list["Step"], dict[str, Any]]:
    """`scenarios.statemachine.load_schedule` for the command line: (seed, steps,
    document), or UsageError with one line naming the file (and a bad step). `world`: the
    config's world kind when its profile sends a user catalog."""
    from hookproof.errors import UsageError
    from hookproof.scenarios.statemachine import ScheduleError, load_schedule

    try:
        return load_schedule(path, seed, world_kind=world)
    except OSError as exc:
        raise UsageError(f"cannot read schedule {path}: {(exc.strerror or type(exc).__name__).lower()}") from None
    except ScheduleError as exc:
        raise UsageError(f"{path}: {exc}") from None


def replay_lines(config: Path, schedule: Path, *, seed: Optional[int] = None) -> tuple[list[str], bool]:
    """Replay `schedule` against the target of `config`; (printed lines, finding reproduced)."""
    from hookproof.commands.explore import explore_target
    from hookproof.errors import UsageError
    from hookproof.scenarios.schedules import teardown_line
    from hookproof.scenarios.statemachine import format_step, replay
    from hookproof.terminal import load

    cfg = load(config)
    profile = cfg.profile()  # with [catalog], the user's own events
    world = profile.world if cfg.catalog is not None else None  # a user catalog's world kind
    run_seed, steps, doc = read_schedule(schedule, seed, world)
    found_under = doc.get("profile")
    if isinstance(found_under, str) and found_under and found_under != profile.name:
        raise UsageError(f"{schedule}: explore found it under the {found_under} profile, but {config} sends as "
                         f"{profile.name}: replay it with the config explore ran with (--config)")
    names = profile.event_types()
    types = [names.get(t, t) for t in doc.get("events", [])]  # the profile's own names
    lines = [f"replaying {len(steps)} step(s) of {schedule.name} (seed {run_seed}, {profile.name} event names)"]
    count = 0

    def on_step(step: Any, note: str) -> None:
        nonlocal count
        count += 1
        lines.append(f"{count:>2}. {format_step(step, types)} -> {note}")

    with explore_target(cfg) as (target, state):
        failure = replay(target, steps, run_seed, provider_state=state, on_step=on_step)
    explored = doc.get("config")
    other = (f"note: explore found it with the config {explored}; this replay read {config}"
             if isinstance(explored, str) and cfg.source and Path(explored) != Path(cfg.source).resolve() else None)
    if failure is None:
        lines.append("no finding: the schedule did not reproduce")
        lines += [other] if other else []
        return lines, False
    lines.append(f"{len(steps) + 1:>2}. {teardown_line(failure)}" if failure.phase == "teardown"
                 else "    (found after the last step)")
    for f in failure.findings:
        lines.append(f"finding: {f.check_id}: {f.key} {f.message}")
    saved = {(f["check_id"]) for f in doc.get("findings", [])}
    if saved and not saved & {f.check_id for f in failure.findings}:
        lines.append(f"note: the saved run found {', '.join(sorted(saved))}")
    lines += [other] if other else []
    return lines, True


def register(app: typer.Typer) -> None:
    """Add `hookproof replay` to `app`."""

    @app.command("replay")
    def replay_command(
        schedule: Annotated[Path, typer.Argument(help="A failing-schedule.json written by 'hookproof explore'.")],
        config: Annotated[Path, typer.Option("--config", "-c", help="The config file.")] = Path("hookproof.toml"),
        seed: Annotated[Optional[int], typer.Option("--seed", help="Override the schedule's seed.")] = None,
    ) -> None:
        """Replay a saved failing schedule against the target and print the finding."""
        from hookproof.chaos.errors import ChaosError
        from hookproof.errors import HookproofError
        from hookproof.simulator.errors import SimulatorError
        from hookproof.terminal import console, fail

        nothing = nothing_to_replay(schedule)
        if nothing is not None:
            text, passed = nothing
            if not passed:
                raise fail(text)
            console.print(text, markup=False, soft_wrap=True)
            raise typer.Exit(0)
        try:
            lines, found = replay_lines(config, schedule, seed=seed)
        except (HookproofError, SimulatorError, ChaosError) as exc:
            raise fail(str(exc)) from None
        for line in lines:
            console.print(line, markup=False, soft_wrap=True)
        raise typer.Exit(1 if found else 0)
