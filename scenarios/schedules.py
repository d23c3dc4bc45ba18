"""Schedule steps as plain data, their one-line rendering, and schedule files
(`failing-schedule.json`) written by explore and read by replay."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from hookproof.scenarios.checks import CheckResult
from hookproof.scenarios.world_ops import new_world_of, ops_for
from hookproof.simulator.delivery import Attempt
from hookproof.simulator.faults import Mutation

#: Version tag of the schedule file format.
SCHEDULE_FORMAT = "hookproof-schedule/1"
#: Largest step of the provider clock between two changes, microseconds. Changes made by one
#: operation share a second, as they do at a real provider; the next operation happens a
#: second later at least (`world_ops.apply_action`), a renewal at its period's end, and
#: `advance_clock` moves time on.
CLOCK_STEP_US = 1_000
#: Steps that send something to the receiver (the "delivery steps" of a schedule).
DELIVERY_OPS: frozenset[str] = frozenset({"deliver", "redeliver", "burst", "drop_response", "timeout",
                                          "burst_related", "redeliver_window"})
#: The steps that race copies or events against each other: their interleaving is the
#: receiver's (threads, connections), not the schedule's, so it differs from run to run.
CONCURRENT_OPS: frozenset[str] = frozenset({"burst", "burst_related"})
#: Answers the provider API may give an object's next fetch (`api_fault`): 404 "not visible
#: yet", or a server error, once; then it recovers (the catalog's `provider-api-transient`).
API_FAULT_STATUSES: tuple[int, ...] = (404, 500, 503)


def clock_start_us() -> int:
    """Where the provider clock of an explore example's world, or a replay's, starts: the
    current whole second, unix microseconds, so its events are dated on the run's day, as
    certify's are: a receiver comparing a webhook's timestamp with the current time, as
    shopify.dev/docs/apps/build/webhooks/best-practices ("Manage delays") advises, sees a fresh
    event. A
    schedule file records no clock: what a world emits, its ids and the operations it allows do
    not depend on where its clock starts (only the times do, and the period Paddle's ``dunning:``
    keys name), so a replay starts at its own run's time and plays the same story."""
    return int(time.time()) * 1_000_000


# ---- schedules ------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One step of a schedule (plain data: JSON in the schedule file).

    `op` is ``emit`` (`action`, `object` index), ``deliver``, ``redeliver`` (`mutation`),
    ``burst`` (`copies`), ``drop_response`` or ``timeout`` (each with `event` index),
    ``advance_clock`` (`seconds`), ``burst_related`` (`events`: different events of one
    new object released together, the race transport over real sockets),
    ``redeliver_window`` (`count`: the last `count` acknowledged events replayed by the
    provider, in order: Paddle's replay a new notification of each, `Profile.replayed`) or ``api_fault`` (`event` index, `status`: the provider API answers the next
    fetch of that event's object, and of the event, with `status`, then recovers).
    """

    op: str
    action: str | None = None
    object: int | None = None
    event: int | None = None
    mutation: str | None = None
    copies: int | None = None
    seconds: int | None = None
    events: tuple[int, ...] | None = None
    count: int | None = None
    status: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Step":
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown or "op" not in data:
            raise ValueError(f"not a schedule step: {dict(data)!r}")
        fields = dict(data)
        if fields.get("events") is not None:
            fields["events"] = tuple(fields["events"])
        return cls(**fields)


@dataclass
class Failure:
    """A finding of the machine: the schedule that produced it, and the evidence.

    `event_types` are the world's types (what a schedule file records), `event_names` the
    same events in the profile's own names (empty: the world's), `event_ids` their ids
    (to place each attempt), `marks` the (events emitted, attempts made) after each step,
    `unsent` the indices of the events the endpoint is not sent.
    """

    seed: int
    steps: list[Step]
    event_types: list[str]
    checks: list[CheckResult]
    attempts: list[Attempt]
    phase: str  # "step" (a safety check after a step) or "teardown"
    event_names: list[str] = field(default_factory=list)
    event_ids: list[str] = field(default_factory=list)
    marks: list[tuple[int, int]] = field(default_factory=list)
    #: the events the world made that the endpoint is not sent (a type its `enabled_events`
    #: leaves out): a step may still make them, moving an object the next event carries
    unsent: frozenset[int] = frozenset()

    @property
    def names(self) -> list[str]:
        """The events' types as the profile names them."""
        return self.event_names or self.event_types

    @property
    def findings(self) -> list[Any]:
        return [f for c in self.checks for f in c.problems]

    @property
    def delivery_steps(self) -> int:
        """Steps of the schedule that send something (the shrink target)."""
        return sum(1 for s in self.steps if s.op in DELIVERY_OPS)

    def summary(self) -> str:
        first = self.findings[0] if self.findings else None
        return f"{first.check_id}: {first.key} {first.message}" if first else "no finding"


