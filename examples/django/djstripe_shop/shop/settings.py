"""A minimal Django project with dj-stripe's webhook view and the shop's effects.

Environment: ``SHOP_DB`` (the SQLite file), ``HOOKPROOF_API_KEY`` (the Stripe secret key) and
``HOOKPROOF_API_BASE`` (the provider API the stripe SDK talks to); hookproof sets both for a
receiver it starts.
"""

import os

SECRET_KEY = "hookproof-djstripe-shop"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "djstripe", "effects"]
MIDDLEWARE: list[str] = []
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["SHOP_DB"],
                         "OPTIONS": {"timeout": 30}}}
ROOT_URLCONF = "shop.urls"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
STRIPE_LIVE_MODE = False
STRIPE_TEST_SECRET_KEY = os.environ.get("HOOKPROOF_API_KEY", "")
DJSTRIPE_FOREIGN_KEY_TO_FIELD = "id"
