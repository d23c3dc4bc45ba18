"""Paddle's times with Paddle's own precision: Go's ``time.RFC3339Nano`` (up to nine fractional
digits, trailing zeros trimmed, none on a whole second) for an entity's times, six digits always
for the envelope's ``occurred_at`` (`paddle_shapes.iso`; real notifications in
paddle-python-sdk's tests/Functional/Resources/Notifications/_fixtures/response/list_default.json
and paddle-node-sdk's src/__tests__/mocks/notifications/). A receiver reading them with a fixed
six-digit ``%f`` fails a certify run; `paddle_billing`, comparing parsed instants, passes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
from paddle_billing.Entities.Event import Event as PaddleEvent

from hookproof.certify import certify
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import paddle_shapes as ps
from hookproof.simulator.world.paddle import PaddleWorld
from tests.examples.test_provider_receivers import config_of
from tests.simulator.test_paddle_fidelity import agree

#: 2024-04-12T10:18:47Z, a fixed start so the rendered strings are exact.
START_US = 1_712_917_127_000_000
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d{1,9}))?Z")


def bodies(seed: int = 7) -> list[dict[str, Any]]:
    profile = get_profile("paddle")
    return [json.loads(profile.envelope(e).body) for e in PaddleWorld(seed, start_us=START_US).lifecycle()]


def times(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (path, string) in `value` that is an RFC 3339 UTC time."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from times(v, f"{path}.{k}")
    elif isinstance(value, list):
        for v in value:
            yield from times(v, f"{path}[]")
    elif isinstance(value, str) and TIME.fullmatch(value):
        yield path, value


def digits(value: str) -> int:
    match = TIME.fullmatch(value)
    assert match is not None, value
    return len(match.group(1) or "")


def test_iso_renders_go_rfc3339nano() -> None:
    at = 1_692_611_949_035_420  # 2023-08-21T09:59:09.035420Z
    assert ps.iso(at) == "2023-08-21T09:59:09.03542Z"  # trailing zero trimmed
    assert ps.iso(at - 35_420) == "2023-08-21T09:59:09Z"  # a whole second: no fraction
    assert ps.iso_ms(at) == "2023-08-21T09:59:09.035Z"
    assert ps.iso_ms(at - 35_420 + 300_000) == "2023-08-21T09:59:09.3Z"
    assert ps.iso_ns(1_692_611_949_237_822) == "2023-08-21T09:59:09.237822941Z"
    assert ps.parse("2023-08-21T09:59:09.237822398Z") == 1_692_611_949_237_822
    assert ps.parse("2023-08-21T11:57:47.03542Z") == 1_692_619_067_035_420
    assert ps.parse("2023-08-16T14:38:08.3Z") == 1_692_196_688_300_000
    assert ps.parse("2023-08-21T09:59:09Z") == 1_692_611_949_000_000
    for bad in ("2023-08-21T09:59:09.1234567890Z", "2023-08-21T09:59:09.Z", "2023-08-21T09:59:09+00:00"):
        with pytest.raises(ValueError):
            ps.parse(bad)


def test_a_worlds_times_carry_paddles_precisions() -> None:
    """From one seed: nanosecond, trimmed and millisecond forms where Paddle's notifications show
    them, and ``occurred_at`` at six digits always (even with a trailing zero)."""
    sent = bodies()
    assert all(digits(str(b["occurred_at"])) == 6 for b in sent)
    first: dict[str, str] = {}
    every: Counter[int] = Counter()
    for body in sent:
        kind = str(body["event_type"]).split(".")[0]
        for path, value in times(body["data"]):
            every[digits(value)] += 1
            first.setdefault(f"{kind}{path}:{digits(value)}", value)
    assert sorted(every.items()) == [(2, 94), (3, 5), (5, 4), (6, 369), (8, 3), (9, 88)]
    assert {k: first[k] for k in (
        "transaction.created_at:9", "transaction.updated_at:8", "transaction.billed_at:9",
        "transaction.payments[].captured_at:6", "subscription.paused_at:9", "subscription.canceled_at:9",
        "subscription.current_billing_period.starts_at:6", "adjustment.updated_at:5", "customer.created_at:3",
        "transaction.details.line_items[].product.created_at:2")} == {
        "transaction.created_at:9": "2024-04-12T10:18:48.280279135Z",
        "transaction.updated_at:8": "2024-04-12T10:18:55.53699586Z",
        "transaction.billed_at:9": "2024-04-26T10:18:50.896242735Z",
        "transaction.payments[].captured_at:6": "2024-04-12T10:18:53.134174Z",
        "subscription.paused_at:9": "2024-05-26T10:19:02.290735736Z",
        "subscription.canceled_at:9": "2024-06-25T10:19:04.586656103Z",
        "subscription.current_billing_period.starts_at:6": "2024-04-12T10:18:48.280279Z",
        "adjustment.updated_at:5": "2024-05-26T10:18:57.76155Z",
        "customer.created_at:3": "2024-04-12T10:18:49.382Z",
        "transaction.details.line_items[].product.created_at:2": "2024-01-13T10:18:47.16Z",
    }
    assert bodies() == sent  # deterministic per seed


def test_every_time_parses_with_the_sdk_and_fromisoformat() -> None:
    """Every time of every body: the SDK's ``Event.from_dict`` holds it field for field (the
    fidelity test's `agree`), and ``datetime.fromisoformat`` reads it cut to six digits as the
    instant `paddle_shapes.parse` gives."""
    for body in bodies():
        event = PaddleEvent.from_dict(body)  # type: ignore[arg-type]
        agree(event.data, body["data"], str(body["event_type"]))
        assert event.occurred_at == datetime.fromisoformat(str(body["occurred_at"]))
        for path, value in times(body):
            main, _, fraction = value[:-1].partition(".")
            cut = f"{main}.{fraction[:6].ljust(6, '0')}+00:00"
            moment = datetime.fromisoformat(cut)
            assert moment.tzinfo == timezone.utc, path
            assert int(moment.timestamp()) * 1_000_000 + moment.microsecond == ps.parse(value), path


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_fixed_micros", {"duplicate-sequential": ["lost", "no_server_error"]}),
])
def test_a_fixed_six_digit_parser_fails_certify(tmp_path: Path, module: str, failed: dict[str, list[str]]) -> None:
    cfg = config_of("paddle_billing", module, tmp_path)
    # the transactions' completions alone: a crashing receiver's every delivery is retried on Paddle's
    # live schedule (61 attempts), so the whole story took two minutes
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": ["transaction.completed"]})})
    report = certify(cfg, scenarios=["duplicate-sequential"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
