"""A receiver that answers 200 first and applies in a worker later than the settle window.

`tests.scenarios.fetch_in_worker` answers at once and applies each event 0.7 s later in a
worker thread, fetching from the provider API and trying a failed fetch again after 0.5 s and
1 s (a Stripe SDK's backoff). Certified over HTTP with the default `[settle]` (a 0.3 s window),
it passes: while an effect or a state the provider's truth expects is missing, settling reads
on up to the deadline instead of concluding after the window. Its twin that gives up on a
failed fetch loses the effect and the state for good, and is still found: ``lost`` and ``stale``
(worded as what was seen: not applied by the end of settling), after reads unchanged for
`stall_s` rather than the whole deadline.
"""

from __future__ import annotations

from pathlib import Path

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.config_model import SettleConfig
from hookproof.demo import receiver_config

SECRET = "whsec_late_worker_" + "0" * 22
SCENARIOS = ["duplicate-sequential", "provider-api-transient"]


def _certify(tmp_path: Path, durations: dict[str, float] | None = None,
             **options: float) -> dict[str, tuple[str, list[str], list[str]]]:
    cfg = receiver_config("fetch_in_worker", tmp_path, SECRET, seed=4242, scenarios=SCENARIOS,
                          module="tests.scenarios.fetch_in_worker", cwd=PROJECT_ROOT, options=options)
    assert cfg.settle == SettleConfig()  # the defaults: a 0.3 s window, a 15 s deadline, a 5 s stall
    report = certify(cfg, out_dir=tmp_path / "report").report
    if durations is not None:
        durations.update({s.id: s.duration_s for s in report.scenarios})
    return {s.id: (s.verdict, sorted({f.check_id for f in s.findings}), [f.message for f in s.findings])
            for s in report.scenarios}


def test_a_worker_applying_after_the_window_passes_at_default_settings(tmp_path: Path) -> None:
    got = _certify(tmp_path)
    assert {sid: verdict for sid, (verdict, _, _) in got.items()} == {
        "duplicate-sequential": "pass", "provider-api-transient": "pass"}, got


def test_its_twin_giving_up_on_a_failed_fetch_is_found(tmp_path: Path) -> None:
    durations: dict[str, float] = {}
    got = _certify(tmp_path, durations, fault=1)
    verdict, checks, messages = got["provider-api-transient"]
    assert verdict == "fail" and {"lost", "stale"} <= set(checks), got
    assert any("acknowledged 1 time(s) but not applied by the end of settling" in m for m in messages), messages
    assert got["duplicate-sequential"][0] == "pass", got
    defaults = SettleConfig()  # waited for the stalled reads, and not to the deadline
    assert defaults.stall_s <= durations["provider-api-transient"] < defaults.deadline_s, durations


def test_a_broken_receiver_s_overlapped_scenarios_wait_the_stall_bound_not_the_deadline(tmp_path: Path) -> None:
    """Side by side, a read short of what it owes waited for the other scenarios to stop
    delivering and the receiver to stop changing, up to the deadline, even once the run knew
    the receiver keeps effects from the truth (over the whole catalog three scenarios of this
    receiver took 15 s each). Now it ends after reads unchanged for `stall_s`; the findings are
    the detection matrix's."""
    from examples.receivers import config as example_config
    from tests.scenarios.test_detection_matrix import MATRIX, RACES

    cfg = example_config("dedupe_by_type_and_object", tmp_path, SECRET, seed=4242, settle_window_s=0.15)
    report = certify(cfg, out_dir=tmp_path / "report").report
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
              if s.verdict not in ("pass", "not_applicable")}
    races = RACES.get("dedupe_by_type_and_object", {})  # may fail with these checks, or pass
    assert {s: checks for s, checks in failed.items() if s not in races} == MATRIX["dedupe_by_type_and_object"], failed
    assert all(set(failed.get(s, ())) <= set(checks) for s, checks in races.items()), failed
    assert all(s.reason is None for s in report.scenarios if s.id in failed), [s.reason for s in report.scenarios]
    slowest = max(s.duration_s for s in report.scenarios if s.id in failed)
    assert slowest < SettleConfig().deadline_s, slowest
