"""A run whose every valid delivery was refused with 401/403 says what is likely wrong.

A new user's receiver had another signing secret: every valid-event scenario failed with
'valid_not_rejected: ... refused 9 time(s) with 401; the receiver answered "invalid
hmac"', and nothing at the top said why. Such a run now gets one headline line (above the
verdict table, first among the report's notes) naming where target.secret comes from,
never the secret. A receiver that acknowledged anything, or refused only some events,
gets none; nor does the correct receiver with the right secret."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from typer.testing import CliRunner

from hookproof.cli import app as cli
from hookproof.headline import HEADLINE_PREFIX, RAW_BODY_HINT, refused_headline, secret_sources
from hookproof.receivers.profiles import SignatureError, StripeVerifier
from hookproof.reports.model import AttemptView, RunReport, ScenarioReport
from hookproof.simulator.profiles.registry import get_profile

SECRET = "whsec_headline_receivers_own_secret"
WRONG = "whsec_headline_not_the_receivers_one"


def _receiver(refuse_types: tuple[str, ...] = (), status: int = 401) -> Starlette:
    """Verifies Stripe's signature with SECRET (401 "invalid hmac" otherwise, as the user's
    Shopify receiver did), refuses `refuse_types` with 401 too, acknowledges the rest."""
    verifier = StripeVerifier([SECRET])

    async def hook(request: Request) -> JSONResponse:
        body = await request.body()
        try:
            event = verifier.verify(body, request.headers)
        except SignatureError:
            if status == 400:  # as Stripe's docs' example and the trial's Node receiver answer it
                return JSONResponse({"error": "Webhook Error: No signatures found matching the expected signature"},
                                    status_code=400)
            return JSONResponse({"error": "invalid hmac"}, status_code=401)
        if event.type in refuse_types:
            return JSONResponse({"error": "not for us"}, status_code=401)
        return JSONResponse({"received": True})

    return Starlette(routes=[Route("/webhooks", hook, methods=["POST"])])


verifying = _receiver()
selective = _receiver(("customer.subscription.updated", "customer.subscription.deleted"))
verifying_400 = _receiver(status=400)


def no_effects() -> dict[str, list[object]]:
    return {"effects": [], "states": []}


#: The receivers here apply nothing, ever: a scenario's settle waits out its `stall_s` once the reads
#: stop changing (5 s by default) for effects that cannot come; half a second says as much.
SETTLE = "\n[settle]\nstall_s = 0.5\n"


def _certify(tmp_path: Path, app: str, secret: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]]:
    monkeypatch.setenv("HOOKPROOF_HEADLINE_SECRET", secret)
    monkeypatch.setenv("COLUMNS", "200")
    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\napp = "{__name__}:{app}"\nprofile = "stripe"\nsecret = "env:HOOKPROOF_HEADLINE_SECRET"\n'
                      f'\n[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n\n[run]\nseed = 3\n{SETTLE}',
                      encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["certify", "-c", str(config), "-s", "duplicate-sequential", "-s", "reorder",
                                      "--out", str(out)])
    assert result.exit_code == 1, result.output  # applies nothing: lost, whatever the secret
    files = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.iterdir() if p.suffix != ".sqlite")
    assert SECRET not in result.output + files and WRONG not in result.output + files
    return result.output, json.loads((out / "report.json").read_text(encoding="utf-8"))


HEADLINE = (f"{HEADLINE_PREFIX}every valid delivery was refused with 401 ({{n}} attempt(s)) and none was "
            "acknowledged: check that target.secret is the receiver's signing secret (source: "
            "env:HOOKPROOF_HEADLINE_SECRET) and target.profile (stripe) the provider it verifies" + RAW_BODY_HINT)


def test_a_wrong_secret_gets_the_headline_above_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output, report = _certify(tmp_path, "verifying", WRONG, monkeypatch)
    valid = [a for s in report["scenarios"] for a in s["attempts"] if a["valid"]]
    assert valid and {a["status"] for a in valid} == {401}
    headline = HEADLINE.format(n=len(valid))
    assert report["notes"][0] == headline
    lines = output.splitlines()
    assert lines[lines.index(headline) - 1] == "seed 3" and lines[lines.index(headline) + 1].startswith("┏")
    assert output.count(headline) == 1  # above the table, not again among the notes
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "likely cause: every valid delivery was refused with 401" in summary


QUOTE = '{"error":"Webhook Error: No signatures found matching the expected signature"}'


def test_a_400_to_every_valid_delivery_gets_the_wider_headline(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A receiver answering a bad signature with 400: the headline names both causes and
    quotes the first answer (never the secret)."""
    output, report = _certify(tmp_path, "verifying_400", WRONG, monkeypatch)
    valid = [a for s in report["scenarios"] for a in s["attempts"] if a["valid"]]
    assert valid and {a["status"] for a in valid} == {400}
    headline = (f"{HEADLINE_PREFIX}every valid delivery was refused with 400 ({len(valid)} attempt(s)) and none was "
                "acknowledged: a wrong signing secret, or a receiver that cannot parse the provider's requests; "
                "check that target.secret is the receiver's signing secret (source: env:HOOKPROOF_HEADLINE_SECRET) "
                f'and target.profile (stripe) the provider it verifies{RAW_BODY_HINT}; the first answer: "{QUOTE}"')
    assert report["notes"][0] == headline
    assert output.count(headline) == 1


