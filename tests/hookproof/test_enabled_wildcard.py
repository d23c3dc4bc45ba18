"""``target.enabled_events = ["*"]``: every event, as a Stripe endpoint or a GitHub webhook
created with the wildcard is sent (docs.stripe.com/api/webhook_endpoints, docs.github.com
"Creating webhooks"); another profile's endpoints list their types, so there it is one
config error with its line, as is the wildcard listed beside types."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError

BASE = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "{profile}"\nsecret = "{secret}"\n'
        'enabled_events = {events}\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n')
SECRETS = {"stripe": "whsec_x", "github": "gh_secret", "svix": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
           "shopify": "shpss_x"}


def write(tmp_path: Path, profile: str, events: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(BASE.format(profile=profile, secret=SECRETS[profile], events=events), encoding="utf-8")
    return path


@pytest.mark.parametrize("profile", ["stripe", "github"])
def test_the_wildcard_enables_every_event_the_profile_sends(tmp_path: Path, profile: str) -> None:
    config = load_config(write(tmp_path, profile, '["*"]'))
    assert config.target.enabled_events is None
    assert config.target.stripe_types() is None
    rows = json.loads(subprocess.run([sys.executable, "-m", "hookproof", "events", "--json"], capture_output=True,
                                     text=True, timeout=120, cwd=tmp_path, check=True).stdout)
    # none marked "not sent" but a Connect endpoint's own (`stripe.CONNECT_EVENT_TYPES`: not one here)
    assert rows and all(row.get("sent", True) for row in rows if row["event"] != "account.updated")
    assert [row.get("sent") for row in rows if row["event"] == "account.updated"] == ([False] if profile == "stripe"
                                                                                       else [])


@pytest.mark.parametrize(("profile", "events", "message"), [
    ("svix", '["*"]', "enabled_events: '*' enables every event on Stripe and GitHub endpoints; a svix endpoint "
                      "lists its types (leave enabled_events out: every type)"),
    ("shopify", '["*"]', "enabled_events: '*' enables every event on Stripe and GitHub endpoints; a shopify "
                         "endpoint lists its types"),
    ("stripe", '["*", "invoice.paid"]', "enabled_events: '*' already enables every event: list it alone"),
])
def test_the_wildcard_elsewhere_is_one_config_error_with_its_line(tmp_path: Path, profile: str, events: str,
                                                                 message: str) -> None:
    path = write(tmp_path, profile, events)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}:5: target.{message}"), str(caught.value)
