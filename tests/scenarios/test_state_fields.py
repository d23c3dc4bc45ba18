"""A state beyond its status: ``[observer.state_fields]`` (`scenarios.state_fields`).

The observer combines a state row's declared columns with its status; the events carry the
same combination read from their body at each version, so ``regressed`` and ``stale``
compare status and fields together. Bad declarations are one config error with the line
naming the field; without any, every state is its status, as before.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.scenarios.errors import ObserverError
from hookproof.scenarios.observers import SqlObserver
from hookproof.scenarios.state_fields import StateFields, combined, field_text, normal_path, stated
from hookproof.scenarios.world_ops import ACTIONS, ops_for
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.clock import servable_states
from hookproof.simulator.world import World

PRICE = "data.object.items.data.0.price.id"
BASE = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
        'state = "SELECT object_id, status, price FROM subs"\n')


def priced_world() -> tuple[World, str, list[str]]:
    """A subscription created, moved to a second price, then canceled; and the prices' ids."""
    w = World(5)
    cus = w.event(w.create_customer()).object_id
    sub = w.subscribe(cus)
    first = w.get(sub)["items"]["data"][0]["price"]["id"]
    second = w.create_price(currency=w.get(cus)["currency"])
    w.change_plan(sub, second)
    w.cancel(sub)
    return w, sub, [first, second]


def fields() -> StateFields:
    return StateFields({"subscription": (("price", PRICE),)}, get_profile("stripe"))


def test_a_combined_state_is_the_status_then_each_field() -> None:
    assert combined("active", []) == "active"
    assert combined("active", [("price", "price_1"), ("quantity", 2), ("note", None)]) == \
        "active, price=price_1, quantity=2, note=null"
    assert [field_text(v) for v in ("x", True, 3, None, {"b": 1, "a": 2})] == ["x", "true", "3", "null",
                                                                              '{"a":2,"b":1}']
    assert normal_path("data.object.items.data[0].price.id") == PRICE


def test_the_events_carry_their_combined_state_and_the_servable_versions_too() -> None:
    w, sub, (first, second) = priced_world()
    subs = [e for e in w.events if e.object_id == sub]
    got = [(e.version, e.status) for e in stated(subs, fields())]
    assert got == [(1, f"active, price={first}"), (2, f"active, price={first}"),  # created; first invoice paid
                   (3, f"active, price={second}"), (4, f"canceled, price={second}")]
    assert stated(w.events, None) == tuple(w.events)  # no fields: the events as they are
    others = [e for e in stated(w.events, fields()) if e.object_id != sub]
    assert others == [e for e in w.events if e.object_id != sub]  # other kinds keep their status
    servable = fields().servable(w, servable_states(w, [sub]))
    assert servable == {sub: tuple(got)}


