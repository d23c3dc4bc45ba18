"""Load storms: Locust users that play the provider at rate, ending in certify's checks.

The Locust glue is `loadtests/locustfile.py`, run in its own processes by
``hookproof storm`` (never imported here: Locust monkey-patches the standard library).
This package's pure parts are importable anywhere:

- `shape`: the offered rate as a function of elapsed seconds (steady, ramp, spike, soak);
- `stories`: world stories built once per process and replayed with fresh ids;
- `plan`: what a user sends next (duplicates, concurrent bursts, reordering, waves);
- `records`: attempt records with the history's completion semantics, and their wire form;
- `spec`: the storm's JSON spec and the secrets' environment variable;
- `collect`: the master's gathering of every worker's records;
- `verdict`: settle, check and report at the end of a storm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "Collector": "hookproof.loadtests.collect",
    "DONE_MESSAGE": "hookproof.loadtests.collect",
    "LoadShape": "hookproof.loadtests.shape",
    "RECORDS_MESSAGE": "hookproof.loadtests.collect",
    "Rendered": "hookproof.loadtests.stories",
    "SECRETS_ENV": "hookproof.loadtests.spec",
    "SHAPE_KINDS": "hookproof.loadtests.shape",
    "SPEC_ENV": "hookproof.loadtests.spec",
    "STORM_CHECKS": "hookproof.loadtests.verdict",
    "STORM_SCENARIO": "hookproof.loadtests.records",
    "Send": "hookproof.loadtests.plan",
    "SpecError": "hookproof.loadtests.spec",
    "StormOutcome": "hookproof.loadtests.verdict",
    "StormPlan": "hookproof.loadtests.plan",
    "StormSpec": "hookproof.loadtests.spec",
    "StoryBook": "hookproof.loadtests.stories",
    "attempt_from_wire": "hookproof.loadtests.records",
    "attempt_to_wire": "hookproof.loadtests.records",
    "event_from_wire": "hookproof.loadtests.records",
    "event_to_wire": "hookproof.loadtests.records",
    "finish_storm": "hookproof.loadtests.verdict",
    "make_attempt": "hookproof.loadtests.records",
    "make_shape": "hookproof.loadtests.shape",
    "outcome_of": "hookproof.loadtests.records",
    "renamed": "hookproof.loadtests.stories",
    "secrets_from_env": "hookproof.loadtests.spec",
    "secrets_to_env": "hookproof.loadtests.spec",
    "send_times": "hookproof.loadtests.shape",
    "storm_scenario": "hookproof.loadtests.verdict",
    "story_events": "hookproof.loadtests.stories",
    "throughput": "hookproof.loadtests.verdict",
    "wave_times": "hookproof.loadtests.shape",
}


if TYPE_CHECKING:
    from hookproof.loadtests.collect import DONE_MESSAGE, RECORDS_MESSAGE, Collector
    from hookproof.loadtests.plan import Send, StormPlan
    from hookproof.loadtests.records import (
                                   STORM_SCENARIO,
                                   attempt_from_wire,
                                   attempt_to_wire,
                                   event_from_wire,
                                   event_to_wire,
                                   make_attempt,
                                   outcome_of,
    )
    from hookproof.loadtests.shape import SHAPE_KINDS, LoadShape, make_shape, send_times, wave_times
    from hookproof.loadtests.spec import SECRETS_ENV, SPEC_ENV, SpecError, StormSpec, secrets_from_env, secrets_to_env
    from hookproof.loadtests.stories import Rendered, StoryBook, renamed, story_events
    from hookproof.loadtests.verdict import STORM_CHECKS, StormOutcome, finish_storm, storm_scenario, throughput

__all__ = [
    "Collector",
    "DONE_MESSAGE",
    "LoadShape",
    "RECORDS_MESSAGE",
    "Rendered",
    "SECRETS_ENV",
    "SHAPE_KINDS",
    "SPEC_ENV",
    "STORM_CHECKS",
    "STORM_SCENARIO",
    "Send",
    "SpecError",
    "StormOutcome",
    "StormPlan",
    "StormSpec",
    "StoryBook",
    "attempt_from_wire",
    "attempt_to_wire",
    "event_from_wire",
    "event_to_wire",
    "finish_storm",
    "make_attempt",
    "make_shape",
    "outcome_of",
    "renamed",
    "secrets_from_env",
    "secrets_to_env",
    "send_times",
    "storm_scenario",
    "story_events",
    "throughput",
    "wave_times",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