class FindingError(AssertionError):
    """Raised by the machine when a check finds a violation."""

    def __init__(self, failure: Failure) -> None:
        self.failure = failure
        lines = [f"hookproof found {len(failure.findings)} violation(s) ({failure.phase}):"]
        lines += [f"  {f.check_id}: {f.key}: {f.message}" for f in failure.findings]
        lines.append("schedule:")
        lines += ["  " + line for line in format_steps(failure.steps, failure.event_types)]
        super().__init__("\n".join(lines))


#: After an event a step made that the endpoint is not sent (`Failure.unsent`).
UNSENT_MARK = " (not sent: not in enabled_events)"


def format_step(step: Step, event_types: Sequence[str]) -> str:
    """One schedule line, without ids (golden-testable)."""
    def ev(i: int | None) -> str:
        return f"#{i} {event_types[i]}" if i is not None and 0 <= i < len(event_types) else f"#{i}"

    if step.op == "emit":
        obj = f" {step.object}" if step.object is not None else ""
        return f"emit {step.action}{obj}"
    if step.op == "redeliver":
        return f"redeliver {ev(step.event)}" + (f" ({step.mutation})" if step.mutation else "")
    if step.op == "burst":
        return f"burst {ev(step.event)} x{step.copies}"
    if step.op == "advance_clock":
        return f"advance_clock +{step.seconds}s"
    if step.op == "burst_related":
        return "burst_related " + ", ".join(ev(i) for i in step.events or ())
    if step.op == "redeliver_window":
        return f"redeliver_window last {step.count}"
    if step.op == "api_fault":
        return f"api_fault {ev(step.event)} -> {step.status}"
    return f"{step.op} {ev(step.event)}"


def format_steps(steps: Sequence[Step], event_types: Sequence[str]) -> list[str]:
    """The schedule, one numbered line per step, then the implied teardown."""
    lines = [f"{i:>2}. {format_step(s, event_types)}" for i, s in enumerate(steps, 1)]
    lines.append(f"{len(steps) + 1:>2}. teardown: deliver everything pending, settle, check")
    return lines


def attempt_outcome(a: Attempt) -> str:
    """An attempt's completion as a schedule line shows it: ``acked 200``, ``unknown``."""
    return f"{a.outcome.value} {a.status}" if a.status is not None else a.outcome.value


#: Attempts a teardown line names at most (the rest are counted).
TEARDOWN_SHOWN = 12


def _sent(attempts: Sequence[Attempt], index: Mapping[str, int], names: Sequence[str],
          *, labelled: bool) -> list[str]:
    """`attempts` in the order they went out: ``#3 invoice.paid acked 200`` each
    (`labelled`), or only their completions (``acked 200``: copies of the step's one event)."""
    parts: list[str] = []
    for a in sorted(attempts, key=lambda a: (a.sent_at, a.index)):
        i = index.get(a.event_id)
        label = f"#{i} {names[i]} " if labelled and i is not None and i < len(names) else ""
        parts.append(label + attempt_outcome(a))
    return parts


