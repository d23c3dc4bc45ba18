"""Timeline geometry: lanes per delivery, a bar per attempt, effect marks, a tidy axis."""

from __future__ import annotations

from dataclasses import replace

from hookproof.reports.model import RunReport
from hookproof.reports.timeline import MIN_BAR_W, PLOT_LEFT, PLOT_RIGHT, layout_timeline


def test_layout_of_the_failing_key(run_report: RunReport) -> None:
    scenario = run_report.scenarios[1]
    key = "license:pay_2002"
    t = layout_timeline(scenario.attempts_for(key), scenario.effects_for(key))
    assert t is not None
    assert [r.label for r in t.rows] == ["dlv_pay_a", "dlv_pay_b", "effects seen"]
    assert [b.label for b in t.bars] == ["#3", "#4", "#5", "#6"]
    assert [b.outcome for b in t.bars] == ["timeout", "dropped", "acked", "server_error"]
    assert t.bars[0].x == PLOT_LEFT
    assert len({b.y for b in t.bars[:3]}) == 1 and t.bars[3].y > t.bars[0].y
    assert [(e.count, e.duplicate) for e in t.effects] == [(1, False), (2, True)]
    assert t.bars[0].x < t.effects[0].x < t.bars[0].x + t.bars[0].w  # applied while the sender waited
    assert t.ticks[0].label == "+0 ms" and t.ticks[-1].x == PLOT_RIGHT
    assert all(PLOT_LEFT <= b.x and b.x + b.w <= PLOT_RIGHT + MIN_BAR_W for b in t.bars)
    assert t.outcomes == ("acked", "server_error", "timeout", "dropped")


def test_instant_attempts_still_show(run_report: RunReport) -> None:
    first, second = run_report.scenarios[0].attempts[:2]
    instant = replace(first, answered_at=first.sent_at, latency_ms=0.0)
    later = replace(second, sent_at=first.sent_at + 10, answered_at=first.sent_at + 10.5)
    t = layout_timeline((instant, later), ())
    assert t is not None and t.bars[0].w == MIN_BAR_W
    assert [tick.label for tick in t.ticks][:3] == ["+0 s", "+2 s", "+4 s"]


def test_nothing_to_draw() -> None:
    assert layout_timeline((), ()) is None


def test_a_stale_object_s_timeline_shows_the_event_that_overwrote_the_final_one() -> None:
    """A reorder's stale finding names the final (canceled) delivery; the later-delivered
    older update that overwrote it is about the same object: both are on its timeline."""
    from hookproof.reports.model import AttemptView, CheckView, FindingView, ScenarioReport

    def attempt(i: int, event_type: str, at: float) -> AttemptView:
        return AttemptView(i, f"evt_{i}", event_type, f"d{i}", 1, None, "sub_1", (), True, at, at + 0.01, 200,
                           "acked", "ok", 10.0)

    attempts = (attempt(0, "customer.subscription.created", 1.0), attempt(1, "customer.subscription.deleted", 2.0),
                attempt(2, "customer.subscription.updated", 3.0))
    stale = FindingView("stale", "sub_1", "the receiver holds the update, not the cancellation", "finding",
                        attempts=(1,))
    scenario = ScenarioReport("reorder", "Reorder", "", "fail", (), checks=(CheckView("stale", "invalid", (stale,)),),
                              attempts=attempts)
    assert [a.event_type for a in scenario.attempts_for("sub_1")] == [
        "customer.subscription.created", "customer.subscription.deleted", "customer.subscription.updated"]
    timeline = layout_timeline(scenario.attempts_for("sub_1"), ())
    assert timeline is not None and len(timeline.rows) >= 3
