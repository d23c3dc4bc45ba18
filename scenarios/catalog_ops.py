"""The operations `explore` may ask of a user catalog's world (`simulator.world.user_catalog`).

A catalog world has no lifecycle of its own beyond its types: the first type of each
object kind (catalog order) makes a new object, every other type of that kind happens to
an existing one (by its index among the objects of its kind, as `scenarios.world_ops`
refers to objects), and only when it moves the object forward: a type that sets a
status is drawn only for objects whose status comes before it in the order the catalog's
types set them (`UserCatalogWorld.moves_forward`; a provider does not confirm a
confirmed booking twice), or, an update keeping the status an earlier type set, for
objects in that status (a user's ``user.updated``, again and again); nothing happens to
an object after a type ending it (``…deleted``: `user_catalog.ends_object`). The action names are the user's event types, so a failing schedule
reads in the user's terms (``invoice.paid 0``). A type whose body names other objects
(`EventSpec.refs`: a membership's user) names one of that kind the world made already, or
the world makes it first, by its kind's first type, in the same step (`UserCatalogWorld.emit`):
the parent's event is emitted, and delivered, before the child's.
"""

from __future__ import annotations

from typing import Any

from hookproof.scenarios.world_ops import Action, WorldOps
from hookproof.simulator.errors import WorldError


def catalog_ops(kind: str) -> WorldOps:
    """The operations of the registered catalog world `kind` (``catalog:<digest>``).

    Raises ValueError for a kind no catalog was registered under.
    """
    from hookproof.simulator.world.registry import CATALOGS

    catalog = CATALOGS.get(kind)
    if catalog is None:
        raise ValueError(f"no user catalog is registered as {kind!r}")
    firsts: dict[str, str] = {}
    for spec in catalog.events:
        firsts.setdefault(spec.kind, spec.type)

    def legal(world: Any) -> list[Action]:
        out: list[Action] = [(first, None) for first in firsts.values()]
        for spec in catalog.events:
            if firsts[spec.kind] != spec.type:
                out += [(spec.type, i) for i, oid in enumerate(world.objects(spec.kind))
                        if world.moves_forward(spec.type, oid)]
        return out

    def apply(world: Any, action: str, index: int | None) -> None:
        try:
            spec = catalog.spec(action)
        except WorldError:
            raise WorldError(f"unknown action {action!r} (known: {', '.join(catalog.types)})") from None
        if index is None:
            if firsts[spec.kind] != action:
                raise WorldError(f"{action}: happens to an existing {spec.kind} (give its index)")
            world.emit(action)
            return
        ids = world.objects(spec.kind)
        if not 0 <= index < len(ids):
            raise WorldError(f"{action}: no {spec.kind} #{index}")
        if (ended := world.ended_by(ids[index])) is not None:
            raise WorldError(f"{action}: {spec.kind} #{index} was ended by its {ended}: nothing happens to it after")
        if not world.moves_forward(action, ids[index]):
            raise WorldError(f"{action}: {spec.kind} #{index} is already past the status it sets "
                             f"(order: {', '.join(world.statuses(spec.kind))})")
        world.emit(action, ids[index])

    return WorldOps(kind, catalog.types, legal, apply)


__all__ = ["catalog_ops"]