def test_the_sql_observer_combines_the_declared_columns_and_names_a_missing_one(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE effects (business_key TEXT)")
        conn.execute("CREATE TABLE subs (object_id TEXT, status TEXT, price TEXT)")
        conn.execute("INSERT INTO subs VALUES ('sub_1', 'active', 'price_2'), ('sub_2', 'canceled', NULL)")
    url = f"sqlite:///{db}"
    obs = SqlObserver(url, "SELECT business_key FROM effects", "SELECT object_id, status, price FROM subs",
                      state_fields={"subscription": ("price",)}).observe()
    assert [(s.object_id, s.status) for s in obs.states] == [("sub_1", "active, price=price_2"),
                                                              ("sub_2", "canceled, price=null")]
    plain = SqlObserver(url, "SELECT business_key FROM effects", "SELECT object_id, status, price FROM subs").observe()
    assert [s.status for s in plain.states] == ["active", "canceled"]  # no fields declared: the status alone
    with pytest.raises(ObserverError, match=r"the state query must return column\(s\) object_id, status, price; "
                                            r"missing price"):
        SqlObserver(url, "SELECT business_key FROM effects", "SELECT object_id, status FROM subs",
                    state_fields={"subscription": ("price",)}).observe()


def test_a_declared_field_is_read_from_the_config(tmp_path: Path) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(BASE + '[observer.state_fields]\nsubscription = { price = "data.object.items.data[0].price.id" }\n',
                    encoding="utf-8")
    config = load_config(path)
    assert config.observer.state_fields == {"subscription": {"price": PRICE}}
    assert config.state_field_map().columns() == {"subscription": ("price",)}
    path.write_text(BASE, encoding="utf-8")
    assert load_config(path).state_field_map() is None


@pytest.mark.parametrize(("extra", "line", "message"), [
    ('[observer.state_fields]\nsubscription = { price = "data.object.items.data.0.prize.id" }\n', 10,
     "observer.state_fields.subscription: data.object.items.data.0.prize.id: the event has no field "
     "data.object.items.data.0.prize.id (data.object.items.data.0 has no 'prize')"),
    ('[observer.state_fields]\nsubscription = { status = "data.object.status" }\n', 10,
     "observer.state_fields.subscription: status: not a column name for a state field"),
    ('[observer.state_fields]\ninvoice = { total = "data.object.total" }\n', 10,
     "observer.state_fields.invoice: no state query reads invoice objects (give states.invoice first)"),
])
def test_a_bad_state_field_is_one_config_error_naming_it(tmp_path: Path, extra: str, line: int, message: str) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(BASE + extra, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}:{line}: {message}"), str(caught.value)


def test_explore_changes_plans_only_when_a_subscription_s_state_has_fields() -> None:
    assert ops_for("billing").actions == ACTIONS and "change_plan" not in ops_for("billing").moves
    priced = ops_for("billing", priced=True)
    assert priced.actions == (*ACTIONS, "change_plan") and priced.moves["change_plan"] == "subscription"
    w, sub, _ = priced_world()
    fresh = w.subscribe(w.objects("customer")[0])
    index = w.objects("subscription").index(fresh)
    assert ("change_plan", index) in priced.legal(w)
    assert ("change_plan", w.objects("subscription").index(sub)) not in priced.legal(w)  # canceled
    before = w.get(fresh)["items"]["data"][0]["price"]["id"]
    priced.apply(w, "change_plan", index)
    assert w.events[-1].type == "customer.subscription.updated"
    assert w.events[-1].previous_attributes == {"items": {"data": [w.get(fresh, 1)["items"]["data"][0]]}}
    assert w.get(fresh)["items"]["data"][0]["price"]["id"] != before and w.get(fresh)["status"] == "active"


STUB_CATALOG = '''
[target]
url = "http://127.0.0.1:9/webhooks"
profile = "svix"
secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

[observer]
kind = "sql"
url = "sqlite:///x.db"
effects = "SELECT business_key FROM emails"

[observer.states]
user = "SELECT id AS object_id, status, first_name FROM users"

[observer.state_fields]
user = { first_name = "data.FIELD" }

[catalog.events."user.created"]
example = { type = "user.created", data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Ada" } }
object_id = "data.id"
object_type = "user"
state = "active"
key = "welcome:{data.id}"

[catalog.events."user.deleted"]
example = { type = "user.deleted", data = { id = "user_2abcdefghijklmnopqrstuvwxy", deleted = true } }
object_id = "data.id"
object_type = "user"
state = "deleted"
'''


def test_a_field_a_deletion_stub_leaves_out_is_no_part_of_the_deleted_state(tmp_path: Path) -> None:
    """A deletion's stub carries the id alone: a deleted user is ``deleted`` whatever name the
    receiver kept or cleared (it may never have learned it, the deletion arriving first), on
    the provider's side and in the observer's rows alike; an active user still compares its name."""
    from hookproof.simulator.world import new_world

    path = tmp_path / "hookproof.toml"
    path.write_text(STUB_CATALOG.replace("FIELD", "first_name"), encoding="utf-8")
    config = load_config(path)
    fields = config.state_field_map()
    assert fields is not None and fields.absent == {"user": {"deleted": frozenset({"first_name"})}}
    events = [e for e in new_world(config.profile().world, 4).lifecycle() if e.object_type == "user"]
    states = {e.type: s.status for e, s in zip(events, stated(events, fields))}
    assert states["user.deleted"] == "deleted"
    assert states["user.created"].startswith("active, first_name=") and states["user.created"] != "active, first_name="
    db = tmp_path / "x.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE users (id TEXT, status TEXT, first_name TEXT)")
        conn.executemany("INSERT INTO users VALUES (?, ?, ?)", [("u1", "deleted", None), ("u2", "active", "Ada")])
    observer = SqlObserver(f"sqlite:///{db}", None, state_queries={"user": "SELECT id AS object_id, status, "
                                                                            "first_name FROM users"},
                           state_fields=fields.columns(), state_absent=fields.absent)
    assert sorted(s.status for s in observer.observe().states) == ["active, first_name=Ada", "deleted"]


def test_a_field_no_event_of_the_kind_carries_is_one_config_error(tmp_path: Path) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(STUB_CATALOG.replace("FIELD", "nickname"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(
        f"{path}:16: observer.state_fields.user: data.nickname: the event has no field data.nickname"), caught.value


def test_a_time_field_is_read_from_the_story_as_sent_not_from_its_scratch_measurement() -> None:
    """certify tells a story once in a scratch world to measure it, then again with its clock
    moved back (`story_start_us`): the same event ids at another time. A time field read in the
    scratch world (``current_period_end``) was kept for the real one, and a correct receiver
    storing the sent value failed ``stale``."""
    period = "data.object.items.data.0.current_period_end"
    declared = StateFields({"subscription": (("period_end", period),)}, get_profile("stripe"))

    def told(start_us: int) -> Event:
        w = World(5, start_us=start_us)
        sub = w.subscribe(w.event(w.create_customer()).object_id)
        return [e for e in w.events if e.object_id == sub and e.status is not None][-1]

    scratch, sent = told(1_800_000_000_000_000), told(1_790_000_000_000_000)
    assert (scratch.id, scratch.version) == (sent.id, sent.version)
    declared.state_of(scratch)
    end = json.loads(get_profile("stripe").envelope(sent).body)["data"]["object"]["items"]["data"][0][
        "current_period_end"]
    assert declared.state_of(sent) == f"{sent.status}, period_end={end}"