@pytest.mark.parametrize("app", ["verifying", "selective", "verifying_400"])
def test_the_right_secret_gets_no_headline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: str) -> None:
    """The right secret: acknowledged (or, `selective`, one type refused with 401, the others
    acknowledged): no headline."""
    output, report = _certify(tmp_path, app, SECRET, monkeypatch)
    statuses = {a["status"] for s in report["scenarios"] for a in s["attempts"] if a["valid"]}
    assert 200 in statuses and (401 in statuses) is (app == "selective")
    assert not any(n.startswith(HEADLINE_PREFIX) for n in report["notes"])
    assert "likely cause" not in output


def test_the_correct_reference_receiver_gets_no_headline(tmp_path: Path) -> None:
    from tests.hookproof.zoo_apps import config_text

    config = tmp_path / "hookproof.toml"
    config.write_text(config_text("inbox_sync", seed=5), encoding="utf-8")
    result = CliRunner().invoke(cli, ["certify", "-c", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert not any(n.startswith(HEADLINE_PREFIX) for n in report["notes"]) and "likely cause" not in result.output
    from hookproof.scenarios.catalog import CATALOG

    # the whole catalog ran: nothing stopped it (a refused future-dated delivery or forged one included)
    assert [s["id"] for s in report["scenarios"]] == list(CATALOG)
    assert not any((s.get("reason") or "").startswith("not run") for s in report["scenarios"])
    assert not any("were not run" in n for n in report["notes"])


def _attempt(i: int, status: int | None, *, valid: bool = True) -> AttemptView:
    outcome = "acked" if status and 200 <= status < 300 else "rejected" if status else "timeout"
    return AttemptView(i, f"evt_{i}", "customer.created", f"d{i}", 1, None, None, (), valid, 0.0, 0.0, status,
                       outcome, "ok" if outcome == "acked" else "fail", 1.0)


def _report(*statuses: int | None, invalid: tuple[int, ...] = ()) -> RunReport:
    attempts = [_attempt(i, s) for i, s in enumerate(statuses)]
    attempts += [_attempt(100 + i, s, valid=False) for i, s in enumerate(invalid)]
    scenario = ScenarioReport("s", "S", "", "fail", (), attempts=tuple(attempts))
    return RunReport("0", "http://127.0.0.1:1/w", "shopify", "test", 1, 0.0, 1.0, "fail", (scenario,), ())


@pytest.mark.parametrize(("statuses", "invalid", "words"), [
    ((401,) * 5, (), "every valid delivery was refused with 401 (5 attempt(s))"),
    ((401,) * 4 + (403,) * 5, (), "every valid delivery was refused with 401 or 403 (9 attempt(s))"),
    ((401,) * 9 + (413, None), (), "nearly every valid delivery was refused with 401 (9 of the 10 attempt(s) answered)"),
    ((401,) * 5 + (200,), (), None),  # one acknowledged: the secret verifies
    ((401,) * 2, (), None),  # too few to speak for the run
    ((401,) * 8 + (400, 500), (), None),  # not nearly every
    ((), (401,) * 9, None),  # invalid deliveries are meant to be refused
    ((400,) * 5, (), "every valid delivery was refused with 400 (5 attempt(s))"),
    ((400,) * 9 + (413,), (), "nearly every valid delivery was refused with 400 (9 of the 10 attempt(s) answered)"),
    ((400,) * 5 + (200,), (), None),
    ((400,) * 2, (), None),
    ((400,) * 5 + (401,) * 5, (), None),  # neither nearly every
])
def test_when_the_headline_is_given(statuses: tuple[int | None, ...], invalid: tuple[int, ...],
                                    words: str | None) -> None:
    headline = refused_headline(_report(*statuses, invalid=invalid), "env:WEBHOOK_SECRET")
    if words is None:
        assert headline is None
    else:
        cause = ("a wrong signing secret, or a receiver that cannot parse the provider's requests; "
                 if "with 400" in words else "")
        assert headline == (f"{HEADLINE_PREFIX}{words} and none was acknowledged: {cause}check that target.secret is "
                            "the receiver's signing secret (source: env:WEBHOOK_SECRET) and target.profile (shopify) "
                            "the provider it verifies" + RAW_BODY_HINT)


def test_a_standard_webhooks_run_refused_with_403_names_polars_raw_key() -> None:
    """A Polar secret the spec's decoding takes (``polar_whs_…`` is lenient base64) keys another
    HMAC than Polar's SDK: every delivery 403, and the headline names the setting."""
    from hookproof.headline import status_headline

    headline = status_headline({403: 6}, "env:POLAR_WEBHOOK_SECRET", "standard-webhooks")
    assert headline is not None and headline.endswith(
        "and target.profile (standard-webhooks) the provider it verifies (a receiver verifying as Polar's SDK does "
        "keys its HMAC with the secret as given: [target.signing] secret_encoding = \"raw\", send's "
        "--secret-encoding raw)" + RAW_BODY_HINT)
    assert "Polar" not in (status_headline({403: 6}, "env:S", "svix") or "")
    assert "Polar" not in (status_headline({400: 6}, "env:S", "standard-webhooks") or "")


def test_the_secret_s_source_is_named_never_its_value() -> None:
    assert secret_sources("env:WEBHOOK_SECRET") == "env:WEBHOOK_SECRET"
    assert secret_sources(["file:secret.txt", "env:OLD"]) == "file:secret.txt, env:OLD"
    assert secret_sources("whsec_literal_value") == "written in the config"


def _storm_report(acked: int | None, *statuses: int) -> RunReport:
    """A storm's report: a share of its attempts kept, its ack_latency check's count over all."""
    from hookproof.reports.model import CheckView

    checks = () if acked is None else (CheckView("ack_latency", "valid", (), {"acked": acked}),)
    attempts = tuple(_attempt(i, s) for i, s in enumerate(statuses))
    scenario = ScenarioReport("storm", "Storm", "", "fail", (), checks=checks, attempts=attempts)
    return RunReport("0", "http://127.0.0.1:1/w", "stripe", "test", 1, 0.0, 1.0, "fail", (scenario,), ())


@pytest.mark.parametrize(("acked", "given"), [(0, True), (7, False), (None, False)])
def test_a_storm_s_headline_counts_every_attempt_not_the_report_s_share(tmp_path: Path, acked: int | None,
                                                                        given: bool) -> None:
    """Every kept attempt refused with 401: the headline only when the storm's checks counted
    no acknowledged attempt at all (7 acknowledged outside the kept share: none; no count: none)."""
    from hookproof.commands.storm import storm_headline
    from hookproof.config import load_config

    (tmp_path / "secret.txt").write_text(WRONG, encoding="utf-8")
    config = tmp_path / "hookproof.toml"
    config.write_text('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "stripe"\nsecret = "file:secret.txt"\n'
                      '[observer]\nkind = "python"\ncallable = "tests.hookproof.test_explore:no_effects"\n',
                      encoding="utf-8")
    headline = storm_headline(_storm_report(acked, *(401,) * 6), load_config(config))
    assert (headline is not None) is given
    if headline is not None:
        assert "(source: file:secret.txt)" in headline and headline.startswith(HEADLINE_PREFIX)
        assert WRONG not in headline


def test_the_console_prints_the_headline_once_above_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from hookproof.terminal import print_report

    headline = refused_headline(_report(*(401,) * 3), "env:X")
    assert headline is not None
    report = replace(_report(*(401,) * 3), notes=(headline, "another note"))
    print_report(report, {}, "title", seed="seed 1", headline=headline)
    out = capsys.readouterr().out
    assert out.count(headline) == 1 and out.index(headline) < out.index("verdict:") and "note: another note" in out


@pytest.mark.parametrize("secret", [WRONG, SECRET], ids=["wrong", "right"])
def test_explore_leads_with_the_headline_when_its_search_was_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     secret: str) -> None:
    monkeypatch.setenv("HOOKPROOF_HEADLINE_SECRET", secret)
    monkeypatch.setenv("COLUMNS", "200")
    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\napp = "{__name__}:verifying"\nprofile = "stripe"\n'
                      'secret = "env:HOOKPROOF_HEADLINE_SECRET"\n'
                      f'\n[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n', encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["explore", "-c", str(config), "--max-examples", "3", "--seed", "2",
                                      "--out", str(out)])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    headlines = [n for n in report["notes"] if n.startswith(HEADLINE_PREFIX)]
    assert SECRET not in result.output and WRONG not in result.output
    if secret == SECRET:
        assert headlines == [] and "likely cause" not in result.output, result.output
        return
    assert len(headlines) == 1 and report["notes"][0] == headlines[0], report["notes"]
    assert headlines[0].startswith(f"{HEADLINE_PREFIX}every valid delivery was refused with 401 (")
    assert "(source: env:HOOKPROOF_HEADLINE_SECRET)" in headlines[0]
    assert result.output.count(headlines[0]) == 1, result.output


