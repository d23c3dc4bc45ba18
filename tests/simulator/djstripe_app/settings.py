"""A minimal Django project with dj-stripe, pointed at hookproof's provider API (test use only)."""

import os

SECRET_KEY = "hookproof-djstripe-test"
DEBUG = False
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "djstripe"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["DJSTRIPE_DB"]}}
ROOT_URLCONF = "urls"
USE_TZ = True
ALLOWED_HOSTS = ["*"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
STRIPE_LIVE_MODE = False
STRIPE_TEST_SECRET_KEY = os.environ["HOOKPROOF_API_KEY"]
DJSTRIPE_FOREIGN_KEY_TO_FIELD = "id"
DJSTRIPE_WEBHOOK_VALIDATION = "verify_signature"
