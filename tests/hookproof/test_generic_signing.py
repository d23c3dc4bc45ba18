"""``[target.signing]``: generic-hmac's scheme from hookproof.toml reaches every profile built.

A new user's Lemon Squeezy receiver: ``X-Signature`` over the raw body (generic-hmac's
defaults), the event's name in ``X-Event-Name``, no event-id header, and up to three retries
(5 s, 25 s, 125 s). The table's keys are `GenericHmacSettings`' fields; a bad one is one
config error naming ``target.signing.<field>`` and its line; certify, send and a storm's
worker processes sign, head and retry as it says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookproof.config import load_config, parse_config
from hookproof.errors import ConfigError
from tests.hookproof import lemon_app
from tests.hookproof.test_bad_input import run_in_process

LEMON = """[target]
app = "tests.hookproof.lemon_app:app"
profile = "generic-hmac"
secret = "lemon-s3cret"

[target.signing]
type_header = "X-Event-Name"
id_header = false
retry_schedule_s = [5, 25, 125]

[catalog]
type_field = "meta.event_name"

[catalog.events.order_created]
example = { meta = { event_name = "order_created" }, data = { type = "orders", id = "1", attributes = { total = 999 } } }
object_id = "data.id"
key = "order:{data.id}"

[observer]
kind = "python"
callable = "tests.hookproof.lemon_app:observe"

[settle]
window_s = 0.2
deadline_s = 5
"""


def write(tmp_path: Path, text: str = LEMON) -> Path:
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    return tmp_path / "hookproof.toml"


def headers_of(profile: object) -> dict[str, str]:
    """The headers of one signed delivery of `profile`'s default event (besides none)."""
    from hookproof.simulator.world import emit_events, new_world

    event = emit_events(new_world(profile.world, 3), profile.default_event)[0]  # type: ignore[attr-defined]
    envelope = profile.envelope(event)  # type: ignore[attr-defined]
    return {**envelope.headers, **profile.sign(envelope, ["lemon-s3cret"], 1_700_000_000)}  # type: ignore[attr-defined]


def test_the_table_reaches_the_profile_certify_sends_with(tmp_path: Path) -> None:
    profile = load_config(write(tmp_path)).profile()
    assert profile.retry_schedule_s == (5.0, 25.0, 125.0)
    assert profile.words().attempts == 4  # Lemon Squeezy's first attempt and its three retries
    headers = headers_of(profile)
    assert headers["X-Event-Name"] == "order_created"
    assert set(headers) == {"Content-Type", "X-Signature", "X-Event-Name"}  # no X-Webhook-Id


def test_without_a_catalog_the_table_reaches_the_profile_too(tmp_path: Path) -> None:
    text = LEMON.split("[catalog]")[0] + '[observer]\nkind = "python"\ncallable = "tests.hookproof.lemon_app:observe"\n'
    headers = headers_of(load_config(write(tmp_path, text)).profile())
    assert headers["X-Event-Name"] == "payment_intent.succeeded"
    assert "X-Webhook-Id" not in headers


BAD = [
    ('type_header = "X-Event-Name"', 'type_header = "X Event Name"', 7,
     "target.signing.type_header: 'X Event Name' is not a valid HTTP header name"),
    ("retry_schedule_s = [5, 25, 125]", "retry_schedule_s = [5, -25, 125]", 9,
     "target.signing.retry_schedule_s: retry delays must be >= 0 seconds"),
    ("id_header = false", "id_header = true", 8,
     "target.signing.id_header: a header name, or false for none (got true)"),
    ("id_header = false", 'id_header = "X-Signature"', 8,
     "target.signing.id_header: 'X-Signature' already carries the signature (signature_header): one header per "
     "thing"),
    ("id_header = false", "id_heder = false", 8, "target.signing.id_heder: unknown key (did you mean id_header?)"),
    ("id_header = false", 'id_header = false\nsigned_content = "{id}.{body}"', 8,
     "target.signing.id_header: signed_content uses {id}: set id_header"),
    ('profile = "generic-hmac"', 'profile = "stripe"', 6,
     "target.signing: only the generic-hmac, standard-webhooks and svix profiles take signing settings; the stripe "
     "profile signs as its provider does"),
    ('profile = "generic-hmac"', 'profile = "standard-webhooks"', 7,
     "target.signing.type_header: unknown key (the standard-webhooks profile takes one: secret_encoding)"),
    ("[target.signing]\n", "retry_schedule_s = [5]\n[target.signing]\n", 6,
     "target.retry_schedule_s: unknown key (a generic-hmac setting: give it in [target.signing])"),
    ("id_header = false", "id_header = false\nsuccess_statuses = [200, 302]", 9,
     "target.signing.success_statuses: 302 is not a 2xx status: a sender counts only a 2xx answer as delivered"),
    ("id_header = false", "id_header = false\nsuccess_statuses = []", 9,
     "target.signing.success_statuses: name at least one status (leave the key out for any 2xx)"),
    ("id_header = false", "id_header = false\nsuccess_statuses = 200", 9,
     "target.signing.success_statuses: a list of the 2xx statuses the provider counts as delivered, such as [200] "
     "(got 200)"),
    ("id_header = false", 'id_header = false\nsuccess_statuses = ["200"]', 9,
     "target.signing.success_statuses: a list of the 2xx statuses the provider counts as delivered, such as [200] "
     '(got ["200"])'),
]


