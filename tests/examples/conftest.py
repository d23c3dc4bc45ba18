"""Fixtures for the reference receivers' tests: a world, stand-ins, receivers in process and on sockets."""

from __future__ import annotations

import uuid
from typing import Iterator

import pytest
from sqlalchemy.engine import make_url

from hookproof.simulator.world.world import World


@pytest.fixture
def pg_db(postgres_url: str) -> Iterator[str]:
    """URL of a fresh, empty database on the session's PostgreSQL server."""
    import psycopg

    url = make_url(postgres_url)
    name = "receiver_" + uuid.uuid4().hex[:12]
    dsn = f"host={url.host} port={url.port} user={url.username} dbname={url.database}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture
def world() -> World:
    """A test-mode world with one customer, one payment and one active subscription."""
    w = World(seed=7)
    customer = w.event(w.create_customer()).object_id
    w.pay(customer)
    w.subscribe(customer)
    return w
