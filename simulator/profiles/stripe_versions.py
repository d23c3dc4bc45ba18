"""Stripe objects at an API version: the world stores both shapes, `at_version` keeps one.

The world's objects (`hookproof.simulator.world.stripe_shapes`) carry the fields of the
latest shape and, beside them, the fields an older API version had in their place.
`at_version` keeps the shape of the version asked for, recursively (expanded objects
too). From 2022-11-15 a charge's ``refunds`` list is no longer in the charge unless it is
expanded (docs.stripe.com/changelog/2022-11-15/deprecates-charges-auto-expand: "The
``Charge`` object no longer auto-expands refunds"): the world keeps the list, and the
versions from 2022-11-15 on leave it out (the provider API adds it back for
``expand[]=refunds``). The other changes, all from Stripe's changelog for 2025-03-31.basil
(docs.stripe.com/changelog/basil):

======================  ===========================================  ==========================================
object                  before 2025-03-31                            from 2025-03-31 (basil)
======================  ===========================================  ==========================================
invoice                 ``subscription`` (id), ``payment_intent``,   ``parent.subscription_details.subscription``;
                        ``charge``, ``paid``,                         no ``subscription``, ``payment_intent``,
                        ``subscription_details``                     ``charge``, ``paid`` (payments are listed in
                                                                     ``payments``, includable)
invoice line_item       ``price`` (object), ``plan``, ``type``,      ``parent.subscription_item_details``,
                        ``proration``, ``subscription_item``,         ``pricing.price_details``
                        ``invoice_item``
subscription            ``current_period_start/end`` on the          ``current_period_start/end`` on each item
                        subscription
charge                  ``invoice``                                  no ``invoice``
======================  ===========================================  ==========================================

From 2026-03-25.dahlia a Checkout Session's ``ui_mode`` is ``hosted_page``, ``embedded_page`` or
``elements``, which replace ``hosted``, ``embedded`` and ``custom`` (docs.stripe.com/changelog/
dahlia/2026-03-25/updates-available-checkout-session-ui-modes): the world stores the new value and
the versions before it take the old one (`UI_MODES_RENAMED`).

A version is compared by its date (``YYYY-MM-DD``, the part before the release name).
"""

from __future__ import annotations

import copy
from typing import Any, Iterable, Mapping, cast

from hookproof.simulator.events import LATEST_API_VERSION, changed_attributes

#: Types copied by reference: immutable, and all a JSON scalar can be.
_ATOMIC: frozenset[type] = frozenset({str, int, float, bool, type(None)})

#: First API version with the basil shapes (docs.stripe.com/changelog/basil).
BASIL = "2025-03-31"
#: First API version whose charges leave out ``refunds`` unless expanded
#: (docs.stripe.com/changelog/2022-11-15/deprecates-charges-auto-expand).
CHARGE_REFUNDS_INCLUDABLE = "2022-11-15"

_OLD_ONLY: Mapping[str, tuple[str, ...]] = {
    "invoice": ("subscription", "payment_intent", "charge", "paid", "subscription_details"),
    "line_item": ("price", "plan", "type", "proration", "subscription_item", "invoice_item"),
    "subscription": ("current_period_start", "current_period_end"),
    "charge": ("invoice",),
}
_NEW_ONLY: Mapping[str, tuple[str, ...]] = {
    "invoice": ("parent",),
    "line_item": ("parent", "pricing"),
    "subscription_item": ("current_period_start", "current_period_end"),
}


#: First API version whose Checkout Sessions' ``ui_mode`` is ``hosted_page``, ``embedded_page`` or
#: ``elements`` (docs.stripe.com/changelog/dahlia/2026-03-25/updates-available-checkout-session-ui-modes:
#: they replace ``hosted``, ``embedded`` and ``custom``, which it removes).
UI_MODES_RENAMED = "2026-03-25"
#: A session's ``ui_mode`` before `UI_MODES_RENAMED`, by the value the world stores (the latest's).
_OLD_UI_MODES: Mapping[str, str] = {"hosted_page": "hosted", "embedded_page": "embedded", "elements": "custom"}
#: The kind whose values the versions before `UI_MODES_RENAMED` rename (present, with no field to
#: cut, in those versions' drop maps: `_renamed`).
_RENAMED_KIND = "checkout.session"


def _renamed(kind: object, value: Mapping[str, Any], drop: Mapping[str, tuple[str, ...]]) -> str | None:
    """The old ``ui_mode`` `value` (an object of `kind`) takes at a version whose drop map is
    `drop` (one before `UI_MODES_RENAMED` lists `_RENAMED_KIND`), or None: nothing to rename."""
    if kind != _RENAMED_KIND or kind not in drop:
        return None
    mode = value.get("ui_mode")
    return _OLD_UI_MODES.get(mode) if isinstance(mode, str) else None


