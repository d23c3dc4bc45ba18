"""Serving a receiver app on 127.0.0.1 in a thread, and polling until a condition holds.

(The provider API and effect sink come from `simulator.server`.)
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app (`simulator.serving`, uvicorn) or a WSGI app (threaded werkzeug, as
    Flask apps are deployed) on 127.0.0.1 in a thread; yields the base URL."""
    if hasattr(app, "wsgi_app"):
        from werkzeug.serving import make_server

        server = make_server("127.0.0.1", 0, app, threaded=True)
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, at every test's end
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()
            server.server_close()
        return
    from hookproof.simulator.serving import serve_app

    with serve_app(app) as server:
        yield server.url


def wait_until(predicate: Callable[[], Any], *, timeout_s: float = 10.0, what: str = "condition") -> Any:
    """Poll `predicate` until truthy; raises AssertionError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)
