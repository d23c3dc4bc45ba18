"""Provider profiles: sign and envelope events exactly like each provider.

`get_profile(name)` returns a profile instance; `PROFILES` lists the shipped names.
"""

from __future__ import annotations

from simulator.errors import ProfileError
from simulator.profiles.base import Envelope, Profile, SignedRequest, Tolerance, canonical_json
from simulator.profiles.stripe import StripeProfile

_REGISTRY: dict[str, type[Profile]] = {
    StripeProfile.name: StripeProfile,
}

PROFILES: tuple[str, ...] = tuple(sorted(_REGISTRY))


def get_profile(name: str) -> Profile:
    """The profile called `name`. Raises ProfileError naming the known profiles."""
    try:
        return _REGISTRY[name]()
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ProfileError(f"unknown profile {name!r} (known: {known})", field="profile") from None


__all__ = [
    "Envelope",
    "PROFILES",
    "Profile",
    "SignedRequest",
    "StripeProfile",
    "Tolerance",
    "canonical_json",
    "get_profile",
]
