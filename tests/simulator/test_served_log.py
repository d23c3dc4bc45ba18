"""Every provider's object routes log what they served (`simulator.server.served`).

A state finding says a state no delivered event carried was served by the provider API only
for an object the API did serve (`ServedLog.fetched`); a receiver that fetched nothing is told
the state's version instead. So each provider's API must log each object it serves: a route
that did not would make a fetching receiver's words wrong.
"""

from __future__ import annotations

import httpx
import pytest

from hookproof.simulator.server import DEFAULT_API_KEY, ServerState, run_server
from hookproof.simulator.server.served import ServedLog, served_log
from hookproof.simulator.world.registry import emit_events, new_world

BEARER = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}


def _github_path(object_id: str) -> str:
    repo, number = object_id.split("#")
    return f"/repos/{repo}/issues/{number}"


#: world kind, event type emitted, the route serving its object, auth headers, the status served
CASES = [
    ("billing", "customer.subscription.created", lambda o: f"/v1/subscriptions/{o}", BEARER, "active"),
    ("paddle", "subscription.created", lambda o: f"/subscriptions/{o}", BEARER, "active"),
    ("shopify", "orders/create", lambda o: f"/admin/api/2025-07/orders/{o}.json",
     {"X-Shopify-Access-Token": DEFAULT_API_KEY}, "pending"),
    ("github", "issues.opened", _github_path, BEARER, "open"),
    ("mercadopago", "payment.created", lambda o: f"/v1/payments/{o}", BEARER, None),
]


@pytest.mark.parametrize(("kind", "event_type", "path", "headers", "status"), CASES, ids=[c[0] for c in CASES])
def test_each_provider_s_api_logs_the_objects_it_served(kind: str, event_type: str, path: object,
                                                         headers: dict[str, str], status: str | None) -> None:
    world = new_world(kind, 5)
    first, second = (e.object_id for e in emit_events(world, event_type, 2))
    state = ServerState([world])
    with run_server(state) as server, httpx.Client(base_url=server.api_base, headers=headers, timeout=5) as api:
        assert served_log(state).fetched([first, second]) == frozenset()
        answer = api.get(path(first))  # type: ignore[operator]
        assert answer.status_code == 200, answer.text
    assert served_log(state).fetched([first, second, "never_served"]) == {first}
    statuses = served_log(state).statuses(first)
    assert statuses == ([status] if status is not None else statuses) and len(statuses) == 1


def test_an_object_served_without_a_text_status_is_fetched_with_no_status() -> None:
    log = ServedLog()
    log.add("ord_1", None)
    log.add("sub_1", "active")
    assert log.fetched(["ord_1", "sub_1", "sub_2"]) == {"ord_1", "sub_1"}
    assert (log.statuses("ord_1"), log.statuses("sub_1")) == ([], ["active"])
