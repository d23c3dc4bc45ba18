"""The test infrastructure itself: the PostgreSQL fixture and the CI-aware service rule."""

import pytest
import sqlalchemy as sa

from tests.support import free_port, require_service


@pytest.mark.postgres
def test_postgres_url_supports_create_insert_select(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS infra_probe"))
            conn.execute(sa.text("CREATE TABLE infra_probe (business_key text PRIMARY KEY, amount int)"))
            conn.execute(
                sa.text("INSERT INTO infra_probe VALUES (:k, :a)"),
                [{"k": f"renewal:in_{i}", "a": i} for i in range(3)],
            )
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT business_key FROM infra_probe ORDER BY amount")).all()
            database = conn.execute(sa.text("SELECT current_database()")).scalar_one()
    finally:
        engine.dispose()
    assert [r.business_key for r in rows] == ["renewal:in_0", "renewal:in_1", "renewal:in_2"]
    assert database == "hookproof"


def test_require_service_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_service("frobd", "not installed")


@pytest.mark.parametrize("ci", [None, "false", "1"])
def test_require_service_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, ci: str | None) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="frobd is not available: not installed"):
        require_service("frobd", "not installed")


def test_free_port_is_bindable() -> None:
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    assert 1024 <= port <= 65535
