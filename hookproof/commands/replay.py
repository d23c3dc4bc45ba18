"""`hookproof replay FILE`: run a saved failing schedule again, deterministically.

The schedule (written by `hookproof explore`) names its seed, events, deliveries and
faults in order. Replay builds the same world from the seed (with fresh ids, so a
receiver that kept the first run's rows is not confused), runs every step against the
configured target, then the same checks, and prints each step's outcome and the
finding. Exit 1 when the finding reproduces, 0 when it does not, 2 on usage errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from scenarios.statemachine import Step


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_schedule(path: Path, seed: Optional[int] = None) -> tuple[int, list["Step"], dict[str, Any]]:
    """Read and check a schedule file before anything runs: (seed, steps, document).

    Every step is checked against the world the seed builds (`seed` overrides the
    file's): its fields have the right types, each emit is a legal operation, and each
    delivery names an event emitted by then. Raises UsageError with one line naming the
    file and, for a bad step, its number and op.
    """
    import json

    from hookproof.errors import UsageError
    from scenarios.statemachine import (ACTIONS, CLOCK_START_US, CLOCK_STEP_US, DELIVERY_OPS, SCHEDULE_FORMAT, Step,
                                        apply_action)
    from simulator.errors import WorldError
    from simulator.faults import Mutation
    from simulator.world import World

    def bad(message: str) -> UsageError:
        return UsageError(f"{path}: {message}")

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read schedule {path}: {(exc.strerror or type(exc).__name__).lower()}") from None
    except UnicodeDecodeError:
        raise bad("not a hookproof schedule (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise bad(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(doc, dict) or doc.get("format") != SCHEDULE_FORMAT:
        raise bad(f"not a hookproof schedule (no \"format\": \"{SCHEDULE_FORMAT}\")")
    if not _whole(doc.get("seed")):
        raise bad(f"seed: must be a whole number, got {doc.get('seed')!r}")
    steps_data = doc.get("steps")
    if not isinstance(steps_data, list):
        raise bad(f"steps: must be a list of steps, got {type(steps_data).__name__}")
    events = doc.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise bad("events: must be a list of event types")
    findings = doc.get("findings", [])
    if not isinstance(findings, list) or not all(isinstance(f, dict) and isinstance(f.get("check_id"), str)
                                                 for f in findings):
        raise bad("findings: must be a list of objects with a check_id")
    run_seed = doc["seed"] if seed is None else seed
    world = World(run_seed, start_us=CLOCK_START_US, step_us=CLOCK_STEP_US)
    ops = {"emit", "advance_clock", *DELIVERY_OPS}
    mutations = [m.value for m in Mutation]
    steps: list[Step] = []
    for number, data in enumerate(steps_data, start=1):
        op = data.get("op") if isinstance(data, dict) else None
        where = f"step {number}" + (f" ({op})" if isinstance(op, str) else "")
        if not isinstance(data, dict) or not isinstance(op, str):
            raise bad(f"{where}: must be an object with an \"op\"")
        unknown = sorted(set(data) - set(Step.__dataclass_fields__))
        if unknown:
            raise bad(f"{where}: unknown key {unknown[0]!r}")
        if op not in ops:
            raise bad(f"{where}: unknown op (known: {', '.join(sorted(ops))})")
        for key in ("object", "event", "copies", "seconds"):
            if data.get(key) is not None and not (_whole(data[key]) and data[key] >= 0):
                raise bad(f"{where}: {key} must be a whole number, not negative, got {data[key]!r}")
        if op == "emit":
            if data.get("action") not in ACTIONS:
                raise bad(f"{where}: action must be one of {', '.join(ACTIONS)}, got {data.get('action')!r}")
            try:
                apply_action(world, data["action"], data.get("object"))
            except WorldError as exc:
                raise bad(f"{where}: the world of seed {run_seed} cannot do it ({exc})") from None
        elif op in DELIVERY_OPS:
            event = data.get("event")
            if event is None or event >= len(world.events):
                raise bad(f"{where}: no event #{event} (the world of seed {run_seed} has emitted "
                          f"{len(world.events)} by then)")
            if data.get("mutation") is not None and data["mutation"] not in mutations:
                raise bad(f"{where}: unknown mutation {data['mutation']!r} (known: {', '.join(mutations)})")
            if op == "burst" and data.get("copies") is not None and not 1 <= data["copies"] <= 100:
                raise bad(f"{where}: copies must be from 1 to 100, got {data['copies']}")
        steps.append(Step.from_dict(data))
    return run_seed, steps, doc


def replay_lines(config: Path, schedule: Path, *, seed: Optional[int] = None) -> tuple[list[str], bool]:
    """Replay `schedule` against the target of `config`; (printed lines, finding reproduced)."""
    from hookproof.cli import _load
    from hookproof.commands.explore import explore_target
    from scenarios.statemachine import format_step, replay

    run_seed, steps, doc = read_schedule(schedule, seed)
    cfg = _load(config)
    types = list(doc.get("events", []))
    lines = [f"replaying {len(steps)} step(s) of {schedule.name} (seed {run_seed})"]
    count = 0

    def on_step(step, note: str) -> None:  # type: ignore[no-untyped-def]
        nonlocal count
        count += 1
        lines.append(f"{count:>2}. {format_step(step, types)} -> {note}")

    with explore_target(cfg) as (target, state):
        failure = replay(target, steps, run_seed, provider_state=state, on_step=on_step)
    if failure is None:
        lines.append("no finding: the schedule did not reproduce")
        return lines, False
    lines.append(f"{len(steps) + 1:>2}. teardown" if failure.phase == "teardown" else "    (found after the last step)")
    for f in failure.findings:
        lines.append(f"finding: {f.check_id}: {f.key} {f.message}")
    saved = {(f["check_id"]) for f in doc.get("findings", [])}
    if saved and not saved & {f.check_id for f in failure.findings}:
        lines.append(f"note: the saved run found {', '.join(sorted(saved))}")
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
        from chaos.errors import ChaosError
        from hookproof.cli import console, fail
        from hookproof.errors import HookproofError
        from simulator.errors import SimulatorError

        try:
            lines, found = replay_lines(config, schedule, seed=seed)
        except (HookproofError, SimulatorError, ChaosError) as exc:
            raise fail(str(exc)) from None
        for line in lines:
            console.print(line, markup=False, soft_wrap=True)
        raise typer.Exit(1 if found else 0)
