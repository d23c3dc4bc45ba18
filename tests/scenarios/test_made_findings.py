"""`MadeFindings`: a per-key check's findings made when read, one per key, never held."""

from __future__ import annotations

import numpy as np
import pytest

from hookproof.scenarios.findings import ADVISORY, Finding, MadeFindings, Verdict, kept_findings, result_of


def made_findings(n: int) -> tuple[MadeFindings, list[int]]:
    """`n` findings of keys k0… (k2 an advisory, the odd ones never acknowledged), and the
    codes `make` was called with, in order."""
    calls: list[int] = []

    def make(code: int) -> Finding:
        calls.append(code)
        message = "never applied and never acknowledged: no answer" if code % 2 else "acknowledged 1 time(s)"
        return Finding("lost", f"k{code}", message, 1, 0, (code,), ADVISORY if code == 2 else "finding")
    return MadeFindings(np.arange(n, dtype=np.int64), make), calls


def test_findings_are_made_when_read_and_equal_the_same_findings_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MadeFindings, "STEP", 3)  # iterated a few codes at a time
    made, calls = made_findings(8)
    assert calls == [] and len(made) == 8
    held = tuple(made)
    assert calls == list(range(8))  # each made once per pass, in order
    assert [f.key for f in held] == [f"k{i}" for i in range(8)]
    assert made == held and held == made and made != held[:-1] and made[2:5] == held[2:5]
    assert made[-1] == held[-1] and made[0] == held[0]
    assert kept_findings(made, lambda f: f.key != "k3") == kept_findings(held, lambda f: f.key != "k3")
    assert isinstance(kept_findings(made, lambda f: True), MadeFindings)  # still made when read


def test_a_result_of_made_findings_keeps_them_and_counts_as_of_the_same_findings_held() -> None:
    made, _ = made_findings(6)
    result = result_of("lost", made, {"expected_keys": 6})
    assert result.findings is made  # one per key: nothing to merge, nothing held
    same = result_of("lost", list(made), {"expected_keys": 6})
    assert (result.verdict, result.detail) == (same.verdict, same.detail) == (Verdict.INVALID,
                                                                            "5 finding(s), 1 advisory(ies)")
