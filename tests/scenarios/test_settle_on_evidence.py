"""Settling on evidence (issue 19): once a read shows every effect and state the provider's
history implies, a short quiet period settles it instead of the whole window, and whatever
changes meanwhile (a late duplicate) restarts the count and is seen."""

from __future__ import annotations

import pytest

from hookproof.scenarios.observations import Effect, Observation
from hookproof.scenarios.observers import QUIET_INTERVALS, settle


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _shows_license(obs: Observation) -> bool:
    return "license:pi_1" in obs.counts()


def test_a_read_showing_everything_settles_after_the_quiet_period() -> None:
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("license:pi_1"),)), window_s=0.5, deadline_s=5.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license)
    assert result.settled and result.early
    assert QUIET_INTERVALS == 2 and len(result.observations) == 3  # at 0.0, 0.1, 0.2
    assert clock.now == pytest.approx(0.2)


def test_an_effect_arriving_just_after_the_first_stable_read_is_still_seen() -> None:
    """The duplicate lands after the read that first confirmed the picture (at 0.1 s): it is
    read at 0.2 s, the quiet period starts again, and the final read shows both rows."""
    clock = _Clock()

    def read() -> Observation:
        rows = (Effect("license:pi_1"),) * (2 if clock.now >= 0.15 else 1)
        return Observation(clock.now, rows)

    result = settle(read, window_s=0.5, deadline_s=5.0, interval_s=0.1, clock=clock, sleep=clock.sleep,
                    done=_shows_license)
    assert result.settled and result.early
    assert [o.counts()["license:pi_1"] for o in result.observations] == [1, 1, 2, 2, 2]
    assert clock.now == pytest.approx(0.4)


def test_a_read_missing_an_expected_effect_waits_the_whole_window() -> None:
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("renewal:in_1"),)), window_s=0.5, deadline_s=5.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license)
    assert result.settled and not result.early
    assert len(result.observations) == 6 and clock.now == pytest.approx(0.5)


def test_an_effect_applied_late_completes_the_picture_then_the_quiet_period_runs() -> None:
    """A receiver that applies in the background: nothing at first, the effect at 0.3 s;
    settled 0.2 s after that, not a whole window after it."""
    clock = _Clock()

    def read() -> Observation:
        return Observation(clock.now, (Effect("license:pi_1"),) if clock.now >= 0.25 else ())

    result = settle(read, window_s=0.5, deadline_s=5.0, interval_s=0.1, clock=clock, sleep=clock.sleep,
                    done=_shows_license)
    assert result.settled and result.early
    assert [len(o.effects) for o in result.observations] == [0, 0, 0, 1, 1, 1]
    assert clock.now == pytest.approx(0.5)


def test_without_evidence_the_window_rules() -> None:
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("license:pi_1"),)), window_s=0.5, deadline_s=5.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep)
    assert result.settled and not result.early and len(result.observations) == 6


def test_a_negative_quiet_period_is_refused() -> None:
    with pytest.raises(ValueError, match="quiet_s"):
        settle(lambda: Observation(0.0), window_s=0.1, deadline_s=1.0, interval_s=0.1, quiet_s=-1)
