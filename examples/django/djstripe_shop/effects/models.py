from django.db import models


class Effect(models.Model):
    """One business effect the shop applied (a license, a fulfilment, a renewal, a dunning
    step, a refund), written by the signal handler of the event that caused it."""

    business_key = models.CharField(max_length=200, db_index=True)
    event_id = models.CharField(max_length=200)
    amount = models.BigIntegerField(null=True)
    applied_at = models.DateTimeField(auto_now_add=True)
