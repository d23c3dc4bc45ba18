"""What the receiver already held of a scenario before its first delivery.

A scenario's world is fresh (its ids and business keys drawn from the run's seed and the
scenario's id, `runner.scenario_seed`), so a receiver on a fresh database shows none of them
before the scenario sends anything. Against a database kept from an earlier run of the same
seed (``run.seed``, ``--seed N``) every event id and business key is that run's again: the
receiver dedupes every delivery as already seen and applies nothing, and the effect rows and
states it still holds are the earlier run's, each once. Every check would then pass whatever
the receiver does, so the runner reads the receiver once before the first delivery and a
scenario whose keys or objects were there already is not judged (an ``error`` with
`Leftovers.reason`).

What another scenario of the same run also sends (a team's key over a field every story
shares; GitHub's installation, which is `target.account` in every world) is left out by the
runner, as is the account's own object: only a world's own ids and keys tell an earlier run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet

from hookproof.scenarios.business_keys import scoped
from hookproof.scenarios.observations import Observation

#: What the reason of a scenario not judged for leftovers begins with (how a run's headline
#: finds them, `hookproof.headline.leftovers_headline`).
LEFTOVERS_PREFIX = "the receiver already held "


@dataclass(frozen=True)
class Leftovers:
    """What one read before a scenario's first delivery showed of the scenario.

    Attributes:
        keys: its business keys the read showed an effect of, sorted.
        of_keys: the business keys it was about to send, with those (a key naming one of
            its objects, hookproof's ``refund:<payment>:…``, counts although no event carries it).
        objects: its objects the read showed a state of, sorted.
    """

    keys: tuple[str, ...]
    of_keys: int
    objects: tuple[str, ...]

    def reason(self, seed: int) -> str:
        """The scenario's reason: how many of its keys and objects were there, one of each,
        and the likely cause (`seed`: the run's seed, for the ``--seed`` to change)."""
        held = []
        if self.keys:
            held.append(f"{len(self.keys)} of its {self.of_keys} business key(s) (e.g. {self.keys[0]})")
        if self.objects:
            held.append(f"a state for {len(self.objects)} of its object(s) (e.g. {self.objects[0]})")
        return (f"{LEFTOVERS_PREFIX}{' and '.join(held)} before the scenario's first delivery: a receiver that "
                "dedupes them would apply nothing new and every check would pass, so nothing was sent and the "
                f"scenario was not judged; likely cause: {kept_database(seed)}")


def kept_database(seed: int) -> str:
    """The likely cause of leftovers, and what to do, for a run of `seed`."""
    return (f"a database kept from an earlier run with the same seed (run.seed / --seed {seed}): use a fresh "
            "database, or another seed")


def leftovers(before: Observation, object_ids: AbstractSet[str], keys: AbstractSet[str]) -> Leftovers | None:
    """What `before` (one read of the whole receiver, before the scenario's first delivery)
    shows of a scenario whose world holds `object_ids` and whose events carry `keys`:
    effects under its keys or naming one of its objects (`business_keys.scoped`), states of
    its objects; None when it shows nothing of them (a fresh database). Counters are not
    looked at (a counter may sum several scenarios' amounts). Pure."""
    part = scoped(before, object_ids, keys)
    held_keys = tuple(sorted(part.counts()))
    held_objects = tuple(sorted({s.object_id for s in part.states}))
    if not held_keys and not held_objects:
        return None
    return Leftovers(held_keys, len(set(keys).union(held_keys)), held_objects)


__all__ = ["LEFTOVERS_PREFIX", "Leftovers", "kept_database", "leftovers"]
