"""HTTP/1.1 last-byte sync delivers each request byte for byte, whatever the receiver does early.

The release withholds each request's last two bytes and writes them in two passes (the
penultimate bytes, then the final bytes in the reverse order). These tests pin what that
must not change, against a recording TCP server on 127.0.0.1 (one thread per connection):
every connection carries exactly the bytes the ungated ``plain`` mode sends, which are the
HTTP/1.1 serialization h11 gives of the request; and a receiver that answers and closes
before its request is complete is graded on its answer, also inside a burst of copies
that complete normally. Hit rates are measured by ``bench/race_hit_rate.py``, not here.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import h11
import pytest

from hookproof.simulator.delivery.race import RaceRequest, race

pytestmark = pytest.mark.timeout(60)

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
GARBAGE = b"this is not HTTP at all\r\n\r\n\r\n"
#: The request head may not exceed this (the server stops reading there).
HEAD_CAP = 65536


class _Recorder(socketserver.BaseRequestHandler):
    """Read one request whole (head, then Content-Length bytes), answer 200, then record
    every byte the connection carried until the client closed it.

    A request for ``/early`` is answered with garbage after the first read and closed.
    """

    server: "RecordingServer"

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        data = sock.recv(65536)
        if data.startswith(b"POST /early"):
            sock.sendall(GARBAGE)
            return
        while b"\r\n\r\n" not in data and len(data) < HEAD_CAP:
            chunk = sock.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return
            body += chunk
        sock.sendall(OK)
        while chunk := sock.recv(65536):  # anything after the request, until the client closes
            body += chunk
        with self.server.done:
            self.server.requests.append(head + b"\r\n\r\n" + body)
            self.server.done.notify_all()


class RecordingServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # a burst of 20 connects at once (socketserver's default backlog is 5)

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.done = threading.Condition()
        self.requests: list[bytes] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}"

    def recorded(self, n: int) -> list[bytes]:
        """The requests recorded, once there are ``n`` (or after 10 s: a hung client is a failure)."""
        with self.done:
            self.done.wait_for(lambda: len(self.requests) >= n, timeout=10)
            return sorted(self.requests)


@pytest.fixture()
def recorder() -> Iterator[RecordingServer]:
    server = RecordingServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def _h11_bytes(method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    """The oracle: h11's serialization of the request, Host first and Content-Length last."""
    conn = h11.Connection(h11.CLIENT)
    raw = conn.send(h11.Request(method=method, target=target, headers=headers)) or b""
    if body:
        raw += conn.send(h11.Data(data=body)) or b""
    return raw + (conn.send(h11.EndOfMessage()) or b"")


@pytest.mark.parametrize("body", [b'{"id":"evt_1","type":"invoice.paid"}', b""], ids=["body", "empty-body"])
async def test_every_connection_carries_the_request_byte_for_byte(recorder: RecordingServer, body: bytes) -> None:
    request = RaceRequest("POST", "/hook?key=k1", {"Content-Type": "application/json", "X-Signature": "t=1,v1=ab"},
                          body)
    host = recorder.url.removeprefix("http://")
    expected = _h11_bytes("POST", "/hook?key=k1", [("Host", host), ("Content-Type", "application/json"),
                                                   ("X-Signature", "t=1,v1=ab"),
                                                   ("Content-Length", str(len(body)))], body)

    plain = await race(recorder.url, [request], mode="plain", timeout_s=5.0)
    assert [(r.status, r.error, r.request_sent) for r in plain] == [(200, None, True)]
    assert recorder.recorded(1) == [expected]

    recorder.requests.clear()
    gated = await race(recorder.url, [request] * 20, mode="h1-last-byte", timeout_s=5.0, gate_wait_s=0.02)
    assert [(r.status, r.body, r.error, r.request_sent) for r in gated] == [(200, b"ok", None, True)] * 20
    assert recorder.recorded(20) == [expected] * 20


async def test_a_receiver_that_answers_before_the_request_is_complete_in_a_burst(recorder: RecordingServer) -> None:
    normal = RaceRequest("POST", "/hook", {"Content-Type": "application/json"}, b'{"id":"evt_2"}')
    early = RaceRequest("POST", "/early", {"Content-Type": "application/json"}, b'{"id":"evt_2"}')
    responses = await race(recorder.url, [normal, early, normal, early, normal], mode="h1-last-byte",
                           timeout_s=5.0, gate_wait_s=0.05)
    not_http = ("the answer was not valid HTTP: it has no status line (an HTTP/0.9-style answer): "
                "'this is not HTTP at all'")
    assert [(r.status, r.error, r.request_sent) for r in responses] == [
        (200, None, True), (None, not_http, True), (200, None, True), (None, not_http, True), (200, None, True)]
    assert len(recorder.recorded(3)) == 3


async def test_the_release_wakes_the_server_on_one_byte_then_sends_the_rest(recorder: RecordingServer,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The first penultimate byte goes out alone, `_WAKE_PAUSE_S` before the others; then
    the other penultimate bytes in order and the final bytes in the reverse order."""
    import time

    from hookproof.simulator.delivery import race_h1

    writes: list[tuple[int, bytes, float]] = []
    real_write = race_h1._write_now

    def recording_write(writer, data: bytes) -> bool:  # type: ignore[no-untyped-def]
        writes.append((id(writer), data, time.perf_counter()))
        return real_write(writer, data)

    monkeypatch.setattr(race_h1, "_write_now", recording_write)
    request = RaceRequest("POST", "/hook", {"Content-Type": "application/json"}, b'{"id":"evt_3"}')
    responses = await race(recorder.url, [request] * 5, mode="h1-last-byte", timeout_s=5.0, gate_wait_s=0.02)
    assert [(r.status, r.error) for r in responses] == [(200, None)] * 5
    penultimate, final = writes[:5], writes[5:]
    assert [data for _, data, _ in writes] == [b'"'] * 5 + [b"}"] * 5  # the body's last two bytes
    order = [w for w, _, _ in penultimate]
    assert len(set(order)) == 5 and [w for w, _, _ in final] == order[::-1]
    assert penultimate[1][2] - penultimate[0][2] >= race_h1._WAKE_PAUSE_S
    assert len(recorder.recorded(5)) == 5
