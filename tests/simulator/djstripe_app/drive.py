"""Feed every event of hookproof's provider API to dj-stripe's webhook view; print what it answered.

Run in the venv that has dj-stripe (argv: none; env: HOOKPROOF_API_BASE, HOOKPROOF_API_KEY,
DJSTRIPE_DB). Events are read with ``GET /v1/events`` (oldest first), signed as Stripe signs
them, and posted to the view with Django's test client; dj-stripe verifies each and syncs its
objects through the stripe SDK against the same API. Prints one JSON document:
``{"answers": [[type, status or error], ...], "rows": {model: count}, "failed_requests": [...]}``.
"""

import hashlib
import hmac
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"

import stripe  # noqa: E402

stripe.api_base = os.environ["HOOKPROOF_API_BASE"]
failed = []
_request = stripe.RequestsClient.request


def _recording(self, method, url, headers, post_data=None, **kwargs):
    answer = _request(self, method, url, headers, post_data, **kwargs)
    if answer[1] >= 400:
        failed.append([method, url.split("?")[0], answer[1]])
    return answer


stripe.RequestsClient.request = _recording

import django  # noqa: E402

django.setup()
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from djstripe import models  # noqa: E402

call_command("migrate", verbosity=0)
key = os.environ["HOOKPROOF_API_KEY"]
events = []
after = ""
while True:  # every event, paged newest first as Stripe lists them
    url = stripe.api_base + "/v1/events?limit=100" + (f"&starting_after={after}" if after else "")
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + key})
    with urllib.request.urlopen(request, timeout=10) as answer:
        page = json.loads(answer.read(1 << 24))
    events += page["data"]
    if not page["has_more"]:
        break
    after = page["data"][-1]["id"]
events.reverse()
secret = "whsec_djstripe_test_0123456789"
account = models.Account.get_or_retrieve_for_api_key(key)
endpoint = models.WebhookEndpoint.objects.create(
    id="we_hookproof000000000000", secret=secret, url="https://shop.example/stripe/", livemode=False,
    djstripe_owner_account=account, api_version=events[0]["api_version"], enabled_events=["*"], status="enabled")
client = Client(raise_request_exception=False)
answers = []
for event in events:
    body = json.dumps(event).encode()
    t = int(time.time())
    signature = hmac.new(secret.encode(), b"%d." % t + body, hashlib.sha256).hexdigest()
    reply = client.post(f"/stripe/webhook/{endpoint.djstripe_uuid}/", data=body, content_type="application/json",
                        HTTP_STRIPE_SIGNATURE=f"t={t},v1={signature}")
    answers.append([event["type"], reply.status_code])
rows = {name: getattr(models, name).objects.count()
        for name in ("Customer", "Subscription", "Invoice", "Charge", "Refund", "PaymentIntent", "Price", "Event")}
print(json.dumps({"answers": answers, "rows": rows, "failed_requests": failed}))
