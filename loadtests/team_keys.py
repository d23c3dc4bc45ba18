"""A team's business keys and counters in a storm: templates over each event as it was sent.

A storm's records carry slim events (no object snapshot, `loadtests.stories`), so a
team's templates (`scenarios.business_keys`: ``fulfil:{id}`` over a Shopify order,
``grant:{data.id}`` over a Paddle notification) cannot be read from them. `StormKeyMapping`
reads them as certify does, over the body the profile renders for the full event: a slim
event is found in its process's template world (its id renamed back,
`storm_truth.renamer_of`) and renamed to its copy again, which is exactly what its sender
rendered (`StoryBook.rendered_by_profile`, proven equal to the joined segments).

`check_templates` evaluates every template over every event a storm's templates send,
before the storm starts: a template error is the config's (`KeyCheckError`), never the
storm's end. Pure; no Locust import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hookproof.loadtests.spec import StormSpec
from hookproof.scenarios.business_keys import KeyMapping, TemplateError, from_plain
from hookproof.simulator.events import Event


class KeyCheckError(ValueError):
    """A team's template that an event of the storm cannot fill.

    Attributes:
        section: ``business_keys`` or ``counters`` (the config table).
        event_type: the event type, in the world's names (`Profile.event_types` maps it).
    """

    def __init__(self, message: str, *, section: str, event_type: str) -> None:
        super().__init__(message)
        self.section = section
        self.event_type = event_type


@dataclass(frozen=True)
class StormKeyMapping(KeyMapping):
    """A `KeyMapping` whose payload of a storm event is the body its sender rendered.

    Attributes:
        worlds: the template worlds the storm's processes replayed
            (`storm_truth.template_worlds`); an event none of them knows is rendered as it is.
    """

    worlds: Sequence[Any] = ()
    _sources: list[tuple[Any, dict[str, Event]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from hookproof.loadtests.storm_truth import renamer_of

        object.__setattr__(self, "_sources", [(renamer_of(w), {e.id: e for e in w.events}) for w in self.worlds])

    def full_event(self, event: Event) -> Event:
        """`event` (slim or full) as its sender rendered it: its template renamed to its copy."""
        for renamer, index in self._sources:
            if event.id in index:
                return index[event.id]
            found = renamer.original(event.id)
            template = index.get(found[0]) if found is not None else None
            if found is not None and template is not None:
                return renamer.events([template], found[1])[0]
        return event

    def payload(self, event: Event) -> Any:
        """The body the provider sent for `event` (see the class), decoded."""
        return super().payload(self.full_event(event))

    def fetched(self, event: Event) -> Any:
        """The object the provider's API serves at `event`: its sender's full event's
        (a slim event carries no object snapshot)."""
        return self.full_event(event).object


def storm_keys(spec: StormSpec, worlds: Sequence[Any]) -> StormKeyMapping | None:
    """The team's mapping of a storm (``spec.keys``) over the template `worlds` its
    processes replayed, or None without team keys."""
    if not spec.keys:
        return None
    plain = from_plain(spec.keys, spec.sending_profile())
    return StormKeyMapping(plain.templates, plain.profile, plain.counters, builtin=plain.builtin,
                           conditions=plain.conditions, more=plain.more, exclusions=plain.exclusions,
                           worlds=tuple(worlds))


def check_templates(spec: StormSpec) -> None:
    """Evaluate every team template over every event the storm's first template world
    sends (only ``spec.enabled_types``), before the storm.

    Raises KeyCheckError naming the table, the event type and the missing field.
    """
    from hookproof.loadtests.storm_truth import template_worlds

    mapping = storm_keys(spec, ())
    if mapping is None:
        return
    enabled = set(spec.enabled_types) if spec.enabled_types is not None else None
    for event in template_worlds(spec, 1)[0].events:
        if enabled is not None and event.type not in enabled:
            continue
        section = "business_keys"
        try:
            mapping.check(event)  # every rule's template and every path of its `when`, held or not
            mapping.key_of(event)
            section = "counters"
            mapping.counter_of(event)
        except TemplateError as exc:
            raise KeyCheckError(str(exc), section=section, event_type=event.type) from None


__all__ = ["KeyCheckError", "StormKeyMapping", "check_templates", "storm_keys"]