@pytest.mark.parametrize(("secret", "status"), [(WRONG, 400), (WRONG, 401), (SECRET, 400)], ids=["wrong-400", "wrong-401", "right"])
def test_send_gives_the_headline_after_its_rows(secret: str, status: int) -> None:
    """`hookproof send` with a wrong secret: the rows, the exit line, then certify's headline
    naming --secret's source (never its value); the right secret gets none."""
    from hookproof.simulator.serving import serve_app

    app = verifying_400 if status == 400 else verifying
    with serve_app(app, "127.0.0.1", 0) as server:
        url = f"http://127.0.0.1:{server.port}/webhooks"
        result = CliRunner().invoke(cli, ["send", "--url", url, "--secret", secret, "--event", "invoice.paid",
                                          "--copies", "3"], env={"COLUMNS": "200"})
    lines = result.output.splitlines()
    if secret == SECRET:
        assert result.exit_code == 0 and "likely cause" not in result.output
        return
    assert result.exit_code == 1, result.output
    assert WRONG not in result.output
    assert lines[-2].endswith("; exit 1: the receiver acknowledged none of them"), lines[-2:]
    cause = "a wrong signing secret, or a receiver that cannot parse the provider's requests; " if status == 400 else ""
    quoted = f'; the first answer: "{QUOTE}"' if status == 400 else ""
    assert lines[-1].startswith(f"{HEADLINE_PREFIX}every valid delivery was refused with {status} (")
    assert lines[-1].endswith(f"and none was acknowledged: {cause}check that --secret is the receiver's signing "
                              f"secret (source: given on the command line) and --profile (stripe) the provider it "
                              f"verifies{RAW_BODY_HINT}{quoted}")


