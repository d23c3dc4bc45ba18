"""Delivery: the at-least-once dispatcher, its transports, race bursts, the attempt core, and the history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "Attempt": "hookproof.simulator.delivery.history",
    "Broke": "hookproof.simulator.delivery.attempt_core",
    "Completion": "hookproof.simulator.delivery.history",
    "DeliveryResult": "hookproof.simulator.delivery.dispatcher",
    "Dispatcher": "hookproof.simulator.delivery.dispatcher",
    "FaultOp": "hookproof.simulator.delivery.history",
    "Grade": "hookproof.simulator.delivery.attempt_core",
    "History": "hookproof.simulator.delivery.history",
    "Observed": "hookproof.simulator.delivery.attempt_core",
    "Outcome": "hookproof.simulator.delivery.history",
    "READ_CAP_BYTES": "hookproof.simulator.delivery.attempt_core",
    "TIME_SCALE": "hookproof.simulator.delivery.dispatcher",
    "Target": "hookproof.simulator.delivery.transports",
    "completion_for": "hookproof.simulator.delivery.history",
    "grade": "hookproof.simulator.delivery.attempt_core",
    "load_history": "hookproof.simulator.delivery.history",
    "make_client": "hookproof.simulator.delivery.transports",
    "retry_delay_s": "hookproof.simulator.delivery.attempt_core",
    "url_problem": "hookproof.simulator.delivery.transports",
}


if TYPE_CHECKING:
    from hookproof.simulator.delivery.attempt_core import READ_CAP_BYTES, Broke, Grade, Observed, grade, retry_delay_s
    from hookproof.simulator.delivery.dispatcher import TIME_SCALE, DeliveryResult, Dispatcher
    from hookproof.simulator.delivery.history import (
        Attempt,
        Completion,
        FaultOp,
        History,
        Outcome,
        completion_for,
        load_history,
    )
    from hookproof.simulator.delivery.transports import Target, make_client, url_problem

__all__ = [
    "Attempt",
    "Broke",
    "Completion",
    "DeliveryResult",
    "Dispatcher",
    "FaultOp",
    "Grade",
    "History",
    "Observed",
    "Outcome",
    "READ_CAP_BYTES",
    "TIME_SCALE",
    "Target",
    "completion_for",
    "grade",
    "load_history",
    "make_client",
    "retry_delay_s",
    "url_problem",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
