"""Receivers written for a user's own event catalog (`examples/openapi/webhooks.yaml`), not for
a provider hookproof ships: `invoices` (correct) and `invoices_no_dedupe` (its broken twin).
Standalone FastAPI apps, run with ``python -m examples.receivers.catalog.<name>``."""
