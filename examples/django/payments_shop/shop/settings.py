"""A minimal Django shop on django-payments' Stripe provider (``StripeProviderV3``).

Environment: ``SHOP_DB`` (the SQLite file), ``HOOKPROOF_SECRET`` (the endpoint's signing
secret), ``HOOKPROOF_API_KEY`` and ``HOOKPROOF_API_BASE`` (the provider API stripe-python
talks to: set in `orders.apps`); hookproof sets the last three for a receiver it starts
and for the seed command.
"""

import os

SECRET_KEY = "hookproof-payments-shop"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "payments", "orders"]
MIDDLEWARE: list[str] = []
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["SHOP_DB"],
                         "OPTIONS": {"timeout": 20}}}
ROOT_URLCONF = "shop.urls"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-payments (django-payments.readthedocs.io, "Installation" and "Stripe"):
PAYMENT_HOST = "shop.example"
PAYMENT_USES_SSL = True
PAYMENT_MODEL = "orders.Payment"
PAYMENT_VARIANTS = {
    "stripe": ("payments.stripe.StripeProviderV3", {
        "api_key": os.environ.get("HOOKPROOF_API_KEY", ""),
        "endpoint_secret": os.environ.get("HOOKPROOF_SECRET", ""),
        "secure_endpoint": True,
    }),
}
