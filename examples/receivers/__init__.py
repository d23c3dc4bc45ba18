"""Reference webhook receivers: one correct receiver per strategy, and a zoo of broken ones.

Each module ``examples.receivers.<name>`` has ``create_app(config) -> app`` (FastAPI or
Flask), ``app_from_env()`` and a CLI (``python -m examples.receivers.<name> --help``).
See README.md for what each one does, its consequence and the scenario that exposes it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

#: Receivers that hold the contract (one per strategy the field recommends).
CORRECT: tuple[str, ...] = ("cross_type_keyed", "downstream_keyed", "fetch_state", "foreign_acked",
                             "get_or_create_atomic", "inbox_queue", "inbox_sync")

#: Receivers with exactly one realistic fault each.
BROKEN: tuple[str, ...] = (
    "ack_before_persist",
    "blind_overwrite",
    "check_then_insert",
    "conflict_on_duplicate",
    "cross_type_race",
    "dedupe_by_body_hash",
    "dedupe_by_object_id",
    "dedupe_by_type_and_object",
    "fetch_once_by_object",
    "fresh_idempotency_key",
    "fulfil_check_then_insert",
    "fulfil_from_both",
    "fulfil_unpaid",
    "get_or_create_racy",
    "ignore_async_payment",
    "last_refund_marker",
    "lru_dedupe",
    "mark_before_effect",
    "mark_before_fetch",
    "memory_dedupe",
    "no_dedupe",
    "no_signature_check",
    "no_timestamp_tolerance",
    "reserialize_before_verify",
    "slow_then_record",
    "stale_failure_order",
    "test_mode_applies",
    "timestamp_seconds_order",
    "unknown_type_400",
    "unknown_type_500",
)

#: Every receiver module name.
RECEIVERS: tuple[str, ...] = tuple(sorted(CORRECT + BROKEN))

#: Receivers whose effect is a call to the effect sink (observed there, not in their tables).
SINK: tuple[str, ...] = ("downstream_keyed", "fresh_idempotency_key")

#: Receivers that fetch from the provider API (they need its base URL and a key).
FETCH: tuple[str, ...] = ("fetch_once_by_object", "fetch_state", "mark_before_fetch")

#: Reference receivers of providers with their own world, written from the provider's docs and
#: official SDK (standalone FastAPI apps, run with ``python -m examples.receivers.<name>``,
#: configured by environment): receiver -> the profile it is certified under. They are not
#: in `RECEIVERS` (the Stripe matrix); their rows are the detection matrix's ``provider_receivers``.
PROVIDER_RECEIVERS: dict[str, str] = {
    "mercadopago_fetch": "mercadopago",
    "mercadopago_fetch_no_dedupe": "mercadopago",
    "paddle_billing": "paddle",
    "paddle_billing_fetch": "paddle",
    "paddle_billing_no_dedupe": "paddle",
    "shopify_app": "shopify",
    "shopify_app_fetch": "shopify",
    "shopify_app_no_dedupe": "shopify",
    "shopify_app_dedupe_by_object": "shopify",
    "shopify_app_dedupe_by_webhook_id": "shopify",
    "shopify_app_dedupe_by_event_id_alone": "shopify",
    "shopify_app_same_second_overwrite": "shopify",
}

#: Broken twins of provider receivers tested in the one scenario their fault is about
#: (`provider-api-transient`: a failed fetch acknowledged and nothing applied;
#: tests/examples/test_api_transient_worlds.py), not in the full-catalog matrix.
SCENARIO_TWINS: dict[str, str] = {
    "mercadopago_fetch_ack_drop": "mercadopago",
    "paddle_billing_fetch_ack_drop": "paddle",
    "shopify_app_fetch_ack_drop": "shopify",
}

#: Broken twins of provider receivers tested in the scenarios that deliver Shopify's mandatory
#: compliance topics (a redelivered erasure erased again, a forged one acted on;
#: tests/examples/test_shopify_compliance.py), not in the full-catalog matrix: the matrix's configs
#: name no compliance topic.
COMPLIANCE_TWINS: dict[str, str] = {
    "shopify_app_redact_every_delivery": "shopify",
    "shopify_app_compliance_unverified": "shopify",
}

#: Broken twins of provider receivers tested in the scenarios that walk a shipped order's states
#: (an endpoint subscribed to ``orders/fulfilled``, its ``fulfillment_status`` declared a state
#: field; tests/examples/test_shopify_fulfilment.py), not in the full-catalog matrix: the matrix's
#: configs name no fulfilment topic.
FULFILMENT_TWINS: dict[str, str] = {
    "shopify_app_fulfillment_by_arrival": "shopify",
}

#: Correct variants of provider receivers tested in the runs their variation is about (an app
#: erasing a shop's orders on ``app/uninstalled``: tests/examples/test_shopify_uninstall.py,
#: tests/loadtests/test_storm_worlds.py), not in the full-catalog matrix.
VARIANTS: dict[str, str] = {
    "shopify_app_uninstall_erase": "shopify",
}

#: The folder `python -m examples.receivers.<name>` runs from.
PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent


def load(name: str) -> Any:
    """The module ``examples.receivers.<name>``; raises ValueError for an unknown name."""
    if name not in RECEIVERS:
        raise ValueError(f"unknown receiver {name!r} (known: {', '.join(RECEIVERS)})")
    return importlib.import_module(f"examples.receivers.{name}")


def config(name: str, db_dir: Path, secret: str, **options: Any) -> Any:
    """A certify config that starts `examples.receivers.<name>` (see `hookproof.demo.receiver_config`)."""
    from hookproof.demo import receiver_config

    if name not in RECEIVERS:
        raise ValueError(f"unknown receiver {name!r} (known: {', '.join(RECEIVERS)})")
    return receiver_config(name, db_dir, secret, module=f"examples.receivers.{name}", through_sink=name in SINK,
                           cwd=PROJECT_ROOT, **options)


__all__ = ["BROKEN", "CORRECT", "FETCH", "PROJECT_ROOT", "PROVIDER_RECEIVERS", "RECEIVERS", "SINK", "config", "load"]
