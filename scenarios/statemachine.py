"""`hookproof explore`: a Hypothesis state machine over delivery schedules.

The machine plays the provider. Its rules change the world (the world decides which
lifecycle operation is legal next) and deliver the resulting events in any order, with
the faults an at-least-once provider produces: a redelivery of an acked event (maybe
re-serialized or with new transport fields), a burst of concurrent copies, a response
the provider never sees, a sender timeout, and a clock that moves on. After every step
it checks the safety properties (at most one effect per business key, no observed state
regression); at the end it delivers whatever is still pending, lets the receiver settle
and checks exactly-once and that the final state equals the provider's truth.

Two tiers (DESIGN.md, "Two tiers of search"):

- deterministic: an in-process ASGI/WSGI app driven on one event loop (Hypothesis has
  no async rules, so each rule runs the loop until its deliveries complete; a burst is
  an ``asyncio.gather`` inside one rule; a lost answer is the app running to completion
  and the provider then seeing a timeout). Failures reproduce, so they shrink, and the
  shrunk schedule is written as JSON that `replay` runs again;
- statistical: a URL or a started process. Sequential programs still run through the
  machine (bursts are off there), and real-socket bursts are repeated R times by
  `burst_hit_rate`, which reports a hit rate and the seeds, not a shrunk program.

A schedule step is plain data (`Step`), so the machine, the JSON file and `replay` share
one interpreter (`Session.apply`). Events are referred to by their index in the world's
event list and objects by their index among the objects of their type, so a schedule
does not depend on the ids a seed draws: ids are salted per example (fresh ids, no
receiver reset) while the seed fixes everything else.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import secrets as _secrets
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from hookproof.scenarios.checks import CheckResult, run_checks
from hookproof.scenarios.observations import Observation, expectations_from
from hookproof.simulator.delivery import Attempt, Dispatcher, History, Outcome, Target
from hookproof.simulator.events import Event
from hookproof.simulator.faults import Delivery, FaultPlan, Mutation, schedule
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.world import MONEY_PREFIXES, World

#: Version tag of the schedule file format.
SCHEDULE_FORMAT = "hookproof-schedule/1"
#: Base URL in-process receivers are given for the provider API (routed by respx, never resolved).
PROVIDER_API_BASE = "http://provider.hookproof.test"
#: Where the provider clock starts (an exact second: 2026-01-01T00:00:00Z), in microseconds.
CLOCK_START_US = 1_767_225_600 * 1_000_000
#: Largest step of the provider clock between two changes, microseconds. Changes made by one
#: operation share a second, as they do at a real provider; `advance_clock` moves time on.
CLOCK_STEP_US = 1_000
#: Safety checks run after every step; the final checks after teardown.
SAFETY_CHECKS: tuple[str, ...] = ("duplicated", "regressed")
FINAL_CHECKS: tuple[str, ...] = ("duplicated", "lost", "unexpected", "regressed", "stale")
#: Seconds of stability that settle an observation already showing the expected picture.
QUICK_WINDOW_S = 0.005
#: Attempts per pending delivery during teardown, at most.
TEARDOWN_ATTEMPTS = 5
#: Redelivery variants: none, a re-serialized body, or new transport fields (timestamp, signature).
REDELIVERY_MUTATIONS: tuple[str | None, ...] = (None, Mutation.RESERIALIZE.value, Mutation.TRANSPORT_FIELDS.value)
#: Lifecycle operations the machine may ask the world for, simplest first.
ACTIONS: tuple[str, ...] = ("subscribe", "pay", "renew", "fail_renewal", "retry_invoice", "cancel", "refund")
#: Steps that send something to the receiver (the "delivery steps" of a schedule).
DELIVERY_OPS: frozenset[str] = frozenset({"deliver", "redeliver", "burst", "drop_response", "timeout"})


# ---- targets ----------------------------------------------------------------------------

@dataclass
class Prepared:
    """One example's receiver: where to deliver, how to observe it, how to release it."""

    target: Target
    observe: Callable[[], Observation]
    close: Callable[[], None] = lambda: None


