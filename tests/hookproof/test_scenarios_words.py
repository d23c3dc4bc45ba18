"""``hookproof scenarios --profile P`` titles the catalog as P's runs' reports do, so a
scenario found in a report is found in the listing under the same title."""

from __future__ import annotations

from typer.testing import CliRunner

from hookproof.cli import app
from hookproof.scenarios.catalog import CATALOG


def test_the_listing_in_a_provider_s_words_matches_its_reports() -> None:
    plain = CliRunner().invoke(app, ["scenarios"], env={"COLUMNS": "240"})
    worded = CliRunner().invoke(app, ["scenarios", "--profile", "mercadopago"], env={"COLUMNS": "240"})
    assert plain.exit_code == worded.exit_code == 0
    assert CATALOG["stale-after-newer"].title in plain.stdout
    assert "An old notification after the refund" not in plain.stdout
    assert "An old notification after the refund" in worded.stdout
    assert "A slow fetch overtaken by a newer notification" in worded.stdout


def test_an_unknown_profile_is_one_line() -> None:
    result = CliRunner().invoke(app, ["scenarios", "--profile", "nope"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "hookproof: --profile: unknown profile 'nope' (known: generic-hmac, github, mercadopago, paddle, shopify, "
        "standard-webhooks, stripe, svix)"]
