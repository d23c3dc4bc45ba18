"""The provider API's refusals in the report: a fetching receiver with a wrong API key.

`fetch_state` fetches every object it is notified about from the provider API. Started
with another API key than the one the provider API accepts, every fetch is refused with
401, it answers its webhooks with 5xx and applies nothing. The report says why, from the
provider API's own log of refused requests: report.json, summary.md and report.html all
name "the provider API refused N requests: 401 invalid API key (api_key_invalid) on GET
/v1/…", on the scenario and on its 5xx and lost findings; the wrong key is in no artifact.
The table tests pin the log itself: what is recorded, what is not, and the one-line summary.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.refusals import Refusal, RefusalLog, error_code, refusal_log, summary
from hookproof.simulator.server.state import DEFAULT_API_KEY

WRONG_KEY = "sk_test_51WrongKeyOfTheTeam00000000000xyzw"
SECRET = "whsec_refusals_" + "0" * 24


@pytest.mark.parametrize(("body", "code"), [
    (b'{"error": {"type": "invalid_request_error", "code": "api_key_invalid", "message": "Invalid API Key '
     b'provided: sk_test_****xyzw"}}', "api_key_invalid"),
    (b'{"error": {"type": "invalid_request_error", "message": "No such customer"}}', "invalid_request_error"),
    (b'{"message": "invalid access token", "error": "unauthorized", "status": 401, "cause": []}', "unauthorized"),
    (b'{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}',
     "Bad credentials"),
    (b'{"error": {"type": "request_error", "code": "not_found", "detail": "x"}, "meta": {}}', "not_found"),
    (b'{"message": "Invalid API Key provided: sk_test_****xyzw"}', ""),
    (b"not json", ""),
])
def test_the_error_code_is_read_never_the_message(body: bytes, code: str) -> None:
    assert error_code(body) == code


def test_the_log_is_bounded_and_read_from_a_mark() -> None:
    log = RefusalLog(capacity=3)
    log.add("GET", "/v1/a", 401, "api_key_invalid")
    mark = log.mark()
    for i in range(4):
        log.add("GET", f"/v1/b{i}", 404, "resource_missing")
    assert [r.path for r in log.since(mark)] == ["/v1/b1", "/v1/b2", "/v1/b3"]  # the oldest dropped
    assert log.since(log.mark()) == []


def test_the_summary_counts_identical_refusals() -> None:
    refusals = [Refusal(i, "GET", "/v1/payment_intents/pi_1", 401, "api_key_invalid") for i in range(1, 4)]
    refusals.append(Refusal(4, "GET", "/v1/payments/9", 404, "not_found"))
    assert summary(refusals) == ("the provider API refused 4 requests: 401 invalid API key (api_key_invalid) on "
                                 "GET /v1/payment_intents/pi_1 (x3); 404 unknown object (not_found) on GET /v1/payments/9")
    assert summary([]) is None


def test_the_server_records_provider_api_refusals_only_without_query_or_key() -> None:
    state = ServerState()
    log = refusal_log(state)
    with run_server(state) as api:
        mark = log.mark()
        httpx.get(f"{api.url}/v1/customers/cus_1?access_token={WRONG_KEY}",
                  headers={"Authorization": f"Bearer {WRONG_KEY}"}, timeout=10)
        httpx.get(f"{api.url}/v1/customers/cus_missing", headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"},
                  timeout=10)
        httpx.post(f"{api.url}/_hookproof/switches", json={"not_a_field": 1}, timeout=10)  # the harness's own
        httpx.get(f"{api.url}/sink/nothing-here", timeout=10)  # the effect sink
    got = [(r.method, r.path, r.status, r.code) for r in log.since(mark)]
    assert got == [("GET", "/v1/customers/cus_1", 401, "api_key_invalid"),
                   ("GET", "/v1/customers/cus_missing", 404, "resource_missing")]


@pytest.mark.slow
def test_a_wrong_api_key_is_named_in_every_report_and_never_written(tmp_path: Path) -> None:
    config = receiver_config("fetch_state", tmp_path, SECRET)
    start = config.target.start
    assert start is not None
    start = start.model_copy(update={"command": f"{start.command} --api-key {WRONG_KEY}"})
    config = config.model_copy(update={"target": config.target.model_copy(update={"start": start})})
    out = tmp_path / "out"
    report = certify(config, scenarios=["duplicate-sequential"], out_dir=out).report
    (scenario,) = report.scenarios
    assert scenario.verdict == "fail"
    line = re.compile(r"the provider API refused (\d+) requests?: 401 invalid API key \(api_key_invalid\) "
                      r"on GET /v1/\w+/\w+")
    assert scenario.reason is not None and line.search(scenario.reason), scenario.reason
    noted = [f for f in scenario.findings if f.check_id in ("no_server_error", "lost")]
    assert noted and all(line.search(f.message) for f in noted)
    for name in ("report.json", "summary.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8").replace("\\_", "_")  # Markdown escapes underscores
        assert line.search(text), name
    for path in out.rglob("*"):
        if path.is_file():
            assert WRONG_KEY.encode() not in path.read_bytes(), path
