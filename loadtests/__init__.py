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
