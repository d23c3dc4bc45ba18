"""Run the storm's exchange (`loadtests.exchange`, geventhttpclient) against URLs and print
what the attempt core makes of each, as JSON: ``[{"completion", "reason", "status"}, ...]``.

Run in its own process (gevent; Locust is never imported into the pytest process):

    python -m tests.hostile.storm_exchange TIMEOUT_S READ_CAP_BYTES URL [URL ...]
    python -m tests.hostile.storm_exchange --attempts N TIMEOUT_S READ_CAP_BYTES URL
    python -m tests.hostile.storm_exchange --timed --attempts N TIMEOUT_S READ_CAP_BYTES URL [URL ...]
    python -m tests.hostile.storm_exchange --pause S --attempts N TIMEOUT_S READ_CAP_BYTES URL
    python -m tests.hostile.storm_exchange --timed --network-timeout T TIMEOUT_S READ_CAP_BYTES URL

Each URL gets one attempt (or N, one after another on the same client) on a client built
as a storm user's (`HTTPClient.from_url` with its connection and network timeouts), the
way `loadtests/locustfile.py` sends. With ``--timed`` each entry also has ``"elapsed_s"``,
the attempt's wall seconds; with ``--pause S`` the client waits S seconds between two
attempts (its pooled connection idle meanwhile); with ``--network-timeout T`` the client's
network timeout (each read's own) is T seconds instead of TIMEOUT_S.
"""

from __future__ import annotations

import json
import sys
import time

from geventhttpclient.client import HTTPClient
from geventhttpclient.url import URL

from hookproof.loadtests.exchange import exchange, observed
from hookproof.simulator.delivery.attempt_core import grade
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.base import SignedRequest

REQUEST = SignedRequest(headers={"Content-Type": "application/json", "Stripe-Signature": "t=1,v1=00"},
                        body=b'{"id":"evt_storm_table","type":"invoice.paid"}')


def main(argv: list[str]) -> int:
    attempts, timed, pause_s, network_s = 1, False, 0.0, None
    if argv[0] == "--timed":
        timed, argv = True, argv[1:]
    if argv[0] == "--network-timeout":
        network_s, argv = float(argv[1]), argv[2:]
    if argv[0] == "--pause":
        pause_s, argv = float(argv[1]), argv[2:]
    if argv[0] == "--attempts":
        attempts, argv = int(argv[1]), argv[2:]
    timeout_s, cap, urls = float(argv[0]), int(argv[1]), argv[2:]
    profile = get_profile("stripe")
    out = []
    for url in urls:
        parsed = URL(url)
        client = HTTPClient.from_url(parsed, connection_timeout=min(5.0, timeout_s), network_timeout=network_s or timeout_s,
                                     concurrency=4)
        try:
            for i in range(attempts):
                if i and pause_s:
                    time.sleep(pause_s)
                start = time.monotonic()
                atoms = exchange(client, getattr(parsed, "quoted_uri", parsed.request_uri), REQUEST,
                                 read_cap_bytes=cap, timeout_s=timeout_s)
                graded = grade(observed(atoms), profile)
                entry: dict[str, object] = {"completion": graded.completion.value, "reason": graded.reason,
                                            "status": graded.status}
                if timed:
                    entry["elapsed_s"] = time.monotonic() - start
                out.append(entry)
        finally:
            client.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
