"""Polar's Standard Webhooks signing: the secret as given is the HMAC key (secret_encoding = "raw").

The oracle is polar-sdk's verification: polar-sdk 0.32.0 ``polar_sdk/_webhooks.py``
``validate_event`` builds ``standardwebhooks.Webhook(base64.b64encode(secret.encode()).decode())``
and verifies with it; polar-sdk is not a dependency, so the receiver below does the same with the
standardwebhooks package it wraps.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import threading
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
import standardwebhooks
from fastapi import FastAPI, Request, Response

from hookproof.config import parse_config
from hookproof.errors import ConfigError
from hookproof.simulator.delivery import Completion, Dispatcher, History, Target
from hookproof.simulator.errors import SecretError
from hookproof.simulator.faults import FaultPlan, Mutation, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.serving import serve_app
from hookproof.simulator.world import emit_events, new_world

POLAR_SECRET = "polar_whs_PC8ViaeyUNK7tJMWr8IImhf1Uhjcnqn1lxZnm1BrbGg"  # Polar's shape: polar_whs_ + base64url


def polar_validate(body: bytes, headers: dict[str, str], secret: str) -> object:
    """polar-sdk 0.32.0 ``validate_event``'s verification, step for step."""
    return standardwebhooks.Webhook(base64.b64encode(secret.encode()).decode()).verify(body, headers)


class PolarReceiver:
    def __init__(self) -> None:
        self.accepted: Counter[str] = Counter()
        self.rejected = 0
        self.lock = threading.Lock()
        self.app = FastAPI()
        self.app.post("/webhooks/polar")(self.handle)

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        try:
            polar_validate(body, dict(request.headers), POLAR_SECRET)
        except standardwebhooks.webhooks.WebhookVerificationError:
            with self.lock:
                self.rejected += 1
            return Response(status_code=403)
        with self.lock:
            self.accepted[request.headers["webhook-id"]] += 1
        return Response(status_code=202)


@pytest.fixture(scope="module")
def receiver():
    r = PolarReceiver()
    with serve_app(r.app) as served:
        r.url = f"{served.url}/webhooks/polar"  # type: ignore[attr-defined]
        yield r


def _send(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", "send", *args], capture_output=True, text=True,
                          timeout=120)


def test_send_with_the_raw_secret_is_accepted_by_polars_verification(receiver: PolarReceiver) -> None:
    before, rejected = sum(receiver.accepted.values()), receiver.rejected
    run = _send(["--profile", "standard-webhooks", "--secret-encoding", "raw", "--secret", POLAR_SECRET,
                 "--url", receiver.url, "--copies", "2", "--json"])
    assert run.returncode == 0, run.stderr
    assert [a["status"] for a in json.loads(run.stdout)] == [202, 202]
    assert sum(receiver.accepted.values()) == before + 2 and receiver.rejected == rejected
    assert POLAR_SECRET not in run.stdout + run.stderr


def test_the_spec_key_is_refused_by_polars_verification(receiver: PolarReceiver) -> None:
    """The difference is real: keyed the spec's way (whsec_ + base64 of the raw secret, the
    workaround users had), polar-sdk refuses every delivery of a secret given as Polar shows it."""
    rejected = receiver.rejected
    profile = get_profile("standard-webhooks")
    events = emit_events(new_world(profile.world, 5), profile.default_event, 1)
    spec_form = "whsec_" + base64.b64encode(b"\x01" * 24).decode()
    history = History()

    async def go() -> None:
        async with Dispatcher(Target(url=receiver.url), profile, [spec_form], history, max_attempts=1) as d:
            await d.run(schedule(events, FaultPlan()))

    asyncio.run(go())
    assert [a.status for a in history] == [403] and receiver.rejected == rejected + 1


@pytest.mark.parametrize("mutation", [Mutation.FORGED, Mutation.WRONG_SECRET, Mutation.STALE_TIMESTAMP,
                                      Mutation.MISSING_SIGNATURE])