@dataclass
class ExploreTarget:
    """What the machine explores, and how each example gets a receiver.

    Attributes:
        profile: signs and envelopes deliveries.
        secrets: the receiver's secrets (never reported).
        open: called once per example; returns the receiver to use (it may be shared
            between examples: ids are fresh per example).
        describe: the target as reports name it.
        in_process: True for in-process apps (the deterministic tier: bursts are on).
        live / account: the receiver's environment and account.
        settle_window_s / settle_deadline_s / settle_interval_s: liveness settle at teardown.
    """

    profile: Profile
    secrets: Sequence[str]
    open: Callable[[], Prepared]
    describe: str
    in_process: bool = True
    live: bool = False
    account: str | None = None
    settle_window_s: float = 0.05
    settle_deadline_s: float = 5.0
    settle_interval_s: float = 0.005


def shared_target(target: Target, observe: Callable[[], Observation], profile: Profile, secrets: Sequence[str],
                  **options: Any) -> ExploreTarget:
    """An ExploreTarget whose every example uses the same receiver (fresh ids keep them apart)."""
    prepared = Prepared(target, observe)
    options.setdefault("in_process", target.in_process)
    return ExploreTarget(profile=profile, secrets=tuple(secrets), open=lambda: prepared, describe=target.describe(),
                         **options)


# ---- the provider API for in-process receivers --------------------------------------------

def _bridge(app: Any) -> Callable[[Any], Any]:
    """A respx side effect answering a request with the in-process ASGI `app`.

    Receivers call the API from worker threads with sync httpx clients, so the app is
    run on a private event loop (in a helper thread when the caller's thread has one).
    """
    import httpx

    transport = httpx.ASGITransport(app=app)

    def handler(request: Any) -> Any:
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = request.read()
        inner = httpx.Request(request.method, request.url, headers=request.headers, content=body)

        async def go() -> httpx.Response:
            response = await transport.handle_async_request(inner)
            content = await response.aread()
            return httpx.Response(response.status_code, headers=response.headers, content=content)

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(go())
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, go()).result()

    return handler


@contextmanager
def provider_api(state: Any, base_url: str = PROVIDER_API_BASE) -> Iterator[Any]:
    """Route httpx calls to `base_url` into the simulator's provider API over `state` (respx).

    Every other request passes through untouched. Yields the respx router.
    """
    import respx
    from urllib.parse import urlsplit

    from hookproof.simulator.server.app import create_app

    host = urlsplit(base_url).hostname
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        router.route(host=host).mock(side_effect=_bridge(create_app(state)))
        router.route().pass_through()
        yield router


# ---- schedules ------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One step of a schedule (plain data: JSON in the schedule file).

    `op` is ``emit`` (`action`, `object` index), ``deliver``, ``redeliver`` (`mutation`),
    ``burst`` (`copies`), ``drop_response`` or ``timeout`` (each with `event` index),
    or ``advance_clock`` (`seconds`).
    """

    op: str
    action: str | None = None
    object: int | None = None
    event: int | None = None
    mutation: str | None = None
    copies: int | None = None
    seconds: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Step":
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown or "op" not in data:
            raise ValueError(f"not a schedule step: {dict(data)!r}")
        return cls(**dict(data))


@dataclass
class Failure:
    """A finding of the machine: the schedule that produced it, and the evidence."""

    seed: int
    steps: list[Step]
    event_types: list[str]
    checks: list[CheckResult]
    attempts: list[Attempt]
    phase: str  # "step" (a safety check after a step) or "teardown"

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
    return f"{step.op} {ev(step.event)}"


def format_steps(steps: Sequence[Step], event_types: Sequence[str]) -> list[str]:
    """The schedule, one numbered line per step, then the implied teardown."""
    lines = [f"{i:>2}. {format_step(s, event_types)}" for i, s in enumerate(steps, 1)]
    lines.append(f"{len(steps) + 1:>2}. teardown: deliver everything pending, settle, check")
    return lines


def schedule_document(failure: Failure, *, target: str, profile: str) -> dict[str, Any]:
    """The JSON document of a failing schedule (events, deliveries, faults in order, with the seed)."""
    return {
        "format": SCHEDULE_FORMAT,
        "seed": failure.seed,
        "profile": profile,
        "target": target,
        "phase": failure.phase,
        "events": list(failure.event_types),
        "steps": [s.to_dict() for s in failure.steps],
        "findings": [{"check_id": f.check_id, "key": f.key, "message": f.message} for f in failure.findings],
    }


def write_schedule(failure: Failure, path: str | os.PathLike[str], *, target: str, profile: str) -> Path:
    """Write the failing schedule as JSON to `path`; returns it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(schedule_document(failure, target=target, profile=profile), indent=2) + "\n",
                 encoding="utf-8")
    return p


