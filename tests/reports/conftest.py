"""Fixtures of the report tests: the hand-built sample run and golden-file comparison.

Set ``HOOKPROOF_UPDATE_GOLDEN=1`` to rewrite the golden files from the current output
(then review the diff before committing it).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hookproof.reports.model import RunReport
from tests.reports.sample import sample_report

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE_ENV = "HOOKPROOF_UPDATE_GOLDEN"


@pytest.fixture
def run_report() -> RunReport:
    """A small but complete run: one passing, one failing, one not applicable scenario."""
    return sample_report()


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    """``golden(name, text)``: assert `text` equals ``golden/<name>`` (or rewrite it on request)."""

    def compare(name: str, text: str) -> None:
        path = GOLDEN_DIR / name
        if os.environ.get(UPDATE_ENV) == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
            return
        if not path.exists():
            pytest.fail(f"golden file {name} is missing: run with {UPDATE_ENV}=1 to create it", pytrace=False)
        expected = path.read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"golden/{name}", "rendered", n=2))
            pytest.fail(f"{name} differs from its golden file ({UPDATE_ENV}=1 rewrites it):\n"
                        f"{diff[:6000]}", pytrace=False)

    return compare
