"""The simulator's own HTTP API (provider API and effect sink), fuzzed by Schemathesis from
its OpenAPI schema, in-process over ASGI: no 5xx, and every answer conforms to the schema
(status code, content type, headers and body).

Checked: the answers. Not checked here: how strictly requests are judged. A schema-valid
request may be refused (like Stripe, the provider API answers 400 to an ``expand[]``
path naming no expandable property, which a list of strings cannot express), and a
schema-violating one may be tolerated (unknown query parameters are ignored); the 405
of a path served by two routes lists one method in ``Allow`` (Starlette's routing).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from hookproof.simulator.server import DEFAULT_API_KEY, ServerState, create_app

APP = create_app(ServerState(api_keys=[DEFAULT_API_KEY]))
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP)
AUTH = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]


@pytest.mark.slow
@SCHEMA.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_simulator_api_never_answers_5xx_and_keeps_its_schema(case: schemathesis.Case) -> None:
    case.call_and_validate(headers=AUTH, checks=CHECKS)


@pytest.mark.slow
@SCHEMA.parametrize()
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
def test_without_credentials_too(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)
