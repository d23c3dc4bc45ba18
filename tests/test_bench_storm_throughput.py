"""The storm bench's bare user signing on the storm's HTTP path: every request it sends is
signed by the Stripe profile at the second it goes out, as the storm signs, not once before
the run (`bench/storm_throughput.py`, ``bare_rate(..., signed=True)``).

The bench is a script; this imports it from its folder, as ``python bench/storm_throughput.py``
would, and runs its bare user for a few seconds against a receiver here that checks each
signature.
"""

from __future__ import annotations

import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import storm_throughput  # noqa: E402

from hookproof.receivers.profiles import SignatureError, StripeVerifier  # noqa: E402

#: Seconds the bare user runs: longer than the lag a request signed as it is sent can show.
SECONDS = 6
#: The most a request signed as it is sent may lag its arrival here (a loaded machine's
#: delays included); one signed before the run lags Locust's start and then the whole run.
LAG_MAX_S = 3


class _Verifying(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[float, int, bool]] = []  # (arrival unix s, signed at, signature valid)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        arrived = time.time()
        body = self.rfile.read(int(self.headers["Content-Length"]))
        headers = {k.lower(): v for k, v in self.headers.items()}
        signed_at = int(headers["stripe-signature"].split(",")[0].removeprefix("t="))
        try:
            StripeVerifier([storm_throughput.SECRET]).verify(body, headers, tolerance_s=None)
            valid = True
        except SignatureError:
            valid = False
        self.seen.append((arrived, signed_at, valid))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[float, int, bool]]]]:
    seen: list[tuple[float, int, bool]] = []
    handler = type("Handler", (_Verifying,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/webhooks", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_signing_bare_user_signs_each_request_as_it_sends_it(
        receiver: tuple[str, list[tuple[float, int, bool]]], tmp_path: Path) -> None:
    url, seen = receiver
    storm_throughput.bare_rate(url, 2, SECONDS, tmp_path, direct=True, signed=True)
    assert seen, "no request came"
    assert all(valid for _, _, valid in seen)
    assert max(arrived - signed_at for arrived, signed_at, _ in seen) <= LAG_MAX_S
    assert len({signed_at for _, signed_at, _ in seen}) >= SECONDS - LAG_MAX_S


def test_the_pre_signed_bare_user_signs_once_before_the_run(
        receiver: tuple[str, list[tuple[float, int, bool]]], tmp_path: Path) -> None:
    url, seen = receiver
    storm_throughput.bare_rate(url, 2, SECONDS, tmp_path, direct=True)
    assert seen and all(valid for _, _, valid in seen)
    assert len({signed_at for _, signed_at, _ in seen}) == 1
    assert max(arrived - signed_at for arrived, signed_at, _ in seen) > LAG_MAX_S
