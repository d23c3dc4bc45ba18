"""A test receiver: inbox_sync whose start empties its database, as a development start
script that recreates its schema does.

It commits every effect before it answers, so it loses nothing to a crash; but each chaos
restart runs its start command again, which deletes every row it had committed. Run as
``python -m tests.chaos.resets_on_start --port P --db sqlite:///FILE --secret S``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence

from hookproof.receivers import run_cli
from hookproof.receivers.inbox_sync import InboxSync, create_app


def reset(argv: Sequence[str]) -> None:
    """Delete every row of every table of the ``--db`` SQLite file in `argv`, when it has one."""
    if "--db" not in argv or not (url := argv[list(argv).index("--db") + 1]).startswith("sqlite:///"):
        return
    with sqlite3.connect(url[len("sqlite:///"):], timeout=10) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            db.execute(f'DELETE FROM "{table}"')


if __name__ == "__main__":
    reset(sys.argv[1:])
    run_cli(create_app, InboxSync.name)
