from django.db import models


class Grant(models.Model):
    """One access grant: the shop's effect, one row each time it provisions a subscription."""

    business_key = models.CharField(max_length=200, db_index=True)
    price_id = models.CharField(max_length=256)
    granted_at = models.DateTimeField(auto_now_add=True)