#: Why a search in which no valid delivery was acknowledged certifies nothing.
NOTHING_ACKNOWLEDGED = ("no valid delivery was acknowledged ({attempts} sent over the whole search, none answered "
                        "with success): nothing was delivered, so nothing is certified")


class ScheduleError(ValueError):
    """A schedule file that cannot be replayed; the message names the step and what is wrong."""


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def load_schedule(path: str | os.PathLike[str], seed: int | None = None) -> tuple[int, list[Step], dict[str, Any]]:
    """Read and check a schedule file before anything runs: (seed, steps, the whole document).

    Every step is checked against the world the seed builds (`seed` overrides the
    file's): its fields have the right types, each emit is a legal operation, and each
    delivery names an event emitted by then. Raises OSError when the file cannot be
    read, ScheduleError (one line, naming a bad step's number and op) when it is not a
    replayable schedule.
    """
    from hookproof.simulator.errors import WorldError

    bad = ScheduleError
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
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


# ---- the world, with fresh ids per example ------------------------------------------------

_SALT_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SALT_LEN = 6


class _SaltedWorld(World):
    """A World whose ids end in a per-example salt: same structure for the same seed, fresh ids."""

    def __init__(self, seed: int, *, salt: str, **kwargs: Any) -> None:
        self._salt = salt
        super().__init__(seed, **kwargs)

    def _new_id(self, object_type: str) -> str:
        base = super()._new_id(object_type)
        return base[: -len(self._salt)] + self._salt

    def advance(self, seconds: int) -> None:
        """Move the provider's clock forward by whole `seconds`."""
        self._now_us += seconds * 1_000_000


_salts = itertools.count(1)
_RUN_SALT = "".join(_secrets.choice(_SALT_ALPHABET) for _ in range(2))


def _fresh_salt() -> str:
    n = next(_salts)
    digits = []
    for _ in range(_SALT_LEN - 2):
        n, r = divmod(n, len(_SALT_ALPHABET))
        digits.append(_SALT_ALPHABET[r])
    return _RUN_SALT + "".join(digits)


def legal_actions(world: World) -> list[tuple[str, int | None]]:
    """The lifecycle operations the world allows now, as (action, object index), simplest first."""
    out: list[tuple[str, int | None]] = [("subscribe", None), ("pay", None)]
    subs = world.objects("subscription")
    for i, sub in enumerate(subs):
        status = world.get(sub)["status"]
        if status in ("active", "past_due", "trialing"):
            out.append(("renew", i))
        if status in ("active", "trialing"):
            # a second failed renewal of a past_due subscription bumps its version with no
            # event carrying it, so a receiver that fetches state would look "ahead" of the truth
            out.append(("fail_renewal", i))
        if status != "canceled":
            out.append(("cancel", i))
    for i, inv in enumerate(world.objects("invoice")):
        invoice = world.get(inv)
        if invoice["status"] == "open" and world.get(invoice["subscription"])["status"] != "canceled":
            out.append(("retry_invoice", i))
    for i, ch in enumerate(world.objects("charge")):
        c = world.get(ch)
        if c["amount"] - c["amount_refunded"] > 0:
            out.append(("refund", i))
    return out