@pytest.mark.parametrize(("secret", "in_config", "profile_given", "named"), [
    (["whsec_on_the_line"], None, False, "--secret is the receiver's signing secret (source: given on the command "
                                         "line) and --profile (stripe)"),
    (["whsec_on_the_line"], "env:HOOKPROOF_HEADLINE_SECRET", False,
     "--secret is the receiver's signing secret (source: given on the command line) and target.profile (stripe)"),
    (None, "env:HOOKPROOF_HEADLINE_SECRET", False, "target.secret is the receiver's signing secret (source: "
                                                   "env:HOOKPROOF_HEADLINE_SECRET) and target.profile (stripe)"),
    (None, "whsec_in_the_file", True, "target.secret is the receiver's signing secret (source: written in the "
                                      "config) and --profile (stripe)"),
], ids=["flags", "secret-flag-with-config", "config", "profile-flag-with-config"])
def test_send_s_headline_names_where_the_secret_and_the_profile_were_given(
        tmp_path: Path, secret: list[str] | None, in_config: str | None, profile_given: bool, named: str) -> None:
    """send's headline names the flag or the config setting each came from, never a secret."""
    from types import SimpleNamespace

    from hookproof.commands.send_cmd import _headline

    config = None
    if in_config is not None:
        config = tmp_path / "hookproof.toml"
        config.write_text(f'[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "stripe"\nsecret = "{in_config}"\n'
                          '\n[observer]\nkind = "python"\ncallable = "tests.hookproof.test_refused_headline:no_effects"\n',
                          encoding="utf-8")
    refused = [SimpleNamespace(valid=True, status=401, response_excerpt="") for _ in range(3)]
    headline = _headline(refused, secret, str(config) if config else None, "stripe",  # type: ignore[arg-type]
                         profile_given=profile_given)
    assert headline is not None and f"check that {named} the provider it verifies" in headline, headline
    assert "whsec_" not in headline