@pytest.mark.parametrize("old, new, line, expected", BAD, ids=[b[3].split(":")[0] + str(i) for i, b in enumerate(BAD)])
def test_a_bad_signing_value_is_one_config_error_with_its_line(tmp_path: Path, old: str, new: str, line: int,
                                                               expected: str) -> None:
    text = LEMON.replace(old, new, 1).replace("[catalog]", "# [catalog]" if "stripe" in new else "[catalog]")
    if "stripe" in new:  # a stripe target: no catalog, a Stripe secret
        text = text.split("# [catalog]")[0].replace('"lemon-s3cret"', '"whsec_lemon"')
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "hookproof.toml")
    assert str(caught.value) == f"hookproof.toml:{line}: {expected}"
    write(tmp_path, text)
    run = run_in_process("certify", "--config", "hookproof.toml", "--out", str(tmp_path / "out"), cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run
    assert lines[0] == f"hookproof: hookproof.toml:{line}: {expected}"


def test_a_storm_s_workers_sign_and_head_as_the_master(tmp_path: Path) -> None:
    from hookproof.commands.storm import build_spec
    from hookproof.loadtests.spec import SpecError, StormSpec

    text = LEMON.replace('app = "tests.hookproof.lemon_app:app"', 'url = "http://127.0.0.1:9/webhooks"').replace(
        'kind = "python"\ncallable = "tests.hookproof.lemon_app:observe"',
        'kind = "sql"\nurl = "sqlite:///o.sqlite"\neffects = "SELECT business_key FROM effects"').replace(
        '[target.signing]\n', '[target.signing]\nsignature_header = "X-Lemon-Signature"\nprefix = "sha256="\n'
                              'timestamp_header = "X-Lemon-Time"\nsigned_content = "{timestamp}.{body}"\n')
    config = load_config(write(tmp_path, text))
    master = config.profile()
    spec = build_spec(config, users=1, rate=1.0, duration_s=1.0, shape="steady", duplicates=0.0, burst=1,
                      reorder_window=1, waves=0, out=tmp_path / "out", sink_url=None, progress_path=None)
    worker = StormSpec.from_json(spec.for_workers().to_json()).sending_profile()
    assert worker.settings == master.settings and worker.retry_schedule_s == (5.0, 25.0, 125.0)
    assert headers_of(worker) == headers_of(master)
    assert set(headers_of(worker)) == {"Content-Type", "X-Lemon-Signature", "X-Lemon-Time", "X-Event-Name"}
    assert worker.words() == master.words()
    without = build_spec(load_config(write(tmp_path, text.replace("[target.signing]", "[target.unused]")
                                           .split("[target.unused]")[0] + text.split("125]\n", 1)[1])),
                         users=1, rate=1.0, duration_s=1.0, shape="steady", duplicates=0.0, burst=1,
                         reorder_window=1, waves=0, out=tmp_path / "out", sink_url=None, progress_path=None)
    assert without.signing is None and "X-Webhook-Id" in headers_of(without.sending_profile())
    with pytest.raises(SpecError, match=r"^signing: generic-hmac setting retry_schedule_s"):
        StormSpec(target_url="http://127.0.0.1:9/h", profile="generic-hmac", signing={"retry_schedule_s": [-1]})
    with pytest.raises(SpecError, match=r"^signing: profile 'stripe' takes no settings"):
        StormSpec(target_url="http://127.0.0.1:9/h", profile="stripe", signing={})


def test_send_delivers_with_the_type_header_and_without_an_id_header(tmp_path: Path) -> None:
    from hookproof.simulator.serving import serve_app

    lemon_app.reset(fail_first=True)
    write(tmp_path)
    with serve_app(lemon_app.app) as served:
        run = run_in_process("send", "--config", "hookproof.toml", "--url", served.url + "/webhooks", "--json",
                             cwd=tmp_path)
    assert run.returncode == 0, run
    attempts = json.loads(run.stdout)
    assert [a["status"] for a in attempts] == [503, 200]  # refused once, retried per the schedule
    seen = lemon_app.STATE["headers"]
    assert [h["x-event-name"] for h in seen] == ["order_created"] * 2
    assert not any("x-webhook-id" in h for h in seen)
    assert len(lemon_app.observe()["effects"]) == 1


def test_explore_sends_with_the_table(tmp_path: Path) -> None:
    """The state-machine search builds its profile from the config too: every delivery it
    makes names its event in X-Event-Name and carries no X-Webhook-Id."""
    lemon_app.reset(fail_first=False)
    write(tmp_path)
    run = run_in_process("explore", "-c", "hookproof.toml", "--max-examples", "3", "--seed", "1",
                         "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 0, run
    seen = lemon_app.STATE["headers"]
    assert seen and all(h["x-event-name"] == "order_created" and "x-webhook-id" not in h for h in seen)


def _run_certify(tmp_path: Path, text: str, scenarios: list[str]) -> object:
    from hookproof.certify import certify

    return certify(load_config(write(tmp_path, text)), scenarios=scenarios, out_dir=tmp_path / "out").report


def findings(report: object) -> dict[str, set[str]]:
    return {s.id: {f.check_id for f in s.findings} for s in report.scenarios}  # type: ignore[attr-defined]


def test_certify_retries_on_the_schedule_so_a_503_then_200_is_not_lost(tmp_path: Path) -> None:
    """The receiver refuses each body's first delivery 503: with Lemon Squeezy's retries the
    event is applied (a 5xx finding, but nothing ``lost``); with no retries it is lost."""
    lemon_app.reset(fail_first=True)
    report = _run_certify(tmp_path, LEMON, ["reserialized-retry", "unknown-event-type"])
    assert all("lost" not in checks for checks in findings(report).values()), findings(report)
    assert {"no_server_error"} <= findings(report)["unknown-event-type"]
    assert all("x-event-name" in h and "x-webhook-id" not in h for h in lemon_app.STATE["headers"])
    lemon_app.reset(fail_first=True)
    (tmp_path / "once").mkdir()
    once = _run_certify(tmp_path / "once", LEMON.replace("[5, 25, 125]", "[]"), ["reserialized-retry", "unknown-event-type"])
    assert any("lost" in checks for checks in findings(once).values()), findings(once)


def test_a_twin_deduping_on_an_id_header_lemon_squeezy_never_sends_fails(tmp_path: Path) -> None:
    """Written against hookproof's default ``X-Webhook-Id``, it passed; without the header it
    drops every event after the first, as it would against Lemon Squeezy."""
    scenarios = ["duplicate-sequential", "dropped-response", "sender-timeout"]  # three events, each its own
    lemon_app.reset(fail_first=False, dedupe_on_header=True)
    report = _run_certify(tmp_path, LEMON, scenarios)
    assert any("lost" in checks for checks in findings(report).values()), findings(report)
    lemon_app.reset(fail_first=False, dedupe_on_header=True)
    (tmp_path / "header").mkdir()
    with_header = _run_certify(tmp_path / "header", LEMON.replace("id_header = false", 'id_header = "X-Webhook-Id"'),
                               scenarios)
    assert not any("lost" in checks for checks in findings(with_header).values()), findings(with_header)


def test_init_s_commented_signing_table_uncommented_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hookproof init --profile generic-hmac``'s commented [target.signing], uncommented, is
    a table the config takes, and the profile signs and heads as it says."""
    import re

    from hookproof.commands.init import render_template

    lines, live = [], False
    for line in render_template("generic-hmac").splitlines():
        live = line.startswith("# [target.signing]") or (live and re.match(r"# [a-z_]+ = ", line) is not None)
        lines.append(line.removeprefix("# ") if live else line)
    monkeypatch.setenv("WEBHOOK_SECRET", "s3cret")
    profile = load_config(write(tmp_path, "\n".join(lines) + "\n")).profile()
    assert profile.retry_schedule_s == (5.0, 25.0, 125.0)
    assert [s for s in range(100, 600) if profile.is_success(s)] == [200]
    assert set(headers_of(profile)) == {"Content-Type", "X-Signature", "X-Webhook-Id", "X-Event-Name", "X-Timestamp"}


def test_explore_finds_the_twin_and_replay_repeats_it_with_the_table(tmp_path: Path) -> None:
    """The twin deduping on X-Webhook-Id fails explore (its second order is lost), and the
    replay of the failing schedule sends as the config says: X-Event-Name, no X-Webhook-Id."""
    lemon_app.reset(fail_first=False, dedupe_on_header=True)
    write(tmp_path)
    run = run_in_process("explore", "-c", "hookproof.toml", "--max-examples", "20", "--seed", "1",
                         "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 1 and "lost: order:" in run.stdout, run
    lemon_app.STATE["headers"].clear()
    # a schedule with a burst may not race the same way on a loaded machine: replayed until it does
    replay = run_in_process("replay", str(tmp_path / "out" / "failing-schedule.json"), "--config", "hookproof.toml",
                            "--repeats", "5", cwd=tmp_path)
    assert replay.returncode == 1 and "lost: order:" in replay.stdout, replay
    seen = lemon_app.STATE["headers"]
    assert seen and all(h["x-event-name"] == "order_created" and "x-webhook-id" not in h for h in seen)


def test_a_catalog_s_test_mode_flag_makes_test_mode_to_live_apply(tmp_path: Path) -> None:
    """Every Lemon Squeezy body carries ``meta.test_mode``; declared as the catalog's test-mode
    flag, ``test-mode-to-live`` sends the other mode's event (the flag turned): a receiver
    checking it against its own mode passes, one applying every order fails ``unexpected``.
    Undeclared, the scenario does not apply; declared but missing from an example, the config
    is refused."""
    flagged = LEMON.replace('type_field = "meta.event_name"', 'type_field = "meta.event_name"\ntest_mode = "meta.test_mode"')
    flagged = flagged.replace('meta = { event_name = "order_created" }',
                              'meta = { event_name = "order_created", test_mode = true }')
    lemon_app.reset(fail_first=False, test_mode=True)
    report = _run_certify(tmp_path, flagged, ["test-mode-to-live"])
    (scenario,) = report.scenarios  # type: ignore[attr-defined]
    assert (scenario.verdict, findings(report)) == ("pass", {"test-mode-to-live": set()}), scenario.reason
    lemon_app.reset(fail_first=False)
    (tmp_path / "blind").mkdir()
    blind = _run_certify(tmp_path / "blind", flagged, ["test-mode-to-live"])
    assert findings(blind) == {"test-mode-to-live": {"unexpected"}}
    (tmp_path / "plain").mkdir()
    (plain,) = _run_certify(tmp_path / "plain", LEMON, ["test-mode-to-live"]).scenarios  # type: ignore[attr-defined]
    assert (plain.verdict, plain.reason) == ("not_applicable", "Generic HMAC events carry no test/live flag")
    unflagged = flagged.replace(", test_mode = true", "")
    with pytest.raises(ConfigError, match=r"catalog\.test_mode: order_created: the example has no field meta\.test_mode"):
        load_config(write(tmp_path / "plain", unflagged))


def test_an_id_less_sender_s_advice_names_the_keys_not_an_event_id(tmp_path: Path) -> None:
    """Lemon Squeezy sends no event id (no id header; the catalog names no ``event_id``), yet
    ``reserialized-retry`` told its receiver to "use the event id" and a ``lost`` finding blamed
    "deduplicating on something other than the event's id". Both now name the business object
    the keys name (the catalog's, or the config's ``[business_keys]``); with an id header they
    still name the event id."""
    from hookproof.scenarios.catalog import CATALOG

    def advice(profile: object) -> str:
        scenario = CATALOG["reserialized-retry"].for_world(profile.world, profile.after_refusal(),  # type: ignore[attr-defined]
                                                           profile.no_event_id)  # type: ignore[attr-defined]
        return scenario.description.split("Deduplication must use ", 1)[1].split(", and the signature")[0]

    lemon = load_config(write(tmp_path)).profile()
    words = "the business object its keys name (order:{data.id}; this sender gives no event id)"
    assert advice(lemon) == f"{words}, not a hash of the body"
    assert lemon.event_id_name == lemon.no_event_id == words  # what `lost` says a receiver dedupes on
    (tmp_path / "team").mkdir()
    team = LEMON.replace('key = "order:{data.id}"\n', "") + '\n[business_keys]\norder_created = "licence:{data.id}"\n'
    assert advice(load_config(write(tmp_path / "team", team)).profile()) == (
        "the business object its keys name (licence:{data.id}; this sender gives no event id), not a hash of the body")
    (tmp_path / "header").mkdir()
    header = load_config(write(tmp_path / "header", LEMON.replace("id_header = false", 'id_header = "X-Webhook-Id"')))
    assert header.profile().no_event_id is None
    assert advice(header.profile()) == "the event id, not a hash of the body"
    retry = CATALOG["transport-fields-change"].for_world(lemon.world, lemon.after_refusal(), lemon.no_event_id)
    assert f"signature; {words} stays." in retry.description
    assert "signature; the event id stays." in CATALOG["transport-fields-change"].description