def schedule_lines(failure: Failure) -> list[str]:
    """The shrunk schedule as explore prints it: one numbered line per step in the profile's
    event names, each with what it made or sent (an emit's events, those the endpoint is not
    sent marked so, a delivery's
    completions in the order they went out), then the teardown with the events it
    delivered, in the order they went out (no teardown line when the finding came after the
    last step: the teardown did not run). Without the session's `marks` (a Failure built
    by hand): `format_steps` in the profile's names."""
    names = failure.names
    if len(failure.marks) != len(failure.steps):
        return format_steps(failure.steps, names)[:None if failure.phase == "teardown" else -1]
    index = {event_id: i for i, event_id in enumerate(failure.event_ids)}
    ordered = sorted(failure.attempts, key=lambda a: a.index)
    lines: list[str] = []
    events_before, attempts_before = 0, 0
    for number, (step, (events_after, attempts_after)) in enumerate(zip(failure.steps, failure.marks), 1):
        text = format_step(step, names)
        if step.op == "emit":
            made = [f"#{i} {names[i]}" + (UNSENT_MARK if i in failure.unsent else "")
                    for i in range(events_before, min(events_after, len(names)))]
            text += " -> " + (", ".join(made) or "no events")
        elif step.op in DELIVERY_OPS:
            sent = _sent(ordered[attempts_before:attempts_after], index, names,
                         labelled=step.op in ("burst_related", "redeliver_window"))
            text += " -> " + (", ".join(sent) or "nothing sent")
        lines.append(f"{number:>2}. {text}")
        events_before, attempts_before = events_after, attempts_after
    if failure.phase == "teardown":
        lines.append(f"{len(failure.steps) + 1:>2}. {teardown_line(failure)}")
    return lines


def teardown_line(failure: Failure) -> str:
    """What the teardown did: the events it delivered in the order they went out (at
    most `TEARDOWN_SHOWN`), then settle and check; none when the finding came after a step."""
    if failure.phase != "teardown" or len(failure.marks) != len(failure.steps):
        return ("teardown: deliver everything pending, settle, check" if failure.phase == "teardown" else
                "teardown: not run (found after the last step)")
    after = failure.marks[-1][1] if failure.marks else 0
    index = {event_id: i for i, event_id in enumerate(failure.event_ids)}
    sent = _sent(sorted(failure.attempts, key=lambda a: a.index)[after:], index, failure.names, labelled=True)
    if not sent:
        return "teardown: nothing pending to deliver; settle, check"
    more = f", and {len(sent) - TEARDOWN_SHOWN} more attempt(s)" if len(sent) > TEARDOWN_SHOWN else ""
    return f"teardown: delivered {', '.join(sent[:TEARDOWN_SHOWN])}{more}; settle, check"


def schedule_document(failure: Failure, *, target: str, profile: str, config: str | None = None) -> dict[str, Any]:
    """The JSON document of a failing schedule (events, deliveries, faults in order, with the
    seed, and the absolute path of the `config` the run read, when it read one)."""
    where = {"config": str(Path(config).resolve())} if config else {}
    return {
        "format": SCHEDULE_FORMAT,
        "seed": failure.seed,
        "profile": profile,
        "target": target,
        **where,
        "phase": failure.phase,
        "events": list(failure.event_types),
        "steps": [s.to_dict() for s in failure.steps],
        "findings": [{"check_id": f.check_id, "key": f.key, "message": f.message} for f in failure.findings],
    }


def write_schedule(failure: Failure, path: str | os.PathLike[str], *, target: str, profile: str,
                   config: str | None = None) -> Path:
    """Write the failing schedule as JSON to `path` (`config`: the config file the run read); returns it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(schedule_document(failure, target=target, profile=profile, config=config), indent=2)
                 + "\n", encoding="utf-8")
    return p


#: Why a search in which no valid delivery was acknowledged certifies nothing.
NOTHING_ACKNOWLEDGED = ("no valid delivery was acknowledged ({attempts} sent over the whole search, none answered "
                        "with success): nothing was delivered, so nothing is certified")


class ScheduleError(ValueError):
    """A schedule file that cannot be replayed; the message names the step and what is wrong."""


# ---- schedule files as documents ------------------------------------------------------------

_Whole = Annotated[int, Field(ge=0)]


class _StepModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EmitStep(_StepModel):
    """``emit``: ask the world for a lifecycle operation (`action`) on an object (`object` index)."""

    op: Literal["emit"]
    action: str | None = None
    object: _Whole | None = None


class ClockStep(_StepModel):
    """``advance_clock``: the provider's clock moves on by `seconds`."""

    op: Literal["advance_clock"]
    seconds: _Whole | None = None


class DeliveryStep(_StepModel):
    """``deliver``, ``redeliver``, ``drop_response``, ``timeout``: one delivery of event #`event`."""

    op: Literal["deliver", "redeliver", "drop_response", "timeout"]
    event: _Whole | None = None
    mutation: str | None = None


