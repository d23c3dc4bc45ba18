"""The shipped profiles by name: `get_profile(name)`, `PROFILES`."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.profiles.generic_hmac import GenericHmacProfile, GenericHmacSettings
from hookproof.simulator.profiles.github import GitHubProfile
from hookproof.simulator.profiles.mercadopago import MercadoPagoProfile
from hookproof.simulator.profiles.paddle import PaddleProfile
from hookproof.simulator.profiles.shopify import ShopifyProfile
from hookproof.simulator.profiles.standard_webhooks import (
    StandardWebhooksProfile,
    StandardWebhooksSettings,
    SvixProfile,
)
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.world.user_catalog import UserCatalog

_REGISTRY: dict[str, type[Profile]] = {
    profile.name: profile
    for profile in (
        GenericHmacProfile,
        GitHubProfile,
        MercadoPagoProfile,
        PaddleProfile,
        ShopifyProfile,
        StandardWebhooksProfile,
        StripeProfile,
        SvixProfile,
    )
}

PROFILES: tuple[str, ...] = tuple(sorted(_REGISTRY))


def signature_inputs(name: str) -> str | None:
    """`Profile.signature_inputs` of the profile called `name` (None for a name not shipped)."""
    profile = _REGISTRY.get(name)
    return profile.signature_inputs if profile is not None else None


#: The profiles that rename the billing world's types (`STANDARD_EVENT_TYPES`) and take `names`.
RENAMING_PROFILES: tuple[str, ...] = (StandardWebhooksProfile.name, SvixProfile.name)


Settings = GenericHmacSettings | StandardWebhooksSettings | Mapping[str, Any]


def get_profile(name: str, *, settings: Settings | None = None,
                names: Mapping[str, str] | None = None, subscribed: Iterable[str] = ()) -> Profile:
    """The profile called `name`.

    `settings` configures ``generic-hmac`` (a `GenericHmacSettings` or a mapping of its
    fields; None = defaults), and standard-webhooks and svix (a `StandardWebhooksSettings`
    or a mapping: ``secret_encoding``), and must be None for every other profile. `names` (Stripe
    type -> the name sent) respells types of standard-webhooks and svix, which have no
    fixed catalog (None or empty: the default renaming). `subscribed` names the profile's
    `Profile.optional_types` the endpoint is subscribed to (Shopify's compliance topics; empty:
    none). Raises ProfileError naming the known profiles, or the failing setting (``field``).
    """
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise ProfileError(f"unknown profile {name!r} (known: {known})", field="profile")
    if name == GenericHmacProfile.name:
        return GenericHmacProfile(settings)  # type: ignore[arg-type]
    if settings is not None and name not in RENAMING_PROFILES:
        raise ProfileError(f"profile {name!r} takes no settings", field="settings")
    chosen = tuple(dict.fromkeys(subscribed))
    if chosen:
        optional = _REGISTRY[name].optional_types
        wrong = [t for t in chosen if t not in optional]
        if wrong:
            raise ProfileError(f"profile {name!r} has no optional type {wrong[0]!r} to subscribe to (optional: "
                               f"{', '.join(optional) or 'none'})", field="subscribed")
        return _REGISTRY[name](subscribed=chosen)
    if names and name not in RENAMING_PROFILES:
        raise ProfileError(f"profile {name!r} sends its provider's own names", field="names")
    if name in RENAMING_PROFILES:
        return _REGISTRY[name](names=names or None, settings=settings)  # type: ignore[call-arg]
    return _REGISTRY[name]()


#: Profiles that send a user's own catalog of events (`profile_with_catalog`).
CATALOG_PROFILE_NAMES: tuple[str, ...] = (GenericHmacProfile.name, StandardWebhooksProfile.name, SvixProfile.name)


def profile_with_catalog(name: str, catalog: UserCatalog, *, settings: Settings | None = None) -> Profile:
    """The profile called `name` sending `catalog`'s events (generic-hmac, standard-webhooks,
    svix, signing with `settings` as `get_profile` takes them, None = defaults).
    Raises ProfileError for a profile that sends its provider's own events, or the failing
    setting."""
    if name == GenericHmacProfile.name:
        return GenericHmacProfile(settings, catalog=catalog)  # type: ignore[arg-type]
    if name == StandardWebhooksProfile.name:
        return StandardWebhooksProfile(catalog=catalog, settings=settings)  # type: ignore[arg-type]
    if name == SvixProfile.name:
        return SvixProfile(catalog=catalog, settings=settings)  # type: ignore[arg-type]
    raise ProfileError(f"the {name} profile sends its provider's own events; a catalog is for "
                       f"{', '.join(CATALOG_PROFILE_NAMES)}", field="catalog")
