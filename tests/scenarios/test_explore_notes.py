"""What a search says when Hypothesis stops it after its finding: plain words, never
Hypothesis's internal message (``FlakyFailure: Inconsistent results from replaying a test case!``)."""

from __future__ import annotations

from hypothesis.errors import FlakyFailure

from hookproof.scenarios.statemachine import FLAKY_FINDING_NOTE, after_finding_note


def test_a_finding_hypothesis_could_not_confirm_is_said_in_plain_words() -> None:
    exc = FlakyFailure("Inconsistent results from replaying a test case!", [AssertionError("regressed")])
    note = after_finding_note(exc)
    assert note == FLAKY_FINDING_NOTE
    assert "FlakyFailure" not in note and "Inconsistent results" not in note
    assert "did not fail the same way" in note and "hookproof replay" in note


def test_another_error_names_itself_and_keeps_the_finding() -> None:
    assert after_finding_note(RuntimeError("boom\nmore")) == (
        "the search stopped after its finding on an error inside Hypothesis (RuntimeError: boom); the finding stands")