def test_forged_and_stale_deliveries_are_refused_valid_ones_accepted(receiver: PolarReceiver,
                                                                      mutation: Mutation) -> None:
    profile = get_profile("standard-webhooks", settings={"secret_encoding": "raw"})
    events = emit_events(new_world(profile.world, 11), profile.default_event, 1)
    history = History()
    rejected = receiver.rejected

    async def go() -> None:
        async with Dispatcher(Target(url=receiver.url), profile, [POLAR_SECRET], history, max_attempts=1) as d:
            await d.run(schedule(events, FaultPlan(mutations=(mutation,))))
            await d.run(schedule(events, FaultPlan()))

    asyncio.run(go())
    assert [a.status for a in history] == [403, 202]
    assert receiver.rejected == rejected + 1
    assert history.attempts()[1].completion is Completion.OK


def test_a_raw_secret_without_the_setting_names_it() -> None:
    raw = "polar_whs_trialALsecret"  # no base64 the official library decodes
    run = _send(["--profile", "standard-webhooks", "--secret", raw, "--url", "http://127.0.0.1:9/x"])
    assert run.returncode == 2
    assert "a Standard Webhooks secret must be whsec_ followed by base64" in run.stderr
    assert 'secret_encoding = "raw"' in run.stderr and "--secret-encoding raw" in run.stderr
    assert "Traceback" not in run.stderr and raw not in run.stderr
    with pytest.raises(SecretError):
        get_profile("standard-webhooks").check_secrets([raw])
    get_profile("standard-webhooks", settings={"secret_encoding": "raw"}).check_secrets([raw])


def test_secret_encoding_is_refused_where_it_means_nothing() -> None:
    run = _send(["--profile", "stripe", "--secret-encoding", "raw", "--secret", "whsec_x", "--url", "http://127.0.0.1:9/x"])
    assert run.returncode == 2 and "--secret-encoding: only standard-webhooks and svix take it" in run.stderr
    run = _send(["--profile", "svix", "--secret-encoding", "hex", "--secret", "whsec_x", "--url", "http://127.0.0.1:9/x"])
    assert run.returncode == 2 and "--secret-encoding: base64 (whsec_ and base64, the spec's) or raw" in run.stderr


CONFIG = f"""
[target]
url = "http://127.0.0.1:8000/webhooks/polar"
profile = "standard-webhooks"
secret = "{POLAR_SECRET}"

[target.signing]
secret_encoding = "{{encoding}}"
"""


def test_the_config_signs_with_the_raw_secret_and_carries_it_to_a_storm(tmp_path: Path) -> None:
    config = parse_config(CONFIG.format(encoding="raw"), str(tmp_path / "hookproof.toml"))
    profile = config.profile()
    assert profile.settings.secret_encoding == "raw"
    event = emit_events(new_world(profile.world, 3), profile.default_event, 1)[0]
    request = profile.request(profile.envelope(event), [POLAR_SECRET], 1_700_000_000)
    headers = dict(request.headers)
    webhook = standardwebhooks.Webhook(base64.b64encode(POLAR_SECRET.encode()).decode())
    at = datetime.fromtimestamp(1_700_000_000, tz=timezone.utc)
    assert headers["webhook-signature"] == webhook.sign(headers["webhook-id"], at, request.body.decode())
    from hookproof.loadtests.spec import signing_of

    assert signing_of(profile) == {"secret_encoding": "raw"}


def test_a_wrong_encoding_is_one_config_error_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(CONFIG.format(encoding="utf8"), str(tmp_path / "hookproof.toml"))
    assert caught.value.field == "target.signing.secret_encoding" and caught.value.line == 8
    assert '"base64" (whsec_ and base64, the spec\'s) or "raw"' in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        parse_config(CONFIG.format(encoding="raw").replace("secret_encoding", "encoding"),
                     str(tmp_path / "hookproof.toml"))
    assert caught.value.field == "target.signing.encoding" and "unknown key" in str(caught.value)
