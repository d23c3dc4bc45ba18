"""Provider profiles: sign and envelope events exactly like each provider.

`get_profile(name)` returns a profile instance; `PROFILES` lists the shipped names.
``get_profile("generic-hmac", settings={...})`` configures the generic HMAC sender.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the module that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "Envelope": "hookproof.simulator.profiles.base",
    "GenericHmacProfile": "hookproof.simulator.profiles.generic_hmac",
    "GenericHmacSettings": "hookproof.simulator.profiles.generic_hmac",
    "GitHubProfile": "hookproof.simulator.profiles.github",
    "MercadoPagoProfile": "hookproof.simulator.profiles.mercadopago",
    "PROFILES": "hookproof.simulator.profiles.registry",
    "PaddleProfile": "hookproof.simulator.profiles.paddle",
    "Profile": "hookproof.simulator.profiles.base",
    "ProfileError": "hookproof.simulator.errors",
    "RENAMING_PROFILES": "hookproof.simulator.profiles.registry",
    "STRIPE_EVENT_TYPES": "hookproof.simulator.profiles.stripe",
    "ShopifyProfile": "hookproof.simulator.profiles.shopify",
    "SignedRequest": "hookproof.simulator.profiles.base",
    "StandardWebhooksProfile": "hookproof.simulator.profiles.standard_webhooks",
    "StripeProfile": "hookproof.simulator.profiles.stripe",
    "SvixProfile": "hookproof.simulator.profiles.standard_webhooks",
    "Tolerance": "hookproof.simulator.profiles.base",
    "canonical_json": "hookproof.simulator.profiles.base",
    "get_profile": "hookproof.simulator.profiles.registry",
}

if TYPE_CHECKING:
    from hookproof.simulator.errors import ProfileError
    from hookproof.simulator.profiles.base import Envelope, Profile, SignedRequest, Tolerance, canonical_json
    from hookproof.simulator.profiles.generic_hmac import GenericHmacProfile, GenericHmacSettings
    from hookproof.simulator.profiles.github import GitHubProfile
    from hookproof.simulator.profiles.mercadopago import MercadoPagoProfile
    from hookproof.simulator.profiles.paddle import PaddleProfile
    from hookproof.simulator.profiles.registry import PROFILES, RENAMING_PROFILES, get_profile
    from hookproof.simulator.profiles.shopify import ShopifyProfile
    from hookproof.simulator.profiles.standard_webhooks import StandardWebhooksProfile, SvixProfile
    from hookproof.simulator.profiles.stripe import STRIPE_EVENT_TYPES, StripeProfile

__all__ = [
    "Envelope",
    "GenericHmacProfile",
    "GenericHmacSettings",
    "GitHubProfile",
    "MercadoPagoProfile",
    "PROFILES",
    "PaddleProfile",
    "Profile",
    "ProfileError",
    "RENAMING_PROFILES",
    "STRIPE_EVENT_TYPES",
    "ShopifyProfile",
    "SignedRequest",
    "StandardWebhooksProfile",
    "StripeProfile",
    "SvixProfile",
    "Tolerance",
    "canonical_json",
    "get_profile",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
