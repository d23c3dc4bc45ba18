"""Serving a receiver app on 127.0.0.1 in a thread, and polling until a condition holds.

(The provider API and effect sink come from `simulator.server`.)
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from tests.support import free_port


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app (uvicorn) or a WSGI app (threaded werkzeug) on 127.0.0.1 in a thread."""
    if hasattr(app, "wsgi_app"):
        from werkzeug.serving import make_server

        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()
            server.server_close()
        return
    import uvicorn

    port = free_port()
    server_ = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server_.run, daemon=True)
    thread.start()
    wait_until(lambda: server_.started, what="uvicorn to start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server_.should_exit = True
        thread.join(timeout=10)


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
