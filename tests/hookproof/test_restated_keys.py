"""A `[business_keys]` line restating hookproof's built-in money key gets a note.

``"refunds/create" = "refund:{id}"`` (the example `hookproof init --profile shopify` writes) makes
the same key as the built-in one, but as a key of the team's own its amounts are not compared:
a receiver recording refunds without tax passed certify with the line and failed without it.
"""

from __future__ import annotations

from pathlib import Path

from hookproof.config import load_config
from hookproof.unsent import restated_keys_note

BASE = """
[target]
url = "http://127.0.0.1:9/webhooks"
profile = "shopify"
secret = "shpss_restated_0123456789"
"""


def _note(tmp_path: Path, keys: str, top: str = "") -> str | None:
    path = tmp_path / "hookproof.toml"
    path.write_text(top + BASE + keys, encoding="utf-8")
    return restated_keys_note(load_config(path))


def test_the_built_in_refund_key_restated_is_named(tmp_path: Path) -> None:
    note = _note(tmp_path, '[business_keys]\n"refunds/create" = "refund:{id}"\n"orders/paid" = "fulfil:{id}"\n')
    assert note == ('business_keys "refunds/create" = "refund:{id}" restates hookproof\'s built-in key: as keys of '
                    "your own, their effects' amounts are not compared (a receiver recording a wrong amount passes); "
                    "leave it out to keep the amounts compared, or declare a [counters] entry")


def test_a_key_of_the_team_s_own_shape_gets_no_note(tmp_path: Path) -> None:
    assert _note(tmp_path, '[business_keys]\n"refunds/create" = "refund:{order_id}:{id}"\n') is None
    assert _note(tmp_path, '[business_keys]\n"refunds/create" = "refund:{id}"\n', "builtin_keys = false\n") is None
    assert _note(tmp_path, "") is None