def unmodelled(api_version: str) -> bool:
    """True when `api_version` is later than the latest version hookproof models
    (`LATEST_API_VERSION`), or another release of its date: objects are served in the latest
    modelled shape, without what that version changed."""
    date, name = (api_version.split(".", 1) + [""])[:2]
    latest_date = LATEST_API_VERSION.split(".", 1)[0]
    return date > latest_date or (date == latest_date and bool(name) and api_version != LATEST_API_VERSION)


def unmodelled_note(versions: Iterable[str]) -> str | None:
    """The run's one note on the API versions of `versions` hookproof does not model
    (`unmodelled`), or None when there are none."""
    later = sorted({v for v in versions if unmodelled(v)})
    if not later:
        return None
    return (f"the provider API served Stripe objects in the shape of {LATEST_API_VERSION}, the latest API "
            f"version hookproof models, to requests pinned to {', '.join(later)} (their Stripe-Version): what "
            f"{'that version changes' if len(later) == 1 else 'those versions change'} is not served; a receiver "
            f"that relies on it can pin its SDK to {LATEST_API_VERSION} for the run (stripe-node's apiVersion, "
            f"stripe-python's stripe.api_version, or stripe_version= of its StripeClient)")


def is_basil_or_later(api_version: str) -> bool:
    """True when `api_version` (``YYYY-MM-DD[.name]``) has the basil shapes."""
    return api_version.split(".", 1)[0] >= BASIL


#: First API version whose Connect events carry ``context`` beside ``account``, both the
#: connected account's id (docs.stripe.com/changelog/basil/2025-04-30/additional-context-organization-events).
EVENT_CONTEXT = "2025-04-30"


def has_event_context(api_version: str) -> bool:
    """True when `api_version`'s Connect events carry ``context`` (`EVENT_CONTEXT` on)."""
    return api_version.split(".", 1)[0] >= EVENT_CONTEXT


def charge_refunds_includable(api_version: str) -> bool:
    """True when `api_version` leaves a charge's ``refunds`` out unless it is expanded (2022-11-15 on)."""
    return api_version.split(".", 1)[0] >= CHARGE_REFUNDS_INCLUDABLE


def _drop(api_version: str) -> Mapping[str, tuple[str, ...]]:
    """Object kind -> the fields `api_version` does not have (and, before `UI_MODES_RENAMED`,
    `_RENAMED_KIND` with none: its ``ui_mode`` takes the old value, `_renamed`)."""
    if is_basil_or_later(api_version):
        return _BASIL_DROP if api_version.split(".", 1)[0] >= UI_MODES_RENAMED else _BASIL_DROP_OLD_UI
    return _INCLUDABLE_REFUNDS_DROP_OLD_UI if charge_refunds_includable(api_version) else _NEW_ONLY_OLD_UI


def shaped_kinds(api_version: str) -> frozenset[str]:
    """The object kinds (``object`` values) that have fields `at_version` may cut at `api_version`."""
    kinds = _SHAPED_KINDS.get(api_version)
    if kinds is None:
        kinds = frozenset(_drop(api_version))
        if len(_SHAPED_KINDS) < 256:  # a run renders at a few versions
            _SHAPED_KINDS[api_version] = kinds
    return kinds


def names_shaped_kind(body: bytes, kinds: frozenset[str]) -> bool:
    """True when the Stripe body `body` (`stripe_json.stripe_json`: ``"key": value``)
    holds an object whose ``object`` is one of `kinds` (`shaped_kinds`).

    JSON escapes every quote inside a string, so ``"object": "`` followed by a
    kind and a quote appears only where an object of that kind is: a rendering of values
    as they are stored that names none is already in the version's shape, byte for byte
    (what `StripeProfile.event_body` relies on).
    """
    at = body.find(b'"object": "')
    while at >= 0:
        start = at + 11
        end = body.find(b'"', start)
        if end < 0:
            return False
        if body[start:end].decode("utf-8", "replace") in kinds:
            return True
        at = body.find(b'"object": "', end)
    return False


