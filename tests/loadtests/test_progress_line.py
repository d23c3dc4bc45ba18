"""The storm's live progress line names unanswered attempts apart from answered non-2xx ones.

A storm whose every answer was a late 200 (past the sender timeout) showed ``385 non-2xx``:
Locust counts an attempt with no answer as a failure like a 500. Now the master's progress
file counts them apart (`storm_master.unanswered`) and the line reads ``0 non-2xx, 385
unanswered``."""

from __future__ import annotations

import json
import subprocess
import sys

from hookproof.commands.storm import progress_detail

#: Run in its own process: importing Locust monkey-patches the standard library. Three timeouts and
#: a cut connection (a worker's exception, and as the master holds a worker's: its text), one 500.
COUNT = """
import json
from locust.stats import RequestStats
from hookproof.loadtests.storm_master import unanswered
from hookproof.loadtests.storm_user import NO_ANSWER, AnswerFailure
stats = RequestStats()
for _ in range(3):
    stats.log_request("POST", "invoice.paid", 10_000, 0)
    stats.log_error("POST", "invoice.paid", AnswerFailure(NO_ANSWER + "timed out after 10 s"))
stats.log_request("POST", "invoice.paid", 12, 7)
stats.log_error("POST", "invoice.paid", AnswerFailure("answered 500"))
stats.log_request("POST", "customer.created", 5, 2)
stats.log_error("POST", "customer.created", repr(AnswerFailure(NO_ANSWER + "connection reset")))
stats.log_request("POST", "customer.created", 5, 2)
print(json.dumps([stats.total.num_failures, unanswered(stats), unanswered(None)]))
"""


def test_unanswered_attempts_are_counted_apart_from_answered_non_2xx() -> None:
    run = subprocess.run([sys.executable, "-c", COUNT], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(run.stdout) == [5, 4, 0]


def test_the_line_says_non_2xx_and_unanswered_apart() -> None:
    data = {"requests": 385, "rps": 12.5, "failures": 0, "unanswered": 385, "workers": 2}
    assert progress_detail(data) == "385 sent, 12.5/s now, 0 non-2xx, 385 unanswered, 2 worker(s)"
    assert progress_detail({}) == "0 sent, 0/s now, 0 non-2xx, 0 unanswered, 0 worker(s)"