class BurstStep(_StepModel):
    """``burst``: `copies` concurrent copies of event #`event`."""

    op: Literal["burst"]
    event: _Whole | None = None
    mutation: str | None = None
    copies: _Whole | None = None


class RelatedBurstStep(_StepModel):
    """``burst_related``: events #`events` (different events of one new object) released together."""

    op: Literal["burst_related"]
    events: list[_Whole]


class WindowStep(_StepModel):
    """``redeliver_window``: the last `count` acknowledged events delivered again, in order."""

    op: Literal["redeliver_window"]
    count: _Whole


class ApiFaultStep(_StepModel):
    """``api_fault``: the provider API answers the next fetch of event #`event`'s object with `status`."""

    op: Literal["api_fault"]
    event: _Whole
    status: _Whole


#: One step of a schedule file, told apart by its ``op``.
StepModel = Annotated[Union[EmitStep, ClockStep, DeliveryStep, BurstStep, RelatedBurstStep, WindowStep,
                            ApiFaultStep], Field(discriminator="op")]
_STEP: TypeAdapter[StepModel] = TypeAdapter(StepModel)


class FindingRef(BaseModel):
    """A finding as a schedule file records it (what replay expects to see again)."""

    model_config = ConfigDict(extra="allow", strict=True)

    check_id: str
    key: str | None = None
    message: str | None = None


class ScheduleDocument(BaseModel):
    """A schedule file (``failing-schedule.json``) as `schedule_document` writes it.

    `steps` stay raw here: each is read as a `StepModel` on its own, so that an error
    names the step's number and op.
    """

    model_config = ConfigDict(extra="allow", strict=True)

    format: Literal["hookproof-schedule/1"]
    seed: int
    steps: list[Any]
    events: list[str] = []
    findings: list[FindingRef] = []


#: What each top-level field must be, in the words of a schedule error.
_DOCUMENT_RULES = {
    "format": f"not a hookproof schedule (no \"format\": \"{SCHEDULE_FORMAT}\")",
    "seed": "seed: must be a whole number, got {value!r}",
    "steps": "steps: must be a list of steps, got {kind}",
    "events": "events: must be a list of event types",
    "findings": "findings: must be a list of objects with a check_id",
}


def _document(doc: Any) -> ScheduleDocument:
    """The file's document, or ScheduleError naming its first wrong field."""
    if not isinstance(doc, dict):
        raise ScheduleError(_DOCUMENT_RULES["format"])
    try:
        return ScheduleDocument.model_validate(doc)
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        value = doc.get(field)
        raise ScheduleError(_DOCUMENT_RULES[field].format(value=value, kind=type(value).__name__)) from None


def _step(data: Any, where: str, ops: Sequence[str]) -> StepModel:
    """One step of the file as its model, or ScheduleError naming the step and the field."""
    if not isinstance(data, dict) or not isinstance(data.get("op"), str):
        raise ScheduleError(f"{where}: must be an object with an \"op\"")
    try:
        return _STEP.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "union_tag_invalid":
            raise ScheduleError(f"{where}: unknown op (known: {', '.join(sorted(ops))})") from None
        key = str(error["loc"][-1])
        if error["type"] == "extra_forbidden":
            raise ScheduleError(f"{where}: unknown key {key!r}") from None
        if error["type"] == "missing":
            raise ScheduleError(f"{where}: {key} is missing") from None
        if key == "events" or (error["loc"][-2:-1] == ("events",)):
            raise ScheduleError(f"{where}: events must be a list of event numbers, got {data.get('events')!r}") \
                from None
        if key in ("object", "event", "copies", "seconds", "count", "status"):
            raise ScheduleError(f"{where}: {key} must be a whole number, not negative, got {data[key]!r}") from None
        raise ScheduleError(f"{where}: {key} must be text, got {data.get(key)!r}") from None