def test_a_mercado_pago_run_refused_with_401_names_what_its_manifest_reads() -> None:
    """Mercado Pago signs a manifest of the query's data.id and the x-request-id header: a PHP
    receiver reading $_GET['data.id'] (PHP renames it data_id) refused every delivery, and the
    headline named only the secret. It now says what the manifest reads; Stripe's does not."""
    from hookproof.headline import status_headline

    mp = status_headline({401: 12}, "env:MP_SECRET", "mercadopago")
    assert mp is not None and mp.endswith(
        "and target.profile (mercadopago) the provider it verifies (Mercado Pago's manifest takes its id from the "
        "query string's data.id (PHP's $_GET names it data_id) and its request-id from the x-request-id header)")
    stripe = status_headline({401: 12}, "env:MP_SECRET", "stripe")
    assert stripe is not None and stripe.endswith("and target.profile (stripe) the provider it verifies" + RAW_BODY_HINT)
    bad_request = status_headline({400: 12}, "env:MP_SECRET", "mercadopago", quote="no")
    assert bad_request is not None and "x-request-id" not in bad_request


#: A receiver validating each delivery against its own fetch of the event, as dj-stripe's
#: ``DJSTRIPE_WEBHOOK_VALIDATION = "retrieve_event"`` does (no signature checked), whose
#: comparison always fails: it fetches ``GET /v1/events/{id}`` and answers an empty 400.
RETRIEVING = r'''
import json, os, sys, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API, KEY = os.environ["HOOKPROOF_API_BASE"].rstrip("/"), os.environ["HOOKPROOF_API_KEY"]


class Hook(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        event_id = json.loads(body)["id"]
        request = urllib.request.Request(f"{API}/v1/events/{event_id}", headers={"Authorization": f"Bearer {KEY}"})
        try:
            urllib.request.urlopen(request, timeout=5).read()
        except OSError:
            pass
        self.send_response(400); self.send_header("Content-Length", "0"); self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
'''


