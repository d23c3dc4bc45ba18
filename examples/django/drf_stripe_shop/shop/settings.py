"""A minimal Django project around drf-stripe-subscription's webhook view.

Environment: ``SHOP_DB`` (the SQLite file), ``HOOKPROOF_SECRET`` (the endpoint's signing
secret), ``HOOKPROOF_API_KEY`` and ``HOOKPROOF_API_BASE`` (the provider API the stripe SDK
talks to); hookproof sets the last three for a receiver it starts.
"""

import os

SECRET_KEY = "hookproof-drf-stripe-shop"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "rest_framework", "drf_stripe", "grants"]
MIDDLEWARE: list[str] = []
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["SHOP_DB"],
                         "OPTIONS": {"timeout": 20}}}
ROOT_URLCONF = "shop.urls"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
REST_FRAMEWORK = {"DEFAULT_AUTHENTICATION_CLASSES": [], "UNAUTHENTICATED_USER": None}
DRF_STRIPE = {
    "STRIPE_API_SECRET": os.environ.get("HOOKPROOF_API_KEY", ""),
    "STRIPE_WEBHOOK_SECRET": os.environ.get("HOOKPROOF_SECRET", ""),
}
