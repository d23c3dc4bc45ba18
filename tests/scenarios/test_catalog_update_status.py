"""explore over a catalog whose update type sets no status of its own (a new user's trial).

A team's ``subscription.updated`` changes a plan or a status, so no one status belongs to the
type: it is declared with where the body carries the status (``x-hookproof-status``) and no
``x-hookproof-state``, its example saying ``past_due``. hookproof sent that example's status
while judging the object by the status it kept, and explore failed a receiver written from
the Standard Webhooks spec that stored what the update said ("final state is past_due (served
by the provider API; no delivered event carried it)": a catalog has no provider API). An
update now carries the object's status; the receiver keeping the newest by ``updated_at``
survives the searches, its twin overwriting blindly is still found.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from standardwebhooks.webhooks import Webhook, WebhookVerificationError
from starlette.concurrency import run_in_threadpool

from hookproof.catalog_file import CatalogConfig, CatalogEventConfig, load_catalog
from hookproof.scenarios.observations import ObjectState, Observation
from hookproof.scenarios.schedules import Step
from hookproof.scenarios.statemachine import ExploreTarget, Prepared, explore, format_steps, replay
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles.standard_webhooks import StandardWebhooksProfile
from hookproof.simulator.server import ServerState

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SCHEMA = "CREATE TABLE IF NOT EXISTS seen (id TEXT PRIMARY KEY); " \
         "CREATE TABLE IF NOT EXISTS subscriptions (id TEXT PRIMARY KEY, status TEXT, updated_at TEXT)"


def subscription(event_type: str, status: str) -> dict[str, Any]:
    return {"type": event_type, "timestamp": "2026-12-02T09:00:00Z",
            "data": {"id": "sub_01JD3X", "status": status, "plan": "pro", "updated_at": "2026-12-02T09:00:00.000000Z"}}


def profile() -> StandardWebhooksProfile:
    paths = {"object_id": "data.id", "status": "data.status", "ordering": "data.updated_at"}
    events = {
        "subscription.created": CatalogEventConfig(example=subscription("subscription.created", "active"),
                                                   state="active", **paths),
        "subscription.updated": CatalogEventConfig(example=subscription("subscription.updated", "past_due"), **paths),
        "subscription.canceled": CatalogEventConfig(example=subscription("subscription.canceled", "canceled"),
                                                    state="canceled", **paths),
    }
    return StandardWebhooksProfile(catalog=load_catalog(CatalogConfig(type_field="type", events=events), Path(".")))


def receiver(db: Path, *, blind: bool = False, racy: bool = False, revoking: bool = False) -> FastAPI:
    """Verifies with the standardwebhooks library, claims the webhook-id and keeps each
    subscription's newest status by updated_at, in one transaction. `blind`: the last write
    wins. `racy`: the stored updated_at is read without a lock, compared in code and, after
    a pause (a handler's work), written in a transaction of its own (a lost update). `revoking`:
    an update revokes the subscription (Polar's ``subscription.updated`` "fires for all changes to
    the subscription, including renewals": a twin taking it for a revocation)."""
    with sqlite3.connect(db) as setup:
        setup.executescript(SCHEMA)
        setup.execute("PRAGMA journal_mode=WAL")
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    @app.post("/webhooks")
    async def webhook(request: Request) -> JSONResponse:
        raw = await request.body()
        if racy:  # handlers at once in threads, as a WSGI or sync-view receiver's: the race is theirs
            return await run_in_threadpool(handle, dict(request.headers), raw)
        return handle(dict(request.headers), raw)  # one at a time on the event loop

    def handle(headers: dict[str, str], raw: bytes) -> JSONResponse:
        try:
            body = Webhook(SECRET).verify(raw, headers)
        except WebhookVerificationError:
            return JSONResponse({"error": "bad signature"}, status_code=401)
        data = body["data"]
        if revoking and body["type"] == "subscription.updated":
            data = {**data, "status": "revoked"}
        with sqlite3.connect(db, isolation_level=None, timeout=10) as conn:
            conn.execute("BEGIN IMMEDIATE")
            if not conn.execute("INSERT OR IGNORE INTO seen VALUES (?)", (headers["webhook-id"],)).rowcount:
                conn.execute("COMMIT")
                return JSONResponse({"duplicate": True})
            if racy:
                conn.execute("COMMIT")
                row = conn.execute("SELECT updated_at FROM subscriptions WHERE id = ?", (data["id"],)).fetchone()
                if row is not None and row[0] >= data["updated_at"]:
                    return JSONResponse({"ok": True})
                time.sleep(0.05)
                conn.execute("INSERT OR REPLACE INTO subscriptions VALUES (?, ?, ?)",
                             (data["id"], data["status"], data["updated_at"]))
                return JSONResponse({"ok": True})
            newer = "" if blind else " WHERE excluded.updated_at > subscriptions.updated_at"
            conn.execute("INSERT INTO subscriptions VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                         f"status = excluded.status, updated_at = excluded.updated_at{newer}",
                         (data["id"], data["status"], data["updated_at"]))
            conn.execute("COMMIT")
        return JSONResponse({"ok": True})

    return app


def target(directory: Path, *, blind: bool) -> ExploreTarget:
    directory.mkdir(parents=True, exist_ok=True)
    count = itertools.count()

    def open_() -> Prepared:
        db = directory / f"subscriptions-{next(count)}.sqlite"
        app = receiver(db, blind=blind)

        def observe() -> Observation:
            with sqlite3.connect(db) as conn:
                states = tuple(ObjectState(str(o), str(s)) for o, s in conn.execute("SELECT id, status FROM subscriptions"))
            return Observation(time.time(), (), states, frozenset({"subscription"}))

        return Prepared(Target(app=app), observe)

    return ExploreTarget(profile=profile(), secrets=(SECRET,), open=open_, describe="in-process subscriptions",
                         settle_window_s=0.02)


def test_the_trials_two_step_schedule_passes(tmp_path: Path) -> None:
    steps = [Step("emit", action="subscription.created"), Step("emit", action="subscription.updated", object=0)]
    assert replay(target(tmp_path, blind=False), steps, seed=7, provider_state=ServerState()) is None


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 7, 20240601])
def test_the_receiver_keeping_the_newest_survives_and_its_blind_twin_is_found(tmp_path: Path, seed: int) -> None:
    kept = explore(target(tmp_path / "kept", blind=False), max_examples=60, seed=seed, provider_state=ServerState())
    assert kept.failure is None, "\n".join([kept.failure.summary(), *format_steps(
        kept.failure.steps, kept.failure.event_types)]) if kept.failure else ""
    assert kept.acked > 0
    blind = explore(target(tmp_path / "blind", blind=True), max_examples=100, seed=seed, provider_state=ServerState())
    assert blind.failure is not None
    assert {f.check_id for f in blind.failure.findings} & {"regressed", "stale"}, blind.failure.summary()
    assert all("provider API" not in f.message for f in blind.failure.findings), json.dumps(
        [f.message for f in blind.failure.findings])


