"""Load shapes: the offered rate as a pure function of elapsed seconds (no runner)."""

from __future__ import annotations

import pytest

from hookproof.loadtests.shape import LoadShape, make_shape, send_times, wave_times


@pytest.mark.parametrize(("shape", "t", "rate"), [
    (LoadShape("steady", 50, 10), 0.0, 50.0),
    (LoadShape("steady", 50, 10), 9.99, 50.0),
    (LoadShape("steady", 50, 10), 10.0, 0.0),
    (LoadShape("steady", 50, 10), -1.0, 0.0),
    (LoadShape("ramp", 60, 30, ramp_s=10), 0.0, 0.0),
    (LoadShape("ramp", 60, 30, ramp_s=10), 5.0, 30.0),
    (LoadShape("ramp", 60, 30, ramp_s=10), 10.0, 60.0),
    (LoadShape("ramp", 60, 30, ramp_s=10), 29.0, 60.0),
    (LoadShape("spike", 20, 50, spike_at_s=20, spike_s=10, spike_factor=3), 19.9, 20.0),
    (LoadShape("spike", 20, 50, spike_at_s=20, spike_s=10, spike_factor=3), 20.0, 60.0),
    (LoadShape("spike", 20, 50, spike_at_s=20, spike_s=10, spike_factor=3), 29.9, 60.0),
    (LoadShape("spike", 20, 50, spike_at_s=20, spike_s=10, spike_factor=3), 30.0, 20.0),
    (LoadShape("soak", 100, 3600, ramp_s=60), 30.0, 50.0),
    (LoadShape("soak", 100, 3600, ramp_s=60), 3599.0, 100.0),
    (LoadShape("soak", 100, 3600, ramp_s=60), 3600.0, 0.0),
])
def test_rate_at(shape: LoadShape, t: float, rate: float) -> None:
    assert shape.rate_at(t) == pytest.approx(rate)


@pytest.mark.parametrize(("shape", "until", "events"), [
    (LoadShape("steady", 50, 10), None, 500.0),
    (LoadShape("steady", 50, 10), 4.0, 200.0),
    (LoadShape("ramp", 60, 30, ramp_s=10), None, 300.0 + 1200.0),
    (LoadShape("ramp", 60, 30, ramp_s=10), 5.0, 75.0),
    (LoadShape("spike", 20, 50, spike_at_s=20, spike_s=10, spike_factor=3), None, 1000.0 + 400.0),
    (LoadShape("spike", 20, 50, spike_at_s=20, spike_s=10, spike_factor=3), 25.0, 500.0 + 200.0),
])
def test_expected_events_is_the_integral(shape: LoadShape, until: float | None, events: float) -> None:
    assert shape.expected_events(until) == pytest.approx(events)


@pytest.mark.parametrize("kind", ["steady", "ramp", "spike", "soak"])
@pytest.mark.parametrize("users", [1, 4, 10])
def test_users_together_send_what_the_shape_offers(kind: str, users: int) -> None:
    shape = make_shape(kind, 80.0, 30.0)
    sends = sorted(t for i in range(users) for t in send_times(shape, users, i))
    assert all(0.0 <= t < 30.0 for t in sends)
    # every user loses at most one send at the end of the storm
    assert shape.expected_events() - users - 1 <= len(sends) <= shape.expected_events() + 1
    # the sends follow the shape: in each second, about rate_at(t) sends
    per_second = [sum(1 for t in sends if s <= t < s + 1) for s in range(30)]
    for s in range(2, 28):
        assert per_second[s] == pytest.approx(shape.rate_at(s + 0.5), abs=1.5)


def test_next_send_is_open_model_pacing() -> None:
    shape = LoadShape("steady", 10, 5)
    assert shape.next_send_s(1.0, users=2) == pytest.approx(1.2, abs=1e-5)
    assert shape.next_send_s(4.9, users=2) is None
    assert shape.next_send_s(5.0, users=1) is None


def test_a_ramp_starting_at_zero_waits_then_sends() -> None:
    shape = LoadShape("ramp", 10, 5, ramp_s=5)
    # 1 event is offered after sqrt(2 * 5 / 10) = 1 s: the slow start is honoured
    assert shape.next_send_s(0.0, users=1) == pytest.approx(1.0, abs=1e-5)
    assert shape.time_at(shape.expected_events()) == pytest.approx(5.0, abs=1e-5)
    assert shape.time_at(shape.expected_events() + 1) is None


def test_users_are_spread_over_one_interval() -> None:
    shape = LoadShape("steady", 10, 5)
    firsts = [shape.first_send_s(i, 5) for i in range(5)]
    assert firsts == pytest.approx([0.05, 0.15, 0.25, 0.35, 0.45], abs=1e-5)


def test_send_times_is_bounded_by_count() -> None:
    assert len(list(send_times(LoadShape("steady", 1000, 100), 1, max_sends=7))) == 7


def test_wave_times_are_evenly_inside_the_storm() -> None:
    assert wave_times(60, 0) == ()
    assert wave_times(60, 1) == (30.0,)
    assert wave_times(60, 3) == (15.0, 30.0, 45.0)


@pytest.mark.parametrize("kwargs", [
    {"kind": "steady", "rate_per_s": 0, "duration_s": 10},
    {"kind": "steady", "rate_per_s": 5, "duration_s": 0},
    {"kind": "steady", "rate_per_s": float("inf"), "duration_s": 10},
    {"kind": "square", "rate_per_s": 5, "duration_s": 10},
    {"kind": "spike", "rate_per_s": 5, "duration_s": 10, "spike_factor": 0.5},
    {"kind": "ramp", "rate_per_s": 5, "duration_s": 10, "ramp_s": -1},
])
def test_bad_shapes_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LoadShape(**kwargs)  # type: ignore[arg-type]


def test_make_shape_refuses_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown load shape"):
        make_shape("square", 5, 10)
    with pytest.raises(ValueError):
        LoadShape("steady", 5, 10).next_send_s(0, users=0)