def apply_action(world: World, action: str, index: int | None) -> None:
    """Perform one lifecycle operation (raises WorldError when it is not legal)."""
    from hookproof.simulator.errors import WorldError

    def nth(object_type: str) -> str:
        ids = world.objects(object_type)
        if index is None or not 0 <= index < len(ids):
            raise WorldError(f"{action}: no {object_type} #{index}")
        return ids[index]

    def customer() -> str:
        existing = world.objects("customer")
        return existing[0] if existing else world.event(world.create_customer()).object_id

    if action == "subscribe":
        world.subscribe(customer())
    elif action == "pay":
        world.pay(customer())
    elif action == "renew":
        world.renew(nth("subscription"), pay=True)
    elif action == "fail_renewal":
        world.renew(nth("subscription"), pay=False)
    elif action == "retry_invoice":
        world.retry_invoice(nth("invoice"), pay=True)
    elif action == "cancel":
        world.cancel(nth("subscription"))
    elif action == "refund":
        ch = world.get(nth("charge"))
        left = ch["amount"] - ch["amount_refunded"]
        world.refund(ch["id"], max(1, left // 2))
    else:
        raise WorldError(f"unknown action {action!r} (known: {', '.join(ACTIONS)})")


# ---- one example ----------------------------------------------------------------------------

class Session:
    """One example: a fresh world, a receiver, a dispatcher, the history, the observations.

    `apply(step)` interprets one schedule step; `safety()` and `finish()` run the checks.
    Used by the state machine and by `replay`.
    """

    def __init__(self, explore: ExploreTarget, seed: int, *, provider_state: Any = None,
                 on_step: Callable[[Step, str], None] | None = None) -> None:
        self.explore = explore
        self.seed = seed
        self.world = _SaltedWorld(seed, salt=_fresh_salt(), livemode=explore.live, account=explore.account,
                                  start_us=CLOCK_START_US, step_us=CLOCK_STEP_US)
        if provider_state is not None:
            provider_state.set_world(self.world)
        self.prepared = explore.open()
        self.history = History()
        self.loop = asyncio.new_event_loop()
        self.dispatcher = Dispatcher(self.prepared.target, explore.profile, explore.secrets, self.history,
                                     retries=False, scenario="explore", seed=seed)
        self.steps: list[Step] = []
        self.attempts_of: dict[int, int] = {}
        self.acked: set[int] = set()
        self.observations: list[Observation] = []
        self.dirty = False
        self.on_step = on_step
        self._ids: set[str] = set()
        self._closed = False

    # ---- reading ------------------------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        return self.world.events

    @property
    def event_types(self) -> list[str]:
        return [e.type for e in self.world.events]

    def pending(self) -> list[int]:
        """Indexes of events not acked yet, in emission order."""
        return [i for i in range(len(self.world.events)) if i not in self.acked]

    def acked_events(self) -> list[int]:
        """Indexes of acked events, those with an effect first (their redelivery is the risky one)."""
        return sorted(self.acked, key=lambda i: (self.world.events[i].business_key is None, i))

    def burst_candidates(self) -> list[int]:
        """Indexes of every emitted event, those with an effect first."""
        return sorted(range(len(self.world.events)), key=lambda i: (self.world.events[i].business_key is None, i))

    # ---- steps ----------------------------------------------------------------------------
    def apply(self, step: Step) -> str:
        """Run one step; returns a short description of what the provider saw."""
        self.steps.append(step)
        if step.op == "emit":
            start = len(self.world.events)
            apply_action(self.world, step.action or "", step.object)
            self._ids = set(self.world.objects())
            new = self.world.events[start:]
            note = ", ".join(f"#{start + i} {e.type}" for i, e in enumerate(new)) or "no events"
        elif step.op == "advance_clock":
            self.world.advance(int(step.seconds or 1))
            note = "clock moved"
        elif step.op == "burst":
            attempts = self.loop.run_until_complete(self._burst(self._event(step), int(step.copies or 2)))
            note = ", ".join(_outcome(a) for a in attempts)
        else:
            index = self._event(step)
            mutation = (Mutation(step.mutation),) if step.mutation else ()
            a = self.loop.run_until_complete(self._attempt(index, op=step.op, mutations=mutation))
            note = _outcome(a)
        if self.on_step:
            self.on_step(step, note)
        return note

    def _event(self, step: Step) -> int:
        if step.event is None or not 0 <= step.event < len(self.world.events):
            raise ValueError(f"step {step.op}: no event #{step.event} (the world emitted {len(self.world.events)})")
        return step.event

    async def _attempt(self, index: int, *, op: str = "deliver", mutations: tuple[Mutation, ...] = ()) -> Attempt:
        event = self.world.events[index]
        number = self.attempts_of.get(index, 0) + 1
        self.attempts_of[index] = number
        tags: tuple[str, ...] = tuple(m.value for m in mutations)
        delivery = Delivery(
            delivery_id=f"dlv_{event.id}_1", event=event, copy=1, mutations_first=mutations, mutations_retry=mutations,
            drop_responses=number if op == "drop_response" else 0,
            sender_timeout_s=0.001 if op == "timeout" else None, timeouts=0,
            tags=tags + (("redeliver",) if op == "redeliver" else ()),
        )
        attempt = await self.dispatcher.attempt(delivery, number)
        if attempt.outcome is Outcome.ACKED:
            self.acked.add(index)
        self.dirty = True
        return attempt

    async def _burst(self, index: int, copies: int) -> list[Attempt]:
        event = self.world.events[index]
        plan = FaultPlan(copies=copies, concurrency=copies)
        sched = schedule([event], plan)
        base = self.attempts_of.get(index, 0)
        self.attempts_of[index] = base + copies
        deliveries = [Delivery(delivery_id=f"dlv_{event.id}_b{base + k}", event=event, copy=k + 1, tags=d.tags)
                      for k, d in enumerate(sched.steps[0].deliveries)]
        attempts = list(await asyncio.gather(*(self.dispatcher.attempt(d, 1) for d in deliveries)))
        if any(a.outcome is Outcome.ACKED for a in attempts):
            self.acked.add(index)
        self.dirty = True
        return attempts

    # ---- checks ---------------------------------------------------------------------------
    def observe(self) -> Observation:
        """One observation of this example's objects (other examples' rows are ignored)."""
        obs = self.prepared.observe()
        ids = self._ids
        effects = tuple(e for e in obs.effects if _key_object(e.business_key) in ids)
        states = tuple(s for s in obs.states if s.object_id in ids)
        result = Observation(obs.at, effects, states)
        self.observations.append(result)
        return result

    def _check(self, ids: Sequence[str]) -> list[CheckResult]:
        attempts = self.history.attempts()
        expectations = expectations_from(self.world.events, attempts,
                                         sender_timeout_s=self.explore.profile.sender_timeout_s,
                                         max_attempts_per_event=None, money_prefixes=MONEY_PREFIXES)
        return run_checks(ids, attempts, expectations, self.observations)

    def failure(self, checks: list[CheckResult], phase: str) -> Failure | None:
        if not any(c.problems for c in checks):
            return None
        return Failure(self.seed, list(self.steps), self.event_types, checks, self.history.attempts(), phase)

    def safety(self) -> Failure | None:
        """At most once and no regression, over what was observed so far (observes if needed)."""
        if not self.dirty:
            return None
        self.dirty = False
        self.observe()
        return self.failure(self._check(SAFETY_CHECKS), "step")

    def finish(self) -> Failure | None:
        """Deliver everything pending until acked (bounded), settle, then the final checks."""
        for _ in range(TEARDOWN_ATTEMPTS):
            pending = self.pending()
            if not pending:
                break
            for index in pending:
                self.loop.run_until_complete(self._attempt(index))
        self._settle()
        return self.failure(self._check(FINAL_CHECKS), "teardown")

    def _settle(self) -> None:
        """Observe until the receiver settles (liveness, as in Jepsen: bounded by a deadline).

        Settled means: unchanged for `QUICK_WINDOW_S` while it already shows every acked
        effect and the provider's final states, or unchanged for the target's
        `settle_window_s` otherwise (a receiver that works in the background gets that
        long to catch up), or the deadline passed.
        """
        x = self.explore
        acked_keys, truth = self._picture()
        start = time.monotonic()
        last = self.observe()
        stable_since = time.monotonic()
        while True:
            now = time.monotonic()
            window = QUICK_WINDOW_S if _shows(last, acked_keys, truth) else x.settle_window_s
            if now - stable_since >= window or now - start >= x.settle_deadline_s:
                return
            time.sleep(x.settle_interval_s)
            obs = self.observe()
            if _shape(obs) != _shape(last):
                last, stable_since = obs, time.monotonic()

    def _picture(self) -> tuple[set[str], dict[str, tuple[str, int]]]:
        """Business keys acked by a valid attempt, and each stateful object's final (status, version)."""
        keys = {a.business_key for a in self.history.attempts()
                if a.outcome is Outcome.ACKED and a.valid and a.business_key}
        truth: dict[str, tuple[str, int]] = {}
        for i, e in enumerate(self.world.events):
            if e.stateful and e.status is not None and i in self.attempts_of:
                if e.object_id not in truth or e.version > truth[e.object_id][1]:
                    truth[e.object_id] = (e.status, e.version)
        return {k for k in keys if k is not None}, truth

    def close(self) -> None:
        """Close the dispatcher and the loop (the receiver is the target's to keep or close)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.loop.run_until_complete(self.dispatcher.aclose(drain_s=5.0))
        finally:
            self.loop.close()
            self.prepared.close()


def _shape(obs: Observation) -> tuple[list[tuple[str, int]], list[tuple[str, str, int | None]]]:
    return sorted(obs.counts().items()), sorted((st.object_id, st.status, st.version) for st in obs.states)


def _shows(obs: Observation, keys: set[str], truth: Mapping[str, tuple[str, int]]) -> bool:
    """True when `obs` shows every key in `keys` and every object at its final status (and
    version, when the observer exposes versions)."""
    counts = obs.counts()
    if any(k not in counts for k in keys):
        return False
    for obj, (status, version) in truth.items():
        st = obs.state_of(obj)
        if st is None or st.status != status or (st.version is not None and st.version != version):
            return False
    return True


def _key_object(key: str) -> str:
    parts = key.split(":")
    return parts[1] if len(parts) > 1 else key


def _outcome(a: Attempt) -> str:
    return f"{a.outcome.value} {a.status}" if a.status is not None else a.outcome.value


# ---- the Hypothesis machine ------------------------------------------------------------------

def machine_for(explore: ExploreTarget, *, seed: int = 0, provider_state: Any = None,
                failures: list[Failure] | None = None) -> type:
    """A RuleBasedStateMachine class exploring `explore`; failures are appended to `failures`.

    The last failure appended is the one of the last failing run, which Hypothesis makes
    the shrunk example when it reports.
    """
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

    sink = failures if failures is not None else []
    index = st.integers(min_value=0, max_value=15)

    class WebhookMachine(RuleBasedStateMachine):
        """Provider operations and faults as rules; at-most-once and monotonic state as invariants."""

        def __init__(self) -> None:
            super().__init__()
            self.session = Session(explore, seed, provider_state=provider_state)
            self.failed = False

        def _run(self, step: Step) -> None:
            self.session.apply(step)

        # ---- the world ---------------------------------------------------------------
        @rule(choice=index)
        def emit(self, choice: int) -> None:
            legal = legal_actions(self.session.world)
            action, obj = legal[choice % len(legal)]
            self._run(Step("emit", action=action, object=obj))

        @rule(seconds=st.integers(min_value=1, max_value=3))
        def advance_clock(self, seconds: int) -> None:
            self._run(Step("advance_clock", seconds=seconds))

        # ---- deliveries ---------------------------------------------------------------
        @precondition(lambda self: bool(self.session.pending()))
        @rule(which=index)
        def deliver(self, which: int) -> None:
            pending = self.session.pending()
            self._run(Step("deliver", event=pending[which % len(pending)]))

        @precondition(lambda self: bool(self.session.acked))
        @rule(which=index, variant=st.sampled_from(REDELIVERY_MUTATIONS))
        def redeliver(self, which: int, variant: str | None) -> None:
            acked = self.session.acked_events()
            self._run(Step("redeliver", event=acked[which % len(acked)], mutation=variant))

        @precondition(lambda self: explore.in_process and bool(self.session.events))
        @rule(which=index, copies=st.integers(min_value=2, max_value=4))
        def burst(self, which: int, copies: int) -> None:
            candidates = self.session.burst_candidates()
            self._run(Step("burst", event=candidates[which % len(candidates)], copies=copies))

        @precondition(lambda self: bool(self.session.pending()))
        @rule(which=index)
        def drop_response(self, which: int) -> None:
            pending = self.session.pending()
            self._run(Step("drop_response", event=pending[which % len(pending)]))

        @precondition(lambda self: explore.in_process and bool(self.session.pending()))
        @rule(which=index)
        def timeout(self, which: int) -> None:
            pending = self.session.pending()
            self._run(Step("timeout", event=pending[which % len(pending)]))

        # ---- properties ---------------------------------------------------------------
        @invariant()
        def at_most_once_and_monotonic(self) -> None:
            found = self.session.safety()
            if found is not None:
                self.failed = True
                sink.append(found)
                raise FindingError(found)

        def teardown(self) -> None:
            try:
                if not self.failed:
                    found = self.session.finish()
                    if found is not None:
                        sink.append(found)
                        raise FindingError(found)
            finally:
                self.session.close()

    WebhookMachine.__name__ = WebhookMachine.__qualname__ = "WebhookMachine"
    return WebhookMachine


@dataclass
class ExploreResult:
    """What `explore` found: the shrunk failure (or None), and how the search went."""

    failure: Failure | None
    examples: int
    steps: int
    duration_s: float
    seed: int
    hypothesis_output: str = ""
    error: str | None = None
    attempts: int = 0  # valid attempts sent, over every example of the search
    acked: int = 0  # of which the receiver acknowledged (a search nothing was acknowledged in proves nothing)


def explore(target: ExploreTarget, *, max_examples: int = 100, seed: int | None = None,
            step_count: int = 10, provider_state: Any = None, route_provider_api: bool = True,
            database: Any = None) -> ExploreResult:
    """Run the state machine against `target` until a finding (shrunk) or `max_examples`.

    The active Hypothesis profile is the base (under ``CI=true`` Hypothesis loads its
    ``ci`` profile: derandomized, no database). `seed` fixes both the world seed and
    Hypothesis's seed. In-process targets get the provider API routed by respx.
    `database` is a Hypothesis example database (None: none; every machine shares one
    test key, so a database is best kept per target).
    """
    import io
    import contextlib

    from hypothesis import HealthCheck, Phase, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.stateful import run_state_machine_as_test

    from hookproof.simulator.server.state import ServerState

    world_seed = seed if seed is not None else int.from_bytes(os.urandom(3), "big")
    failures: list[Failure] = []
    counter = _Counter()
    state = provider_state if provider_state is not None else ServerState()
    machine = machine_for(target, seed=world_seed, provider_state=state, failures=failures)
    counter.install(machine)
    if seed is not None:
        machine = hypothesis_seed(seed)(machine)
    config = settings(max_examples=max_examples, stateful_step_count=step_count, deadline=None,
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False, database=database,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    out = io.StringIO()
    started = time.monotonic()
    error: str | None = None
    routing = provider_api(state) if (route_provider_api and target.in_process) else contextlib.nullcontext()
    with routing, contextlib.redirect_stdout(out):
        try:
            run_state_machine_as_test(machine, settings=config)
        except FindingError:
            pass
        except BaseException as exc:  # noqa: BLE001 - Flaky and friends: report them, keep the failure
            if isinstance(exc, KeyboardInterrupt):
                raise
            if not failures:
                raise
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return ExploreResult(failures[-1] if failures else None, counter.examples, counter.steps,
                         time.monotonic() - started, world_seed, out.getvalue(), error,
                         attempts=counter.attempts, acked=counter.acked)


class _Counter:
    """Counts examples, steps, and valid attempts sent and acknowledged of a machine class
    (for the bench and the report)."""

    def __init__(self) -> None:
        self.examples = 0
        self.steps = 0
        self.attempts = 0
        self.acked = 0

    def install(self, machine: type) -> None:
        counter = self
        original_init = machine.__init__
        original_apply = Session.apply
        original_close = Session.close

        def init(self: Any) -> None:
            counter.examples += 1
            original_init(self)
            session = self.session

            def apply(step: Step) -> str:
                counter.steps += 1
                return original_apply(session, step)

            def close() -> None:
                if not session._closed:
                    valid = [a for a in session.history.attempts() if a.valid]
                    counter.attempts += len(valid)
                    counter.acked += sum(a.outcome is Outcome.ACKED for a in valid)
                original_close(session)

            session.apply = apply  # type: ignore[method-assign]
            session.close = close  # type: ignore[method-assign]

        machine.__init__ = init  # type: ignore[method-assign]


def replay(target: ExploreTarget, steps: Sequence[Step], seed: int, *, provider_state: Any = None,
           route_provider_api: bool = True, on_step: Callable[[Step, str], None] | None = None) -> Failure | None:
    """Run a saved schedule once, deterministically, with the same checks; the finding or None."""
    from hookproof.simulator.server.state import ServerState

    import contextlib

    state = provider_state if provider_state is not None else ServerState()
    routing = provider_api(state) if (route_provider_api and target.in_process) else contextlib.nullcontext()
    with routing:
        session = Session(target, seed, provider_state=state, on_step=on_step)
        try:
            for step in steps:
                session.apply(step)
                found = session.safety()
                if found is not None:
                    return found
            return session.finish()
        finally:
            session.close()


# ---- the statistical tier --------------------------------------------------------------------

@dataclass
class HitRate:
    """Real-socket bursts repeated R times: how often the receiver applied twice."""

    hits: int
    repeats: int
    copies: int
    seeds: list[int] = field(default_factory=list)  # seeds of the runs that double-applied
    keys: list[str] = field(default_factory=list)
    attempts: int = 0  # burst copies sent, over all runs
    acked: int = 0  # of which the receiver acknowledged (a hit rate over no acknowledged copy proves nothing)

    @property
    def rate(self) -> float:
        return self.hits / self.repeats if self.repeats else 0.0


def burst_hit_rate(target: ExploreTarget, *, repeats: int = 20, copies: int = 8, seed: int = 0,
                   provider_state: Any = None, on_run: Callable[[int], None] | None = None) -> HitRate:
    """Release `copies` concurrent copies of an effectful event `repeats` times (race
    amplification over real sockets for URLs); count the runs that applied it twice,
    and the copies sent and acknowledged. `on_run(done)` hears of each finished run.
    """
    from hookproof.simulator.server.state import ServerState

    state = provider_state if provider_state is not None else ServerState()
    result = HitRate(0, repeats, copies)
    for r in range(repeats):
        run_seed = seed + r
        session = Session(target, run_seed, provider_state=state)
        try:
            session.apply(Step("emit", action="pay"))
            index = next(i for i, e in enumerate(session.events) if e.business_key)
            event = session.events[index]
            plan = FaultPlan(copies=copies, concurrency=copies)

            async def go() -> None:
                await session.dispatcher.run(schedule([event], plan), race=True)

            session.loop.run_until_complete(go())
            sent = [a for a in session.history.attempts() if a.event_id == event.id]
            result.attempts += len(sent)
            result.acked += sum(a.outcome is Outcome.ACKED for a in sent)
            session.dirty = True
            session._settle()
            checks = session._check(("duplicated",))
            bad = [f.key for c in checks for f in c.problems]
            if bad:
                result.hits += 1
                result.seeds.append(run_seed)
                result.keys.extend(bad)
        finally:
            session.close()
        if on_run is not None:
            on_run(r + 1)
    return result


__all__ = [
    "ACTIONS",
    "DELIVERY_OPS",
    "ExploreResult",
    "ExploreTarget",
    "Failure",
    "FindingError",
    "HitRate",
    "PROVIDER_API_BASE",
    "Prepared",
    "SCHEDULE_FORMAT",
    "Session",
    "Step",
    "burst_hit_rate",
    "explore",
    "format_step",
    "format_steps",
    "legal_actions",
    "ScheduleError",
    "load_schedule",
    "machine_for",
    "provider_api",
    "replay",
    "schedule_document",
    "shared_target",
    "write_schedule",
]
