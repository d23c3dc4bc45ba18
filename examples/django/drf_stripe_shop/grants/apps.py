"""The shop's own code on top of drf-stripe-subscription: access granted per subscription item.

drf-stripe-subscription offers no hook of its own; the way a team reacts to a new
subscription is Django's ``post_save`` on the package's models. The shop grants access
(here: one `Grant` row, the effect hookproof observes) when a subscription item is
created, under the business key ``access:<subscription id>``.
"""

import os

from django.apps import AppConfig


class GrantsConfig(AppConfig):
    name = "grants"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import stripe
        from django.db.models.signals import post_save
        from drf_stripe.models import SubscriptionItem

        from grants.models import Grant

        stripe.api_base = os.environ.get("HOOKPROOF_API_BASE", stripe.api_base)

        def grant_access(sender, instance, created, **kwargs):
            if created:
                Grant.objects.create(business_key=f"access:{instance.subscription_id}", price_id=instance.price_id)

        post_save.connect(grant_access, sender=SubscriptionItem, weak=False, dispatch_uid="grants.grant_access")
