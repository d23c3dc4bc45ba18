"""Delivery: the at-least-once dispatcher, its transports, race bursts, the attempt core, and the history."""

from hookproof.simulator.delivery.attempt_core import Broke, Grade, Observed, grade, retry_delay_s
from hookproof.simulator.delivery.dispatcher import READ_CAP_BYTES, TIME_SCALE, DeliveryResult, Dispatcher
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
