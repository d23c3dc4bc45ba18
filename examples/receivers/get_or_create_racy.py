"""get_or_create_racy: the parent row's get-or-create is a lookup, then a plain INSERT.

Exactly get_or_create_atomic, except that the row is inserted with a plain ``INSERT``
after the lookup found nothing (Django's ``get_or_create`` outside a transaction, as in
dj-stripe #409/#429 and pay-rails #371). When a new subscription's first events arrive
together, each finds no row, and all but the first hit the primary key: an
``IntegrityError``, answered 500. The provider retries and the retry finds the row, so
nothing is lost, but every burst of new objects costs 5xx answers (and the retries and
alerts that follow).

Options: ``lookup_s`` (0.05).
"""

from __future__ import annotations

from typing import Any

from examples.receivers.get_or_create_atomic import GetOrCreateAtomic, plain_insert
from hookproof.receivers import ReceiverConfig, make_app, run_cli


class GetOrCreateRacy(GetOrCreateAtomic):
    """get_or_create_atomic with a plain INSERT after the lookup."""

    name = "get_or_create_racy"
    framework = "fastapi"

    def insert_row(self, conn: Any, object_id: str, event_type: str) -> None:
        plain_insert(conn, object_id, event_type)  # IntegrityError -> 500 when another event won


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(GetOrCreateRacy(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, GetOrCreateRacy.name)
