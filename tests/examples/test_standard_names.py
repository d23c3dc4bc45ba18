"""Standard Webhooks fixes no event catalog: the names the config lists are the names sent.

`examples/receivers/standard/billing_names.py` is a Standard Webhooks receiver (verified by
the official ``standardwebhooks`` library) whose sender names events as Stripe does
(``payment_intent.succeeded``, ``customer.subscription.updated``). Certified with a config
whose ``enabled_events`` lists those names, hookproof sends them so and it passes; its twin
without dedupe fails ``duplicated``. With a config listing no names, hookproof sends its
default renaming (``payment.succeeded``, ``subscription.updated``): the receiver answers 200
to those types it does not know and applies nothing, which certify reports as ``lost``
effects and missing states (``invoice.paid``, one name in both, still applies). ``events``,
``send``, ``explore`` and ``replay`` with the config speak the config's names; one type
spelled two ways in one config is one config error with its line.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.errors import ConfigError
from hookproof.simulator.profiles.standard_webhooks import STANDARD_EVENT_TYPES
from tests.support import free_port

ROOT = PROJECT_ROOT
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#: The billing names the receiver knows (`billing_names.EFFECTS` and `SUBSCRIPTION_TYPES`).
BILLING_NAMES = ["payment_intent.succeeded", "invoice.paid", "customer.subscription.created",
                 "customer.subscription.updated", "customer.subscription.deleted"]


def write_config(tmp_path: Path, *, receiver: str = "billing_names", enabled: list[str] | None = BILLING_NAMES,
                 profile: str = "standard-webhooks", extra: str = "") -> Path:
    """A hookproof.toml in `tmp_path` starting `examples.receivers.standard.<receiver>` on a
    free port per run; `enabled`: its ``enabled_events`` (None: no such line)."""
    listed = "" if enabled is None else "enabled_events = [" + ", ".join(f'"{e}"' for e in enabled) + "]\n"
    text = (f'[target]\nurl = "http://127.0.0.1:{{port}}/webhooks"\nprofile = "{profile}"\n'
            f'secret = "{SECRET}"\n{listed}\n'
            "[target.start]\n"
            f'command = "{sys.executable} -m examples.receivers.standard.{receiver}"\n'
            'health_url = "http://127.0.0.1:{port}/healthz"\n'
            f'env = {{ PORT = "{{port}}", DATABASE = "billing.sqlite", PYTHONPATH = "{ROOT}" }}\n\n'
            '[observer]\nkind = "sql"\nurl = "sqlite:///billing.sqlite"\n'
            'effects = "SELECT business_key, amount FROM effects"\n'
            'state = "SELECT object_id, status, version FROM subscriptions"\n\n'
            '[run]\nseed = 7\n\n[settle]\nwindow_s = 0.15\n' + extra)
    path = tmp_path / "hookproof.toml"
    path.write_text(text, encoding="utf-8")
    return path


def hookproof(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", *args], capture_output=True, text=True, timeout=240,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "200"})


def test_each_type_the_config_names_is_sent_as_spelled_and_the_rest_by_default(tmp_path: Path) -> None:
    from hookproof.config import load_config

    config = load_config(write_config(tmp_path, enabled=["payment_intent.succeeded", "subscription.updated"],
                                      extra='\n[business_keys]\n"invoice.paid" = "renewal:{data.id}"\n'
                                            '\n[counters."charge.refunded"]\nkey = "refund:{data.id}"\n'
                                            'amount = "data.amount_refunded"\n'))
    profile = config.profile()
    assert config.event_names() == {"payment_intent.succeeded": "payment_intent.succeeded"}  # the rest: as default
    names = profile.event_types()
    assert names["payment_intent.succeeded"] == "payment_intent.succeeded"
    assert names["customer.subscription.updated"] == "subscription.updated"  # listed in the default spelling
    assert names["invoice.paid"] == "invoice.paid" and names["charge.refunded"] == "charge.refunded"
    assert names["payment_intent.payment_failed"] == "payment.failed"  # not named: the default renaming
    from hookproof.simulator.world import emit_events, new_world

    (event, *_) = [e for e in emit_events(new_world(profile.world, 1), "payment_intent.succeeded")
                   if e.type == "payment_intent.succeeded"]
    envelope = profile.envelope(event)
    assert envelope.type == "payment_intent.succeeded"
    assert json.loads(envelope.body)["type"] == "payment_intent.succeeded"
    assert config.target.stripe_types() == {"payment_intent.succeeded", "customer.subscription.updated"}


@pytest.mark.parametrize("profile", ["standard-webhooks", "svix"])
def test_a_config_listing_no_names_keeps_the_default_renaming(tmp_path: Path, profile: str) -> None:
    from hookproof.config import load_config

    config = load_config(write_config(tmp_path, enabled=None, profile=profile))
    assert config.event_names() == {}
    assert dict(config.profile().event_types()) == dict(STANDARD_EVENT_TYPES)
    listed = load_config(write_config(tmp_path, enabled=["customer.subscription.updated"], profile=profile))
    assert listed.profile().event_types()["customer.subscription.updated"] == "customer.subscription.updated"


@pytest.mark.parametrize(("enabled", "extra", "field", "at"), [
    (["invoice.paid", "payment.succeeded", "payment_intent.succeeded"], "", "target.enabled_events",
     "enabled_events"),
    (["customer.subscription.updated"], '\n[business_keys]\n"subscription.updated" = "sub:{data.id}"\n',
     'business_keys."subscription.updated"', '"subscription.updated"'),
])
def test_one_type_spelled_two_ways_is_one_config_error_with_its_line(tmp_path: Path, enabled: list[str], extra: str,
                                                                      field: str, at: str) -> None:
    from hookproof.config import load_config

    path = write_config(tmp_path, enabled=enabled, extra=extra)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.startswith(at))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.field == field and caught.value.line == line, caught.value
    assert "spelled two ways" in caught.value.message
    ran = hookproof("events", "--config", str(path))
    lines = [ln for ln in ran.stderr.splitlines() if ln.strip()]
    assert ran.returncode == 2 and len(lines) == 1 and f":{line}: {field}:" in lines[0], ran.stderr


def test_the_readme_shows_the_default_renaming_and_the_names_the_receiver_knows() -> None:
    import re
    import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Standard Webhooks and Svix: the names are yours", 1)[1].split("\n### ", 1)[0]
    table: dict[str, str] = {}
    for left, right in re.findall(r"^\| (`[^|]+`) \| (`[^`]+`|the same name) \|$", section, flags=re.M):
        for name in re.findall(r"`([^`]+)`", left):
            table[name] = name if right == "the same name" else right.strip("`")
    assert table == dict(STANDARD_EVENT_TYPES)
    (block,) = re.findall(r"```toml standard-names\.toml\n(.*?)```", section, flags=re.S)
    assert tomllib.loads(block)["target"]["enabled_events"] == BILLING_NAMES


def test_events_lists_the_names_as_they_will_be_sent(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    ran = hookproof("events", "--profile", "standard-webhooks", "--config", str(path), "--json")
    assert ran.returncode == 0, ran.stderr
    rows = {r["world_type"]: r["event"] for r in json.loads(ran.stdout)}
    assert {t: rows[t] for t in BILLING_NAMES} == {t: t for t in BILLING_NAMES}
    assert rows["payment_intent.payment_failed"] == "payment.failed"  # not listed: the default
    default = hookproof("events", "--profile", "standard-webhooks", "--json")
    assert {r["world_type"]: r["event"] for r in json.loads(default.stdout)} == dict(STANDARD_EVENT_TYPES)


def test_send_with_the_config_delivers_the_listed_name(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    port = free_port()
    db = tmp_path / "direct.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "examples.receivers.standard.billing_names"], cwd=ROOT,
                            env={"PATH": os.environ["PATH"], "PORT": str(port), "DATABASE": str(db),
                                 "WEBHOOK_SECRET": SECRET},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/webhooks"
    try:
        assert proc.stdout is not None and "listening on" in proc.stdout.readline()
        sent = hookproof("send", "--config", str(path), "--event", "payment_intent.succeeded", "--url", url,
                         "--secret", SECRET, "--copies", "2", "--seed", "5", "--json")
        default = hookproof("send", "--profile", "standard-webhooks", "--event", "payment_intent.succeeded",
                            "--url", url, "--secret", SECRET, "--seed", "6", "--json")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert sent.returncode == 0, sent.stderr
    assert [(a["event_type"], a["status"]) for a in json.loads(sent.stdout)] == [("payment_intent.succeeded", 200)] * 2
    assert default.returncode == 0, default.stderr  # without the config: the default name, unknown to it, 200
    assert [(a["event_type"], a["status"]) for a in json.loads(default.stdout)] == [("payment.succeeded", 200)]
    with sqlite3.connect(db) as conn:
        effects = [k for (k,) in conn.execute("SELECT business_key FROM effects")]
    assert len(effects) == 1 and effects[0].startswith("license:pi_")  # once, from the configured name only


def _certify(tmp_path: Path, **options: object) -> object:
    from hookproof.certify import certify
    from hookproof.config import load_config

    scenarios = options.pop("scenarios", None)
    return certify(load_config(write_config(tmp_path, **options)), scenarios=scenarios,  # type: ignore[arg-type]
                   out_dir=tmp_path / "out").report


@pytest.mark.slow
def test_the_receiver_of_the_billing_names_passes_with_a_config_listing_them(tmp_path: Path) -> None:
    report = _certify(tmp_path)
    assert report.verdict == "pass", [(s.id, s.verdict, s.reason, [f.message for f in s.findings])  # type: ignore[attr-defined]
                                      for s in report.scenarios if s.verdict != "pass"]  # type: ignore[attr-defined]
    ran = {s.id for s in report.scenarios if s.verdict != "not_applicable"}  # type: ignore[attr-defined]
    assert {"duplicate-sequential", "duplicate-concurrent", "reorder", "stale-after-newer", "related-burst"} <= ran
    assert "unknown-event-type" not in ran  # an endpoint is sent only the types it lists
    checks = {(s.id, c.check_id): c for s in report.scenarios for c in s.checks}  # type: ignore[attr-defined]
    assert checks[("reorder", "stale")].stats["objects"] >= 1  # a subscription's states were compared
    with sqlite3.connect(tmp_path / "billing.sqlite") as conn:
        prefixes = {k.split(":")[0] for (k,) in conn.execute("SELECT business_key FROM effects")}
    assert prefixes == {"license", "renewal"}


@pytest.mark.slow
def test_its_twin_without_dedupe_fails_duplicated(tmp_path: Path) -> None:
    report = _certify(tmp_path, receiver="billing_names_no_dedupe",
                      scenarios=["duplicate-sequential", "duplicate-concurrent", "reorder"])
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios  # type: ignore[attr-defined]
              if s.verdict != "pass"}
    assert failed == {"duplicate-sequential": ["duplicated"], "duplicate-concurrent": ["duplicated"]}
    keys = {f.key.split(":")[0] for s in report.scenarios for f in s.findings}  # type: ignore[attr-defined]
    assert keys == {"license", "renewal"}


@pytest.mark.slow
def test_with_a_config_listing_no_names_its_types_are_unknown_to_it(tmp_path: Path) -> None:
    """The default renaming (``payment.succeeded``…) reaches a receiver that knows only the
    billing names: it answers 200 and applies nothing, and certify says so as it does today:
    each such effect ``lost`` (acknowledged, never applied) and each subscription's state
    missing; ``invoice.paid``, spelled alike both ways, is applied."""
    report = _certify(tmp_path, enabled=None, scenarios=["duplicate-sequential", "reorder", "unknown-event-type"])
    assert report.verdict == "fail"  # type: ignore[attr-defined]
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios  # type: ignore[attr-defined]
              if s.verdict != "pass"}
    assert failed == {"duplicate-sequential": ["lost"], "reorder": ["stale"], "unknown-event-type": ["lost"]}
    lost = {f.key.split(":")[0] for s in report.scenarios for f in s.findings  # type: ignore[attr-defined]
            if f.check_id == "lost"}
    assert "license" in lost and "renewal" not in lost  # invoice.paid: one name in both spellings
    stale = [f.message for s in report.scenarios for f in s.findings if f.check_id == "stale"]  # type: ignore[attr-defined]
    assert stale and all("missing after settling" in m for m in stale)
    with sqlite3.connect(tmp_path / "billing.sqlite") as conn:
        prefixes = {k.split(":")[0] for (k,) in conn.execute("SELECT business_key FROM effects")}
        assert prefixes == {"renewal"} and conn.execute("SELECT count(*) FROM subscriptions").fetchone() == (0,)


@pytest.mark.slow
@pytest.mark.parametrize(("enabled", "code"), [(BILLING_NAMES, 0), (None, 1)])
def test_explore_and_replay_send_the_listed_names(tmp_path: Path, enabled: list[str] | None, code: int) -> None:
    path = write_config(tmp_path, enabled=enabled)
    ran = hookproof("explore", "--config", str(path), "--max-examples", "5", "--repeats", "2", "--seed", "3",
                    "--out", str(tmp_path / "out"))
    assert ran.returncode == code, ran.stdout + ran.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    findings = {f["check_id"] for s in report["scenarios"] for c in s["checks"] for f in c["findings"]}
    # without the names: what it does not know it never applies (lost effects, missing states)
    assert (findings == set()) if code == 0 else (findings and findings <= {"lost", "stale"}), findings
    if code == 1:  # replay sends the names of the config it reads
        schedule = str(tmp_path / "out" / "failing-schedule.json")
        again = hookproof("replay", schedule, "--config", str(path))
        assert again.returncode == 1 and "finding:" in again.stdout, again.stdout + again.stderr
        (tmp_path / "listing").mkdir()
        listing = hookproof("replay", schedule, "--config", str(write_config(tmp_path / "listing")))
        assert "did not reproduce" in listing.stdout, listing.stdout + listing.stderr
        import re

        listed = {v: k for k, v in STANDARD_EVENT_TYPES.items() if k in BILLING_NAMES}  # default -> listed

        def sent(out: str) -> list[str]:
            return re.findall(r"#\d+ ([a-z_.]+)", out.split("teardown")[0])

        def but_invoice_charges(types: list[str]) -> list[str]:
            """`types` without an invoice's charge's charge.succeeded (right after its invoice.paid):
            an invoice's payment's own events go only to an endpoint listing them, and the listing
            one lists payment_intent.succeeded alone."""
            return [t for i, t in enumerate(types) if not (t == "charge.succeeded" and i and types[i - 1] == "invoice.paid")]
        assert sent(again.stdout) and sent(listing.stdout) == [listed.get(t, t)
                                                              for t in but_invoice_charges(sent(again.stdout))]
        assert set(sent(again.stdout)) & {v for k, v in STANDARD_EVENT_TYPES.items() if k != v and k in BILLING_NAMES}
