"""The README's examples run: the send command, the config, init, the matrix, the demo."""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
import tomllib
from collections import Counter
from pathlib import Path

import pytest
import stripe
from fastapi import FastAPI, Request, Response

from hookproof.chaos.process import wait_healthy
from hookproof.config import parse_config
from hookproof.config_model import SettleConfig
from hookproof.simulator.profiles.base import Envelope
from hookproof.simulator.serving import serve_app
from tests.support import free_port

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def command(prefix: str) -> list[str]:
    """The README's bash command starting with `prefix`, continuation lines joined, as argv."""
    for block in blocks("bash"):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            if line.strip().startswith(prefix):
                return shlex.split(line.split("#")[0])
    raise AssertionError(f"the README shows no command starting with {prefix!r}")


def hookproof(*args: str, timeout: float = 120, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def test_the_send_example_delivers_as_described() -> None:
    argv = command("hookproof send")
    secret = argv[argv.index("--secret") + 1]
    copies = int(argv[argv.index("--copies") + 1])
    seen: Counter[str] = Counter()
    lock = threading.Lock()
    app = FastAPI()

    @app.post("/webhooks")
    async def hook(request: Request) -> Response:
        event = stripe.Webhook.construct_event(await request.body(), request.headers["stripe-signature"], secret)
        with lock:
            seen[event["type"]] += 1
        return Response(status_code=200)

    with serve_app(app) as served:
        url_at = argv.index("--url") + 1
        argv[url_at] = served.url + "/webhooks"
        run = hookproof(*argv[1:], "--json")
    assert run.returncode == 0, run.stderr
    attempts = json.loads(run.stdout)
    assert [a["status"] for a in attempts] == [200] * copies
    assert seen == {"payment_intent.succeeded": copies}
    assert secret not in run.stdout + run.stderr


def test_the_reference_receiver_command_serves_the_send_example(tmp_path: Path) -> None:
    """The receiver command the README gives, then its send command: every copy acked
    once, one effect in the receiver's database (in `receiver.db` in its directory)."""
    receiver = command("python -m hookproof.receivers.inbox_sync")
    send = command("hookproof send")
    port = str(free_port())
    receiver[receiver.index("--port") + 1] = port
    send[send.index("--url") + 1] = f"http://127.0.0.1:{port}/webhooks"
    proc = subprocess.Popen([sys.executable, *receiver[1:]], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_healthy(health_url=f"http://127.0.0.1:{port}/healthz", timeout_s=30, alive=lambda: proc.poll() is None)
        run = hookproof(*send[1:], "--json")
    finally:
        proc.terminate()
        proc.wait(10)
    assert run.returncode == 0, run.stderr
    copies = int(send[send.index("--copies") + 1])
    assert [a["status"] for a in json.loads(run.stdout)] == [200] * copies
    with sqlite3.connect(tmp_path / "receiver.db") as db:
        assert db.execute("SELECT count(*) FROM effects").fetchone() == (1,)


def test_the_minimal_config_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_example")
    (toml,) = blocks("toml")
    config = parse_config(toml, "README.md")
    assert (config.target.profile, config.observer.kind) == ("stripe", "sql")


def test_the_secret_the_minimal_config_reads_is_exported_before_certify() -> None:
    """The minimal config reads ``env:WEBHOOK_SECRET``: the README's certify block exports it
    first, with the secret the reference receiver of 'Send one event' is started with."""
    (toml,) = blocks("toml")
    assert 'secret = "env:WEBHOOK_SECRET"' in toml
    (block,) = [b for b in blocks("bash") if re.search(r"^hookproof certify\b", b, flags=re.M)
                and "export " in b]
    lines = [line.split("#")[0].strip() for line in block.splitlines()]
    export = next(i for i, line in enumerate(lines) if line.startswith("export WEBHOOK_SECRET="))
    certify = next(i for i, line in enumerate(lines) if line.startswith("hookproof certify"))
    assert export < certify, block
    assert lines[export] == "export WEBHOOK_SECRET=whsec_test_secret"
    assert "--secret whsec_test_secret" in " ".join(command("python -m hookproof.receivers.inbox_sync"))


def test_the_settle_section_states_the_defaults() -> None:
    """The README's `[settle]` block is the defaults, so what it says of them stays true."""
    (toml,) = re.findall(r"```toml settle\.toml\n(.*?)```", README, flags=re.S)
    assert SettleConfig(**tomllib.loads(toml)["settle"]) == SettleConfig()


def test_init_writes_a_template_that_loads(tmp_path: Path) -> None:
    run = hookproof("init", str(tmp_path / "hookproof.toml"))
    assert run.returncode == 0, run.stderr
    env_secret = {**os.environ, "WEBHOOK_SECRET": "whsec_x"}
    check = subprocess.run([sys.executable, "-c", "from hookproof.config import load_config; import sys; "
                            "c = load_config(sys.argv[1]); print(c.target.profile)", str(tmp_path / "hookproof.toml")],
                           capture_output=True, text=True, env=env_secret, cwd=ROOT, timeout=60)
    assert check.stdout.strip() == "stripe", check.stderr
    again = hookproof("init", str(tmp_path / "hookproof.toml"))
    assert again.returncode == 2 and "exists" in again.stderr


@pytest.mark.parametrize("profile", ["github", "mercadopago", "paddle", "shopify", "svix", "stripe"])
def test_init_writes_a_template_for_each_profile_that_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            profile: str) -> None:
    from hookproof.config import load_config

    run = hookproof("init", str(tmp_path / "hookproof.toml"), "--profile", profile)
    assert run.returncode == 0, run.stderr
    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    assert load_config(tmp_path / "hookproof.toml").target.profile == profile
    text = (tmp_path / "hookproof.toml").read_text(encoding="utf-8")
    assert ("per Stripe event" in text) == (profile == "stripe")
    # a profile sending your own types once a catalog names them says so under its name (a Clerk
    # user read a template about subscriptions and found [catalog] only in its last comments)
    assert ("sends the billing world's events until a [catalog] table" in text) == (profile == "svix")
    if profile != "stripe":
        assert f"`hookproof events --profile {profile} --keys`" in text
        assert not re.search(r"sk_test|STRIPE_|stripe-api-base|api_version", text), profile  # nothing of Stripe's
    config = load_config(tmp_path / "hookproof.toml")
    # every kind the state story walks: GitHub's installations and Paddle's transactions too (a new
    # user's GitHub App was never checked on its installations' states: the template read none)
    kinds = {"github": {"installation", "issue", "pull_request"}, "mercadopago": {"payment"},
             "paddle": {"subscription", "transaction"}, "shopify": {"order"}}.get(profile)
    if kinds is None:  # Stripe's billing world: the subscriptions' state query
        assert config.observer.state is not None and not config.observer.states
    else:  # the provider's own stateful kinds
        assert config.observer.state is None and set(config.observer.states) == kinds
    assert ('# check_run = "SELECT object_id, status FROM check_run_states"' in text) == (profile == "github")
    # GitHub's events carry no money: the effects query reads keys alone, so a table without an
    # amount column answers it; the others read the optional amount
    assert ("amount" in (config.observer.effects or "")) == (profile != "github"), config.observer.effects


def _uncommented_keys(template: str) -> str:
    """`template` with its commented ``[business_keys]`` and ``[counters]`` examples uncommented."""
    lines, live = [], False
    for line in template.splitlines():
        if line.startswith(("# [business_keys]", "# [counters.")):
            live = True
        elif not re.match(r'# ("[^"]+" = |key = |amount = )', line):
            live = False
        lines.append(line.removeprefix("# ") if live else line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("profile", ["generic-hmac", "github", "mercadopago", "paddle", "shopify",
                                     "standard-webhooks", "stripe", "svix"])
def test_init_s_key_and_counter_examples_hold_for_its_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              profile: str) -> None:
    """Each profile's commented [business_keys] and [counters], uncommented, load: every path
    is one that profile's events carry (a Stripe path in a Paddle config is a config error)."""
    from hookproof.commands.init import render_template
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    monkeypatch.setenv("STRIPE_WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    text = _uncommented_keys(render_template(profile))
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    config = load_config(tmp_path / "hookproof.toml")
    assert len(config.business_keys) >= 1
    assert len(config.counters) == (0 if profile == "mercadopago" else 1)  # Shopify's: a decimal amount
    if profile == "github":  # a count: a GitHub App's comments, no money in GitHub's events
        assert '[counters."issue_comment.created"]\nkey = "{repository.full_name}#{issue.number}"\namount = 1\n' in text
    if profile != "stripe" and profile != "generic-hmac":
        assert "data.object" not in text
    assert config.key_mapping() is not None


def test_the_matrix_table_matches_the_tested_matrices() -> None:
    catalog = json.loads((ROOT / "tests/scenarios/detection_matrix.json").read_text())["receivers"]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (.*?) \|", README, flags=re.M)}
    assert set(rows) == set(catalog)
    for name, fails in catalog.items():
        for scenario, checks in fails.items():
            assert f"`{scenario}` → {', '.join(checks)}" in rows[name], (name, scenario)
        if not fails:
            assert rows[name] == "— (passes)", name



@pytest.mark.parametrize("group", ["github_receivers", "provider_receivers", "go_receivers"])
def test_the_provider_matrix_tables_match_the_tested_matrices(group: str) -> None:
    """The README's rows of the GitHub, Mercado Pago/Paddle/Shopify and Go receivers say what
    the detection matrix's rows of that group expect, receiver by receiver (a `race_dependent`
    scenario's checks followed by "(some, by timing)")."""
    rows = {m.group(1).removesuffix(".js"): m.group(2) for m in
            re.finditer(r"^\| `([\w.]+)`(?: \([^|]*\))? \| (.*?) \|$", README, flags=re.M)}
    matrix = json.loads((ROOT / "tests/scenarios/detection_matrix.json").read_text())[group]
    for name, row in matrix.items():
        if name == "_about":
            continue
        assert name in rows, (group, name)
        failures = {**row["failures"], **row.get("race_dependent", {})}
        cells = [f"`{scenario}` → {', '.join(checks)}" + (" (some, by timing)" if scenario in row.get(
            "race_dependent", {}) else "") for scenario, checks in failures.items()]
        assert (set(rows[name].split("; ")) if failures else rows[name]) == (set(cells) if failures else "— (passes)"), (
            group, name)

def test_every_command_the_readme_shows_exists() -> None:
    shown = {m.group(1) for m in re.finditer(r"^hookproof (\w+)", "\n".join(blocks("bash")), flags=re.M)}
    help_text = hookproof("--help").stdout
    for name in shown:
        assert re.search(rf"│ {name}\s", help_text), name


def test_the_test_command_is_what_ci_runs() -> None:
    assert blocks("bash")[1].strip() == "bash .ci/test"
    assert re.search(r"^bash \.ci/test$", (ROOT / ".ci/run").read_text(), flags=re.M)


def assert_checklist_agrees(html: str) -> None:
    """In report.html's go-live checklist, each item's verdict is its evidence's composed:
    FAIL when an evidence pill fails, else UNKNOWN when one is unknown, else PASS; UNTESTED
    instead of PASS while the scenarios that alone can pass it were not run."""
    table = html.split('<table id="checklist">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>\s*<td>(.*?)<span.*?</td>\s*<td><span class=\"badge v-(\w+)\">.*?</span></td>\s*"
                      r"<td><div class=\"evidence\">(.*?)</div></td>", table, flags=re.S)
    assert len(rows) >= 5, table[:2000]
    for title, verdict, evidence in rows:
        pills = set(re.findall(r'class="badge v-(\w+)"', evidence))
        expected = ("untested" if not pills else "fail" if "fail" in pills else
                    "unknown" if "unknown" in pills else "pass")
        if expected == "pass" and "not run" in evidence:  # only the scenarios not run could pass it
            expected = "untested"
        assert verdict == expected, (title, verdict, pills)


def test_the_readme_sequence_keeps_every_run_s_results(tmp_path: Path) -> None:
    """certify, explore, replay, report --history, as the README shows them and in that
    order, in one folder: each run keeps its own folder, none is overwritten or deleted,
    `latest` is the newest, and report --history re-renders certify's run."""
    from tests.hookproof.zoo_apps import config_text

    config = config_text("no_dedupe") + '\n[run]\nseed = 5\nscenarios = ["duplicate-sequential"]\n'
    (tmp_path / "hookproof.toml").write_text(config, encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hookproof", *argv[1:]], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env=env)

    certify = run(command("hookproof certify"))
    assert certify.returncode == 1, certify.stdout + certify.stderr  # no_dedupe duplicates
    reports = tmp_path / "hookproof-reports"
    (certify_dir,) = [p for p in reports.iterdir() if p.name.startswith("certify-")]
    explore = run(command("hookproof explore"))
    assert explore.returncode == 1, explore.stdout + explore.stderr
    (explore_dir,) = [p for p in reports.iterdir() if p.name.startswith("explore-")]
    assert (reports / "latest").resolve() == explore_dir.resolve()
    replay = run(command("hookproof replay"))
    assert replay.returncode == 1 and "finding: duplicated" in replay.stdout, replay.stdout + replay.stderr
    rendered = run(command("hookproof report --history"))
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    assert f"json: {Path('hookproof-reports') / certify_dir.name / 'report.json'}" in rendered.stdout
    files = ("report.json", "junit.xml", "summary.md", "report.html")
    assert all((certify_dir / name).is_file() for name in (*files, "history.sqlite"))
    assert all((explore_dir / name).is_file() for name in (*files, "failing-schedule.json"))
    assert json.loads((certify_dir / "report.json").read_text())["scenarios"][0]["id"] == "duplicate-sequential"
    assert json.loads((explore_dir / "report.json").read_text())["scenarios"][0]["id"] == "explore-state-machine"


def test_out_refuses_another_command_s_results(tmp_path: Path) -> None:
    """--out DIR holding a certify run's results is not overwritten by explore without --force."""
    from tests.hookproof.zoo_apps import config_text

    (tmp_path / "hookproof.toml").write_text(config_text("inbox_sync"), encoding="utf-8")
    out = tmp_path / "ci"
    out.mkdir()
    (out / ".hookproof-run").write_text("certify\n", encoding="utf-8")
    (out / "history.sqlite").write_bytes(b"certify's history")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    refused = subprocess.run([sys.executable, "-m", "hookproof", "explore", "--out", str(out), "--max-examples", "2"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"hookproof: --out: {out} holds the results of a certify run; choose another folder, leave --out out "
        "(each run then gets its own folder under hookproof-reports/) or pass --force to overwrite them"]
    assert (out / "history.sqlite").read_bytes() == b"certify's history"


def test_the_retry_table_is_each_profile_s_schedule() -> None:
    """Attempts per delivery, sender timeout and the longest `send` per copy (every
    attempt's 5 s connect timeout + its sender timeout + 0.1 s), as the README says."""
    import math

    from hookproof.simulator.profiles import PROFILES, get_profile

    rows = {m.group(1): m.groups()[1:] for m in
            re.finditer(r"^\| ([a-z-]+) \| (\d+) \| ([\d.]+) s \| (\d+) s \|$", README, flags=re.M)}
    assert set(rows) == set(PROFILES)
    for name in PROFILES:
        profile = get_profile(name)
        attempts = 1 + len(profile.retry_schedule_s)
        longest = sum(5 + profile.attempt_timeout_s(i + 1) + 0.1 for i in range(attempts))
        assert rows[name] == (str(attempts), f"{profile.sender_timeout_s:g}", str(math.ceil(longest))), name


def _ledger_project(tmp_path: Path, *, broken: bool = False, refunds_fail: bool = False,
                    payload_states: bool = False) -> Path:
    """The README's ledger receiver and its hookproof.toml in `tmp_path`, on a free port
    (`broken`: without the event-id dedupe; `refunds_fail`: answering 500 to a refund;
    `payload_states`: a subscription's status taken from each event instead of the API)."""
    (code,) = re.findall(r"```python ledger\.py\n(.*?)```", README, flags=re.S)
    (toml,) = re.findall(r"```toml hookproof\.toml\n(.*?)```", README, flags=re.S)
    if broken:
        code = code.replace("INSERT OR IGNORE INTO processed", "INSERT OR REPLACE INTO processed")
    if payload_states:
        fetch = '        subscription = stripe_api().subscriptions.retrieve(obj["id"])\n'
        assert fetch in code
        code = code.replace(fetch, "        subscription = obj\n")
    if refunds_fail:
        code = code.replace('    if event["livemode"]:', '    if event["type"] == "charge.refunded":\n'
                            '        return Response(status_code=500)\n    if event["livemode"]:')
        assert "charge.refunded" in code
    port = str(free_port())
    toml = toml.replace("8765", port).replace('command = "python ', f'command = "{sys.executable} ')
    (tmp_path / "ledger.py").write_text(code, encoding="utf-8")
    (tmp_path / "hookproof.toml").write_text(toml, encoding="utf-8")
    return tmp_path / "hookproof.toml"


LEDGER_SCENARIOS = ["duplicate-sequential", "distinct-events-same-object", "mass-redelivery"]


@pytest.mark.slow
@pytest.mark.parametrize("broken", [False, True], ids=["as-written", "without-event-dedupe"])
def test_the_custom_keys_example_certifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: bool) -> None:
    """The README's own-keys example, run as written: the whole catalog passes (its keys,
    balance counter and its two state queries, subscriptions and invoices; the refund scenario
    its keys do not map does not apply, and says so); without the event-id dedupe, only the
    balance shows the double credit, in each scenario that delivers an invoice again."""
    from hookproof.certify import certify
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_ledger_example")
    config = load_config(_ledger_project(tmp_path, broken=broken))
    assert config.observer.state_kinds == {"subscription", "invoice"}
    report = certify(config, scenarios=None if not broken else LEDGER_SCENARIOS, out_dir=tmp_path / "out").report
    failing = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    if not broken:
        assert report.verdict == "pass", [(s.id, s.verdict, s.reason) for s in report.scenarios]
        scenarios = {s.id: s for s in report.scenarios}
        assert scenarios["older-after-newer-redelivery"].reason == (
            "no event of this scenario (charge.refunded) maps to an effect under [business_keys]; map "
            "charge.refunded or list the types the receiver handles in enabled_events")
        stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
        # the subscriptions the ledger fetches; the renewal's subscription and both its invoices
        assert stale["reorder"] == 1 and stale["stale-after-newer"] == 2 and stale["stale-failure-after-success"] == 3
        checks = {c.check_id: c for s in report.scenarios for c in s.checks}
        assert checks["counter"].stats["counters"] >= 1
        return
    assert failing == {"duplicate-sequential": ["counter"], "mass-redelivery": ["counter"]}, \
        [(s.id, s.verdict, s.reason) for s in report.scenarios]
    copies = {"duplicate-sequential": 3, "mass-redelivery": 2}  # each invoice credited once per delivery
    for sid, finding in ((s.id, f) for s in report.scenarios for f in s.findings):
        # the truth added up: the customer's invoices' payments, each once
        assert re.fullmatch(r"counter is (\d+); the provider's truth implies (\d+) \(\+\d+ invoice\.paid evt_\w+"
                            r"(, \+\d+ invoice\.paid evt_\w+)*\)", finding.message), finding.message
        assert finding.key.startswith("cus_") and finding.actual == copies[sid] * finding.expected, (sid, finding)
        # the customer's key names no delivery: the finding names the attempts of the events crediting it
        assert len(finding.attempts) >= copies[sid], (sid, finding)


@pytest.mark.slow
def test_the_example_s_subscription_query_catches_a_status_taken_from_the_event(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's second state query is compared: the ledger keeping each subscription
    event's own status (no fetch, no order) ends on the older state when its events arrive
    in reverse or an old update comes last."""
    from hookproof.certify import certify
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_ledger_example")
    config = load_config(_ledger_project(tmp_path, payload_states=True))
    report = certify(config, scenarios=["reorder", "stale-after-newer"], out_dir=tmp_path / "out").report
    failing = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios}
    assert failing == {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"]}, \
        [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    assert all(f.key.startswith("sub_") for s in report.scenarios for f in s.findings)


def _prices_config(tmp_path: Path, options: str = "") -> Path:
    """The README's state-fields example (prices.toml) in `tmp_path`, on a free port, its
    receiver imported from the repository (`options`: the receiver's ``--option`` flags)."""
    (toml,) = re.findall(r"```toml prices\.toml\n(.*?)```", README, flags=re.S)
    toml = toml.replace("8766", str(free_port())).replace('command = "python ', f'command = "{sys.executable} ')
    toml = toml.replace("--secret whsec_readme_prices_example\"", f"--secret whsec_readme_prices_example{options}\"")
    toml = toml.replace("/healthz\"\n", f'/healthz"\nenv = {{ PYTHONPATH = "{ROOT}" }}\n', 1)
    (tmp_path / "hookproof.toml").write_text(toml, encoding="utf-8")
    return tmp_path / "hookproof.toml"


@pytest.mark.slow
@pytest.mark.parametrize(("options", "failing"), [
    ("", {}),
    (" --option price_arrival_order=1", {"reorder": ["stale"], "stale-after-newer": ["stale"]}),
], ids=["as-written", "price-of-the-last-arrival"])
def test_the_state_fields_example_compares_the_price(tmp_path: Path, options: str,
                                                     failing: dict[str, list[str]]) -> None:
    """The README's prices.toml, run as written, passes the scenarios walking a subscription's
    states; its receiver keeping the price of the last event to arrive fails them on the price."""
    from hookproof.certify import certify
    from hookproof.config import load_config

    config = load_config(_prices_config(tmp_path, options))
    assert config.state_field_map().columns() == {"subscription": ("price",)}
    report = certify(config, scenarios=["reorder", "stale-after-newer"], out_dir=tmp_path / "out").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failing, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    assert all(re.fullmatch(r"final state is canceled, price=price_\w+, the provider's is canceled, "
                            r"price=price_\w+ \(event evt_\w+, customer\.subscription\.deleted, created \d+\)",
                            f.message) for s in report.scenarios for f in s.findings), \
        [f.message for s in report.scenarios for f in s.findings]


@pytest.mark.slow
def test_a_scenario_its_keys_do_not_map_still_fails_on_a_wrong_answer(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Refunds owe the ledger nothing, so their scenario has no effect to compare; a 500 to a
    refund is still a finding (the scenario fails instead of not applying)."""
    from hookproof.certify import certify
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_ledger_example")
    config = load_config(_ledger_project(tmp_path, refunds_fail=True))
    (scenario,) = certify(config, scenarios=["older-after-newer-redelivery"], out_dir=tmp_path / "out").report.scenarios
    assert scenario.verdict == "fail" and {f.check_id for f in scenario.findings} == {"no_server_error"}, \
        (scenario.verdict, scenario.reason)


@pytest.mark.parametrize("receiver", ["inbox_sync", "dedupe_by_body_hash"])  # uvicorn and werkzeug
def test_a_reference_receiver_prints_one_readiness_line(tmp_path: Path, receiver: str) -> None:
    """The first line a reference receiver prints is where it listens, once it does."""
    import urllib.request

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", f"examples.receivers.{receiver}", "--port", str(port),
                             "--secret", "whsec_ready", "--db", f"sqlite:///{tmp_path / 'r.db'}"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line == f"listening on http://127.0.0.1:{port}/webhooks\n"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
            assert answer.status == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_started_receiver_example_is_a_valid_config(monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof.certify import expand_env

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_started")
    (toml,) = re.findall(r"```toml started\.toml\n(.*?)```", README, flags=re.S)
    config = parse_config(toml + '\n[observer]\nkind = "sink"\n', "README.md")
    assert config.target.url == "http://127.0.0.1:{port}/webhooks" and config.target.process is not None
    env = expand_env(config.target.process.env, {"secret": "whsec_readme_started", "api_base": "http://127.0.0.1:7",
                                                 "api_key": "sk_test_x"})
    assert env == {"STRIPE_WEBHOOK_SECRET": "whsec_readme_started", "STRIPE_API_BASE": "http://127.0.0.1:7",
                   "STRIPE_API_KEY": "sk_test_x"}


@pytest.mark.parametrize(("profile", "secret", "rule"), [("github", "gh_readme", 0), ("mercadopago", "mp_readme", 1)])
def test_the_key_rules_example_loads_for_its_provider(tmp_path: Path, profile: str, secret: str, rule: int) -> None:
    """Each of the README's two key rules, in a config of its provider, is a valid mapping."""
    from hookproof.config import load_config

    (toml,) = re.findall(r"```toml keyrules\.toml\n(.*?)```", README, flags=re.S)
    table = toml.split("\n\n")[rule]
    path = tmp_path / "hookproof.toml"
    path.write_text(f'builtin_keys = false\n[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "{profile}"\n'
                    f'secret = "{secret}"\n[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\n'
                    f'effects = "SELECT business_key FROM effects"\n{table}\n', encoding="utf-8")
    mapping = load_config(path).key_mapping()
    assert mapping is not None and len(mapping.conditions) == 1


def test_the_unless_example_loads_and_is_the_note_s(tmp_path: Path) -> None:
    """The README's ``unless`` example loads with its two refused paths, and is the rule
    certify's note gives for the plain license rule (`tests/scenarios/test_key_unless.py`
    certifies a correct receiver under it)."""
    from hookproof.config import load_config
    from tests.scenarios.test_key_unless import UNLESS

    (toml,) = re.findall(r"```toml keyunless\.toml\n(.*?)```", README, flags=re.S)
    assert tomllib.loads(toml)["business_keys"]["payment_intent.succeeded"]["unless"] == tomllib.loads(
        f"unless = {UNLESS}")["unless"]
    path = tmp_path / "hookproof.toml"
    path.write_text('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "stripe"\nsecret = "whsec_x"\n'
                    '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
                    + toml, encoding="utf-8")
    mapping = load_config(path).key_mapping()
    assert mapping.exclusions == {"payment_intent.succeeded": {
        "data.object.description": ("Subscription creation", "Subscription update"),
        "data.object.metadata.channel": ("checkout",)}}


def test_the_array_of_key_rules_example_is_the_certified_receiver_s(tmp_path: Path) -> None:
    """The README's ``[[business_keys."payment.updated"]]`` example loads, with its two rules in
    order, and is the config `tests/examples/test_mp_key_rules.py` certifies its receiver under."""
    from hookproof.config import load_config
    from hookproof.scenarios.business_keys import Rule
    from tests.examples.mp_credit_chargeback import CONFIG_KEYS

    (toml,) = re.findall(r"```toml keyrulelist\.toml\n(.*?)```", README, flags=re.S)
    assert tomllib.loads(toml) == tomllib.loads(CONFIG_KEYS)
    path = tmp_path / "hookproof.toml"
    path.write_text(toml + '[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "mercadopago"\nsecret = "mp_x"\n'
                    '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n',
                    encoding="utf-8")
    mapping = load_config(path).key_mapping()
    assert mapping.rules("payment.updated") == (Rule("credit:{data.id}", {"fetched.status": ("approved",)}),
                                                Rule("chargeback:{data.id}", {"fetched.status": ("charged_back",)}))


def test_the_mercado_pago_fetch_snippet_reads_a_payment_from_the_provider_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's ``mpfetch.py``, run against the provider API with the installed SDK:
    ``sdk.payment().get(id)`` reaches it, and another seller's payment is answered 404."""
    from hookproof.simulator.server import ServerState, run_server
    from hookproof.simulator.server.state import DEFAULT_API_KEY
    from hookproof.simulator.world import emit_events, new_world

    (code,) = re.findall(r"```python mpfetch\.py\n(.*?)```", README, flags=re.S)
    own, other = new_world("mercadopago", 3), new_world("mercadopago", 4)
    (mine,) = emit_events(own, "payment.created")
    (theirs,) = emit_events(other, "payment.created")
    state = ServerState()
    state.add_world(own)
    state.add_world(other, account="another-seller")
    with run_server(state) as api:
        monkeypatch.setenv("MP_API_BASE", api.url)
        monkeypatch.setenv("MP_ACCESS_TOKEN", DEFAULT_API_KEY)
        scope: dict[str, object] = {}
        exec(compile(code, "mpfetch.py", "exec"), scope)  # noqa: S102  # the README's own snippet
        sdk = scope["sdk"]
        answer = sdk.payment().get(mine.object_id)  # type: ignore[attr-defined]
        refused = sdk.payment().get(theirs.object_id)  # type: ignore[attr-defined]
    assert answer["status"] == 200 and answer["response"]["id"] == int(mine.object_id)
    assert refused["status"] == 404 and refused["response"]["message"] == "Payment not found"


def _profile_table() -> dict[str, tuple[list[str], str, str]]:
    """The README's "What each profile sends" table: profile -> (event names, where the
    shapes come from, what checks them)."""
    section = README.split("### What each profile sends", 1)
    assert len(section) == 2, "the README has no 'What each profile sends' section"
    rows: dict[str, tuple[list[str], str, str]] = {}
    for line in section[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not re.match(r"\| [a-z-]+ \| `", line) or len(cells) != 4:
            continue
        rows[cells[0]] = (re.findall(r"`([^`]+)`", cells[1]), cells[2], cells[3])
    return rows


def test_the_profile_table_lists_each_profile_s_event_types_and_oracle() -> None:
    """Every profile's row names exactly the event types `hookproof events --profile P` prints,
    where their shapes come from, and a test file that checks them against that source."""
    from hookproof.commands.events import event_rows
    from hookproof.simulator.profiles import PROFILES

    rows = _profile_table()
    assert set(rows) == set(PROFILES)
    for name in PROFILES:
        events, shapes, oracle = rows[name]
        assert events == [provider for provider, _ in event_rows(name)], name
        assert shapes and oracle, name
        tests = re.findall(r"`(tests/[^`]+\.py)`", oracle)
        assert tests and all((ROOT / t).is_file() for t in tests), (name, oracle)


def _signing_table() -> dict[str, tuple[list[str], str]]:
    """The README's "How each profile signs" table: profile -> (header names, signature)."""
    section = README.split("### How each profile signs", 1)
    assert len(section) == 2, "the README has no 'How each profile signs' section"
    rows: dict[str, tuple[list[str], str]] = {}
    for line in section[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if re.match(r"\| [a-z-]+ \| `", line) and len(cells) == 3:
            headers = [h for h in re.findall(r"`([^`]+)`", cells[1].split(" (")[0]) if re.fullmatch(r"[A-Za-z0-9-]+", h)]
            rows[cells[0]] = (headers, cells[2])
    return rows


def _signed_delivery(name: str, secret: str) -> tuple["Envelope", dict[str, str]]:
    """A delivery of profile `name`: its envelope and every header it is sent with."""
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world.registry import emit_events, new_world

    profile = get_profile(name)
    world = new_world(profile.world, seed=1)
    event = emit_events(world, next(iter(profile.event_types())))[0]
    envelope = profile.envelope(event)
    return envelope, {**envelope.headers, **profile.sign(envelope, [secret], 1_700_000_000)}


def test_the_signing_table_names_each_profile_s_headers() -> None:
    """Every profile has a row, and each header it names is one its deliveries carry."""
    from hookproof.simulator.profiles import PROFILES

    rows = _signing_table()
    assert set(rows) == set(PROFILES)
    for name in PROFILES:
        secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" if name in ("standard-webhooks", "svix") else "s3cret"
        _envelope, headers = _signed_delivery(name, secret)
        named = rows[name][0]
        assert named and set(named) <= set(headers), (name, named, sorted(headers))


def test_shopify_s_id_is_the_topic_with_the_event_id_as_shopify_dev_says() -> None:
    """shopify.dev's "Webhooks delivery structure": ``X-Shopify-Event-Id`` is "a unique ID shared
    across all deliveries produced by the same merchant action", ``X-Shopify-Webhook-Id`` "a unique
    composite key per delivery". The table quotes both and calls the topic with the Event-Id the
    id, as the Shopify section does, and it is the envelope's id."""
    row = next(line for line in README.split("### How each profile signs", 1)[1].splitlines()
               if line.startswith("| shopify |"))
    assert ('`X-Shopify-Event-Id` ("a unique ID shared across all deliveries produced by the same merchant action"'
            in row and "the id is the topic with it" in row)
    assert '`X-Shopify-Webhook-Id` ("a unique composite key per delivery"' in row
    section = README.split("The shopify profile sends a shop's webhooks", 1)[1].split("\n\n", 1)[0]
    assert "deduplicates on\n`X-Shopify-Topic` with `X-Shopify-Event-Id`" in section
    envelope, headers = _signed_delivery("shopify", "s3cret")
    assert envelope.event_id == f"{headers['X-Shopify-Topic']}:{headers['X-Shopify-Event-Id']}"
    assert headers["X-Shopify-Webhook-Id"] not in envelope.event_id


def test_generic_hmac_signs_as_the_readme_says() -> None:
    """generic-hmac: ``X-Signature`` is the lowercase hex HMAC-SHA256 of the raw body keyed by
    the secret, the id is in ``X-Webhook-Id``, and no timestamp is sent or signed."""
    import hashlib
    import hmac

    headers_named, signature = _signing_table()["generic-hmac"]
    assert headers_named == ["X-Signature", "X-Webhook-Id"]
    assert "lowercase hex HMAC-SHA256 of the raw body" in signature and "no timestamp" in signature
    envelope, headers = _signed_delivery("generic-hmac", "s3cret")
    assert headers["X-Signature"] == hmac.new(b"s3cret", envelope.body, hashlib.sha256).hexdigest()
    assert headers["X-Webhook-Id"] == envelope.event_id
    assert set(headers) == {"Content-Type", "X-Signature", "X-Webhook-Id"}  # no timestamp header


def test_the_lemon_squeezy_signing_example_heads_and_retries_as_the_readme_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's lemonsqueezy.toml: ``X-Signature`` over the raw body, the event's name in
    ``X-Event-Name``, no ``X-Webhook-Id``, four attempts (5 s, 25 s, 125 s apart), only a 200
    counted as received."""
    import hashlib
    import hmac

    from hookproof.simulator.world import emit_events, new_world

    monkeypatch.setenv("LEMONSQUEEZY_SIGNING_SECRET", "s3cret")
    (toml,) = re.findall(r"```toml lemonsqueezy\.toml\n(.*?)```", README, flags=re.S)
    profile = parse_config(toml, "README.md").profile()
    assert profile.retry_schedule_s == (5.0, 25.0, 125.0)
    assert [s for s in range(100, 600) if profile.is_success(s)] == [200]
    event = emit_events(new_world(profile.world, 1), "order_created")[0]
    envelope = profile.envelope(event)
    headers = {**envelope.headers, **profile.sign(envelope, ["s3cret"], 1_700_000_000)}
    assert set(headers) == {"Content-Type", "X-Signature", "X-Event-Name"}
    assert headers["X-Event-Name"] == json.loads(envelope.body)["meta"]["event_name"] == "order_created"
    assert headers["X-Signature"] == hmac.new(b"s3cret", envelope.body, hashlib.sha256).hexdigest()
    world = new_world(profile.world, 2)  # a renewal names a subscription sent before it, which names its order
    renewal = world.emit("subscription_payment_success")
    assert [e.type for e in world.events] == ["order_created", "subscription_created", "subscription_payment_success"]
    order, subscription = (e.extra["body"]["data"] for e in world.events[:2])
    assert renewal.extra["body"]["data"]["attributes"]["subscription_id"] == int(subscription["id"])
    assert subscription["attributes"]["order_id"] == int(order["id"])
    assert order["attributes"]["first_order_item"]["order_id"] == int(order["id"])


def test_the_readmes_polar_config_signs_as_polar_sdk_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Polar example: ``secret_encoding = "raw"`` keys the HMAC with the secret as
    given, which polar-sdk 0.32.0's ``validate_event`` (``standardwebhooks.Webhook`` over the
    base64 of the secret string) verifies."""
    import base64

    import standardwebhooks

    from hookproof.simulator.world import emit_events, new_world

    secret = "polar_whs_readmeExampleSecret"
    monkeypatch.setenv("POLAR_WEBHOOK_SECRET", secret)
    (toml,) = re.findall(r"```toml polar\.toml\n(.*?)```", README, flags=re.S)
    profile = parse_config(toml, "README.md").profile()
    event = emit_events(new_world(profile.world, 1), profile.default_event)[0]
    envelope = profile.envelope(event)
    headers = {**envelope.headers, **profile.sign(envelope, [secret], int(time.time()))}
    verified = standardwebhooks.Webhook(base64.b64encode(secret.encode()).decode()).verify(envelope.body, headers)
    assert verified["type"] == "payment.succeeded"


def test_the_run_folders_the_readme_names_are_where_runs_go() -> None:
    """The demo writes under hookproof-reports/demo-<UTC time>/<receiver>/ (rundirs), not a
    folder of its own: every run folder the README names is one `rundirs` makes."""
    from hookproof.rundirs import DEFAULT_ROOT

    text = " ".join(README.split())
    assert "hookproof-demo/" not in text
    assert f"`{DEFAULT_ROOT}/demo-<UTC time>/<receiver>/`" in text
    named = set(re.findall(r"hookproof-[a-z]+/", text))
    assert named == {f"{DEFAULT_ROOT}/"}, named


def test_the_default_stripe_api_version_the_readme_names_is_hookproof_s() -> None:
    """The default is fixed in hookproof (stripe-python 15.3.0's pin), not the installed SDK's."""
    from hookproof.simulator.events import LATEST_API_VERSION

    text = " ".join(README.split())
    assert f"(default `{LATEST_API_VERSION}`, fixed in hookproof: the version stripe-python 15.3.0 pins" in text
    assert f"(default: `{LATEST_API_VERSION}`, a fixed version, stripe-python 15.3.0's pin" in text


def test_the_refund_counter_example_subtracts_each_refund_s_own_amount(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's refunds.toml, added to the ledger's config: a refund of 500 after one of 300
    (``amount_refunded`` 800) moves the customer's counter by -500."""
    from hookproof.config import load_config
    from hookproof.simulator.world import World

    (toml,) = re.findall(r"```toml refunds\.toml\n(.*?)```", README, flags=re.S)
    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_ledger_example")
    path = _ledger_project(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + "\n" + toml, encoding="utf-8")
    mapping = load_config(path).key_mapping()
    w = World(3)
    customer = w.event(w.create_customer()).object_id
    charge = w.get(w.pay(customer, amount=2000))["latest_charge"]
    w.refund(charge, 300)
    w.refund(charge, 500)
    refunds = [e for e in w.events if e.type == "charge.refunded"]
    assert [mapping.counter_of(e) for e in refunds] == [(customer, -300), (customer, -500)]


@pytest.mark.slow
def test_the_paddle_config_certifies_the_reference_receiver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's paddle.toml, as written (a free port, this interpreter, the receiver imported
    from the repository): three scenarios pass, `reorder` comparing the subscription query; the
    receiver's effects are Paddle's five default keys."""
    from hookproof.certify import certify
    from hookproof.config import load_config

    (toml,) = re.findall(r"```toml paddle\.toml\n(.*?)```", README, flags=re.S)
    port = str(free_port())
    toml = toml.replace("8767", port).replace('command = "python ', f'command = "{sys.executable} ')
    toml = toml.replace("env = { PORT", f'env = {{ PYTHONPATH = "{ROOT}", PORT', 1)
    (tmp_path / "paddle.toml").write_text(toml, encoding="utf-8")
    monkeypatch.setenv("PADDLE_WEBHOOK_SECRET", "pdl_ntfset_01hv8x29kz0t586xy6zn1a62ny_readme0000000000000000000000000")
    config = load_config(tmp_path / "paddle.toml")
    assert config.observer.state_kinds == {"subscription", "adjustment", "customer"}
    report = certify(config, scenarios=["duplicate-sequential", "reorder", "older-after-newer-redelivery"],
                     out_dir=tmp_path / "out").report
    assert [(s.id, s.verdict) for s in report.scenarios] == [
        ("duplicate-sequential", "pass"), ("reorder", "pass"), ("older-after-newer-redelivery", "pass")], \
        [(s.id, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    stale = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    assert stale == {"reorder": 1}  # its subscription, walked through every status in reverse
    with sqlite3.connect(tmp_path / "paddle.sqlite") as db:  # the receiver's, beside the config
        prefixes = {key.split(":")[0] for (key,) in db.execute("SELECT business_key FROM effects")}
    assert prefixes == {"fulfil", "provision", "dunning", "deprovision", "refund"}
    # the paragraph after it: a team's own activation key and a counter, over fields Paddle sends
    (advice,) = re.findall(r"`hookproof.toml` above does\.", README)
    own = toml.replace('effects = "SELECT', 'counter = "SELECT customer AS key, total AS amount FROM totals"\n'
                       'effects = "SELECT', 1) + (
        '\n[business_keys]\n"subscription.activated" = "provision:{data.id}:{data.current_billing_period.starts_at}"\n'
        '\n[counters."transaction.completed"]\nkey = "{data.customer_id}"\namount = "data.details.totals.grand_total"\n')
    (tmp_path / "own.toml").write_text(own, encoding="utf-8")
    keyed = load_config(tmp_path / "own.toml")  # its templates checked on a sample story's events
    assert list(keyed.business_keys) == ["subscription.activated"] and list(keyed.counters) == ["transaction.completed"]
