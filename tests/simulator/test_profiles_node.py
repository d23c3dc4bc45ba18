"""GitHub, Shopify and Stripe signatures against their official Node verifiers.

Installs ``@octokit/webhooks-methods``, ``@shopify/shopify-api`` and ``stripe`` (pinned) into a
temporary directory with npm, then runs one Node script over every case. Skipped when
``node``/``npm`` are missing or the install fails (no registry), unless
``HOOKPROOF_REQUIRE_NODE=1`` is set, as in CI, where a failed install is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest

from hookproof.simulator.profiles import SignedRequest, get_profile
from tests.simulator.test_profiles import sample_event
from tests.support import require_service

pytestmark = pytest.mark.slow

PACKAGES = ["@octokit/webhooks-methods@6.0.0", "@shopify/shopify-api@13.1.0", "stripe@23.2.0"]

SCRIPT = r"""
import { verify } from "@octokit/webhooks-methods";
import "@shopify/shopify-api/adapters/node";
import { shopifyApi, ApiVersion } from "@shopify/shopify-api";
import Stripe from "stripe";
import { readFileSync } from "node:fs";

const cases = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const c of cases) {
  if (c.kind === "stripe") {
    try {
      const event = new Stripe("sk_test_hookproof").webhooks.constructEvent(c.body, c.signature, c.secret);
      results.push({ valid: true, id: event.id });
    } catch (e) {
      results.push({ valid: false, reason: e.message });
    }
    continue;
  }
  if (c.kind === "github") {
    results.push({ valid: await verify(c.secret, c.body, c.signature) });
    continue;
  }
  const shopify = shopifyApi({
    apiKey: "hookproof", apiSecretKey: c.secret, scopes: [], hostName: "localhost",
    apiVersion: ApiVersion.January26, isEmbeddedApp: false, logger: { level: 0, log: () => {} },
  });
  const headers = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const r = await shopify.webhooks.validate({ rawBody: c.body, rawRequest: { headers, method: "POST", url: "/webhooks" } });
  results.push({ valid: r.valid, reason: r.reason ?? null, topic: r.topic ?? null, domain: r.domain ?? null,
                 apiVersion: r.apiVersion ?? null, webhookId: r.webhookId ?? null, eventId: r.eventId ?? null });
}
process.stdout.write(JSON.stringify(results));
"""


def _unavailable(reason: str) -> NoReturn:
    """Node or its packages are missing: fail under CI (it installs them), skip elsewhere."""
    if os.environ.get("HOOKPROOF_REQUIRE_NODE") == "1":
        pytest.fail(reason)
    require_service("node and the official GitHub/Shopify verifiers", reason)


@pytest.fixture(scope="module")
def node_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _unavailable("node and npm are needed for the official GitHub/Shopify verifiers")
    directory = tmp_path_factory.mktemp("node-verifiers")
    (directory / "package.json").write_text('{"name": "hookproof-verifiers", "private": true, "type": "module"}')
    (directory / "check.mjs").write_text(SCRIPT)
    try:
        subprocess.run([str(npm), "install", "--no-audit", "--no-fund", *PACKAGES], cwd=directory,
                       check=True, capture_output=True, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"npm install failed: {exc}")
    return directory


def run_node(directory: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = subprocess.run(["node", "check.mjs"], cwd=directory, input=json.dumps(cases),
                          capture_output=True, text=True, timeout=60, check=True)
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def github_case(request: SignedRequest, secret: str, body: bytes | None = None) -> dict[str, Any]:
    return {"kind": "github", "secret": secret, "body": (body or request.body).decode(),
            "signature": request.headers["X-Hub-Signature-256"]}


def shopify_case(request: SignedRequest, secret: str, body: bytes | None = None) -> dict[str, Any]:
    return {"kind": "shopify", "secret": secret, "body": (body or request.body).decode(), "headers": dict(request.headers)}


def test_stripe_node_accepts_test_mode_headers_with_the_fake_v0(node_dir: Path) -> None:
    """stripe-node's ``webhooks.constructEvent`` over hookproof's test-mode headers (one secret,
    and two during a roll, each followed by the fake ``v0``) and a live-mode one (no ``v0``)."""
    import time

    from hookproof.simulator.world import World

    stripe = get_profile("stripe")
    now = int(time.time())
    test_event, live_event = World(3).lifecycle()[1], World(3, livemode=True).lifecycle()[1]
    single = stripe.request(stripe.envelope(test_event), ["whsec_one"], now)
    rolled = stripe.request(stripe.envelope(test_event), ["whsec_old", "whsec_new"], now)
    live = stripe.request(stripe.envelope(live_event), ["whsec_one"], now)
    assert [h.headers["Stripe-Signature"].split(",")[-1][:3] for h in (single, rolled, live)] == ["v0=", "v0=", "v1="]
    cases = [{"kind": "stripe", "secret": secret, "body": request.body.decode(),
              "signature": request.headers["Stripe-Signature"]}
             for request, secret in ((single, "whsec_one"), (rolled, "whsec_new"), (live, "whsec_one"),
                                     (single, "whsec_wrong"))]
    results = run_node(node_dir, cases)
    assert [r["valid"] for r in results] == [True, True, True, False]
    assert results[0]["id"] == test_event.id and results[2]["id"] == live_event.id


def test_official_node_verifiers(node_dir: Path) -> None:
    github, shopify = get_profile("github"), get_profile("shopify")
    gh_request = github.request(github.envelope(sample_event(github)), ["gh-s3cret"], 0)
    sh_request = shopify.request(shopify.envelope(sample_event(shopify)), ["shpss_s3cret"], 0)  # orders/paid
    gh_tampered = gh_request.body.replace(b'"number":1', b'"number":2', 1)
    sh_tampered = sh_request.body.replace(b'"financial_status":"paid"', b'"financial_status":"pending"', 1)
    assert sh_tampered != sh_request.body
    docs_vector = {"kind": "github", "secret": "It's a Secret to Everybody", "body": "Hello, World!",
                   "signature": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"}
    cases = [
        github_case(gh_request, "gh-s3cret"),
        github_case(gh_request, "wrong"),
        github_case(gh_request, "gh-s3cret", gh_tampered),
        docs_vector,
        shopify_case(sh_request, "shpss_s3cret"),
        shopify_case(sh_request, "wrong"),
        shopify_case(sh_request, "shpss_s3cret", sh_tampered),
    ]
    results = run_node(node_dir, cases)
    assert [r["valid"] for r in results] == [True, False, False, True, True, False, False]
    accepted = results[4]
    assert accepted == {
        "valid": True,
        "reason": None,
        "topic": "ORDERS_PAID",
        "domain": sh_request.headers["X-Shopify-Shop-Domain"],
        "apiVersion": "2024-10",
        "webhookId": sh_request.headers["X-Shopify-Webhook-Id"],
        "eventId": sh_request.headers["X-Shopify-Event-Id"],
    }
    assert results[5]["reason"] == results[6]["reason"] == "invalid_hmac"
