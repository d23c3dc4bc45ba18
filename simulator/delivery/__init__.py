"""Delivery: the at-least-once dispatcher, its transports, race bursts, and the history."""

from hookproof.simulator.delivery.dispatcher import READ_CAP_BYTES, TIME_SCALE, DeliveryResult, Dispatcher
from hookproof.simulator.delivery.history import Attempt, Completion, FaultOp, History, Outcome, completion_for, load_history
from hookproof.simulator.delivery.transports import Target, make_client, url_problem

__all__ = [
    "Attempt",
    "Completion",
    "DeliveryResult",
    "Dispatcher",
    "FaultOp",
    "History",
    "Outcome",
    "READ_CAP_BYTES",
    "TIME_SCALE",
    "Target",
    "completion_for",
    "load_history",
    "make_client",
    "url_problem",
]
