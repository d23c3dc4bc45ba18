"""Settling on evidence (issue 19): once a read shows every effect and state the provider's
history implies, a short quiet period settles it instead of the whole window, and whatever
changes meanwhile (a late duplicate) restarts the count and is seen."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from examples.receivers import load
from hookproof.receivers import ReceiverConfig, receiver_of
from hookproof.reports.model import ScenarioReport
from hookproof.scenarios import runner as runner_module
from hookproof.scenarios.catalog import CATALOG
from hookproof.scenarios.observations import Effect, Observation
from hookproof.scenarios.observers import QUIET_INTERVALS, SettleResult, observation_from_data, settle
from hookproof.scenarios.runner import Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.profiles import get_profile
from tests.examples.serving import serve_app


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


def test_a_read_missing_an_expected_effect_is_read_until_the_deadline_then_settles_short() -> None:
    """Unchanged for the window is not enough while an expected effect is missing: the reads
    go on to the deadline; unchanged by then, it settles short (the checks judge it lost)."""
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("renewal:in_1"),)), window_s=0.5, deadline_s=5.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license)
    assert result.settled and result.short and not result.early
    assert len(result.observations) == 51 and clock.now == pytest.approx(5.0)


def test_an_effect_applied_after_several_windows_is_waited_for() -> None:
    """A worker applying 2 s after the answer (four windows of unchanged reads): still read,
    and settled on evidence the quiet period after it shows."""
    clock = _Clock()

    def read() -> Observation:
        return Observation(clock.now, (Effect("license:pi_1"),) if clock.now >= 1.95 else ())

    result = settle(read, window_s=0.5, deadline_s=5.0, interval_s=0.1, clock=clock, sleep=clock.sleep,
                    done=_shows_license)
    assert result.settled and result.early and not result.short
    assert clock.now == pytest.approx(2.2)


def test_reads_still_changing_at_the_deadline_do_not_settle() -> None:
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("renewal:in_1"),) * int(clock.now * 10)), window_s=0.5,
                    deadline_s=2.0, interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license)
    assert not result.settled and not result.short


def test_what_is_owed_is_waited_for_even_where_nothing_can_prove_the_receiver_done() -> None:
    """An attempt timed out (no `done`: a read showing everything still gets the window, for a
    late duplicate): the effect owed, applied 2 s late, is waited for all the same."""
    clock = _Clock()

    def read() -> Observation:
        return Observation(clock.now, (Effect("license:pi_1"),) if clock.now >= 1.95 else ())

    result = settle(read, window_s=0.5, deadline_s=5.0, interval_s=0.1, clock=clock, sleep=clock.sleep,
                    owed=_shows_license)
    assert result.settled and not result.early and not result.short
    assert clock.now == pytest.approx(2.5)


def test_reads_stalled_short_of_what_is_owed_settle_short_after_the_stall_bound() -> None:
    """Unchanged reads missing an owed effect are waited for `stall_s`, not the whole deadline."""
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("renewal:in_1"),)), window_s=0.5, deadline_s=15.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license, stall_s=2.0)
    assert result.settled and result.short and not result.early
    assert len(result.observations) == 21 and clock.now == pytest.approx(2.0)


def test_the_stall_bound_counts_from_the_last_change() -> None:
    """A receiver still working (a row every 1.5 s) is read on past `stall_s` from the start;
    once it stops changing short of what it owes, `stall_s` later it settles short."""
    clock = _Clock()

    def read() -> Observation:
        return Observation(clock.now, (Effect("renewal:in_1"),) * min(4, 1 + int(clock.now / 1.5)))

    result = settle(read, window_s=0.5, deadline_s=15.0, interval_s=0.1, clock=clock, sleep=clock.sleep,
                    done=_shows_license, stall_s=2.0)
    assert result.settled and result.short
    assert len(result.final.effects) == 4 and clock.now == pytest.approx(4.5 + 2.0)


def test_an_effect_applied_within_the_stall_bound_is_waited_for() -> None:
    clock = _Clock()

    def read() -> Observation:
        return Observation(clock.now, (Effect("license:pi_1"),) if clock.now >= 1.95 else ())

    result = settle(read, window_s=0.5, deadline_s=15.0, interval_s=0.1, clock=clock, sleep=clock.sleep,
                    done=_shows_license, stall_s=2.5)
    assert result.settled and result.early and not result.short
    assert clock.now == pytest.approx(2.2)


def test_a_stall_bound_below_the_window_waits_the_window() -> None:
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("renewal:in_1"),)), window_s=0.5, deadline_s=15.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license, stall_s=0.1)
    assert result.short and clock.now == pytest.approx(0.5)


def test_an_impatient_settle_gives_a_short_read_the_window_only() -> None:
    """`patient()` False (the run already saw a settle fall short at its deadline): the window."""
    clock = _Clock()
    result = settle(lambda: Observation(clock.now, (Effect("renewal:in_1"),)), window_s=0.5, deadline_s=5.0,
                    interval_s=0.1, clock=clock, sleep=clock.sleep, done=_shows_license, patient=lambda: False)
    assert result.settled and not result.early and not result.short
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


def test_a_negative_stall_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="stall_s"):
        settle(lambda: Observation(0.0), window_s=0.1, deadline_s=1.0, interval_s=0.1, stall_s=-1)


# ---- the runner, against real receivers over HTTP on 127.0.0.1 ------------------------------

SECRET = "whsec_settle_evidence_0123456789"
ACCOUNT = "acct_settleevidence001"


def _run(name: str, tmp_path: Path, options: dict[str, float] | None = None) -> tuple[ScenarioReport, list[bool]]:
    """duplicate-sequential against `name`; the report, and for each settle whether it ended on evidence."""
    config = ReceiverConfig(db_url=f"sqlite:///{tmp_path / (name + '.db')}", secrets=(SECRET,), account=ACCOUNT,
                            options=options or {})
    app = load(name).create_app(config)
    receiver = receiver_of(app)
    early: list[bool] = []

    def recording(*args: Any, **kwargs: Any) -> SettleResult:
        result = settle(*args, **kwargs)
        early.append(result.early)
        return result

    try:
        with serve_app(app) as url, pytest.MonkeyPatch.context() as patch:
            patch.setattr(runner_module, "settle", recording)
            runner = Runner(target=Target(url=url + "/webhooks"), profile=get_profile("stripe"), secrets=(SECRET,),
                            observe=lambda: observation_from_data(receiver.observe(), time.time(), observer="python"),
                            history=History(), account=ACCOUNT, seed=57, settle_window_s=1.0,
                            settle_interval_s=0.02)
            return runner.run_one(CATALOG["duplicate-sequential"], 0), early
    finally:
        receiver.close()


def test_a_receiver_applying_in_the_background_is_waited_for_then_settled_on_evidence(tmp_path: Path) -> None:
    """ack_before_persist answers 200 and applies 0.1 s later, one event at a time: the reads
    before its last effect do not show everything, so the quiet period does not end the wait;
    once they do, it does (no `lost`, and no whole 1 s window)."""
    report, early = _run("ack_before_persist", tmp_path, {"apply_delay_s": 0.1})
    assert report.verdict == "pass", (report.reason, [(c.check_id, c.verdict, c.detail) for c in report.checks])
    assert report.settled and early == [True]


def test_a_duplicate_is_still_seen_when_settling_on_evidence(tmp_path: Path) -> None:
    report, early = _run("no_dedupe", tmp_path)
    assert report.verdict == "fail" and early == [True]
    assert {f.check_id for f in report.findings} == {"duplicated"}


def test_unchanged_since_is_the_first_of_the_trailing_equal_reads() -> None:
    from hookproof.scenarios.observers import unchanged_since

    one, two = (Effect("license:pi_1"),), (Effect("license:pi_1"), Effect("renewal:in_1"))
    reads = [Observation(1.0, one), Observation(2.0, two), Observation(3.0, tuple(reversed(two))), Observation(4.0, two)]
    assert unchanged_since(reads) == 2.0  # row order is not a change
    assert unchanged_since(reads[:1]) == 1.0
