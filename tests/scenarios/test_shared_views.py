"""take_check_view with `shared`: equal keys and attempts across checks are one object each."""

from __future__ import annotations

from hookproof.scenarios.checks import Verdict
from hookproof.scenarios.findings import CheckResult, Finding
from hookproof.scenarios.report_views import check_view, take_check_view


def _results() -> list[CheckResult]:
    # each check makes its own key texts and attempt tuples, as the storm's checks do
    lost = CheckResult("lost", Verdict.INVALID, (
        Finding("lost", "".join(["key", "-1"]), "not applied", attempts=(20,)),
        Finding("lost", "".join(["key", "-2"]), "not applied", attempts=(21, 40)),
    ))
    counter = CheckResult("counter", Verdict.INVALID, (
        Finding("counter", "".join(["key", "-2"]), "moved 0 instead of 900", expected=900, actual=0, attempts=(21, 40)),
        Finding("counter", "".join(["key", "-3"]), "moved 0 instead of 900", expected=900, actual=0, attempts=(20,)),
    ))
    return [lost, counter]


def test_views_share_equal_keys_and_attempts_across_checks_and_equal_the_plain_views() -> None:
    plain = [check_view(r) for r in _results()]
    results, shared = _results(), {}  # type: ignore[var-annotated]
    lost, counter = take_check_view(results, shared), take_check_view(results, shared)
    assert results == [] and [lost, counter] == plain
    assert counter.findings[0].key is lost.findings[1].key  # "key-2": one text for both checks
    assert counter.findings[0].attempts is lost.findings[1].attempts
    assert counter.findings[1].attempts is lost.findings[0].attempts  # (20,) of another key: equal, so shared
    assert counter.findings[1].key == "key-3" and counter.findings[1].key is not lost.findings[0].key


def test_without_shared_each_view_keeps_its_own_finding_values() -> None:
    results = _results()
    lost, counter = take_check_view(results), take_check_view(results)
    assert counter.findings[0].key == lost.findings[1].key and counter.findings[0].key is not lost.findings[1].key
