"""Safety of traffic: hookproof sends live-mode events only to a receiver configured as live.

The rule: every event is in the receiver's own mode (`target.environment`, default
``test``), except the deliveries of the ``test-mode-to-live`` scenario, which flip the
mode on purpose (an attack a receiver must refuse) and are tagged ``livemode-mismatch``
in the history. A recording receiver sees every body of a whole catalog run; each body's
mode is checked against that rule. `hookproof send` sends test mode unless ``--live``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from hookproof.certify import certify
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, TargetConfig
from hookproof.scenarios.catalog import CATALOG
from hookproof.simulator.delivery import load_history
from tests.support import read_body

MISMATCH_TAG = "livemode-mismatch"


class Recorder:
    """An ASGI receiver that answers 200 and records each event's id and livemode flag."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bool]] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        try:
            event = json.loads(body)
            with self._lock:
                self.seen.append((str(event.get("id")), bool(event.get("livemode"))))
        except (ValueError, AttributeError):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})


RECORDER = Recorder()


def no_effects() -> dict[str, list[object]]:
    """The python observer: the recorder applies nothing."""
    return {"effects": [], "states": []}


@pytest.mark.slow
@pytest.mark.parametrize("environment", ["test", "live"])
def test_only_the_tagged_mismatch_scenario_sends_the_other_mode(tmp_path: Path, environment: str) -> None:
    RECORDER.seen.clear()
    config = Config(
        target=TargetConfig(app=f"{__name__}:RECORDER", profile="stripe", secret="whsec_livemode_test",
                            environment=environment, connect=True),
        observer=ObserverConfig(kind="python", callable=f"{__name__}:no_effects"),
        settle=SettleConfig(window_s=0.05, deadline_s=1, interval_s=0.02),
        run=RunConfig(seed=5),
    )
    result = certify(config, out_dir=tmp_path / "out")
    assert result.report.scenario("test-mode-to-live") is not None
    assert sum(n.startswith("connect = true names no connected account") for n in result.report.notes) == 1
    history = load_history(tmp_path / "out" / "history.sqlite")
    try:
        attempts = history.attempts()
    finally:
        history.close()
    tagged = {a.event_id for a in attempts if MISMATCH_TAG in a.faults}
    assert {a.scenario for a in attempts if MISMATCH_TAG in a.faults} == {"test-mode-to-live"}
    assert tagged, "the mismatch scenario sent nothing"
    own_mode = environment == "live"
    assert RECORDER.seen
    other_mode = {event_id for event_id, live in RECORDER.seen if live != own_mode}
    assert other_mode == tagged
    assert len({a.scenario for a in attempts}) >= len(CATALOG) // 2


def test_send_is_test_mode_unless_live(tmp_path: Path) -> None:
    from hookproof.send import SendOptions, send
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.serving import serve_app

    recorder = Recorder()
    with serve_app(recorder) as served:
        for live in (False, True):
            send(SendOptions(profile=get_profile("stripe"), url=served.url + "/webhooks", copies=2, live=live),
                 ["whsec_livemode_send"])
    assert [live for _, live in recorder.seen] == [False, False, True, True]
