"""The checks' one pass as it was before it kept columns: dicts and sets per event and per
key, a Python loop per attempt. Kept as the oracle the columnar scan
(`scenarios.history_scan`) must agree with: the same expectations, and the same results of
every check over its index (`test_history_scan.py`, `test_check_columns.py`).

That pass lives on as explore's small pass (`scenarios.small_pass`, built from it), which
hands large histories to the columnar pass; the oracle runs its plain pass whatever the
history's size (`small_pass.plain_expectations_and_index`), so it stays a check of the
columnar pass that shares none of its code (only its containers, `Groups` and `CheckIndex`)."""

from __future__ import annotations

from typing import Iterable, Sequence

from hookproof.scenarios.check_index import CheckIndex
from hookproof.scenarios.observations import MONEY_PREFIXES, Expectations, Observation
from hookproof.scenarios.small_pass import plain_expectations_and_index
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event


def old_expectations_and_index(
    events: Iterable[Event], history: Sequence[Attempt], observations: Sequence[Observation], *,
    sender_timeout_s: float, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
) -> tuple[Expectations, CheckIndex]:
    """`expectations_and_index` as it was: the dict scan, then its index (no provider's words:
    the findings' text is compared with a pass given none either)."""
    return plain_expectations_and_index(events, history, observations, sender_timeout_s=sender_timeout_s,
                                        max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes)
