from django.db import models
from payments.models import BasePayment


class Payment(BasePayment):
    """The shop's payment: django-payments' own model (``PAYMENT_MODEL``)."""

    def get_failure_url(self) -> str:
        return f"https://shop.example/orders/{self.pk}/failed"

    def get_success_url(self) -> str:
        return f"https://shop.example/orders/{self.pk}/thanks"


class Fulfilment(models.Model):
    """The shop's effect: one row each time it ships an order."""

    business_key = models.CharField(max_length=200, db_index=True)
    payment = models.ForeignKey(Payment, on_delete=models.CASCADE)
    shipped_at = models.DateTimeField(auto_now_add=True)
