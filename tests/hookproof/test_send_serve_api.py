"""`hookproof send --serve-api`: a receiver that fetches what it is told about (Mercado Pago's
thin notifications, a Stripe receiver retrieving the checkout session) gets the sent objects
from the provider API while `send` runs.

The receiver is the reference `mercadopago_fetch` (the official SDK's `payment().get()`),
started as a process on 127.0.0.1 by the README's command, with its API base at the port the
README's `send` serves (both ports replaced by free ones)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
from fastapi import FastAPI, Request, Response

from examples.receivers import PROJECT_ROOT
from hookproof.chaos.process import wait_healthy
from hookproof.send import SendOptions, send
from hookproof.simulator.events import LATEST_API_VERSION
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.serving import serve_app
from tests.support import free_port
from tests.test_readme import command

#: The README's two commands: the receiver (VAR=value ... python -m ...) and its `send`.
RECEIVER = command("WEBHOOK_SECRET=mp_test")
SEND = command("hookproof send --profile mercadopago")
SECRET = SEND[SEND.index("--secret") + 1]
TOKEN = SEND[SEND.index("--api-key") + 1]


def _receiver(db: Path, api_port: int) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    env = dict(word.split("=", 1) for word in RECEIVER if "=" in word and not word.startswith("-"))
    assert env["WEBHOOK_SECRET"] == SECRET and env["MP_ACCESS_TOKEN"] == TOKEN
    env.update({"PATH": "/usr/bin:/bin", "PORT": str(port), "DATABASE": str(db),
                "MP_API_BASE": f"http://127.0.0.1:{api_port}"})
    argv = [word for word in RECEIVER if "=" not in word]
    assert argv == ["python", "-m", "examples.receivers.mercadopago_fetch"]
    proc = subprocess.Popen([sys.executable, *argv[1:]], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise AssertionError(f"mercadopago_fetch did not start: {line!r}")
    return proc, f"http://127.0.0.1:{port}/webhooks"


def _send(url: str, *, serve_api: int | None = None) -> subprocess.CompletedProcess[str]:
    """The README's send to `url`, serving on `serve_api` (None: without --serve-api/--api-key)."""
    argv = list(SEND[1:])
    argv[argv.index("--url") + 1] = url
    if serve_api is None:
        at = argv.index("--serve-api")
        del argv[at:at + 4]
        assert "--api-key" not in argv
    else:
        argv[argv.index("--serve-api") + 1] = str(serve_api)
        argv[argv.index("--api-key") + 1] = "env:SERVE_TOKEN"  # a secret reference, as --secret takes
    return subprocess.run([sys.executable, "-m", "hookproof", *argv, "--seed", "7", "--json"],
                          capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT,
                          env={**os.environ, "COLUMNS": "200", "SERVE_TOKEN": TOKEN})


def _rows(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(query))


def test_a_fetching_receiver_applies_the_sent_payment_only_when_send_serves_it(tmp_path: Path) -> None:
    api_port = free_port()
    db = tmp_path / "mp.sqlite"
    proc, url = _receiver(db, api_port)
    try:
        alone = _send(url)
        assert alone.returncode == 1, alone.stderr
        assert '"status": 503' in alone.stdout  # the payment could not be fetched: Mercado Pago retries
        assert _rows(db, "SELECT business_key FROM effects") == []

        served = _send(url, serve_api=api_port)
        assert served.returncode == 0, served.stderr
        assert f"serving the sent objects on the provider API at http://127.0.0.1:{api_port}" in served.stderr
        assert served.stdout.count('"completion": "ok"') == 1
        effects = _rows(db, "SELECT business_key FROM effects")
        states = _rows(db, "SELECT object_id, status FROM payments")
        assert len(effects) == 1 and len(states) == 1
        payment_id = states[0][0]
        assert effects == [(f"license:{payment_id}",)] and states[0][1] == "approved"
        assert TOKEN not in served.stdout + served.stderr
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_port_send_cannot_serve_on_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = _send(f"http://127.0.0.1:{free_port()}/webhooks", serve_api=port)
    assert run.returncode == 2
    assert f"--serve-api: cannot listen on 127.0.0.1:{port}" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


#: The README's Stripe pair: the reference `fetch_state` (it retrieves each checkout session
#: before it fulfils it) and a `send` that serves the sent objects.
STRIPE_RECEIVER = command("python -m examples.receivers.fetch_state")
STRIPE_SEND = command("hookproof send --profile stripe --event checkout.session.completed")


