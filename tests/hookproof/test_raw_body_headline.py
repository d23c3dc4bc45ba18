"""A receiver verifying a re-serialised body is named in the headline, even when most pass.

A new user's Express twin verified Shopify's HMAC over ``JSON.stringify(req.body)``. Shopify's
compact bodies came back byte for byte, except those carrying a number such as ``"subtotal":
18.0`` (``JSON.stringify`` writes 18): its refunds and refunded orders were refused with 401
while the rest were acknowledged, so no "every delivery refused" headline fired, and its
findings said only "refused 401". When ``reserialized-body`` failed and valid events elsewhere
were refused while others were acknowledged, the headline now names the re-serialised body.
The receivers here verify in process, as such a twin does (numbers written as JavaScript
writes them) and as the correct one does (the raw bytes).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from typer.testing import CliRunner

from hookproof.cli import app as cli
from hookproof.headline import HEADLINE_PREFIX

SECRET = "shpss_raw_body_headline_0123456789"


def _js_number(text: str) -> float | int:
    """A JSON number as ``JSON.parse`` then ``JSON.stringify`` leave it: 18.0 becomes 18."""
    value = float(text)
    return int(value) if value.is_integer() else value


def _receiver(stringify: bool) -> Starlette:
    async def hook(request: Request) -> JSONResponse:
        raw = await request.body()
        signed = (json.dumps(json.loads(raw, parse_float=_js_number), separators=(",", ":"), ensure_ascii=False)
                  .encode() if stringify else raw)
        digest = base64.b64encode(hmac.new(SECRET.encode(), signed, hashlib.sha256).digest()).decode()
        if not hmac.compare_digest(digest, request.headers.get("x-shopify-hmac-sha256", "")):
            return JSONResponse({"error": "invalid_hmac"}, status_code=401)
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/webhooks", hook, methods=["POST"])])


stringified = _receiver(stringify=True)
raw_bytes = _receiver(stringify=False)


def no_effects() -> dict[str, list[object]]:
    return {"effects": [], "states": []}


def _certify(tmp_path: Path, app: str) -> dict[str, Any]:
    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\napp = "{__name__}:{app}"\nprofile = "shopify"\nsecret = "{SECRET}"\n\n'
                      f'[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n\n[run]\nseed = 5\n\n'
                      '[settle]\nstall_s = 0.5\n', encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["certify", "-c", str(config), "-s", "duplicate-sequential", "-s",
                                      "reserialized-body", "--out", str(out)])
    assert result.exit_code == 1, result.output  # applies nothing: lost
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_a_stringified_body_is_named_when_only_some_deliveries_are_refused(tmp_path: Path) -> None:
    report = _certify(tmp_path, "stringified")
    by_id = {s["id"]: s for s in report["scenarios"]}
    valid = [a for a in by_id["duplicate-sequential"]["attempts"] if a["valid"]]
    refused = {a["event_type"] for a in valid if a["status"] == 401}
    assert refused and {a["status"] for a in valid} == {200, 401}  # some refused, the others acknowledged
    assert "refunds/create" in refused and "orders/create" not in refused
    headline = report["notes"][0]
    assert headline.startswith(f"{HEADLINE_PREFIX}the receiver verifies the signature over a body it parsed and "
                               "serialised again, not the bytes received: it refused reserialized-body's valid "
                               "delivery, and "), headline
    assert "refunds/create" in headline and headline.endswith(
        "verify the raw body (express.raw, request.get_data(), await request.body())")


def test_the_raw_body_gets_no_such_headline(tmp_path: Path) -> None:
    report = _certify(tmp_path, "raw_bytes")
    assert not any("parsed and serialised again" in n for n in report["notes"])
    assert {a["status"] for s in report["scenarios"] for a in s["attempts"] if a["valid"]} == {200}
