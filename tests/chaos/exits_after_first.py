"""A test receiver: inbox_sync whose process exits (code 3) right after it answered its first
request, as a server whose workers fail to boot and whose master then shuts down does.
Run as ``python -m tests.chaos.exits_after_first --port P --db sqlite:///FILE --secret S``.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from hookproof.receivers import run_cli
from hookproof.receivers.inbox_sync import InboxSync, create_app

#: The exit code the process ends with.
EXIT_CODE = 3


def exiting_app(*args: Any, **kwargs: Any) -> Any:
    """inbox_sync's app, exiting the process 0.2 s after the first request it answered."""
    app = create_app(*args, **kwargs)
    armed = threading.Event()

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        await app(scope, receive, send)
        if scope.get("type") == "http" and scope.get("path") == "/webhooks" and not armed.is_set():
            armed.set()
            threading.Timer(0.2, os._exit, (EXIT_CODE,)).start()

    return wrapped


if __name__ == "__main__":
    run_cli(exiting_app, InboxSync.name)