def test_a_stripe_receiver_that_retrieves_the_session_fulfils_it_only_when_send_serves_it(tmp_path: Path) -> None:
    port, api_port = free_port(), free_port()
    receiver = list(STRIPE_RECEIVER)
    assert receiver[:3] == ["python", "-m", "examples.receivers.fetch_state"]
    receiver[receiver.index("--port") + 1] = str(port)
    receiver[receiver.index("--api-base") + 1] = f"http://127.0.0.1:{api_port}"
    assert receiver[receiver.index("--api-key") + 1] == STRIPE_SEND[STRIPE_SEND.index("--api-key") + 1]
    assert receiver[receiver.index("--secret") + 1] == STRIPE_SEND[STRIPE_SEND.index("--secret") + 1]
    proc = subprocess.Popen([sys.executable, *receiver[1:]], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})

    def send(*, served: bool) -> subprocess.CompletedProcess[str]:
        argv = list(STRIPE_SEND[1:])
        argv[argv.index("--url") + 1] = f"http://127.0.0.1:{port}/webhooks"
        if served:
            argv[argv.index("--serve-api") + 1] = str(api_port)
        else:
            at = argv.index("--serve-api")
            del argv[at:at + 4]
        return subprocess.run([sys.executable, "-m", "hookproof", *argv, "--seed", "7", "--json"],
                              capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT,
                              env={**os.environ, "COLUMNS": "200"})

    try:
        wait_healthy(health_url=f"http://127.0.0.1:{port}/healthz", timeout_s=30, alive=lambda: proc.poll() is None)
        alone = send(served=False)
        assert alone.returncode == 1, alone.stderr
        assert {a["status"] for a in json.loads(alone.stdout)} == {503}  # the session cannot be retrieved
        assert _rows(tmp_path / "receiver.db", "SELECT business_key FROM effects") == []

        served = send(served=True)
        assert served.returncode == 0, served.stderr
        assert [a["status"] for a in json.loads(served.stdout)] == [200]
        (effect,) = _rows(tmp_path / "receiver.db", "SELECT business_key FROM effects")
        assert str(effect[0]).startswith("fulfillment:cs_test_")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_send_notes_a_stripe_version_it_serves_in_an_older_shape() -> None:
    """A receiver whose SDK pins a version hookproof does not model (stripe-node 23.2.0's
    ``2026-11-18.endive``) is served the latest modelled shape; send says so once, at the end."""
    bases: list[str] = []
    notes: list[str] = []
    app = FastAPI()

    @app.post("/webhooks")
    async def hook(request: Request) -> Response:
        event = json.loads(await request.body())
        session = event["data"]["object"]["id"]
        async with httpx.AsyncClient(base_url=bases[0]) as api:
            for _ in range(2):  # every request pinned, as an SDK sends them: still one note
                got = await api.get(f"/v1/checkout/sessions/{session}",
                                    headers={"Authorization": "Bearer sk_test_hookproof",
                                             "Stripe-Version": "2026-11-18.endive"})
        return Response(status_code=got.status_code)

    with serve_app(app) as served:
        options = SendOptions(get_profile("stripe"), served.url + "/webhooks", event="checkout.session.completed",
                              seed=7, serve_api_port=0, api_key="sk_test_hookproof")
        attempts = send(options, ["whsec_test_secret"], serving=bases.append, noting=notes.append)
    assert [a.status for a in attempts] == [200]
    (note,) = notes
    assert "requests pinned to 2026-11-18.endive" in note and f"in the shape of {LATEST_API_VERSION}" in note
    assert "sk_test_hookproof" not in note


def test_the_readme_s_github_send_serves_issues_to_either_form_of_the_token(tmp_path: Path) -> None:
    """`send --profile github --serve-api PORT --api-key K` serves the sent issue as GitHub's REST
    API does, taking the token as ``Bearer K`` or ``token K`` (Octokit's form), and no other key."""
    argv = command("hookproof send --profile github --url http://127.0.0.1:8003")[1:]
    token = argv[argv.index("--api-key") + 1]
    api_port = free_port()
    fetched: list[tuple[str, int]] = []
    app = FastAPI()

    @app.post("/webhooks")
    async def webhook(request: Request) -> Response:
        payload = json.loads(await request.body())
        path = f"/repos/{payload['repository']['full_name']}/issues/{payload['issue']['number']}"
        for auth in (f"Bearer {token}", f"token {token}", "Bearer ghs_not_the_key"):
            got = httpx.get(f"http://127.0.0.1:{api_port}{path}", headers={"Authorization": auth}, timeout=10)
            fetched.append((auth.split()[0] + (" other" if "not_the_key" in auth else ""), got.status_code))
        return Response(status_code=200)

    with serve_app(app) as handle:
        argv[argv.index("--url") + 1] = handle.url + "/webhooks"
        argv[argv.index("--serve-api") + 1] = str(api_port)
        run = subprocess.run([sys.executable, "-m", "hookproof", *argv, "--seed", "7", "--json"], capture_output=True,
                             text=True, timeout=120, cwd=PROJECT_ROOT, env={**os.environ, "COLUMNS": "200"})
    assert run.returncode == 0, run.stderr
    assert fetched == [("Bearer", 200), ("token", 200), ("Bearer other", 401)]