def load_schedule(path: str | os.PathLike[str], seed: int | None = None, *, world_kind: str | None = None,
                  tell: Callable[[Any], None] | None = None) -> tuple[int, list[Step], dict[str, Any]]:
    """Read and check a schedule file before anything runs: (seed, steps, the whole document).

    The file is a `ScheduleDocument` whose steps are `StepModel`s; every step is then
    checked against the world the seed builds (`seed` overrides the file's), of the kind
    the file's ``profile`` sends from (billing when it names none; `world_kind` when given: a
    user catalog's kind, which the profile's name alone does not tell): each emit is a legal
    operation of that world, and each delivery names an event emitted by then. `tell(world)`
    tells that world, before any step, what the endpoint is sent, as explore's sessions were told
    (`explore_targets.tell_world`: a GitHub App sent the checks gets a check suite per push, a
    Stripe endpoint sent ``invoice.payment_succeeded`` one per paid invoice; `hookproof replay`
    tells it from the config); None: a world told nothing (every profile's default). The returned
    document's ``events`` are the world's event types as that run emits them. Raises OSError
    when the file cannot be read, ScheduleError (one line, naming a bad step's number
    and op) when it is not a replayable schedule.
    """
    from hookproof.simulator.errors import WorldError

    bad = ScheduleError
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise bad("not a hookproof schedule (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise bad(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    doc = _document(raw)
    run_seed = doc.seed if seed is None else seed
    kind = world_kind or _world_kind(raw.get("profile"))
    try:
        world_ops = ops_for(kind, priced=True)  # a schedule may change a plan (a price read as state)
    except ValueError as exc:
        raise bad(f"profile: {exc}") from None
    world = new_world_of(kind, run_seed, start_us=clock_start_us(), step_us=CLOCK_STEP_US)
    if tell is not None:
        tell(world)
    ops = ("emit", "advance_clock", "api_fault", *DELIVERY_OPS)
    # oversize is no mutation of a schedule's events: only a world's own big event is sent that large
    mutations = [m.value for m in Mutation if m is not Mutation.OVERSIZE]
    steps: list[Step] = []
    for number, data in enumerate(doc.steps, start=1):
        op = data.get("op") if isinstance(data, dict) else None
        where = f"step {number}" + (f" ({op})" if isinstance(op, str) else "")
        step = _step(data, where, ops)
        if isinstance(step, EmitStep):
            if step.action is None or step.action not in world_ops.actions:
                raise bad(f"{where}: action must be one of {', '.join(world_ops.actions)}, got {step.action!r}")
            try:
                world_ops.apply(world, step.action, step.object)
            except WorldError as exc:
                raise bad(f"{where}: the world of seed {run_seed} cannot do it ({exc})") from None
        elif isinstance(step, RelatedBurstStep):
            late = [i for i in step.events if i >= len(world.events)]
            if len(step.events) < 2 or late:
                raise bad(f"{where}: events must name at least two events emitted by then (the world of seed "
                          f"{run_seed} has emitted {len(world.events)})")
        elif isinstance(step, WindowStep):
            if not 1 <= step.count <= 10_000:
                raise bad(f"{where}: count must be from 1 to 10000, got {step.count}")
        elif isinstance(step, ApiFaultStep):
            if step.event >= len(world.events):
                raise bad(f"{where}: no event #{step.event} (the world of seed {run_seed} has emitted "
                          f"{len(world.events)} by then)")
            if step.status not in API_FAULT_STATUSES:
                raise bad(f"{where}: status must be one of {', '.join(map(str, API_FAULT_STATUSES))}, "
                          f"got {step.status}")
        elif isinstance(step, (DeliveryStep, BurstStep)):
            if step.event is None or step.event >= len(world.events):
                raise bad(f"{where}: no event #{step.event} (the world of seed {run_seed} has emitted "
                          f"{len(world.events)} by then)")
            if step.mutation is not None and step.mutation not in mutations:
                raise bad(f"{where}: unknown mutation {step.mutation!r} (known: {', '.join(mutations)})")
            if isinstance(step, BurstStep) and step.copies is not None and not 1 <= step.copies <= 100:
                raise bad(f"{where}: copies must be from 1 to 100, got {step.copies}")
        steps.append(Step.from_dict(step.model_dump(exclude_none=True)))
    raw["events"] = [e.type for e in world.events]  # as the seed run makes them (a --seed makes others)
    return run_seed, steps, raw


def _world_kind(profile: Any) -> str:
    """The world kind a schedule file's ``profile`` sends from (billing when it names none)."""
    if profile is None:
        return "billing"
    from hookproof.simulator.errors import ProfileError
    from hookproof.simulator.profiles import get_profile

    try:
        return get_profile(str(profile)).world
    except (ProfileError, KeyError, ValueError):
        raise ScheduleError(f"profile: no profile {profile!r}") from None
