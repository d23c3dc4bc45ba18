"""Race amplification: release N copies of a request so that they truly overlap.

A receiver with a check-then-act window ("seen this event id?" ... "insert it") applies an
event twice only when two copies reach that window at the same moment. Sending copies
"concurrently" from N tasks is not enough: their arrival is scattered by scheduling and
network jitter. Two techniques make the copies land together (Kettle 2023, "Smashing the
state machine"; see ``methods.md`` §3):

``h1-last-byte``
    HTTP/1.1, one TCP connection per copy (TCP_NODELAY). Every request is written except
    its last two bytes; after ``gate_wait_s`` the first connection's penultimate byte is
    written alone (the server wakes on it), 50 us later the others' back to back, then at
    once the final bytes in the reverse order, so the server, already busy reading the
    burst's connections, completes many requests in one pass (`race_h1` says why).
``h2-single-packet``
    HTTP/2 over cleartext with prior knowledge (h2c), one connection. Every stream gets
    its HEADERS and all of its body except the last byte. After ``gate_wait_s``,
    TCP_NODELAY is switched off, a PING is written (it leaves at once and makes Nagle hold
    what follows), then every stream's final DATA frame (END_STREAM) is written in one
    write, so they travel in a single TCP packet. Bursts bigger than the server's
    SETTINGS_MAX_CONCURRENT_STREAMS are split into several packets, released one after
    the other.
``auto``
    ``h2-single-packet`` when :func:`speaks_h2c` says the target speaks h2c, else
    ``h1-last-byte``.
``plain``
    N concurrent ordinary HTTP/1.1 requests, one connection each, no gate (the baseline
    the benchmark compares against).

Only ``http://`` targets are supported (plain TCP). Everything is asyncio streams, so a
burst composes with the dispatcher's event loop.

Bounds: connecting and pre-sending share one deadline of ``timeout_s``; after the release
(per packet, for HTTP/2), reading the answers has a deadline of ``timeout_s``. So one
packet takes at most about ``2 * timeout_s + gate_wait_s``. At most ``read_cap_bytes`` of
each body are kept: a bigger answer is truncated and its connection (HTTP/1.1) or stream
(HTTP/2) is closed. Response heads are bounded by h11's and h2's own limits (16 KiB and
64 KiB). Sockets are always closed, also on cancellation.

Failures never raise: each copy gets a :class:`RaceResponse` whose ``observed`` is what
the transport saw (the answer's first bytes, status, body up to the cap, how it broke), as
the attempt core (`attempt_core`) takes it from every transport, and whose ``error`` is
the core's reason in plain words (None on a complete answer).

``request_sent`` tells whether the whole request, final byte included, was handed to the
kernel: when it is False the receiver cannot have run the handler on it (a ``fail`` in the
history); an error with ``request_sent=True`` is an ``unknown``.

The two techniques live in `race_h1` and `race_h2`; what they share in `race_io`.

Only caller mistakes raise: a non-http URL or an unusable request (``ValueError``; a
bad URL is a :class:`simulator.errors.TargetError`), or bad parameters (``ValueError``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hookproof.simulator.delivery.race_h1 import h1_burst
from hookproof.simulator.delivery.race_h2 import clear_h2c_cache, h2_burst, speaks_h2c
from hookproof.simulator.delivery.race_io import (
    _MODES,
    Gate,
    OnceGate,
    RaceMode,
    RaceRequest,
    RaceResponse,
    _parse_url,
    _prepare,
)

__all__ = [
    "RaceMode",
    "RaceRequest",
    "RaceResponse",
    "Gate",
    "clear_h2c_cache",
    "race",
    "speaks_h2c",
]


async def race(
    url: str,
    requests: Sequence[RaceRequest],
    *,
    mode: RaceMode = "auto",
    timeout_s: float,
    read_cap_bytes: int = 65536,
    gate_wait_s: float = 0.1,
    gate: Gate | None = None,
) -> list[RaceResponse]:
    """Send ``requests`` to ``url`` so that they reach the server at the same instant.

    Args:
        url: ``http://host[:port][/path?query]``; the path is used for requests whose
            ``path_query`` is empty.
        requests: the burst (usually N copies of one signed delivery).
        mode: ``"h1-last-byte"``, ``"h2-single-packet"``, ``"plain"`` or ``"auto"`` (h2
            single-packet when :func:`speaks_h2c`, else h1 last-byte). See the module doc.
        timeout_s: seconds; bounds connect + pre-send together, and separately the wait
            for the answers after each release. In ``auto`` mode the first contact with a
            host:port adds the h2c probe (at most ``timeout_s`` more).
        read_cap_bytes: bytes of each response body kept; a longer body is truncated.
        gate_wait_s: seconds between the pre-send and the release of the final bytes.
        gate: awaited beside that wait (the release waits for both; HTTP/2: before the first
            packet), and before sending in ``plain`` mode; it runs even when no copy could be
            pre-sent. The caller's say in when the burst goes (the runner pre-sends a burst while
            it reads the receiver after the previous phase, `scenarios.runner`).

    Returns:
        One :class:`RaceResponse` per request, in the order of ``requests``. Network and
        protocol failures are reported in ``error``, never raised.

    Raises:
        TargetError (ValueError): not an ``http://`` URL (``https`` is not supported).
        ValueError: unknown mode, a non-positive timeout, a negative cap or gate wait, or
            a request that cannot be written as HTTP/1.1.
    """
    if mode not in _MODES:
        raise ValueError(f"unknown race mode {mode!r}; expected one of {', '.join(_MODES)}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    if read_cap_bytes < 0:
        raise ValueError(f"read_cap_bytes must be >= 0, got {read_cap_bytes!r}")
    if not gate_wait_s >= 0:
        raise ValueError(f"gate_wait_s must be >= 0 seconds, got {gate_wait_s!r}")
    tgt = _parse_url(url)
    prepared = [_prepare(r, tgt) for r in requests]
    if not prepared:
        return []
    if mode == "auto":
        mode = "h2-single-packet" if await speaks_h2c(url, timeout_s) else "h1-last-byte"
    responses: list[RaceResponse]
    once = OnceGate(gate) if gate is not None else None
    if mode == "h2-single-packet":
        responses = await h2_burst(tgt, prepared, timeout_s=timeout_s, read_cap=read_cap_bytes,
                                   gate_wait_s=gate_wait_s, gate=once)
    else:
        responses = await h1_burst(tgt, prepared, gated=(mode == "h1-last-byte"), timeout_s=timeout_s,
                                   read_cap=read_cap_bytes, gate_wait_s=gate_wait_s, gate=once)
    if once is not None:
        await once()  # a burst none of whose copies could be pre-sent did not wait for it
    return responses