def test_an_update_keeping_the_status_is_walked_and_a_twin_revoking_on_it_is_stale(tmp_path: Path) -> None:
    """An update declaring no status of its own (Polar's ``subscription.updated``) was never sent
    by certify: the state walks took only the types setting a status. Each walk now updates an
    object twice after its first status (no third follows here); a receiver revoking on an update
    ends it ``revoked`` where the provider's is ``active``."""
    from hookproof.certify import certify
    from hookproof.config import load_config
    from hookproof.simulator.serving import serve_app
    from hookproof.simulator.world.user_catalog import UserCatalogWorld
    from tests.scenarios.test_catalog_related_burst import config_text

    world = UserCatalogWorld(3, catalog=profile().catalog)
    assert [(e.type, e.status) for e in world.state_story()] == [
        ("subscription.created", "active"), ("subscription.updated", None), ("subscription.updated", None),
        ("subscription.created", "active"), ("subscription.canceled", "canceled")]

    def run(name: str, **mode: bool) -> dict[str, tuple[str, list[str]]]:
        folder = tmp_path / name
        folder.mkdir()
        db = folder / "receiver.sqlite"
        with serve_app(receiver(db, **mode)) as server:
            path = folder / "hookproof.toml"
            path.write_text(config_text(server.port, db, 3), encoding="utf-8")
            report = certify(load_config(path), scenarios=["reorder", "stale-after-newer"], out_dir=folder / "report")
        return {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.report.scenarios}

    assert run("newest") == {"reorder": ("pass", []), "stale-after-newer": ("pass", [])}
    assert run("revoking", revoking=True) == {"reorder": ("fail", ["stale"]), "stale-after-newer": ("fail", ["stale"])}