#: The fields each range of versions does not have: from basil on, the older shape's and a
#: charge's ``refunds`` (``_OLD_ONLY`` has the charge); from 2022-11-15 to basil, the newer
#: shape's and a charge's ``refunds``; before 2022-11-15, the newer shape's.
_BASIL_DROP: Mapping[str, tuple[str, ...]] = {**_OLD_ONLY, "charge": (*_OLD_ONLY["charge"], "refunds")}
_INCLUDABLE_REFUNDS_DROP: Mapping[str, tuple[str, ...]] = {**_NEW_ONLY, "charge": ("refunds",)}
#: The same before `UI_MODES_RENAMED` (every version up to it): a session's ``ui_mode`` renamed back.
_BASIL_DROP_OLD_UI: Mapping[str, tuple[str, ...]] = {**_BASIL_DROP, _RENAMED_KIND: ()}
_INCLUDABLE_REFUNDS_DROP_OLD_UI: Mapping[str, tuple[str, ...]] = {**_INCLUDABLE_REFUNDS_DROP, _RENAMED_KIND: ()}
_NEW_ONLY_OLD_UI: Mapping[str, tuple[str, ...]] = {**_NEW_ONLY, _RENAMED_KIND: ()}
#: `shaped_kinds` of each version met so far.
_SHAPED_KINDS: dict[str, frozenset[str]] = {}


def at_version(obj: Mapping[str, Any], api_version: str, *, shared: bool = False) -> dict[str, Any]:
    """A deep copy of `obj` in the shape of `api_version` (see the module docstring).

    With `shared`, `obj` itself when it has that shape already (nothing to cut, JSON
    values only), else the copy: for a caller that only reads the result at once (an
    envelope rendered to bytes), never one that keeps or changes it.
    """
    drop = _drop(api_version)
    if shared and type(obj) is dict and not _to_cut(obj, drop):
        return cast("dict[str, Any]", obj)
    out: dict[str, Any] = _copy_cut(dict(obj), drop)
    return out


def _to_cut(value: dict[str, Any] | list[Any], drop: Mapping[str, tuple[str, ...]]) -> bool:
    """True when `value` holds a field `drop` names, or a value other than a JSON one."""
    if type(value) is dict:
        kind = value.get("object")
        if isinstance(kind, str) and kind in drop and (any(k in value for k in drop[kind])
                                                       or _renamed(kind, value, drop) is not None):
            return True
        children: Any = value.values()
    else:
        children = value
    for v in children:
        t = type(v)
        if t in _ATOMIC:
            continue
        if t is not dict and t is not list or _to_cut(v, drop):
            return True
    return False


def _copy_cut(value: Any, drop: Mapping[str, tuple[str, ...]]) -> Any:
    """A deep copy of `value` without the fields `drop` names for each object kind, in one
    pass (dicts and lists copied, scalars shared, anything else copied by `copy.deepcopy`)."""
    t = type(value)
    if t is dict:
        kind = value.get("object")
        gone = drop.get(kind, ()) if isinstance(kind, str) else ()
        out = {k: v if type(v) in _ATOMIC else _copy_cut(v, drop) for k, v in value.items() if k not in gone}
        if (old := _renamed(kind, value, drop)) is not None:
            out["ui_mode"] = old
        return out
    if t is list:
        return [v if type(v) in _ATOMIC else _copy_cut(v, drop) for v in value]
    if t in _ATOMIC:
        return value
    out = copy.deepcopy(value)  # anything else (a tuple, a dict subclass): copied, then cut, as before
    _cut(out, drop)
    return out


def _cut(value: Any, drop: Mapping[str, tuple[str, ...]]) -> None:
    if isinstance(value, list):
        for item in value:
            _cut(item, drop)
        return
    if not isinstance(value, dict):
        return
    kind = value.get("object")
    for key in drop.get(kind, ()) if isinstance(kind, str) else ():
        value.pop(key, None)
    if (old := _renamed(kind, value, drop)) is not None:
        value["ui_mode"] = old
    for child in value.values():
        _cut(child, drop)


def previous_at_version(previous: Mapping[str, Any], obj: Mapping[str, Any], api_version: str) -> dict[str, Any]:
    """An event's ``previous_attributes`` in the shape of `api_version`, beside `obj`, its
    object already rendered at that version (`at_version`): cut as an object of `obj`'s kind
    would be, then only the entries whose value differs from `obj`'s (`changed_attributes`).

    The world records what changed in both shapes (a renewal's ``current_period_*`` on the
    subscription and on each item); a version sees only the fields it has, and an entry
    equal at that version (an item's period, cut before basil) did not change in it.
    """
    kind = obj.get("object")
    if isinstance(kind, str) and "object" not in previous:
        shaped = at_version({**previous, "object": kind}, api_version)
        del shaped["object"]
    else:
        shaped = at_version(previous, api_version)
    return changed_attributes(shaped, obj)
