"""A catalog scenario hurried because an earlier one fell short says so in its findings.

Once a scenario of the run fell short of what the receiver owes (it waited `stall_s`), a later
catalog scenario's read short of what it owes settles on the window alone: the run fails either
way, and a broken receiver costs it one such wait, not one per scenario. A receiver applying
after it answers is then judged before it applies, and its late effects read as ``lost`` in
that scenario. `tests.chaos.late_apply` persists each event, answers 200 and applies it 0.5 s
later (correct, only late); with ``lose_first=1`` it keeps its first event's effect from the
truth, so `duplicate-sequential` falls short. `reorder`'s ``lost`` findings and its ``stale`` ones of an object missing then name that the
scenario settled on the window alone because `duplicate-sequential` fell short, and the command
that certifies it alone (where it waits for what is owed, as the receiver without
``lose_first`` shows passing both).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.config_model import SettleConfig
from hookproof.demo import receiver_config

SECRET = "whsec_after_short_" + "0" * 22
SEED = 4242
HURRIED = ("; this scenario settled on the window alone ([settle] window_s = 0.3 s), not waiting for what the "
           "receiver owes, because another scenario of this run (duplicate-sequential), which settled before this "
           "one, fell short of it: an effect or a state a receiver applies later than that after it answers (a "
           "worker, a queue) reads as missing here; certify this scenario alone (hookproof certify reorder --seed 4242) "
           "with a fresh database, not the one this run kept, which already holds its business keys, to tell late "
           "from lost")


def _certify(tmp_path: Path, scenarios: list[str], **options: float) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """scenario id -> (verdict, its findings' checks and messages), run one after another."""
    cfg = receiver_config("late_apply", tmp_path, SECRET, seed=SEED, scenarios=scenarios,
                          module="tests.chaos.late_apply", cwd=PROJECT_ROOT, options=options)
    assert cfg.settle == SettleConfig()  # the defaults: a 0.3 s window, below the receiver's 0.5 s lag
    report = certify(cfg, out_dir=tmp_path / "report", overlap=1).report
    return {s.id: (s.verdict, sorted((f.check_id, f.message) for f in s.findings)) for s in report.scenarios}


def test_a_late_receiver_passes(tmp_path: Path) -> None:
    got = _certify(tmp_path, ["duplicate-sequential", "reorder"])
    assert got == {"duplicate-sequential": ("pass", []), "reorder": ("pass", [])}, got


def test_findings_of_a_scenario_hurried_after_one_fell_short_say_so(tmp_path: Path) -> None:
    got = _certify(tmp_path, ["duplicate-sequential", "reorder"], lose_first=1)
    verdict, findings = got["duplicate-sequential"]  # its first event's effect, waited for and lost
    assert verdict == "fail" and [(c, HURRIED in m) for c, m in findings] == [("lost", False)], got
    verdict, findings = got["reorder"]  # late effects judged on the window alone
    assert verdict == "fail" and findings and {c for c, _ in findings} <= {"lost", "stale"}, got
    assert all(m.endswith(HURRIED) for _, m in findings), findings


def test_a_hurried_lost_finding_quotes_the_answer_before_the_lag_it_may_be(tmp_path: Path) -> None:
    """What the receiver answered comes first, the caveat of a lag after it: a twin deduping on the
    object answered "duplicate" in every hurried scenario, and only the caveat was said (the
    answer's words were added only to findings nothing else explained)."""
    got = _certify(tmp_path, ["duplicate-sequential", "distinct-events-same-object"], lose_first=1)
    verdict, findings = got["distinct-events-same-object"]
    hurried = HURRIED.replace("reorder", "distinct-events-same-object")
    lost = [m for c, m in findings if c == "lost"]
    assert verdict == "fail" and lost, got
    assert all(m.endswith(hurried) and 0 <= m.find("; the receiver answered 200") < m.index(hurried) for m in lost), lost



def test_a_scenario_that_passed_after_falling_short_hurries_no_other(tmp_path: Path, monkeypatch) -> None:
    """A settle may fall short and its scenario still pass: a read between two of its phases,
    behind a receiver applying late on a busy machine, that the final read then made good. The run
    then knows of no receiver keeping anything from the truth, so no later scenario is hurried,
    and none names a passing scenario as the one that fell short (it did with Mercado Pago's
    `concurrent-updates-stored-object` passing and `provider-api-transient` saying it fell short).
    The first settle of `duplicate-sequential` is made to say `short` while showing all it owes."""
    import hookproof.scenarios.runner as runner

    real = runner.settle
    calls: list[int] = []

    def first_short(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = real(*args, **kwargs)
        calls.append(1)
        return replace(result, short=True) if len(calls) == 1 else result

    monkeypatch.setattr(runner, "settle", first_short)
    got = _certify(tmp_path, ["duplicate-sequential", "reorder"])
    assert got == {"duplicate-sequential": ("pass", []), "reorder": ("pass", [])}, got
