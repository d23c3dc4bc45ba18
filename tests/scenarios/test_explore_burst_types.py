"""explore's burst race over every effectful type the receiver is sent, one type a run in turn.

A Shopify app's team declared a key for ``orders/create``: the burst race raced its first
effectful event alone (``orders/create``), so a race confined to ``orders/paid`` (a fulfilment
checked for, then inserted) passed explore 0/20, though without that key (``orders/paid`` first)
it was found 20/20. `burst_hit_rate` now rotates over the effectful types the world's simplest
operations make (`bursts._effectful`), the first run's type the one it raced before, and says
which it raced, with each type's hits (`HitRate.per_type`).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hookproof.config import Config, TargetConfig
from hookproof.scenarios.bursts import HitRate, burst_hit_rate
from hookproof.scenarios.statemachine import ExploreTarget, Prepared
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState
from tests.examples.test_provider_receivers import config_of
from tests.scenarios.test_explore_worlds import SECRETS, sqlite_observer

#: The Shopify world's effectful types with a key declared for ``orders/create``, in the order the
#: world's operations first make them (a new customer, a checkout, the uninstall, then the
#: checkout's order refunded and cancelled): one a run, in turn.
KEYED_ORDER_TYPES = ["customers/create", "orders/create", "orders/paid", "refunds/create", "orders/cancelled",
                     "app/uninstalled"]  # the uninstall last: the shop's orders change no more after it


def shop_target(tmp_path: Path, keys: dict[str, str] | None) -> ExploreTarget:
    """In-process `shopify_app` on fresh SQLite files, under `keys` (``[business_keys]``)."""
    from examples.receivers.shopify_app import create_app

    count = itertools.count()
    secret = SECRETS["shopify"]

    def open_() -> Prepared:
        db = tmp_path / f"shop-{next(count)}.sqlite"
        return Prepared(Target(app=create_app(str(db), secret)), sqlite_observer(db, "shopify"))

    mapping = None
    if keys is not None:
        mapping = Config(target=TargetConfig(url="http://127.0.0.1:9/webhooks", profile="shopify", secret=secret),
                         business_keys=keys).key_mapping()
    return ExploreTarget(profile=get_profile("shopify"), secrets=(secret,), open=open_, keys=mapping,
                         describe="in-process shopify_app", settle_window_s=0.02)


def test_the_burst_race_rotates_over_every_effectful_type(tmp_path: Path) -> None:
    hit = burst_hit_rate(shop_target(tmp_path, {"orders/create": "order:{id}"}), repeats=8, copies=2,
                         seed=3, provider_state=ServerState())
    assert hit.hits == 0 and hit.attempts == hit.acked == 16
    assert hit.types == KEYED_ORDER_TYPES + KEYED_ORDER_TYPES[:2]
    assert hit.raced == KEYED_ORDER_TYPES
    assert hit.per_type() == ("customers/create 0/2, orders/create 0/2, orders/paid 0/1, refunds/create 0/1, "
                              "orders/cancelled 0/1, app/uninstalled 0/1")
    # without the team's keys, hookproof's own: orders/create owes nothing, orders/paid is raced second
    plain = burst_hit_rate(shop_target(tmp_path, None), repeats=5, copies=2, seed=3, provider_state=ServerState())
    assert plain.types == [t for t in KEYED_ORDER_TYPES if t != "orders/create"]


def test_the_per_type_words_count_each_types_runs_and_hits() -> None:
    hit = HitRate(3, 6, 8, seeds=[4, 6, 8], keys=["fulfil:1"] * 3, attempts=48, acked=48,
                  types=["orders/create", "orders/paid"] * 3, hit_types=["orders/paid"] * 3)
    assert hit.raced == ["orders/create", "orders/paid"]
    assert hit.per_type() == "orders/create 0/3, orders/paid 3/3"
    from hookproof.commands.explore import burst_report

    report = burst_report(hit)
    assert report.description.endswith("Each run races one effectful type in turn: orders/create 0/3, "
                                       "orders/paid 3/3 (runs double-applied/runs).")


REPEATS = 4


@pytest.mark.slow
def test_a_race_confined_to_orders_paid_is_found_beside_a_keyed_orders_create(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin checks for an ``orders/paid`` event, waits 40 ms and fulfils: with a key for
    ``orders/create`` the race used to burst ``orders/create`` alone (0/20); each ``orders/paid``
    run now fulfils more than once, and the output names the types raced."""
    from hookproof.commands.explore import run_explore

    cfg = config_of("shopify_app", "tests.examples.shopify_paid_check_then_insert", tmp_path)
    cfg = cfg.model_copy(update={"business_keys": {"orders/create": "order:{id}"}})
    run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=3, seed=3, repeats=REPEATS)
    hit = run.hit_rate
    assert hit is not None and hit.types == KEYED_ORDER_TYPES[:REPEATS]
    paid = [r for r, t in enumerate(hit.types) if t == "orders/paid"]
    assert paid and hit.hit_types == ["orders/paid"] * len(paid), (hit.types, hit.hit_types)
    assert hit.hits == len(paid) and all(key.startswith("fulfil:") for key in hit.keys), hit.keys
    line = next(x for x in run.lines if x.startswith("burst race: "))
    assert line.endswith(f"; raced (runs double-applied/runs) {hit.per_type()}"), line
    assert f"orders/paid {len(paid)}/{len(paid)}" in line
    (burst,) = [s for s in run.report.scenarios if s.id == "explore-burst-race"]
    assert burst.verdict == "fail"


def test_the_bursts_sent_types_are_recorded(tmp_path: Path) -> None:
    hit = burst_hit_rate(shop_target(tmp_path, None), repeats=3, copies=2, seed=3, provider_state=ServerState())
    assert hit.raced == ["customers/create", "orders/paid", "refunds/create"]
    assert hit.sent_types == set(hit.raced)  # the raced events' copies, all valid


def test_the_never_sent_note_leaves_out_the_types_the_bursts_sent(tmp_path: Path) -> None:
    """explore's note of the enabled types it never sent counted the state machine's attempts
    alone: a type only the burst race sent (``orders/paid`` here) was named as never sent, beside
    the burst line saying it was raced."""
    from hookproof.commands.explore import run_explore

    cfg = config_of("shopify_app", "examples.receivers.shopify_app", tmp_path)
    run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=1, seed=3, repeats=3)
    hit = run.hit_rate
    assert hit is not None and hit.raced == ["customers/create", "orders/paid", "refunds/create"]
    assert "orders/paid" not in run.result.sent_types  # the state machine's one example never sent it
    note = next(n for n in run.report.notes if "this explore never sent" in n)
    never = note.split(": its verdict")[0].rsplit(": ", 1)[1].split(", ")
    assert "orders/cancelled" in never and [t for t in never if t in hit.sent_types | run.result.sent_types] == []
    assert "orders/paid" not in never
