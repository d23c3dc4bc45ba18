"""No event is dated after it is sent: a provider dates an event when it happens and delivers
it later (GitHub's ``updated_at``, Stripe's ``created``, Paddle's ``occurred_at``, Shopify's
``X-Shopify-Triggered-At``), so a receiver refusing a time ahead of its own clock is not
failed wrongly. Checked on the wire, against a recording receiver over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import datetime
from typing import Any

import pytest

from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import STORIES, play_stories, process_seed, template_world
from hookproof.loadtests.storm_truth import storm_start_us
from hookproof.scenarios.catalog import CATALOG
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.runner import Runner
from hookproof.send import SendOptions, send
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import WORLDS, new_world, story_start_us
from tests.examples.serving import serve_app
from tests.support import read_body

SECRET = "whsec_story_dating_0123456789abcdef"
#: Fields that carry when the event, or the object it is about, happened (never a future
#: date by nature, as a period's end or a trial's end are).
_TIME_KEYS = frozenset({"created", "created_at", "updated_at", "occurred_at", "date_created", "timestamp"})
_FRACTION = re.compile(r"(\.\d{6})\d+")


class Recorder:
    """An ASGI receiver answering 200 to everything, keeping (arrival time, headers, body)."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, dict[str, str], bytes]] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        arrived = time.time()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        with self._lock:
            self.seen.append((arrived, headers, body))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})


def _unix(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value)
    if isinstance(value, str) and re.match(r"\d{4}-\d\d-\d\dT", value):
        return datetime.fromisoformat(_FRACTION.sub(r"\1", value.replace("Z", "+00:00"))).timestamp()
    return None


def event_times(headers: dict[str, str], body: bytes) -> list[tuple[str, float]]:
    """Every event or object time a request carries: its body's `_TIME_KEYS`, at any depth,
    and Shopify's trigger header."""
    found: list[tuple[str, float]] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _TIME_KEYS and (at := _unix(value)) is not None:
                    found.append((f"{path}{key}", at))
                walk(value, f"{path}{key}.")
        elif isinstance(node, list):
            for item in node:
                walk(item, path)

    try:
        walk(json.loads(body), "")
    except ValueError:
        pass
    if (trigger := headers.get("x-shopify-triggered-at")) is not None:
        found.append(("X-Shopify-Triggered-At", _unix(trigger) or 0.0))
    return found


def ahead(recorder: Recorder) -> list[str]:
    """The times dated after their request arrived, in words."""
    return [f"{name} {at:.3f} > arrival {arrived:.3f}" for arrived, headers, body in recorder.seen
            for name, at in event_times(headers, body) if at > arrived]


@pytest.mark.parametrize("kind", sorted(WORLDS))
def test_a_story_dated_by_its_start_ends_before_now(kind: str) -> None:
    now = 1_790_000_000_654_321
    start = story_start_us(lambda s: new_world(kind, 3, start_us=s), lambda w: w.lifecycle(), now_us=now)
    assert start % 1_000_000 == 0
    world = new_world(kind, 3, start_us=start)
    ends = max(e.created_us for e in world.lifecycle())
    assert now - 1_654_321 < ends <= now  # as late as whole seconds allow, never after


@pytest.mark.parametrize("profile", ["stripe", "github", "shopify", "paddle", "mercadopago", "standard-webhooks"])
def test_certify_dates_no_event_after_it_is_sent(profile: str) -> None:
    recorder = Recorder()
    empty = observation_from_data({"effects": [], "states": []}, 0.0, observer="python")
    with serve_app(recorder) as url:
        runner = Runner(target=Target(url=url + "/webhooks"), profile=get_profile(profile), secrets=(SECRET,),
                        observe=lambda: empty, history=History(), seed=5, settle_window_s=0.05,
                        settle_deadline_s=0.2, settle_interval_s=0.02)
        for index, scenario in enumerate(("reorder", "mass-redelivery")):
            runner.run_one(CATALOG[scenario], index)
    assert len(recorder.seen) >= 6
    assert sum(len(event_times(h, b)) for _, h, b in recorder.seen) >= len(recorder.seen)
    assert ahead(recorder) == []


@pytest.mark.parametrize("profile,event", [("github", "issues.closed"), ("stripe", "invoice.paid")])
def test_send_dates_no_event_after_it_is_sent(profile: str, event: str) -> None:
    recorder = Recorder()
    with serve_app(recorder) as url:
        send(SendOptions(url=url + "/webhooks", profile=get_profile(profile), event=event, seed=9, objects=3),
             [SECRET])
    assert len(recorder.seen) == 3
    assert ahead(recorder) == []


@pytest.mark.parametrize("profile", ["stripe", "github", "paddle"])
def test_a_storm_starts_its_clock_so_far_back_that_no_story_is_ahead(profile: str) -> None:
    now = 1_790_000_000_000_000
    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", profile=profile, seed=11, out_dir="out")
    start = storm_start_us(spec, 2, now_us=now)
    ends = []
    for index in range(2):
        world = template_world(get_profile(profile).world, process_seed(11, index), start_us=start)
        ends.append(max(e.created_us for story in play_stories(world, STORIES) for e in story))
    assert max(ends) <= now
    assert max(ends) > now - 1_000_000  # not further back than the latest story needs