def test_a_400_after_the_receiver_fetched_its_events_names_that_comparison(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A receiver that fetched every event it then refused with 400 (dj-stripe's retrieve_event
    validation failing its own comparison) gets a headline leading with that, not with the
    secret alone; the receiver answering 400 without fetching keeps the wider one (above)."""
    import sys

    from tests.support import free_port

    (tmp_path / "retrieving.py").write_text(RETRIEVING, encoding="utf-8")
    monkeypatch.setenv("HOOKPROOF_HEADLINE_SECRET", SECRET)
    monkeypatch.setenv("COLUMNS", "200")
    port = free_port()
    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "stripe"\n'
                      'secret = "env:HOOKPROOF_HEADLINE_SECRET"\n\n[target.process]\n'
                      f'command = "{sys.executable} retrieving.py {{port}}"\nhealth_path = "/"\n\n'
                      '[observer]\nkind = "python"\ncallable = "tests.hookproof.test_refused_headline:no_effects"\n\n'
                      f'[run]\nseed = 3\n{SETTLE}', encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["certify", "-c", str(config), "-s", "duplicate-sequential", "--out", str(out)])
    assert result.exit_code == 1, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    valid = [a for s in report["scenarios"] for a in s["attempts"] if a["valid"]]
    events = {a["event_id"] for a in valid}
    assert valid and {a["status"] for a in valid} == {400}
    headline = (f"{HEADLINE_PREFIX}every valid delivery was refused with 400 ({len(valid)} attempt(s)) and none was "
                f"acknowledged: the receiver fetched {len(events)} of the {len(events)} event(s) it refused from the "
                "provider API first, as one does that validates a delivery by retrieving its event and comparing the "
                "two (dj-stripe's retrieve_event validation, which checks no signature): hookproof served the event "
                "it delivered, so look at that comparison; else a wrong signing secret, or requests it cannot parse; "
                "check that target.secret is the receiver's signing secret (source: env:HOOKPROOF_HEADLINE_SECRET) "
                "and target.profile (stripe) the provider it verifies")
    assert report["notes"][0] == headline
    assert output_once(result.output, headline) and SECRET not in result.output


def output_once(output: str, line: str) -> bool:
    return output.count(line) == 1


#: A Stripe receiver on 127.0.0.1 verifying with its own secret (``RECEIVER_SECRET``), whatever
#: hookproof signs with: 401 (``REFUSE_WITH``: another status) to anything else, and so to a timestamp more than
#: 300 s ahead (stricter than Stripe's SDK, which checks only the past: an advisory, never a wrong
#: secret); acknowledges the rest, applying nothing.
VERIFYING = r'''
import hashlib, hmac, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ["RECEIVER_SECRET"].encode()


class Hook(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        parts = [p.split("=", 1) for p in self.headers.get("Stripe-Signature", "").split(",") if "=" in p]
        t = next((v for k, v in parts if k == "t"), "0")
        signed = hmac.new(SECRET, t.encode() + b"." + body, hashlib.sha256).hexdigest()
        ok = any(k == "v1" and hmac.compare_digest(v, signed) for k, v in parts)
        status = 200 if ok and int(t) <= time.time() + 300 else int(os.environ.get("REFUSE_WITH", "401"))
        self.send_response(status); self.send_header("Content-Length", "0"); self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
'''


def _certify_http(tmp_path: Path, secret: str, monkeypatch: pytest.MonkeyPatch,
                  *scenarios: str, refuse_with: int = 401) -> tuple[Any, dict[str, Any]]:
    """certify `scenarios` (none: the catalog) against `VERIFYING` run by hookproof on 127.0.0.1,
    hookproof signing with `secret`, the receiver verifying with SECRET and refusing with `refuse_with`."""
    import sys

    from tests.support import free_port

    (tmp_path / "verifying.py").write_text(VERIFYING, encoding="utf-8")
    monkeypatch.setenv("HOOKPROOF_HEADLINE_SECRET", secret)
    monkeypatch.setenv("COLUMNS", "400")
    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\nurl = "http://127.0.0.1:{free_port()}/webhooks"\nprofile = "stripe"\n'
                      'secret = "env:HOOKPROOF_HEADLINE_SECRET"\n\n[target.process]\n'
                      f'command = "{sys.executable} verifying.py {{port}}"\nhealth_path = "/"\n'
                      f'env = {{ RECEIVER_SECRET = "{SECRET}", REFUSE_WITH = "{refuse_with}" }}\n\n'
                      '[observer]\nkind = "python"\ncallable = "tests.hookproof.test_refused_headline:no_effects"\n\n'
                      f'[run]\nseed = 3\n{SETTLE}', encoding="utf-8")
    out = tmp_path / "out"
    chosen = [arg for s in scenarios for arg in ("-s", s)]
    result = CliRunner().invoke(cli, ["certify", "-c", str(config), *chosen, "--out", str(out)])
    files = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.iterdir() if p.suffix != ".sqlite")
    assert SECRET not in result.output + files and WRONG not in result.output + files
    return result, json.loads((out / "report.json").read_text(encoding="utf-8"))


STOPPED = ("every valid delivery of duplicate-sequential was refused with 401 ({n} attempt(s)) and none was "
           "acknowledged, as with a wrong signing secret (its deliveries stopped after 1 of its {events} events); "
           "the {rest} scenario(s) after it were not run: fix the "
           "secret (or verify the body as received) and run certify again (--keep-going runs them anyway)")


def test_a_wrong_secret_stops_certify_after_the_first_scenario(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole catalog against a receiver verifying with another secret: the first scenario's
    first event is refused with 401 through Stripe's whole retry schedule, so its other events are
    not sent and no other scenario starts (none was under way: the first runs alone while every
    answer is a 401); one line says so, beside the headline, and the first scenario's reason."""
    from hookproof.scenarios.catalog import CATALOG

    result, report = _certify_http(tmp_path, WRONG, monkeypatch)
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "fail"
    first, *rest = report["scenarios"]
    assert first["id"] == "duplicate-sequential" and first["verdict"] == "fail"
    assert len(rest) == len(CATALOG) - 1 and len(rest) > 20
    assert {(s["verdict"], s["reason"]) for s in rest} == {
        ("unknown", "not run: every valid delivery of duplicate-sequential was refused with 401")}
    assert all(not s["attempts"] for s in rest)
    valid = [a for a in first["attempts"] if a["valid"]]
    assert valid and {a["status"] for a in valid} == {401}
    assert len({a["event_id"] for a in first["attempts"]}) == 1  # one event, its 11 attempts: Stripe's schedule
    assert len(valid) == 1 + len(get_profile("stripe").retry_schedule_s) == 11
    said = re.fullmatch(r"its deliveries stopped after 1 of its (\d+) events: .*", first["reason"])
    assert said is not None and (events := int(said[1])) > 1, first["reason"]
    assert first["reason"] == (f"its deliveries stopped after 1 of its {events} events: every valid one was refused "
                               "with 401 through the provider's whole retry schedule, as with a wrong signing secret")
    line = STOPPED.format(n=len(valid), events=events, rest=len(rest))
    assert report["notes"][0] == HEADLINE.format(n=len(valid)) and line in report["notes"]
    assert output_once(result.output, HEADLINE.format(n=len(valid))) and output_once(result.output, f"note: {line}")
    assert not any("never sent" in n for n in report["notes"]), report["notes"]  # the rest were not run, not unsent


def test_a_400_to_every_delivery_stops_certify_after_two_event_types(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The same receiver answering a bad signature with 400, as Stripe's docs' example does: a
    trial's Node receiver verifying express.json's re-serialised body took 6,132 attempts and 75 s
    before it. Its first scenario's deliveries stop once two events of different types have used up
    Stripe's retry schedule, all refused with 400, and no other scenario starts; the lines name the
    second cause (a receiver that cannot parse the provider's requests)."""
    from hookproof.scenarios.catalog import CATALOG

    result, report = _certify_http(tmp_path, WRONG, monkeypatch, refuse_with=400)
    assert result.exit_code == 1, result.output
    first, *rest = report["scenarios"]
    assert first["id"] == "duplicate-sequential" and first["verdict"] == "fail"
    assert len(rest) == len(CATALOG) - 1
    assert {(s["verdict"], s["reason"]) for s in rest} == {
        ("unknown", "not run: every valid delivery of duplicate-sequential was refused with 400")}
    assert all(not s["attempts"] for s in rest)
    valid = [a for a in first["attempts"] if a["valid"]]
    assert {a["status"] for a in valid} == {400}
    assert len({a["event_id"] for a in valid}) == 2 == len({a["event_type"] for a in valid})
    per_delivery = {d: sum(a["delivery_id"] == d for a in valid) for d in {a["delivery_id"] for a in valid}}
    assert set(per_delivery.values()) == {1 + len(get_profile("stripe").retry_schedule_s)} == {11}  # each used up
    n = len(valid)
    said = re.fullmatch(r"its deliveries stopped after 2 of its (\d+) events: .*", first["reason"])
    assert said is not None, first["reason"]
    cause = "a wrong signing secret, or a receiver that cannot parse the provider's requests"
    assert first["reason"] == (f"its deliveries stopped after 2 of its {said[1]} events: every valid one was refused "
                               f"with 400 through the provider's whole retry schedule, as with {cause}")
    line = (f"every valid delivery of duplicate-sequential was refused with 400 ({n} attempt(s)) and none was "
            f"acknowledged, as with {cause} (its deliveries stopped after 2 of its {said[1]} events); the "
            f"{len(rest)} scenario(s) after it were not run: fix the secret (or verify the body as received) and run "
            "certify again (--keep-going runs them anyway)")
    assert line in report["notes"] and output_once(result.output, f"note: {line}")
    assert report["notes"][0].startswith(f"{HEADLINE_PREFIX}every valid delivery was refused with 400 ({n} attempt(s))")


def test_a_receiver_refusing_one_scenario_legitimately_is_not_stopped(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The right secret, and future-dated timestamps refused with 401 (stricter than Stripe's SDK,
    an advisory): future-timestamp, first, has every valid delivery refused with 401 and nothing
    of the run acknowledged yet, yet the scenarios after it run."""
    result, report = _certify_http(tmp_path, SECRET, monkeypatch, "future-timestamp", "duplicate-sequential",
                                   "reorder")
    assert result.exit_code == 1, result.output  # applies nothing: lost
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert set(by_id) == {"future-timestamp", "duplicate-sequential", "reorder"}
    refused = [a for a in by_id["future-timestamp"]["attempts"] if a["valid"]]
    assert len(refused) >= 3 and {a["status"] for a in refused} == {401}
    for sid in ("duplicate-sequential", "reorder"):
        assert by_id[sid]["attempts"] and {a["status"] for a in by_id[sid]["attempts"] if a["valid"]} == {200}
    assert not any("not run" in (s.get("reason") or "") for s in report["scenarios"])
    assert not any("were not run" in n for n in report["notes"]) and "were not run" not in result.output


def test_a_wrong_secret_stops_a_paddle_run_inside_its_first_scenario(tmp_path: Path) -> None:
    """The Paddle reference receiver, every Paddle type enabled, verifying with another secret:
    Paddle's live schedule retries each delivery 60 times, and its first scenario's every event
    through it took over 5 minutes before the run stopped. Its deliveries now stop once the first
    event has used up its retries, all refused with 401; the rest are not run."""
    from hookproof.certify import certify
    from tests.examples.test_provider_receivers import config

    cfg = config("paddle_billing", tmp_path)
    assert cfg.target.start is not None
    other = "pdl_ntfset_01hv8x29kz0t586xy6zn1a62ny_" + "f" * 32  # the receiver's; hookproof signs with its own
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": cfg.target.start.model_copy(
        update={"env": {**cfg.target.start.env, "WEBHOOK_SECRET": other}})})})
    report = certify(cfg, out_dir=tmp_path / "report").report
    first, *rest = report.scenarios
    assert first.verdict == "fail" and {f.check_id for f in first.findings} >= {"valid_not_rejected"}
    assert len({a.event_id for a in first.attempts}) == 1
    assert [a.status for a in first.attempts] == [401] * (1 + len(get_profile("paddle").retry_schedule_s)) \
        == [401] * 61
    assert first.reason is not None and first.reason.startswith("its deliveries stopped after 1 of its ")
    assert rest and {(s.verdict, s.reason) for s in rest} == {
        ("unknown", f"not run: every valid delivery of {first.id} was refused with 401")}
