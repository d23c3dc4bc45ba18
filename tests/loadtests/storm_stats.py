"""Locust's statistics of a storm user's attempts, logged the two ways `StormUser._attempt`
may log them: through Locust's request event, and straight to the runner's statistics
when the runner's listener is the event's only one (`storm_user.runner_logs_only`).

Run in its own process (it imports Locust, which monkey-patches the standard library):
``python -m tests.loadtests.storm_stats`` prints JSON: whether the runner logs alone,
before and after another listener is added, and the statistics of both ways.
"""

from __future__ import annotations

import json
from typing import Any

from locust.env import Environment

from hookproof.loadtests.storm_user import AnswerFailure, runner_logs_only

#: (name, response time ms, response length, failure or None)
ATTEMPTS = [("invoice.paid", 12.3, 10, None), ("invoice.paid", 40.0, 0, AnswerFailure("answered 500")),
            ("customer.created", 0.4, 2, None), ("invoice.paid", 2500.0, 0, AnswerFailure("no answer: timeout"))]


def _stats(env: Environment) -> dict[str, Any]:
    entries = {f"{k[1]} {k[0]}": [e.num_requests, e.num_failures, e.total_response_time, e.min_response_time,
                                  e.max_response_time, dict(e.response_times), e.total_content_length]
               for k, e in env.stats.entries.items()}
    t = env.stats.total
    return {"entries": entries, "total": [t.num_requests, t.num_failures, t.total_response_time, dict(t.response_times)],
            "errors": sorted(f"{e.method} {e.name} {e.error!r} {e.occurrences}" for e in env.stats.errors.values())}


def main() -> None:
    direct, fired = Environment(), Environment()
    direct.create_local_runner()
    fired.create_local_runner()
    alone = runner_logs_only(direct)
    for name, ms, length, failure in ATTEMPTS:
        direct.stats.log_request("POST", name, ms, length)  # as `StormUser._attempt` does when alone
        if failure is not None:
            direct.stats.log_error("POST", name, failure)
        fired.events.request.fire(request_type="POST", name=name, response_time=ms, response_length=length,
                                  exception=failure, context={}, response=None, url="http://127.0.0.1:9/w",
                                  start_time=0.0)
    fired.events.request.add_listener(lambda **_: None)
    print(json.dumps({"alone": alone, "alone_with_another_listener": runner_logs_only(fired),
                      "direct": _stats(direct), "fired": _stats(fired)}))


if __name__ == "__main__":
    main()
