"""The command line every receiver shares.

``python -m examples.receivers.<name> --port P --db URL --profile stripe [--secret S]
[--live] [--account acct_…] [--api-base URL] [--api-key K] [--sink URL]``

The two receivers the demo runs ship as ``hookproof.receivers.<name>``.
FastAPI receivers are served by uvicorn, Flask receivers by werkzeug's threaded server.
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any, Callable, Sequence

from hookproof.receivers.config import DEFAULT_DB_URL, ReceiverConfig
from hookproof.receivers.profiles import VERIFIERS


def parse_args(name: str, argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, ReceiverConfig]:
    """Parse the shared flags into (args, config)."""
    parser = argparse.ArgumentParser(description=f"hookproof reference receiver {name!r}")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default=DEFAULT_DB_URL, help="SQLAlchemy URL (sqlite:///file.db or postgresql+psycopg://…)")
    parser.add_argument("--profile", default="stripe", choices=sorted(VERIFIERS))
    parser.add_argument("--secret", action="append",
                        help="endpoint secret (repeat for rotation); default: $WEBHOOK_SECRET or $HOOKPROOF_SECRET "
                             "(space-separated), which keeps it out of the process list")
    parser.add_argument("--live", action="store_true", help="accept live-mode events only (default: test mode)")
    parser.add_argument("--account", help="accept events of this provider account only")
    parser.add_argument("--api-base", default=os.environ.get("PROVIDER_API_BASE") or os.environ.get("HOOKPROOF_API_BASE"),
                        help="provider API base URL (fetch_state); default: $PROVIDER_API_BASE or $HOOKPROOF_API_BASE")
    parser.add_argument("--api-key", default=os.environ.get("PROVIDER_API_KEY") or os.environ.get("HOOKPROOF_API_KEY"),
                        help="provider API key (fetch_state); default: $PROVIDER_API_KEY or $HOOKPROOF_API_KEY")
    parser.add_argument("--sink", default=os.environ.get("EFFECT_SINK_URL") or os.environ.get("HOOKPROOF_SINK_URL"),
                        help="effect sink base URL (downstream_keyed, fresh_idempotency_key); default: "
                             "$EFFECT_SINK_URL or $HOOKPROOF_SINK_URL")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="receiver tuning, e.g. effect_delay_s=0.2")
    args = parser.parse_args(argv)
    secrets = args.secret or (os.environ.get("WEBHOOK_SECRET") or os.environ.get("HOOKPROOF_SECRET") or "").split()
    if not secrets:
        parser.error("give --secret, or set WEBHOOK_SECRET (or HOOKPROOF_SECRET) in the environment")
    options = {}
    for item in args.option:
        key, _, value = item.partition("=")
        options[key] = float(value)
    config = ReceiverConfig(db_url=args.db, profile=args.profile, secrets=tuple(secrets), live=args.live,
                            account=args.account, api_base=args.api_base, api_key=args.api_key,
                            sink_url=args.sink, options=options)
    return args, config


def run_cli(create_app: Callable[[ReceiverConfig], Any], name: str, argv: Sequence[str] | None = None) -> None:
    """Parse flags, build the app and serve it until interrupted."""
    args, config = parse_args(name, argv)
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {name} %(levelname)s %(message)s")
    app = create_app(config)
    if hasattr(app, "wsgi_app"):
        from werkzeug.serving import make_server

        server = make_server(args.host, args.port, app, threaded=True)
        ready(args.host, server.socket.getsockname()[1])
        server.serve_forever()
    else:
        import socket

        import uvicorn

        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say TCP, and
        # without it a kept-alive connection's answer (head, then body) waits ~40 ms on
        # Nagle and the client's delayed ACK.
        sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM,
                             socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        sock.listen(2048)  # connections wait in the backlog until uvicorn serves them
        uvicorn_server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        ready(args.host, sock.getsockname()[1])
        uvicorn_server.run(sockets=[sock])


def ready(host: str, port: int) -> None:
    """Print the one readiness line, once the socket is bound: ``listening on URL``."""
    print(f"listening on http://{host}:{port}/webhooks", flush=True)
